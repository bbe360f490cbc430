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
    """The file's bytes; a FIFO, socket or device named `*.py` is refused before it is opened (a
    read of a FIFO waits forever)."""
    try:
        status = path.stat()
        if not stat.S_ISREG(status.st_mode):
            raise UnreadableFile(f"{path}: not a regular file (a FIFO, socket or device); skipped")
        size = status.st_size
        if size > max_bytes:
            raise UnreadableFile(f"{path}: file is {size} bytes, over the {max_bytes}-byte limit; skipped")
        return path.read_bytes()
    except OSError as error:
        raise UnreadableFile(f"{path}: cannot read: {error.strerror or error}") from error


def write_atomically(path: Path, expected: bytes, new: bytes) -> None:
    """Replace `path` with `new` if it still holds `expected`, keeping its permission bits and,
    where permitted, its owner and group.

    The bytes go to a temporary file in the same directory, are fsynced, and replace the original
    with one rename, so a crash leaves either the old or the new file, never half of one. A file
    with several hard links is the exception: a rename would give only this name the new text, so
    once the temporary copy is complete its bytes are copied into the file itself (every name sees
    them). Any OS error (a full disk, an immutable file) is a WriteRefused: the file is as it was
    and no temporary file is left.
    """
    if path.is_symlink():
        raise WriteRefused(f"{path}: is a symbolic link to {path.resolve()}; not written (run devfix on the target)")
    try:
        if path.read_bytes() != expected:
            raise WriteRefused(f"{path}: changed on disk while devfix was running; left untouched")
        status = path.stat()
    except OSError as error:
        raise WriteRefused(f"{path}: cannot re-read before writing: {error.strerror or error}") from error
    temporary = None
    try:
        descriptor, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".devfix.tmp", dir=path.parent)
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(new)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(temporary, stat.S_IMODE(status.st_mode))
        _keep_owner(temporary, status)
        if status.st_nlink > 1:
            try:
                _write_through_links(path, new)
            except OSError as error:
                kept, temporary = temporary, None  # the one complete copy of the new text: kept
                raise WriteRefused(f"{path}: writing through its {status.st_nlink} hard links failed ({error.strerror or error}); the fixed text is in {kept}") from error
            os.unlink(temporary)
        else:
            os.replace(temporary, path)
    except OSError as error:
        if temporary is not None and os.path.exists(temporary):
            os.unlink(temporary)
        raise WriteRefused(f"{path}: cannot write: {error.strerror or error}; left untouched") from error
    except BaseException:
        if temporary is not None and os.path.exists(temporary):
            os.unlink(temporary)
        raise
    _fsync_directory(path.parent)


def _keep_owner(temporary: str, status: os.stat_result) -> None:
    """The new file gets the old one's owner and group when this user may set them."""
    if (status.st_uid, status.st_gid) == (os.getuid(), os.getgid()):
        return
    try:
        os.chown(temporary, status.st_uid, status.st_gid)
    except PermissionError:
        try:
            os.chown(temporary, -1, status.st_gid)
        except PermissionError:
            pass


def _write_through_links(path: Path, new: bytes) -> None:
    with open(path, "r+b") as handle:
        handle.write(new)
        handle.truncate()
        handle.flush()
        os.fsync(handle.fileno())


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
