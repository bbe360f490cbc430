"""`devfix.check_source` / `devfix.fix_source`: the library API gives what the command line gives."""

from __future__ import annotations

import doctest

import pytest

import devfix
from tests.cli_runner import invoke_devfix

BUGGY = "import torch\nx = torch.zeros(2).cuda()\ny = x.numpy()\n"
UNSAFE_ONLY = (
    "import torch\nfrom torch import nn\n\n\nclass Stack(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
    "        self.layers = [nn.Linear(2, 2)]\n\n    def forward(self, x):\n        return self.layers[0](x)\n"
)


def test_check_source_reports_what_check_reports_and_changes_nothing():
    result = devfix.check_source(BUGGY, "train.py")
    assert [(finding.code, finding.start.line) for finding in result.findings] == [("DF001", 2), ("DF008", 3)]
    assert result.text == BUGGY and not result.changed


def test_fix_source_equals_devfix_fix_byte_for_byte(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "train.py").write_text(BUGGY)
    invoke_devfix(["fix", "train.py"])
    result = devfix.fix_source(BUGGY, "train.py")
    assert result.text == (tmp_path / "train.py").read_text()
    assert [finding.code for finding in result.applied] and result.changed


def test_unsafe_fixes_only_when_asked():
    assert devfix.fix_source(UNSAFE_ONLY, "stack.py").text == UNSAFE_ONLY
    assert "nn.ModuleList" in devfix.fix_source(UNSAFE_ONLY, "stack.py", unsafe_fixes=True).text


def test_select_and_ignore():
    assert [finding.code for finding in devfix.check_source(BUGGY, "train.py", select=["DF008"]).findings] == ["DF008"]
    assert [finding.code for finding in devfix.check_source(BUGGY, "train.py", ignore=["df008"]).findings] == ["DF001"]


def test_a_source_that_does_not_parse_raises_source_error():
    with pytest.raises(devfix.SourceError, match="syntax error"):
        devfix.fix_source("def f(:\n")


def test_the_documented_example_runs():
    from devfix import api

    failures, tried = doctest.testmod(api)
    assert tried > 0 and failures == 0


def test_the_api_is_not_imported_by_the_package_itself():
    import subprocess
    import sys

    code = "import sys, devfix; print('devfix.api' in sys.modules, 'libcst' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split() == ["False", "False"]
