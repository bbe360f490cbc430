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


def test_adapter_resolves_classes_of_the_project_through_the_real_path(tmp_path):
    (tmp_path / "models.py").write_text("from torch import nn\n\n\nclass Net(nn.Module):\n    pass\n")
    train = tmp_path / "train.py"
    source = (b"import torch\nfrom models import Net\n\ndevice = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"
              b"model = Net()\nx = torch.ones(2).to(device)\nprint(model(x))\n")
    train.write_bytes(source)
    runner = LintRunner(train, source)
    violations = list(runner.collect_violations([fixit_rules.DF003ModuleNotMoved()], Config(path=train, root=tmp_path)))
    assert [violation.message.split()[0] for violation in violations] == ["DF003"]
    assert "model = Net().to(device)" in runner.apply_replacements(violations).code
