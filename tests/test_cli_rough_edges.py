"""The rough edges a new user hit (issue 12): each test here failed before its fix."""

from __future__ import annotations

import subprocess

import pytest

from tests.cli_runner import invoke_devfix

BUGGY = "import torch\nmodel = torch.nn.Linear(2, 2).cuda()\n"


@pytest.fixture
def linked(tmp_path, monkeypatch):
    """`a.py` with a bug and `link.py -> a.py` beside it."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a.py").write_text(BUGGY)
    (tmp_path / "link.py").symlink_to("a.py")
    return tmp_path


def test_a_linked_file_is_checked_once_through_its_target(linked):
    result = invoke_devfix(["check", "."])
    assert result.exit_code == 1
    assert result.stdout.splitlines() == ["a.py:2:9: DF001 `.cuda()` hard-codes the GPU: the program fails without one [*]"]


def test_the_diff_of_a_tree_with_a_link_applies_with_git(linked):
    patch = invoke_devfix(["diff", "."]).stdout
    assert patch.count("+++ ") == 1
    subprocess.run(["git", "init", "-q", "."], check=True)
    subprocess.run(["git", "apply", "-"], input=patch.encode(), check=True)
    assert "to(device)" in (linked / "a.py").read_text()


def test_fixing_a_link_named_on_the_command_line_fixes_its_target_and_keeps_the_link(linked):
    result = invoke_devfix(["fix", "link.py"])
    assert result.exit_code == 0, result.stderr
    assert "to(device)" in (linked / "a.py").read_text()
    assert (linked / "link.py").is_symlink()


def test_a_named_file_with_a_syntax_error_is_an_error_even_without_torch(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "bad.py").write_text("def f(:\n")
    result = invoke_devfix(["check", "bad.py"])
    assert result.exit_code == 2
    assert "bad.py" in result.stderr and "syntax error" in result.stderr
    assert "All checks passed" not in result.stderr
