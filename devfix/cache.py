"""Results of earlier runs, so that a second `check` of an unchanged tree only reads and hashes it.

An entry is keyed by everything that decides a file's result: devfix's version and its own source
files (their sizes and times: a checkout edited since, or an editable install, is another devfix),
the file's path
and bytes, its rules, the fix policy and the options that change what is reported. Findings can
also depend on other files (a model class imported from `models/net.py`): the entry lists every
file the analysis consulted through the project index, with its hash (of a directory searched for
a helper's callers: the names of its Python files), and every place where it looked for a module
and found none; the entry is used only while all of them are as they were.

The entries live in one JSON file, `.devfix_cache/<version>/results.json` in the project root
(which holds a `.gitignore` and a `CACHEDIR.TAG`, as ruff's cache does): read once when a run
starts, merged with what is on disk and replaced atomically when it ends, so a warm run opens one
file, and parallel runs or a crash never leave a half-written cache. A result with an error or a
crashed rule is never stored; the file keeps the newest `MAX_ENTRIES`.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import asdict
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING

from devfix import __version__
from devfix.findings import FileResult, Finding, Position, Safety

if TYPE_CHECKING:
    from devfix.runner import Job

CACHE_DIR_NAME = ".devfix_cache"
RESULTS_FILE = "results.json"
MAX_ENTRIES = 50_000
CACHEDIR_TAG = "Signature: 8a477f597d28d172789f06886806bc55\n# devfix's result cache: see https://bford.info/cachedir/\n"


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@cache
def devfix_build() -> str:
    """devfix's own code as it is now: the size and time of each of its source files (a stat each,
    about a millisecond in all), so results of a devfix edited since are never reused."""
    package = Path(__file__).resolve().parent
    stats = []
    for path in sorted(package.rglob("*.py")):
        info = path.stat()
        stats.append((str(path.relative_to(package)), info.st_size, info.st_mtime_ns))
    return digest(json.dumps(stats).encode())


class ResultCache:
    """One run's view of the cache in `root`; file hashes are computed once per run."""

    def __init__(self, root: Path) -> None:
        self.directory = root / CACHE_DIR_NAME / __version__
        self._hashes: dict[str, str | None] = {}
        self._entries: dict[str, dict] | None = None
        self._new: dict[str, dict] = {}

    def lookup(self, job: Job, source: bytes) -> FileResult | None:
        stored = self._loaded().get(self._key(job, source))
        if not isinstance(stored, dict) or any(self.file_hash(path) != expected for path, expected in stored.get("consulted", {}).items()):
            return None
        try:
            return _result(job.path, source, stored)
        except (KeyError, TypeError, ValueError):
            return None  # an entry from a damaged or foreign file: computed again

    def store(self, job: Job, source: bytes, result: FileResult, consulted: dict[str, bool]) -> None:
        if result.error is not None or result.rule_crashes:
            return
        entry = {
            "consulted": {path: self.file_hash(path) if existed else None for path, existed in sorted(consulted.items())},
            "fixed": None if result.fixed == source else result.fixed.decode("latin-1"),
            "findings": [_finding_record(finding) for finding in result.findings],
            "applied": [_finding_record(finding) for finding in result.applied],
        }
        if any(value is None and consulted[path] for path, value in entry["consulted"].items()):
            return  # a file it read has gone since: the result may already be stale
        self._new[self._key(job, source)] = entry

    def save(self) -> None:
        """Merge this run's entries into the file on disk (another run may have written it since)."""
        if not self._new:
            return
        merged = {**self._read(), **self._new}
        if len(merged) > MAX_ENTRIES:
            merged = dict(list(merged.items())[-MAX_ENTRIES:])
        self._write(self.directory / RESULTS_FILE, json.dumps(merged, separators=(",", ":")))
        self._new.clear()

    def _loaded(self) -> dict[str, dict]:
        if self._entries is None:
            self._entries = self._read()
        return self._entries

    def _read(self) -> dict[str, dict]:
        try:
            entries = json.loads((self.directory / RESULTS_FILE).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        return entries if isinstance(entries, dict) else {}

    def file_hash(self, path: str) -> str | None:
        """The file's hash now, None when it does not exist (memoised for the run)."""
        if path not in self._hashes:
            try:
                self._hashes[path] = digest(_listing(Path(path)) if os.path.isdir(path) else Path(path).read_bytes())
            except OSError:
                self._hashes[path] = None
        return self._hashes[path]

    def _key(self, job: Job, source: bytes) -> str:
        return digest(json.dumps([
            devfix_build(), os.path.abspath(job.path), digest(source), job.rule_codes, asdict(job.policy),
            job.named, job.report_unused_ignores, job.max_file_bytes,
        ], default=str).encode())

    def _write(self, path: Path, text: str) -> None:
        import tempfile  # only when something is stored

        try:
            self._prepare(path.parent)
            descriptor, temporary = tempfile.mkstemp(prefix=".entry.", dir=path.parent)
            with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
                handle.write(text)
            os.replace(temporary, path)
        except OSError:
            pass  # a cache that cannot be written only costs time

    def _prepare(self, folder: Path) -> None:
        top = self.directory.parent
        if not top.is_dir():
            top.mkdir(parents=True, exist_ok=True)
            (top / ".gitignore").write_text("# created by devfix\n*\n", encoding="utf-8")
            (top / "CACHEDIR.TAG").write_text(CACHEDIR_TAG, encoding="utf-8")
        folder.mkdir(parents=True, exist_ok=True)


def _finding_record(finding: Finding) -> list:
    return [
        finding.code, finding.message, finding.start.line, finding.start.column, finding.end.line, finding.end.column,
        None if finding.fix_safety is None else finding.fix_safety.value, finding.fix_title, finding.applied,
    ]


def _finding(record: list) -> Finding:
    code, message, start_line, start_column, end_line, end_column, safety, title, applied = record
    return Finding(
        code, message, Position(start_line, start_column), Position(end_line, end_column),
        None if safety is None else Safety(safety), title, applied,
    )


def _result(path: str, source: bytes, stored: dict) -> FileResult:
    fixed = source if stored["fixed"] is None else stored["fixed"].encode("latin-1")
    return FileResult(path, source, fixed, tuple(map(_finding, stored["findings"])), tuple(map(_finding, stored["applied"])))


def _listing(directory: Path) -> bytes:
    """What a directory's entry in `consulted` stands for: which Python files it holds (the callers
    of a helper are looked for there; a new file may call it)."""
    return "\n".join(sorted(path.name for path in directory.glob("*.py"))).encode()
