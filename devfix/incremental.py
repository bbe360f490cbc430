"""Quick diagnostics after an edit: analyse only the top-level statements the edit touched.

A full analysis costs about 2 ms a line (libcst's parse, metadata and tree passes), so seconds for
a long file: too slow to follow typing. Most edits change one function or class. The findings of
each top-level statement are remembered from the last full analysis, keyed by the statement's
text. After an edit, the statements whose text is new are analysed in a small module made of them,
the file's simple statements (imports, assignments) and the definitions they use; every other
statement keeps its remembered findings, moved to its new lines.

The result is provisional: an edit in one function can change what devfix concludes in another,
so a full analysis must follow and replace it. `QuickDiagnostics.quick` returns None whenever the
shortcut would not be much cheaper than that full analysis.
"""

from __future__ import annotations

import bisect
import threading
from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace

from devfix import python_parser
from devfix.analysis.chunks import LINE, Chunk, chunks_of
from devfix.findings import Finding, Position

__all__ = ["LINE", "Chunk", "QuickDiagnostics", "split_chunks"]

MAX_SHARE_OF_FILE = 0.5  # above this, analysing the slice is not worth it: analyse the whole file

Analyse = Callable[[str], Sequence[Finding]]


def split_chunks(text: str, previous: tuple[list[str], list[Chunk]] | None = None) -> list[Chunk] | None:
    """The file as top-level chunks covering every line, or None when it does not parse. With
    `previous` (an earlier version's lines and chunks), only the chunks around the changed lines
    are parsed again (parsing a long file is most of the cost of a quick answer)."""
    return _split_lines(LINE.findall(text), previous)


def _split_lines(lines: list[str], previous: tuple[list[str], list[Chunk]] | None) -> list[Chunk] | None:
    if previous is not None:
        chunks = _split_again(lines, *previous)
        if chunks is not None:
            return chunks
    return _parse_chunks(lines, 1, len(lines), at_end=True)


def _split_again(lines: list[str], old_lines: list[str], old_chunks: list[Chunk]) -> list[Chunk] | None:
    """Re-parse the chunks the edit touched; None when that region does not parse on its own
    (then the whole file decides: a syntax error, or statements merged across chunks)."""
    if not old_chunks:
        return None
    same_prefix = 0
    limit = min(len(lines), len(old_lines))
    while same_prefix < limit and lines[same_prefix] == old_lines[same_prefix]:
        same_prefix += 1
    same_suffix = 0
    while same_suffix < limit - same_prefix and lines[-1 - same_suffix] == old_lines[-1 - same_suffix]:
        same_suffix += 1
    delta = len(lines) - len(old_lines)
    first_changed = same_prefix + 1  # 1-based, in the old text
    last_changed = max(first_changed, len(old_lines) - same_suffix)
    first = _chunk_at(old_chunks, first_changed)
    last = _chunk_at(old_chunks, last_changed)
    region_start, region_end = old_chunks[first].start, old_chunks[last].end + delta
    at_end = last == len(old_chunks) - 1
    region = _parse_chunks(lines, region_start, region_end, at_end)
    if region is None:
        return None
    after = [replace(chunk, start=chunk.start + delta, end=chunk.end + delta) for chunk in old_chunks[last + 1 :]]
    return old_chunks[:first] + region + after


def _chunk_at(chunks: list[Chunk], line: int) -> int:
    return min(len(chunks) - 1, max(0, bisect.bisect_right(chunks, line, key=lambda chunk: chunk.start) - 1))


def _parse_chunks(lines: list[str], start: int, end: int, at_end: bool) -> list[Chunk] | None:
    """Chunks of lines `start`..`end` (1-based), parsed on their own. Comment lines after the last
    statement form a chunk of their own at the end of the file (`at_end`); elsewhere they belong
    to the next statement, so such a region is refused."""
    if end < start - 1:
        return None
    source = "".join(lines[start - 1 : end])
    if start == 1:
        source = source.removeprefix("\ufeff")  # a BOM the editor kept: the engine accepts it, ast does not
    try:
        tree = python_parser.parse(source)
    except (SyntaxError, ValueError):
        return None
    return chunks_of(tree.body, lines, start - 1, end, at_end)


class QuickDiagnostics:
    """Remembers findings of one document chunk by chunk, to answer edits quickly: exact ones from
    the last full analysis, and provisional ones from quick answers since (so that while the full
    analysis lags behind typing, each keystroke re-analyses only the chunk it changed).

    Thread-safe: the server answers in a thread while full analyses arrive on its event loop. The
    tables are replaced, never changed in place, so a quick answer works on a consistent copy."""

    class Unavailable(Exception):
        """Raised by an `Analyse` callback that cannot analyse the slice: `quick` gives up."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._exact: dict[str, tuple[Finding, ...] | None] = {}
        self._provisional: dict[str, tuple[Finding, ...] | None] = {}
        self._chunks: tuple[str, list[str], list[Chunk] | None] = ("", [], None)  # the last split

    def parses(self, text: str) -> bool:
        with self._lock:
            return self._split(text) is not None

    def remember(self, text: str, findings: Iterable[Finding]) -> None:
        """Record a full analysis of `text`."""
        with self._lock:
            chunks = self._split(text)
            self._exact = {} if chunks is None else _by_text(chunks, _group_by_chunk(chunks, findings))

    def forget(self) -> None:
        with self._lock:
            self._exact, self._provisional = {}, {}

    def quick(self, text: str, analyse: Analyse) -> list[Finding] | None:
        """Provisional findings for `text`, analysing only its new chunks with `analyse` (which
        checks a source text); None when there is no full analysis to build on, when the text does
        not parse, or when the slice would be too big to be quick."""
        with self._lock:
            chunks, exact, provisional = self._split(text), self._exact, self._provisional
        if not exact or chunks is None:
            return None
        known = [_known(chunk.text, exact, provisional) for chunk in chunks]
        new = _with_dependents(chunks, {index for index, findings in enumerate(known) if findings is None})
        selected = _slice(chunks, new)
        if sum(chunks[index].lines for index in selected) > MAX_SHARE_OF_FILE * sum(chunk.lines for chunk in chunks):
            return None
        grouped = [[] if index in new else [_shift(finding, chunk.start - 1) for finding in known[index]] for index, chunk in enumerate(chunks)]
        if new:
            try:
                for finding in _analyse_slice(chunks, selected, new, analyse):
                    grouped[_chunk_index(chunks, finding)].append(finding)
            except QuickDiagnostics.Unavailable:
                return None
        with self._lock:
            self._provisional = {text: found for text, found in _by_text(chunks, grouped).items() if text not in self._exact}
        return sorted((finding for findings in grouped for finding in findings), key=Finding.sort_key)

    def _split(self, text: str) -> list[Chunk] | None:
        """Chunks of `text`, split again from the last split (callers hold the lock)."""
        last_text, last_lines, last_chunks = self._chunks
        if last_text == text:
            return last_chunks
        lines = LINE.findall(text)
        chunks = _split_lines(lines, (last_lines, last_chunks) if last_chunks is not None else None)
        self._chunks = (text, lines, chunks)
        return chunks


def _known(chunk_text: str, exact: dict, provisional: dict) -> tuple[Finding, ...] | None:
    found = exact.get(chunk_text)
    return found if found is not None else provisional.get(chunk_text)


def _by_text(chunks: list[Chunk], grouped: list[list[Finding]]) -> dict[str, tuple[Finding, ...] | None]:
    """Chunk text → its findings relative to its first line; None when the same text occurs twice
    with different findings (then it must be analysed again)."""
    by_text: dict[str, tuple[Finding, ...] | None] = {}
    for chunk, findings in zip(chunks, grouped):
        relative = tuple(_shift(finding, 1 - chunk.start) for finding in findings)
        by_text[chunk.text] = None if chunk.text in by_text and by_text[chunk.text] != relative else relative
    return by_text


def _with_dependents(chunks: list[Chunk], changed: set[int]) -> set[int]:
    """The changed chunks, those that read a module-level name a changed chunk binds, and so on
    (what devfix concludes there may have changed too: `model = Net().cuda()` → the training
    loop; a helper's parameter kinds come from its callers, and theirs from their callers:
    `extract` ← a scheduler's method ← `main`), the definitions the changed chunks read, and the
    functions and classes any of those read (a helper handed `alphas_bar` concludes anew when the
    table's binding changed)."""
    selected, pending = set(changed), list(changed)
    while pending:
        binds = chunks[pending.pop()].binds
        for index, chunk in enumerate(chunks):
            if index not in selected and chunk.loads & binds:
                selected.add(index)
                pending.append(index)
    loads = set().union(*(chunks[index].loads for index in changed)) if changed else set()
    called = set().union(*(chunks[index].loads for index in selected)) if selected else set()
    return selected | {index for index, chunk in enumerate(chunks) if chunk.binds & loads or (not chunk.simple and chunk.binds & called)}


def _slice(chunks: list[Chunk], new: set[int]) -> list[int]:
    """The new chunks, every simple statement, and the definitions they use (transitively): a
    simple statement's too (`loader = DataLoader(Captions(12))`: what the class's `__getitem__`
    returns decides which batch variables a method of a new chunk may move)."""
    selected = set(new) | {index for index, chunk in enumerate(chunks) if chunk.simple}
    binders: dict[str, list[int]] = {}
    for index, chunk in enumerate(chunks):
        for name in chunk.binds:
            binders.setdefault(name, []).append(index)
    pending = list(selected)
    while pending:
        for name in chunks[pending.pop()].loads:
            for index in binders.get(name, ()):
                if index not in selected:
                    selected.add(index)
                    pending.append(index)
    return sorted(selected)


def _analyse_slice(chunks: list[Chunk], selected: list[int], new: set[int], analyse: Analyse) -> list[Finding]:
    """Analyse the selected chunks as one module; keep the findings inside new chunks, on their
    lines in the whole file."""
    parts, slice_starts, file_starts, keep = [], [], [], []
    line = 1
    for index in selected:
        chunk = chunks[index]
        slice_starts.append(line)
        file_starts.append(chunk.start)
        keep.append(index in new)
        parts.append(chunk.text if chunk.text.endswith(("\n", "\r")) else chunk.text + "\n")
        line += chunk.lines
    results = []
    for finding in analyse("".join(parts)):
        position = bisect.bisect_right(slice_starts, finding.start.line) - 1
        if position >= 0 and keep[position]:
            results.append(_shift(finding, file_starts[position] - slice_starts[position]))
    return results


def _group_by_chunk(chunks: list[Chunk], findings: Iterable[Finding]) -> list[list[Finding]]:
    grouped: list[list[Finding]] = [[] for _ in chunks]
    for finding in findings:
        grouped[_chunk_index(chunks, finding)].append(finding)
    return grouped


def _chunk_index(chunks: list[Chunk], finding: Finding) -> int:
    return max(0, bisect.bisect_right(chunks, finding.start.line, key=lambda chunk: chunk.start) - 1)


def _shift(finding: Finding, lines: int) -> Finding:
    return replace(
        finding,
        start=Position(finding.start.line + lines, finding.start.column),
        end=Position(finding.end.line + lines, finding.end.column),
    )
