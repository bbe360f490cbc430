"""The `devfix` command: exit codes, messages, and that bad input never changes a file."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest

from tests.cli_runner import invoke_devfix

BUGGY = "import torch\nmodel = torch.nn.Linear(2, 2).cuda()\n"
CLEAN = 'import torch\ndevice = torch.device("cuda" if torch.cuda.is_available() else "cpu")\n'


@pytest.fixture
def project(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "buggy.py").write_text(BUGGY)
    (tmp_path / "clean.py").write_text(CLEAN)
    return tmp_path


def invoke(*args: str):
    return invoke_devfix(list(args))


def test_check_reports_findings_with_exit_1(project):
    result = invoke("check", ".")
    assert result.exit_code == 1
    assert "buggy.py:2:9: DF001 `.cuda()` hard-codes the GPU" in result.stdout
    assert result.stdout.rstrip().endswith("[*]")
    assert (project / "buggy.py").read_text() == BUGGY


def test_check_clean_exits_0(project):
    result = invoke("check", "clean.py")
    assert result.exit_code == 0
    assert result.stdout == ""


def test_diff_prints_patch_and_changes_nothing(project):
    result = invoke("diff", ".", "--color", "never")
    assert result.exit_code == 1
    assert result.stdout.startswith("--- ./buggy.py\n+++ ./buggy.py\n")
    assert "+model = torch.nn.Linear(2, 2).to(device)" in result.stdout
    assert (project / "buggy.py").read_text() == BUGGY


def test_diff_color_always_uses_ansi(project):
    assert "\x1b[32m+" in invoke("diff", ".", "--color", "always").stdout


def test_fix_rewrites_then_check_is_clean_and_second_fix_is_noop(project):
    assert invoke("fix", ".").exit_code == 0
    fixed = (project / "buggy.py").read_text()
    assert "torch.nn.Linear(2, 2).to(device)" in fixed
    assert invoke("check", ".").exit_code == 0
    second = invoke("fix", ".")
    assert second.exit_code == 0
    assert (project / "buggy.py").read_text() == fixed


def test_fix_exit_non_zero_on_fix(project):
    assert invoke("fix", ".", "--exit-non-zero-on-fix").exit_code == 1
    assert invoke("fix", ".", "--exit-non-zero-on-fix").exit_code == 0


def test_select_and_ignore(project):
    assert invoke("check", ".", "--ignore", "DF001").exit_code == 0
    assert invoke("check", ".", "--select", "DF00").exit_code == 1
    assert invoke("check", ".", "--select", "DF002,DF003").exit_code == 0


def test_unknown_code_is_a_usage_error(project):
    result = invoke("check", ".", "--select", "XX9")
    assert result.exit_code == 2
    assert "matches no rule code" in result.stderr


@pytest.mark.parametrize(
    "line",
    [
        "model = torch.nn.Linear(2, 2).cuda()  # devfix: ignore",
        "model = torch.nn.Linear(2, 2).cuda()  # devfix: ignore[DF001]",
        "model = torch.nn.Linear(2, 2).cuda()  # devfix: ignore[DF003, df001]",
    ],
)
def test_suppression_comment_silences_check_and_fix(project, line):
    source = f"import torch\n{line}\n"
    (project / "buggy.py").write_text(source)
    assert invoke("check", ".").exit_code == 0
    invoke("fix", ".")
    assert (project / "buggy.py").read_text() == source


def test_suppression_for_another_code_does_not_silence(project):
    (project / "buggy.py").write_text("import torch\nmodel = torch.nn.Linear(2, 2).cuda()  # devfix: ignore[DF002]\n")
    assert invoke("check", ".").exit_code == 1


def test_suppression_on_first_line_of_multiline_statement(project):
    source = "import torch\nmodel = torch.nn.Sequential(  # devfix: ignore[DF001]\n    torch.nn.Linear(2, 2).cuda(),\n)\n"
    (project / "buggy.py").write_text(source)
    assert invoke("check", ".").exit_code == 0


def test_bad_files_exit_2_with_one_line_each_and_others_still_fixed(project):
    (project / "broken.py").write_text("import torch\ndef f(:\n")
    (project / "latin.py").write_bytes(b"import torch\ns = '\xe9'\n")
    loop_dir = project / "pkg"
    loop_dir.mkdir()
    (loop_dir / "again").symlink_to(project, target_is_directory=True)
    before = {path: path.read_bytes() for path in project.glob("*.py")}
    result = invoke("fix", ".")
    assert result.exit_code == 2
    errors = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    assert any("broken.py:2" in line and "syntax error" in line for line in errors)
    assert any("latin.py" in line and "not valid UTF-8" in line for line in errors)
    assert any("symbolic link loop" in line for line in errors)
    assert (project / "broken.py").read_bytes() == before[project / "broken.py"]
    assert (project / "latin.py").read_bytes() == before[project / "latin.py"]
    assert "to(device)" in (project / "buggy.py").read_text()


def test_check_exit_2_on_missing_path(project):
    result = invoke("check", "nope.py")
    assert result.exit_code == 2
    assert "no such file" in result.stderr


def test_json_output(project):
    result = invoke("check", ".", "--output-format", "json")
    records = json.loads(result.stdout)
    assert records[0]["code"] == "DF001"
    assert records[0]["location"] == {"row": 2, "column": 9}
    assert records[0]["fix"]["applicability"] == "safe"


def test_github_output(project):
    result = invoke("check", ".", "--output-format", "github")
    assert result.stdout.startswith("::error title=devfix (DF001),file=buggy.py,line=2,col=9,")


def test_rules_lists_every_rule_with_safety():
    from devfix.codemods import ALL_RULES

    lines = invoke("rules").stdout.splitlines()
    for rule in ALL_RULES:
        row = next(line for line in lines if line.startswith(rule.CODE))
        safety = "none" if rule.REPORT_ONLY else rule.SAFETY.value
        assert rule.NAME in row and safety in row and rule.DESCRIPTION in row


def test_every_rule_is_documented_with_before_after_and_refusals():
    from devfix.codemods import ALL_RULES

    for rule in ALL_RULES:
        text = invoke("explain", rule.CODE).stdout
        assert "Refuses" in text, rule.CODE
        assert rule.REPORT_ONLY or ("Before:" in text and "After:" in text), rule.CODE


def test_explain_shows_docs_and_rejects_unknown_codes():
    result = invoke("explain", "df002")
    assert result.exit_code == 0
    assert "Before:" in result.stdout and "Refuses" in result.stdout
    assert invoke("explain", "DF999").exit_code == 2


def test_version():
    assert invoke("--version").stdout.startswith("devfix ")


def test_config_in_pyproject_is_honoured(project):
    (project / "pyproject.toml").write_text('[tool.devfix]\nignore = ["DF001"]\n')
    assert invoke("check", ".").exit_code == 0
    (project / "pyproject.toml").write_text('[tool.devfix]\nbogus = 1\n')
    result = invoke("check", ".")
    assert result.exit_code == 2 and "unknown key" in result.stderr


def test_parallel_jobs_give_the_same_output_in_path_order(project):
    for index in range(6):
        (project / f"m{index}.py").write_text(BUGGY)
    sequential = invoke("check", ".", "--jobs", "1").stdout
    parallel = invoke("check", ".", "--jobs", "3").stdout
    assert sequential == parallel
    paths = [line.split(":")[0] for line in parallel.splitlines()]
    assert paths == sorted(paths)


def test_installed_console_script_runs_as_a_real_process(project):
    executable = shutil.which("devfix") or os.path.join(os.path.dirname(sys.executable), "devfix")
    completed = subprocess.run([executable, "check", "buggy.py"], check=False, capture_output=True, text=True, cwd=project)
    assert completed.returncode == 1
    assert "DF001" in completed.stdout
    assert "Found 1 finding." in completed.stderr


def test_a_crashing_rule_is_reported_as_a_devfix_bug_and_the_other_fixes_still_apply(tmp_path, monkeypatch):
    from devfix.codemods.df007_load_map_location import LoadMapLocation

    def crash(self, original_node, updated_node):
        raise ValueError("boom")

    monkeypatch.setattr(LoadMapLocation, "leave_Call", crash)
    script = tmp_path / "train.py"
    script.write_text("import torch\nstate = torch.load('m.pt')\nmodel = torch.nn.Linear(2, 2).cuda()\n")
    result = invoke("fix", "-j", "1", str(script))
    assert "warning:" in result.stderr and "devfix bug: rule DF007 raised ValueError('boom')" in result.stderr
    assert ".to(device)" in script.read_text()  # DF001's fix is written
    assert result.exit_code != 2


def test_a_rule_crash_with_a_huge_exception_is_reported_on_one_short_line(tmp_path, monkeypatch):
    """A KeyError keyed by a libcst node printed the node: hundreds of lines for one warning."""
    from devfix.codemods.df007_load_map_location import LoadMapLocation

    def crash(self, original_node, updated_node):
        import libcst

        raise KeyError(libcst.parse_module("x = 1\n" * 200))  # its repr: thousands of lines

    monkeypatch.setattr(LoadMapLocation, "leave_Call", crash)
    script = tmp_path / "train.py"
    script.write_text("import torch\nstate = torch.load('m.pt')\n")
    result = invoke("check", "-j", "1", str(script))
    [warning] = [line for line in result.stderr.splitlines() if line.startswith("warning:")]
    assert "devfix bug: rule DF007 raised KeyError(Module( body=[ SimpleStatementLine( body=[" in warning
    assert len(warning) < len(str(script)) + 350
