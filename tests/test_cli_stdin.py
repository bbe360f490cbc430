"""`-` reads the source from standard input, as editors and formatters call tools (ruff's way)."""

from __future__ import annotations

import pytest

from tests.cli_runner import invoke_devfix

BUGGY = "import torch\nx = torch.zeros(2).cuda()\n"
FIXED = 'import torch\n\ndevice = torch.device("cuda" if torch.cuda.is_available() else "cpu")\n\nx = torch.zeros(2).to(device)\n'


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)


def test_check_reads_standard_input_and_names_it():
    result = invoke_devfix(["check", "-"], input=BUGGY)
    assert result.exit_code == 1
    assert result.stdout.startswith("-:2:5: DF001 ")
    named = invoke_devfix(["check", "-", "--stdin-filename", "pkg/train.py"], input=BUGGY)
    assert named.stdout.startswith("pkg/train.py:2:5: DF001 ")


def test_fix_prints_the_fixed_source_and_writes_nothing(tmp_path):
    result = invoke_devfix(["fix", "-", "--stdin-filename", "train.py"], input=BUGGY)
    assert result.exit_code == 0
    assert result.stdout == FIXED
    assert "Fixed 1 finding" in result.stderr
    assert list(tmp_path.iterdir()) == []


def test_fix_of_input_that_does_not_parse_gives_it_back_unchanged():
    source = "import torch\ndef f(:\n"
    result = invoke_devfix(["fix", "-"], input=source)
    assert result.exit_code == 2
    assert result.stdout == source
    assert "syntax error" in result.stderr


def test_diff_labels_the_patch_with_the_stdin_filename():
    result = invoke_devfix(["diff", "-", "--stdin-filename", "train.py", "--color", "never"], input=BUGGY)
    assert result.exit_code == 1
    assert result.stdout.startswith("--- ./train.py\n+++ ./train.py\n")


def test_the_stdin_filename_finds_the_configuration(tmp_path):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "pyproject.toml").write_text('[tool.devfix]\nignore = ["DF001"]\n')
    assert invoke_devfix(["check", "-", "--stdin-filename", "pkg/train.py"], input=BUGGY).exit_code == 0
    assert invoke_devfix(["check", "-", "--stdin-filename", "train.py"], input=BUGGY).exit_code == 1


def test_a_named_input_without_torch_is_still_parsed():
    result = invoke_devfix(["check", "-"], input="def f(:\n")
    assert result.exit_code == 2 and "syntax error" in result.stderr


@pytest.mark.parametrize("args", [["check", "-", "a.py"], ["check", "a.py", "--stdin-filename", "x.py"]])
def test_misused_standard_input_is_a_usage_error(tmp_path, args):
    (tmp_path / "a.py").write_text(BUGGY)
    result = invoke_devfix(args)
    assert result.exit_code == 2
    assert result.stderr.startswith("error: ")
