"""Renderers of a run's report: one module a format, all fed the same `Report`."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

from devfix.findings import FileResult, Finding

LOCATED_ERROR = re.compile(r"^(?P<path>.+?):(?P<line>\d+):(?P<column>\d+): (?P<message>.*)$", re.DOTALL)


@dataclass(frozen=True)
class FileError:
    """A file devfix could not process (or a path it could not find), with a place when known."""

    path: str | None
    message: str
    line: int | None = None
    column: int | None = None


@dataclass(frozen=True)
class Report:
    """What one run found: `results` (for diff and fix, the findings that remain after the fixes,
    and the fixes applied), the run's own errors, and whether unsafe fixes count as fixes."""

    results: Sequence[FileResult]
    unsafe_fixes: bool = False
    run_errors: Sequence[str] = ()  # not tied to a file's result (a missing path, a link loop)

    def findings(self) -> Iterator[tuple[FileResult, Finding]]:
        for result in self.results:
            for finding in result.findings:
                yield result, finding

    def errors(self) -> list[FileError]:
        errors = [_file_error(result.path, result.error) for result in self.results if result.error]
        return errors + [_file_error(None, message) for message in self.run_errors]


def _file_error(path: str | None, message: str) -> FileError:
    """`path:line:col: text` keeps its place; other messages name at most the file."""
    located = LOCATED_ERROR.match(message)
    if located and (path is None or located["path"] == path):
        return FileError(located["path"], located["message"], int(located["line"]), int(located["column"]))
    return FileError(path, message)


Renderer = Callable[[Report], str]


def renderers() -> dict[str, Renderer]:
    """The formats by name; each module is imported only when asked for."""
    from devfix.output import github, gitlab, json_format, junit, sarif, text

    return {
        "text": text.render,
        "json": json_format.render,
        "github": github.render,
        "gitlab": gitlab.render,
        "sarif": sarif.render,
        "junit": junit.render,
    }


FORMATS = ("text", "json", "github", "gitlab", "sarif", "junit")
