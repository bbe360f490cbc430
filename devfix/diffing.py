"""Unified diffs that `git apply` and `patch -p0` both accept, computed on bytes; and minimal text
edits for the language server.

Working on bytes keeps the file's own encoding and newlines (CRLF, latin-1) in the patch, so the
patch applies to the file byte for byte.
"""

from __future__ import annotations

import bisect
import difflib
import os
from dataclasses import dataclass
from pathlib import Path

NO_NEWLINE = b"\\ No newline at end of file\n"


def diff_label(path: Path) -> str:
    """`./relative/path` from the current directory: `git apply` strips the `./`, `patch -p0` keeps it."""
    try:
        relative = os.path.relpath(path)
    except ValueError:
        return path.as_posix()
    if relative.startswith(".."):
        return Path(os.path.abspath(path)).as_posix()
    return "./" + Path(relative).as_posix()


def file_diff(label: str, before: bytes, after: bytes) -> bytes:
    """A file's diff: a unified diff, or for a notebook one per changed cell (`nb.ipynb:cell 3`),
    which reads like code rather than JSON (ruff shows notebooks the same way)."""
    if not label.endswith(".ipynb") or before == after:
        return unified_diff(label, before, after)
    from devfix.notebooks import Notebook

    old, new = Notebook.from_bytes(before).cell_sources(), Notebook.from_bytes(after).cell_sources()
    return b"".join(
        unified_diff(f"{label}:cell {number}", old[number].encode("utf-8"), new.get(number, "").encode("utf-8"))
        for number in old
    )


def unified_diff(label: str, before: bytes, after: bytes, context: int = 3) -> bytes:
    if before == after:
        return b""
    before_lines = before.splitlines(keepends=True)
    after_lines = after.splitlines(keepends=True)
    name = label.encode("utf-8", "surrogateescape")
    out = bytearray()
    for line in difflib.diff_bytes(
        difflib.unified_diff, before_lines, after_lines, name, name, n=context, lineterm=b"\n"
    ):
        out += line
        if not line.endswith(b"\n"):  # only a last line without newline; headers always end in one
            out += b"\n" + NO_NEWLINE
    return bytes(out)


@dataclass(frozen=True)
class TextEdit:
    """Replace old text from `start` to `end` (0-based line, code-point column) by `new_text`."""

    start: tuple[int, int]
    end: tuple[int, int]
    new_text: str


def minimal_edits(old: str, new: str) -> list[TextEdit]:
    """The smallest line-block edits turning `old` into `new`, trimmed to the changed characters,
    so an editor keeps cursors, folds and undo history outside the fix."""
    old_lines, new_lines = old.splitlines(keepends=True), new.splitlines(keepends=True)
    line_starts = [0]
    for line in old_lines:
        line_starts.append(line_starts[-1] + len(line))
    edits = []
    matcher = difflib.SequenceMatcher(None, old_lines, new_lines, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        replaced, replacement = "".join(old_lines[i1:i2]), "".join(new_lines[j1:j2])
        prefix = _common_prefix(replaced, replacement)
        suffix = _common_prefix(replaced[prefix:][::-1], replacement[prefix:][::-1])
        start = line_starts[i1] + prefix
        end = line_starts[i1] + len(replaced) - suffix
        edits.append(TextEdit(_position(old, line_starts, start), _position(old, line_starts, end), replacement[prefix : len(replacement) - suffix]))
    return edits


def apply_edits(text: str, edits: list[TextEdit]) -> str:
    """Apply non-overlapping edits given in positions of `text` (what an editor does)."""
    lines = text.splitlines(keepends=True)
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line))

    def offset(position: tuple[int, int]) -> int:
        line, column = position
        return starts[line] + column if line < len(starts) else len(text)

    for edit in sorted(edits, key=lambda e: e.start, reverse=True):
        text = text[: offset(edit.start)] + edit.new_text + text[offset(edit.end) :]
    return text


def _common_prefix(a: str, b: str) -> int:
    count = 0
    for left, right in zip(a, b):
        if left != right:
            break
        count += 1
    return count


def _position(text: str, line_starts: list[int], offset: int) -> tuple[int, int]:
    if offset == len(text) and text and not text.endswith(("\n", "\r")):
        return len(line_starts) - 2, offset - line_starts[-2]  # end of a last line without newline
    line = bisect.bisect_right(line_starts, offset) - 1
    line = min(line, len(line_starts) - 1)
    return line, offset - line_starts[line]
