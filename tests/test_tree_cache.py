"""The language server's worker reuses the tree (and its metadata) of the text it just analysed for
the quick fix asked next: the fix must be exactly the one a fresh run makes, and the cache must
never answer for other bytes."""

from __future__ import annotations

from pathlib import Path

import pytest

from devfix import background, engine
from devfix.analysis.project import ProjectIndex
from devfix.background import Request
from devfix.codemods import ALL_RULES
from devfix.fix_policy import FixPolicy
from devfix.fixture_cases import discover_cases
from devfix.tree_cache import TreeCache

REPO = Path(__file__).resolve().parents[1]
CASES_PER_RULE = 2  # the cache is shared by every rule: two buggy cases of each show each rule's fixes agree


def _cases_of_each_rule():
    """The first buggy `.py` cases of each rule's fixtures (all of them cost a minute of CI for no
    more rules covered)."""
    taken: dict[str, int] = {}
    for case in discover_cases(REPO / "fixtures"):
        rule = case.name.split("/", 1)[0]
        if case.suffix == ".py" and not case.is_clean and taken.get(rule, 0) < CASES_PER_RULE:
            taken[rule] = taken.get(rule, 0) + 1
            yield case


CASES = list(_cases_of_each_rule())
TWO_FINDINGS = "import torch\nmodel = torch.nn.Linear(2, 2).cuda()\nx = torch.ones(2).cuda()\nprint(model(x))\n"


def fresh_fix(text: str, path: str, policy: FixPolicy) -> str | None:
    """What the worker answered before it kept trees: parse and resolve everything again."""
    project = ProjectIndex({str(Path(path).resolve()): text})
    result = engine.process(text.encode(), path, ALL_RULES, project, policy)
    return result.fixed.decode() if result.changed else None


@pytest.fixture
def trees(monkeypatch) -> TreeCache:
    cache = TreeCache()
    monkeypatch.setattr(background, "TREES", cache)
    return cache


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.name)
def test_each_quick_fix_after_the_analysis_equals_a_fresh_run(case, trees):
    text = case.before.read_text(encoding="utf-8")
    request = Request(text, str(case.before))
    outcome = background.analyse(request)
    assert trees.get(text.encode()) is not None
    fixable = [finding for finding in outcome.findings if finding.fix_safety is not None]
    for finding in fixable:
        policy = FixPolicy(apply=True, unsafe=True, only=(finding.code, finding.start))
        assert background.fix(request, policy) == fresh_fix(text, str(case.before), policy), finding
    everything = FixPolicy(apply=True, unsafe=True)
    assert background.fix(request, everything) == fresh_fix(text, str(case.before), everything)


def test_a_fix_after_the_analysis_parses_nothing_again(trees, monkeypatch):
    request = Request(TWO_FINDINGS, "train.py")
    findings = background.analyse(request).findings
    parsed: list[bytes] = []
    real_parse = engine.parse
    monkeypatch.setattr(engine, "parse", lambda source: parsed.append(source) or real_parse(source))
    first = findings[0]
    fixed = background.fix(request, FixPolicy(apply=True, unsafe=True, only=(first.code, first.start)))
    assert fixed is not None and fixed != TWO_FINDINGS
    assert parsed == []
    background.analyse(Request(fixed, "train.py"))  # other bytes: parsed anew
    assert parsed == [fixed.encode()]


def test_one_fix_changes_only_its_own_finding(trees):
    request = Request(TWO_FINDINGS, "train.py")
    _model, tensor = sorted(background.analyse(request).findings, key=lambda finding: finding.start.line)
    fixed = background.fix(request, FixPolicy(apply=True, unsafe=True, only=(tensor.code, tensor.start)))
    assert "nn.Linear(2, 2).cuda()" in fixed and "torch.ones(2).cuda()" not in fixed


def test_the_oldest_tree_makes_room():
    cache = TreeCache(size=2)
    for text in (b"a = 1\n", b"b = 2\n"):
        cache.remember(text, object())
    assert cache.get(b"a = 1\n") is not None  # now the newest
    cache.remember(b"c = 3\n", object())
    assert cache.get(b"b = 2\n") is None
    assert cache.get(b"a = 1\n") is not None and cache.get(b"c = 3\n") is not None
