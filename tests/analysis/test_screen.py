"""The ast screen may only skip a rule where the rule, run anyway, finds nothing.

Every fixture (before and after), program, seed and clean program is checked: for each rule the
screen rules out, the rule is run on the libcst tree regardless and must report no finding.
"""

from __future__ import annotations

from pathlib import Path

import libcst as cst
import pytest
from libcst.metadata import MetadataWrapper

from devfix.analysis.facts import analyse_file
from devfix.analysis.project import ProjectIndex
from devfix.codemods import ALL_RULES
from devfix.codemods.base import FixPolicy
from devfix.engine import _run_rule
from devfix.suppressions import Suppressions
from tests.conftest import REPO

SOURCES = sorted(
    path
    for folder in ("fixtures", "tests/programs", "tests/clean_programs", "tests/seeds", "examples")
    for path in (REPO / folder).rglob("*.py")
)


def findings_of_screened_out_rules(path: Path) -> list[str]:
    source = path.read_text()
    facts = analyse_file(source, str(path))
    module = cst.parse_module(source)
    wrapper = MetadataWrapper(module, unsafe_skip_copy=True)
    found = []
    for rule in ALL_RULES:
        if rule.has_signals(facts) or not rule.may_apply(source):
            continue
        _, findings = _run_rule(rule, wrapper, str(path), FixPolicy(), Suppressions.from_source(source), ProjectIndex(), facts)
        found += [f"{finding.code} at {finding.start.line}: {finding.message}" for finding in findings]
    return found


@pytest.mark.parametrize("path", SOURCES, ids=lambda path: str(path.relative_to(REPO)))
def test_a_rule_the_screen_rules_out_finds_nothing(path):
    assert findings_of_screened_out_rules(path) == []


def test_the_screen_rules_out_most_rules_on_library_code():
    source = (
        "import torch\nfrom torch import nn\n\n\n"
        "class Block(nn.Module):\n"
        "    def __init__(self, dim):\n"
        "        super().__init__()\n"
        "        self.dim = dim\n"
        "        self.proj = nn.Linear(dim, dim)\n"
        "        self.gamma = nn.Parameter(torch.ones(dim))\n\n"
        "    def forward(self, x):\n"
        "        return self.proj(x) * self.gamma\n"
    )
    facts = analyse_file(source, "block.py")
    assert [rule.CODE for rule in ALL_RULES if rule.may_apply(source, facts)] == []
