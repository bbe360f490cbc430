"""`--output-format`, `--statistics`, `--show-fixes`, `--exit-zero` on check, diff and fix."""

from __future__ import annotations

import json
from pathlib import Path
from xml.etree import ElementTree

import jsonschema
import pytest

from tests.cli_runner import invoke_devfix

BUGGY = "import torch\nx = torch.zeros(2).cuda()\ny = torch.ones(2).cuda()\n"
REPORT_ONLY = "import torch\n\n\nclass Net(torch.nn.Module):\n    def forward(self, x):\n        return x\n"
SARIF_SCHEMA = Path(__file__).parent / "data" / "sarif-schema-2.1.0.json"


@pytest.fixture
def project(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a.py").write_text(BUGGY)
    (tmp_path / "bad.py").write_text("import torch\ndef f(:\n")
    return tmp_path


def check(*args: str):
    return invoke_devfix(["check", *args])


def test_json_lists_findings_and_files_that_could_not_be_parsed(project):
    result = check("--output-format", "json", "a.py", "bad.py")
    assert result.exit_code == 2
    records = json.loads(result.stdout)
    assert [(record["filename"], record["code"]) for record in records] == [("a.py", "DF001"), ("a.py", "DF001"), ("bad.py", None)]
    assert records[0]["fix"] == {"applicability": "safe", "message": records[0]["fix"]["message"], "available": True}
    assert "syntax error" in records[2]["message"] and records[2]["location"]["row"] >= 1


@pytest.mark.parametrize("paths", [["a.py", "bad.py", "missing.py"], ["a.py"], ["bad.py"]])
def test_sarif_is_valid_against_the_sarif_2_1_0_schema(project, paths):
    (project / "clean.py").write_text("import torch\n")
    result = check("--output-format", "sarif", *paths)
    log = json.loads(result.stdout)
    jsonschema.validate(log, json.loads(SARIF_SCHEMA.read_text()))
    (run,) = log["runs"]
    findings = [(item["ruleId"], item["locations"][0]["physicalLocation"]["region"]["startLine"]) for item in run["results"]]
    assert findings == ([("DF001", 2), ("DF001", 3)] if "a.py" in paths else [])
    assert run["invocations"][0]["executionSuccessful"] is (paths == ["a.py"])
    assert [rule["id"] for rule in run["tool"]["driver"]["rules"]] == (["DF001"] if "a.py" in paths else [])


def test_the_schema_check_catches_a_broken_log():
    log = {"version": "2.1.0", "runs": [{"tool": {"driver": {}}, "results": []}]}  # a driver needs a name
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(log, json.loads(SARIF_SCHEMA.read_text()))


def test_gitlab_code_quality_fingerprints_are_unique_and_survive_lines_added_above(project):
    first = json.loads(check("--output-format", "gitlab", "a.py").stdout)
    assert [issue["check_name"] for issue in first] == ["DF001", "DF001"]
    assert {"description", "check_name", "fingerprint", "severity", "location"} <= set(first[0])
    assert first[0]["location"] == {"path": "a.py", "positions": {"begin": {"line": 2, "column": 5}, "end": {"line": 2, "column": 26}}}
    assert len({issue["fingerprint"] for issue in first}) == 2
    (project / "a.py").write_text("# a new first line\n" + BUGGY)
    moved = json.loads(check("--output-format", "gitlab", "a.py").stdout)
    assert [issue["fingerprint"] for issue in moved] == [issue["fingerprint"] for issue in first]
    assert moved[0]["location"]["positions"]["begin"]["line"] == 3


def test_junit_has_a_failed_case_per_finding_and_an_error_per_unparsed_file(project):
    root = ElementTree.fromstring(check("--output-format", "junit", "a.py", "bad.py").stdout)
    suites = {suite.get("name"): suite for suite in root.iter("testsuite")}
    assert suites["a.py"].get("failures") == "2" and len(suites["a.py"].findall("testcase/failure")) == 2
    assert suites["bad.py"].get("errors") == "1" and suites["bad.py"].find("testcase/error") is not None
    (project / "clean.py").write_text("import torch\n")
    clean = ElementTree.fromstring(check("--output-format", "junit", "clean.py").stdout)
    assert [case.get("name") for case in clean.iter("testcase")] == ["No findings"]


def test_github_annotates_unparsed_files_too(project):
    lines = check("--output-format", "github", "bad.py").stdout.splitlines()
    assert lines == [line for line in lines if line.startswith("::error title=devfix (error),file=bad.py,line=")]
    assert len(lines) == 1


def test_statistics_count_findings_per_rule(project):
    (project / "net.py").write_text(REPORT_ONLY + "model = Net().cuda()\n")
    text = check("--statistics", "a.py", "net.py")
    assert text.exit_code == 1
    assert text.stdout.splitlines()[0] == "3\tDF001\t[*] hardcoded-cuda"
    rows = json.loads(check("--statistics", "--output-format", "json", "a.py").stdout)
    assert rows == [{"code": "DF001", "name": "hardcoded-cuda", "count": 2, "fixable": 2}]
    refused = check("--statistics", "--output-format", "sarif", "a.py")
    assert refused.exit_code == 2 and "--statistics" in refused.stderr


def test_exit_zero_keeps_findings_but_not_errors_out_of_the_status(project):
    assert check("--exit-zero", "a.py").exit_code == 0
    assert check("--exit-zero", "a.py", "bad.py").exit_code == 2
    assert invoke_devfix(["diff", "--exit-zero", "a.py"]).exit_code == 0


def test_show_fixes_lists_each_fix_in_check_diff_and_fix(project):
    for command, heading in (("check", "Fixes `devfix fix` would apply (2):"), ("diff", "Fixes in the diff (2):")):
        result = invoke_devfix([command, "--show-fixes", "a.py"])
        lines = result.stderr.splitlines()
        assert heading in lines
        assert lines[lines.index(heading) + 1].startswith("  a.py:2:5: DF001 use `device`")
    result = invoke_devfix(["fix", "--show-fixes", "a.py"])
    assert "Fixes applied (2):" in result.stderr.splitlines()


def test_diff_in_json_lists_what_it_fixes_and_fix_in_json_what_remains(project):
    records = json.loads(invoke_devfix(["diff", "--output-format", "json", "a.py"]).stdout)
    assert [record["location"]["row"] for record in records] == [2, 3]
    assert (project / "a.py").read_text() == BUGGY
    fixed = invoke_devfix(["fix", "--output-format", "json", "a.py"])
    assert json.loads(fixed.stdout) == []
    assert "fixed a.py: DF001 ×2" in fixed.stderr
