"""devfix rules reachable as Fixit rules: same findings, same fix."""

from __future__ import annotations

from pathlib import Path

from fixit.engine import LintRunner
from fixit.ftypes import Config

import devfix.fixit_rules as fixit_rules
from devfix.codemods import ALL_RULES
from tests.conftest import run_devfix

SOURCE = b"import torch\nfrom torch.utils.data import DataLoader\nmodel = torch.nn.Linear(2, 2).cuda()\nloader = DataLoader([])\nfor x in loader:\n    model(x)\n"


def test_every_devfix_rule_has_an_adapter():
    assert len(fixit_rules.__all__) == len(ALL_RULES)
    assert all(isinstance(getattr(fixit_rules, name), type) for name in fixit_rules.__all__)


def test_adapter_reports_at_the_finding_and_fixes_like_devfix():
    runner = LintRunner(Path("train.py"), SOURCE)
    violations = list(runner.collect_violations([fixit_rules.DF001HardcodedCuda()], Config(path=Path("train.py"))))
    (violation,) = violations
    assert violation.message.startswith("DF001 `.cuda()` hard-codes the GPU")
    assert (violation.range.start.line, violation.range.start.column) == (3, 8)
    from devfix.codemods import HardcodedCuda

    expected = run_devfix(SOURCE, "train.py", unsafe=False, rules=[HardcodedCuda]).fixed.decode()
    assert runner.apply_replacements(violations).code == expected


def test_clean_code_has_no_violation():
    runner = LintRunner(Path("ok.py"), b"import torch\nx = torch.ones(2)\n")
    rules = [getattr(fixit_rules, name)() for name in fixit_rules.__all__]
    assert list(runner.collect_violations(rules, Config(path=Path("ok.py")))) == []
