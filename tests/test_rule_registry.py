"""The registry describes the rules without importing them, and a check that needs no rewrite never
imports libcst (start-up cost: the parser and the rules' modules take about 0.3 s to import)."""

from __future__ import annotations

import subprocess
import sys

from devfix.codemods import ALL_RULES
from devfix.rule_registry import RULE_SPECS, select_specs


def test_every_rule_has_a_spec_that_loads_it():
    assert [spec.CODE for spec in RULE_SPECS] == [rule.CODE for rule in ALL_RULES]
    assert [spec.load() for spec in RULE_SPECS] == list(ALL_RULES)
    assert all(rule.SPEC.CODE == rule.CODE for rule in ALL_RULES)


def test_selection_by_prefix_and_ignore():
    assert [spec.CODE for spec in select_specs(("DF01",), ("DF011",))] == [
        "DF010", "DF012", "DF013", "DF014", "DF015", "DF016", "DF017", "DF018", "DF019",
    ]


def run_python(code: str) -> str:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()


def test_the_cli_imports_no_rule_and_no_libcst():
    assert run_python("import sys, devfix.cli; print(sorted(m for m in sys.modules if m.startswith(('libcst', 'devfix.codemods'))))") == "[]"


def test_a_check_with_nothing_to_find_never_imports_libcst(tmp_path):
    (tmp_path / "layer.py").write_text(
        "import torch\nfrom torch import nn\n\n\nclass Block(nn.Module):\n    def __init__(self, dim):\n"
        "        super().__init__()\n        self.proj = nn.Linear(dim, dim)\n\n    def forward(self, x):\n"
        "        return self.proj(x)\n"
    )
    (tmp_path / "train.py").write_text("import torch\nmodel = torch.nn.Linear(2, 2).cuda()\n")
    code = (  # what a worker process runs for each file (`devfix check` analyses in workers)
        "import sys\nfrom devfix.fix_policy import FixPolicy\nfrom devfix.rule_registry import select_specs\n"
        "from devfix.runner import Job, process_path\n"
        "codes = tuple(spec.CODE for spec in select_specs())\n"
        "def check(name):\n"
        f"    result = process_path(Job({str(tmp_path)!r} + '/' + name, codes, FixPolicy(), 1 << 20, named=True))\n"
        "    return len(result.findings), 'libcst' in sys.modules\n"
        "print(check('layer.py'), check('train.py'))\n"
    )
    assert run_python(code) == "(0, False) (1, True)"


def test_hard_coded_cuda_in_a_test_file_is_the_test_s_intent():
    """lit-gpt's `@RunIf(min_cuda_gpus=1)` tests name `torch.device("cuda")`: DF001 leaves tests alone."""
    from tests.conftest import run_devfix

    source = 'import pytest\nimport torch\n\n\ndef test_on_gpu():\n    device = torch.device("cuda")\n    assert torch.ones(1, device=device).sum() == 1\n'
    assert run_devfix(source, "tests/test_gpu.py").fixed.decode() == source
    assert 'torch.cuda.is_available()' in run_devfix(source.replace("def test_on_gpu", "def main"), "train.py").fixed.decode()
