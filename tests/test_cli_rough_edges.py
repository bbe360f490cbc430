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


def test_text_in_square_brackets_survives_the_verify_report(tmp_path):
    case = tmp_path / "DF001-x" / "brackets"
    case.mkdir(parents=True)
    for name in ("before.py", "after.py"):
        (case / name).write_text("raise ValueError(\"pip install 'devfix[verify]' [bold]x[/bold]\")\n")
    result = invoke_devfix(["verify", str(tmp_path), "--device", "sim"])
    assert result.exit_code == 1
    assert "pip install 'devfix[verify]' [bold]x[/bold]" in result.stdout


@pytest.mark.parametrize("layout", ["empty", "missing", "not-a-case"])
def test_verify_without_fixture_cases_is_an_error(tmp_path, layout):
    target = tmp_path / "fixtures"
    if layout == "empty":
        target.mkdir()
    elif layout == "not-a-case":
        target = tmp_path / "program.py"
        target.write_text("print(1)\n")
    result = invoke_devfix(["verify", str(target)])
    assert result.exit_code == 2
    assert result.stderr.startswith(f"error: {target}: ")
    assert "passed" not in result.stdout


def test_verify_on_real_cuda_is_refused_without_a_gpu(tmp_path, monkeypatch):
    import torch

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    case = tmp_path / "DF001-x" / "one"
    case.mkdir(parents=True)
    for name in ("before.py", "after.py"):
        (case / name).write_text("print('RESULT 1.0')\n")
    result = invoke_devfix(["verify", "--device", "cuda", str(tmp_path)])
    assert result.exit_code == 2
    assert "--device cuda" in result.stderr and "no CUDA device" in result.stderr
    assert result.stdout == ""


def test_the_advice_to_install_torch_works_from_a_checkout(monkeypatch):
    import importlib.util

    real_find_spec = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *rest: None if name == "torch" else real_find_spec(name, *rest))
    result = invoke_devfix(["verify"])
    assert result.exit_code == 2
    assert "pip install '.[verify]'" in result.stderr and "torch==2.13.0" in result.stderr


def test_the_verify_extra_pins_torch_and_the_license_file_exists():
    import tomllib
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    project = tomllib.loads((root / "pyproject.toml").read_text())["project"]
    assert project["optional-dependencies"]["verify"] == ["torch==2.13.0"]
    assert project["license"] == "MIT" and "MIT License" in (root / "LICENSE").read_text()


class _Terminal:
    def isatty(self) -> bool:
        return True


@pytest.mark.parametrize(("no_color", "expected"), [(None, True), ("", True), ("1", False)])
def test_no_color_turns_automatic_colour_off_on_a_terminal(monkeypatch, no_color, expected):
    from devfix.cli import wants_color

    if no_color is None:
        monkeypatch.delenv("NO_COLOR", raising=False)
    else:
        monkeypatch.setenv("NO_COLOR", no_color)
    assert wants_color("auto", _Terminal()) is expected
    assert wants_color("always", _Terminal()) is True and wants_color("never", _Terminal()) is False


def test_no_color_is_honoured_by_a_real_diff_on_a_terminal(tmp_path):
    """Through a pseudo-terminal, as a user's shell runs it."""
    import os
    import pty
    import sys

    (tmp_path / "a.py").write_text(BUGGY)
    outputs = {}
    for no_color in ("", "1"):
        leader, follower = pty.openpty()
        env = {**os.environ, "NO_COLOR": no_color}
        subprocess.run([sys.executable, "-m", "devfix", "diff", "a.py"], cwd=tmp_path, env=env, stdout=follower, stderr=subprocess.DEVNULL, check=False)
        os.close(follower)
        chunks = []
        while True:
            try:
                chunk = os.read(leader, 65536)
            except OSError:
                break
            if not chunk:
                break
            chunks.append(chunk)
        os.close(leader)
        outputs[no_color] = b"".join(chunks)
    assert b"\x1b[32m+" in outputs[""]
    assert b"+model = torch.nn.Linear(2, 2).to(device)" in outputs["1"] and b"\x1b[" not in outputs["1"]


def test_shell_completion_is_available_as_the_readme_says():
    import os
    import sys

    env = {**os.environ, "_DEVFIX_COMPLETE": "bash_complete", "COMP_WORDS": "devfix ch", "COMP_CWORD": "1"}
    completed = subprocess.run([sys.executable, "-m", "devfix"], env=env, capture_output=True, text=True, check=False)
    assert completed.stdout.split() == ["plain,check"]
    from pathlib import Path

    readme = (Path(__file__).resolve().parent.parent / "README.md").read_text()
    assert 'eval "$(_DEVFIX_COMPLETE=bash_source devfix)"' in readme


@pytest.mark.parametrize("command", ["check", "diff", "fix", "verify", "run", "lsp"])
def test_short_help_works_and_flags_show_no_value_placeholder(command):
    result = invoke_devfix([command, "-h"])
    assert result.exit_code == 0 and result.stdout.startswith(f"Usage: devfix {command}")
    assert "<bool>" not in result.stdout and "BOOLEAN" not in result.stdout
