"""Diffs apply with `git apply` and `patch -p0` from the project root, encodings included."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from devfix.diffing import NO_NEWLINE, diff_label, unified_diff
from tests.conftest import run_devfix

CASES = {
    "plain": b"import torch\nmodel = torch.nn.Linear(2, 2).cuda()\n",
    "crlf": b"import torch\r\nmodel = torch.nn.Linear(2, 2).cuda()\r\n",
    "no-final-newline": b"import torch\nmodel = torch.nn.Linear(2, 2).cuda()",
    "latin-1": "# coding: latin-1\nimport torch\ns = '\xe9'\nm = torch.nn.Linear(2, 2).cuda()\n".encode("latin-1"),
}


def _patch_for(tmp_path, monkeypatch, source: bytes) -> tuple[bytes, bytes]:
    (tmp_path / "pkg").mkdir()
    target = tmp_path / "pkg" / "script.py"
    target.write_bytes(source)
    monkeypatch.chdir(tmp_path)
    fixed = run_devfix(source).fixed
    return unified_diff(diff_label(target.relative_to(tmp_path)), source, fixed), fixed


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
@pytest.mark.parametrize("name", sorted(CASES))
def test_git_apply_reproduces_the_fix(tmp_path, monkeypatch, name):
    patch, fixed = _patch_for(tmp_path, monkeypatch, CASES[name])
    subprocess.run(["git", "apply", "-"], input=patch, check=True, cwd=tmp_path)
    assert (tmp_path / "pkg" / "script.py").read_bytes() == fixed


@pytest.mark.skipif(shutil.which("patch") is None, reason="patch is not installed")
@pytest.mark.parametrize("name", sorted(CASES))
def test_patch_p0_reproduces_the_fix(tmp_path, monkeypatch, name):
    patch, fixed = _patch_for(tmp_path, monkeypatch, CASES[name])
    subprocess.run(["patch", "-p0", "--quiet"], input=patch, check=True, cwd=tmp_path)
    assert (tmp_path / "pkg" / "script.py").read_bytes() == fixed


def test_missing_final_newline_is_marked():
    patch = unified_diff("./a.py", b"x = 1", b"x = 2")
    assert patch.endswith(b"+x = 2\n" + NO_NEWLINE)


def test_no_change_no_diff():
    assert unified_diff("./a.py", b"x\n", b"x\n") == b""


def test_labels_are_relative_with_dot_slash(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert diff_label(tmp_path / "a" / "b.py") == "./a/b.py"
