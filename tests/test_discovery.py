"""Which files a run processes."""

from __future__ import annotations

from pathlib import Path

from devfix.discovery import discover


def _tree(root: Path, files: list[str]) -> None:
    for name in files:
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("import torch\n")


def _names(found, root: Path) -> list[str]:
    return [path.relative_to(root).as_posix() for path in found.files]


def test_walks_recursively_sorted_and_skips_default_excludes(tmp_path):
    _tree(tmp_path, ["b.py", "a/c.py", ".venv/lib/x.py", "node_modules/y.py", "build/z.py", "a/__pycache__/q.py", "notes.txt"])
    assert _names(discover([tmp_path]), tmp_path) == ["a/c.py", "b.py"]


def test_gitignore_is_respected_and_nested(tmp_path):
    _tree(tmp_path, ["keep.py", "gen/out.py", "sub/skip_me.py", "sub/keep2.py"])
    (tmp_path / ".gitignore").write_text("gen/\n")
    (tmp_path / "sub" / ".gitignore").write_text("skip_*.py\n")
    assert _names(discover([tmp_path]), tmp_path) == ["keep.py", "sub/keep2.py"]


def test_exclude_patterns(tmp_path):
    _tree(tmp_path, ["a.py", "tests/t.py", "pkg/tests/u.py"])
    assert _names(discover([tmp_path], exclude=("tests/",)), tmp_path) == ["a.py"]


def test_explicit_files_are_always_processed(tmp_path):
    _tree(tmp_path, ["build/explicit.py"])
    (tmp_path / ".gitignore").write_text("*.py\n")
    found = discover([tmp_path / "build" / "explicit.py"])
    assert found.files == [tmp_path / "build" / "explicit.py"]


def test_symlink_loop_is_an_error_and_other_links_are_notes(tmp_path):
    _tree(tmp_path, ["src/a.py", "elsewhere/b.py"])
    (tmp_path / "src" / "loop").symlink_to(tmp_path, target_is_directory=True)
    (tmp_path / "src" / "other").symlink_to(tmp_path / "elsewhere", target_is_directory=True)
    found = discover([tmp_path / "src"])
    assert _names(found, tmp_path) == ["src/a.py"]
    assert len(found.errors) == 1 and "symbolic link loop" in found.errors[0]
    assert len(found.notes) == 1 and "not followed" in found.notes[0]


def test_missing_path_is_an_error(tmp_path):
    assert "no such file" in discover([tmp_path / "missing.py"]).errors[0]
