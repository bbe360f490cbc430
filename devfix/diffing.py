"""Unified diffs that `git apply` and `patch -p0` both accept, computed on bytes.

Working on bytes keeps the file's own encoding and newlines (CRLF, latin-1) in the patch, so the
patch applies to the file byte for byte.
"""

from __future__ import annotations

import difflib
import os
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
