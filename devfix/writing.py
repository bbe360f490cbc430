"""Reading sources defensively and writing fixes atomically: bad input never loses data."""

from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path


class UnreadableFile(Exception):
    """A file devfix will not process; the message is one line, ready for the user."""


class WriteRefused(Exception):
    """A write devfix will not make; the file is left exactly as it was."""


def read_source(path: Path, max_bytes: int) -> bytes:
    try:
        size = path.stat().st_size
        if size > max_bytes:
            raise UnreadableFile(f"{path}: file is {size} bytes, over the {max_bytes}-byte limit; skipped")
        return path.read_bytes()
    except OSError as error:
        raise UnreadableFile(f"{path}: cannot read: {error.strerror or error}") from error


def write_atomically(path: Path, expected: bytes, new: bytes) -> None:
    """Replace `path` with `new` if it still holds `expected`, keeping its permission bits.

    The bytes go to a temporary file in the same directory, are fsynced, and replace the original
    with one rename, so a crash leaves either the old or the new file, never half of one.
    """
    if path.is_symlink():
        raise WriteRefused(f"{path}: is a symbolic link to {path.resolve()}; not written (run devfix on the target)")
    try:
        if path.read_bytes() != expected:
            raise WriteRefused(f"{path}: changed on disk while devfix was running; left untouched")
        mode = stat.S_IMODE(path.stat().st_mode)
    except OSError as error:
        raise WriteRefused(f"{path}: cannot re-read before writing: {error.strerror or error}") from error
    descriptor, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".devfix.tmp", dir=path.parent)
    try:
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(new)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(temporary, mode)
        os.replace(temporary, path)
    except BaseException:
        if os.path.exists(temporary):
            os.unlink(temporary)
        raise
    _fsync_directory(path.parent)


def _fsync_directory(directory: Path) -> None:
    try:
        descriptor = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(descriptor)
    except OSError:
        pass
    finally:
        os.close(descriptor)
