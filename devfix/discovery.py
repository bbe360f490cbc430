"""Paths on the command line → the Python files to process, in sorted order.

Directories are walked without following symlinks (a symlinked directory is reported, a loop is an
error); `.gitignore` files are honoured with gitwildmatch semantics and ignored directories are
pruned, so large virtual environments are never walked. A symbolic link to a file is processed once,
through its target: findings and diffs name the file that holds the code, and `fix` writes there.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pathspec

DEFAULT_EXCLUDES = (
    ".git", ".hg", ".svn", ".venv", "venv", "build", "dist", "__pycache__",
    "node_modules", "site-packages", ".mypy_cache", ".pytest_cache", ".tox", ".eggs",
)


@dataclass
class Discovery:
    files: list[Path] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    named: set[Path] = field(default_factory=set)  # files named on the command line: always parsed


def discover(paths: list[Path], exclude: tuple[str, ...] = ()) -> Discovery:
    """Files named explicitly are always kept; directories are walked recursively."""
    found = Discovery()
    for path in paths:
        if os.path.islink(path) and not path.exists():
            found.errors.append(f"{path}: broken symbolic link")
        elif path.is_dir():
            _walk(path, exclude, found)
        elif path.exists():
            found.files.append(path)
            found.named.add(path)
        else:
            found.errors.append(f"{path}: no such file or directory")
    found.files, found.named = _through_links(found)
    found.files.sort(key=lambda p: p.as_posix())
    return found


def _through_links(found: Discovery) -> tuple[list[Path], set[Path]]:
    """Each file once, by what it really is: a link is replaced by its target, and a target also
    reached under its own name keeps that name. A link is never written through. Files are told
    apart by device and inode (one `stat` each, not a path resolution per component)."""
    chosen: dict[tuple[int, int], Path] = {}
    named: set[tuple[int, int]] = set()
    links = [path for path in found.files if path.is_symlink()]
    for path in [path for path in found.files if not path.is_symlink()] + links:
        try:
            status = path.stat()
        except OSError:
            continue  # gone since the walk: nothing to process
        identity = (status.st_dev, status.st_ino)
        if path in found.named:
            named.add(identity)
        if path.is_symlink():
            shown = chosen.setdefault(identity, _display_path(path.resolve()))
            found.notes.append(f"{path}: symbolic link to {shown}; processed as {shown}")
        else:
            chosen.setdefault(identity, path)
    return list(chosen.values()), {chosen[identity] for identity in named}


def _display_path(target: Path) -> Path:
    """The target relative to the working directory when it lies below it, as walked paths are."""
    try:
        return target.relative_to(Path.cwd().resolve())
    except ValueError:
        return target


def _walk(root: Path, exclude: tuple[str, ...], found: Discovery) -> None:
    """pathspec is imported only for patterns to match (`exclude`, a `.gitignore`): a tree without
    any, or a hook that names its files, never pays for it."""
    user_excludes = _spec(exclude) if exclude else None
    ignore_specs: list[tuple[Path, pathspec.PathSpec]] = []
    for directory, dirnames, filenames in os.walk(root):
        current = Path(directory)
        spec = _gitignore_spec(current)
        if spec is not None:
            ignore_specs.append((current, spec))
        kept = []
        for name in sorted(dirnames):
            child = current / name
            if name in DEFAULT_EXCLUDES or _ignored(child, True, root, user_excludes, ignore_specs):
                continue
            if child.is_symlink():
                _report_symlinked_dir(child, found)
                continue
            kept.append(name)
        dirnames[:] = kept
        for name in sorted(filenames):
            child = current / name
            if name.endswith((".py", ".pyi", ".ipynb")) and not _ignored(child, False, root, user_excludes, ignore_specs):
                if child.is_symlink() and not child.exists():
                    found.errors.append(f"{child}: broken symbolic link")
                else:
                    found.files.append(child)


def _report_symlinked_dir(link: Path, found: Discovery) -> None:
    """A link to the directory it sits in, or to one above it, would make the walk endless."""
    try:
        target = link.resolve(strict=True)
    except (OSError, RuntimeError):
        found.errors.append(f"{link}: symbolic link loop or broken link; not followed")
        return
    parent = link.parent.resolve()
    if target == parent or target in parent.parents:
        found.errors.append(f"{link}: symbolic link loop (points to {target}); not followed")
    else:
        found.notes.append(f"{link}: symbolic link to a directory ({target}); not followed")


def _gitignore_spec(directory: Path) -> pathspec.PathSpec | None:
    gitignore = directory / ".gitignore"
    if not gitignore.is_file():
        return None
    try:
        return _spec(gitignore.read_text(encoding="utf-8", errors="replace").splitlines())
    except (OSError, ValueError):
        return None


def _spec(lines) -> pathspec.PathSpec:
    import pathspec

    return pathspec.GitIgnoreSpec.from_lines(lines)


def _ignored(
    path: Path,
    is_dir: bool,
    root: Path,
    user_excludes: pathspec.PathSpec | None,
    ignore_specs: list[tuple[Path, pathspec.PathSpec]],
) -> bool:
    suffix = "/" if is_dir else ""
    if user_excludes is not None and (
        user_excludes.match_file(path.relative_to(root).as_posix() + suffix) or user_excludes.match_file(path.name + suffix)
    ):
        return True
    for base, spec in ignore_specs:
        if (base == path or base in path.parents) and spec.match_file(path.relative_to(base).as_posix() + suffix):
            return True
    return False
