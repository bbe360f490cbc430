"""`analysis.returned_pairs`: a factory a function returns beside a tensor computed from its
parameters counts only when every caller then gives the two, as unpacked, to one call or operator."""

from __future__ import annotations

import ast

import pytest

from devfix.analysis.facts import FileFacts
from devfix.analysis.project import ProjectIndex
from devfix.analysis.returned_pairs import ReturnedPair

HEADER = "import torch\nimport torch.nn.functional as F\n\n\n"
HELPER = """def info_nce(features, temperature=0.1):
    features = F.normalize(features, dim=1)
    sim = torch.matmul(features, features.T)
    sim = sim[~torch.eye(sim.shape[0], dtype=torch.bool)]
    logits = sim.view(features.shape[0], -1)
    labels = {factory}
    {after}
    return {returned}


"""
CALLER = """def step(model, x, criterion):
    logits, labels = info_nce(model(x))
    {use}
"""


def pairs(helper: str, caller: str) -> list[ReturnedPair]:
    source = HEADER + helper + caller
    facts = FileFacts(ast.parse(source), source, "loss.py", None)
    return [pair for found in facts.returned_pairs.values() for pair in found]


def build(factory="torch.zeros(logits.shape[0], dtype=torch.long)", after="pass", returned="logits / temperature, labels",
          use="return criterion(logits, labels)") -> list[ReturnedPair]:
    return pairs(HELPER.format(factory=factory, after=after, returned=returned), CALLER.format(use=use))


def test_labels_returned_beside_logits_that_every_caller_joins_take_their_device():
    assert build() == [ReturnedPair(function_line=5, binding_line=10, name="labels", partner="logits")]
    assert [pair.partner for pair in build(returned="labels, logits.float()")] == ["logits"]
    assert build(factory="torch.full((logits.shape[0],), 1).long()")  # tensor methods of a factory
    assert build(after="logits = logits / temperature", returned="logits, labels")  # rebound from itself
    assert [pair.partner for pair in build(returned="sim, labels")] == ["sim"]  # a tensor of the features too
    assert build(use="loss = logits.sum() + F.cross_entropy(logits, labels)\n    return loss")


@pytest.mark.parametrize("change", [
    {"factory": "torch.zeros(logits.shape[0], dtype=torch.long, device=logits.device)"},  # placed already
    {"factory": "torch.zeros(logits.shape[0], generator=torch.Generator())"},
    {"factory": "torch.zeros(logits.shape[0]).to(logits.device)"},
    {"factory": "make_labels(logits)"},  # no factory
    {"after": "print(labels.sum())"},  # read again before the return
    {"after": "logits = torch.randn(4, 3)"},  # the partner rebound to something else below the factory
    {"returned": "labels"},  # no tuple
    {"use": "return criterion(logits, labels.to(logits.device))"},  # the caller places them
    {"use": "return logits.argmax(1).cpu() == labels"},
    {"use": "return (logits.argmax(1) == labels).float().mean()"},  # not the names as unpacked
])
def test_anything_else_is_no_pair(change):
    assert build(**change) == []


def test_a_partner_made_on_the_host_is_no_pair():
    helper = HELPER.replace("features = F.normalize(features, dim=1)", "features = torch.randn(8, 4)")
    assert pairs(helper.format(factory="torch.zeros(4)", after="pass", returned="logits, labels"), CALLER.format(use="return criterion(logits, labels)")) == []


def test_every_use_of_the_function_must_join_the_pair():
    helper = HELPER.format(factory="torch.zeros(logits.shape[0], dtype=torch.long)", after="pass", returned="logits, labels")
    joined = CALLER.format(use="return criterion(logits, labels)")
    assert pairs(helper, joined)
    assert pairs(helper, joined + "\n\nresult = info_nce(torch.randn(4, 3))\n") == []  # kept whole
    assert pairs(helper, joined + "\n\nlosses = list(map(info_nce, []))\n") == []  # handed on
    assert pairs(helper, "") == []  # never called


MOCO = """import torch
import torch.nn as nn


class MoCo(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Linear(4, 4)
        self.T = 0.07

    def forward(self, x):
        logits = {logits}
        labels = torch.zeros(logits.shape[0], dtype=torch.long)
        return logits, labels


model = MoCo()
criterion = nn.CrossEntropyLoss()
{use}
"""


@pytest.mark.parametrize(("logits", "use", "paired"), [
    ("self.encoder(x) / self.T", "output, target = model(torch.randn(2, 4))\nloss = criterion(output, target)", True),
    # computed from the module's `self` only: no tensor of the input
    ("self.T * torch.ones(2, 3)", "output, target = model(torch.randn(2, 4))\nloss = criterion(output, target)", False),
    # the instance is handed on: its calls are not all in view
    ("self.encoder(x) / self.T", "output, target = model(torch.randn(2, 4))\nloss = criterion(output, target)\nrun(model)", False),
    ("self.encoder(x) / self.T", "output = model(torch.randn(2, 4))", False),
])
def test_a_modules_forward_pairs_when_every_call_of_its_instances_joins_them(logits, use, paired):
    source = MOCO.format(logits=logits, use=use)
    facts = FileFacts(ast.parse(source), source, "moco.py", None)
    assert bool(facts.returned_pairs) is paired


def test_a_function_another_file_uses_is_no_pair(tmp_path):
    """`from losses import info_nce` in a script beside it: that caller may keep the labels on the host."""
    helper = HEADER + HELPER.format(factory="torch.zeros(logits.shape[0], dtype=torch.long)", after="pass", returned="logits, labels")
    source = helper + CALLER.format(use="return criterion(logits, labels)")
    losses = tmp_path / "losses.py"
    losses.write_text(source)
    facts = FileFacts(ast.parse(source), source, str(losses), ProjectIndex())
    assert facts.returned_pairs
    (tmp_path / "evaluate.py").write_text("from losses import info_nce\n\nlogits, labels = info_nce(features)\nprint(labels.numpy())\n")
    facts = FileFacts(ast.parse(source), source, str(losses), ProjectIndex())
    assert facts.returned_pairs == {}
