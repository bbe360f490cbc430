"""Adopting devfix on a codebase with findings: `check --add-ignore` and `--report-unused-ignores`."""

from __future__ import annotations

import pytest

from devfix.add_ignores import add_ignores
from devfix.findings import Finding, Position
from tests.cli_runner import invoke_devfix

SOURCE = "import torch\nx = torch.zeros(2).cuda()  # keep\ny = x.numpy()  # devfix: ignore[DF001]\nz = 1  # devfix: ignore\n"


@pytest.fixture
def project(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a.py").write_text(SOURCE)
    return tmp_path


def test_add_ignore_silences_every_current_finding_and_keeps_other_comments(project):
    result = invoke_devfix(["check", "--add-ignore", "a.py"])
    assert result.exit_code == 0, result.stderr
    assert "Added 2 `# devfix: ignore` comments in 1 file." in result.stderr
    assert (project / "a.py").read_text() == (
        "import torch\nx = torch.zeros(2).cuda()  # keep  # devfix: ignore[DF001]\n"
        "y = x.numpy()  # devfix: ignore[DF001, DF008]\nz = 1  # devfix: ignore\n"
    )
    assert invoke_devfix(["check", "a.py"]).exit_code == 0


def test_unused_ignores_are_reported_only_when_asked(project):
    assert "DF100" not in invoke_devfix(["check", "a.py"]).stdout
    result = invoke_devfix(["check", "--report-unused-ignores", "a.py"])
    assert result.exit_code == 1
    unused = [line for line in result.stdout.splitlines() if " DF100 " in line]
    assert unused == [
        "a.py:3:16: DF100 unused `# devfix: ignore[DF001]`: nothing to silence on this line",
        "a.py:4:8: DF100 unused `# devfix: ignore`: nothing to silence on this line",
    ]


def test_an_ignore_for_a_rule_that_did_not_run_is_not_judged(project):
    result = invoke_devfix(["check", "--report-unused-ignores", "--select", "DF008", "a.py"])
    assert [line.split()[1] for line in result.stdout.splitlines()] == ["DF008", "DF100"]  # the bare one only


def test_unused_ignores_in_a_file_no_rule_can_touch(project):
    (project / "plain.py").write_text("x = 1  # devfix: ignore[DF001]\n")
    result = invoke_devfix(["check", "--report-unused-ignores", "plain.py"])
    assert result.stdout.startswith("plain.py:1:8: DF100 ")


def test_a_line_that_ends_inside_a_string_or_a_continuation_gets_no_comment():
    source = 'import torch\ny = """a\nb""".strip()\nz = 1 + \\\n  2\n'
    found = [Finding("DF001", "m", Position(line, 1), Position(line, 2)) for line in (2, 4, 5)]
    added = add_ignores(source, found)
    assert added.skipped == (2, 4)
    assert added.text == source.replace("  2\n", "  2  # devfix: ignore[DF001]\n")


def test_line_endings_are_kept():
    source = "import torch\r\nx = torch.zeros(2).cuda()\r\n"
    added = add_ignores(source, [Finding("DF001", "m", Position(2, 5), Position(2, 9))])
    assert added.text == "import torch\r\nx = torch.zeros(2).cuda()  # devfix: ignore[DF001]\r\n"
