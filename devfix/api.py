"""devfix as a library: check or fix one source text, as the command line does.

    >>> import devfix
    >>> result = devfix.fix_source("import torch\\nx = torch.zeros(2).cuda()\\n")
    >>> [finding.code for finding in result.applied]
    ['DF001']
    >>> print(result.text)  # doctest: +ELLIPSIS
    import torch
    <BLANKLINE>
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    ...

The CLI's standard-input path (`devfix check -`, `devfix fix -`) runs through `process_text`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from devfix.config import MAX_FILE_BYTES
from devfix.findings import FileResult, Finding
from devfix.fix_policy import FixPolicy
from devfix.rule_registry import select_specs
from devfix.runner import Job, process_source


class SourceError(ValueError):
    """The source could not be analysed (it does not parse, or is not valid text); nothing was changed."""


@dataclass(frozen=True)
class SourceResult:
    """The text after the fixes (the input itself for `check_source`), the findings that remain on
    it, and the fixes applied."""

    text: str
    findings: tuple[Finding, ...]
    applied: tuple[Finding, ...] = ()

    @property
    def changed(self) -> bool:
        return bool(self.applied)


def check_source(source: str, path: str = "<string>", *, select: Sequence[str] = (), ignore: Sequence[str] = ()) -> SourceResult:
    """Findings on `source`, as `devfix check` reports them for a file named `path` (which also
    decides the file's role: a test, a library module, a program). Raises SourceError."""
    return _source_result(process_text(source.encode("utf-8"), path, select, ignore, apply_fixes=False))


def fix_source(
    source: str,
    path: str = "<string>",
    *,
    select: Sequence[str] = (),
    ignore: Sequence[str] = (),
    unsafe_fixes: bool = False,
    device_idiom: str = "cuda",
) -> SourceResult:
    """`source` with the fixes `devfix fix` would apply (the unsafe ones too when asked), what
    remains, and what was applied; `device_idiom` "accelerator" writes the preamble with
    `torch.accelerator` instead of `torch.cuda`. Raises SourceError."""
    result = process_text(source.encode("utf-8"), path, select, ignore, apply_fixes=True, unsafe_fixes=unsafe_fixes, device_idiom=device_idiom)
    return _source_result(result)


def process_text(
    source: bytes,
    path: str,
    select: Sequence[str] = (),
    ignore: Sequence[str] = (),
    *,
    apply_fixes: bool,
    unsafe_fixes: bool = False,
    max_file_bytes: int = MAX_FILE_BYTES,
    device_idiom: str = "cuda",
) -> FileResult:
    """One text under the given rules: the engine's FileResult, errors included (never raised)."""
    codes = tuple(rule.CODE for rule in select_specs(tuple(code.upper() for code in select), tuple(code.upper() for code in ignore)))
    job = Job(path, codes, FixPolicy(apply=apply_fixes, unsafe=unsafe_fixes, device_idiom=device_idiom), max_file_bytes, named=True)
    return process_source(source, job)


def _source_result(result: FileResult) -> SourceResult:
    if result.error is not None:
        raise SourceError(result.error)
    return SourceResult(result.fixed.decode("utf-8"), result.findings, result.applied)
