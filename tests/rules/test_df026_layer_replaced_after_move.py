"""DF026: a layer given to a model after the model moved goes where the model went."""

from __future__ import annotations

import pytest

from devfix.codemods import LayerReplacedAfterMove
from tests.conftest import run_devfix

HEAD = 'import torch\nfrom torch import nn\ndevice = torch.device("cuda")\n'


def run(body: str):
    return run_devfix(HEAD + body, rules=[LayerReplacedAfterMove])


@pytest.mark.parametrize("move, device", [
    ("model = nn.Sequential(nn.Linear(2, 2)).to(device)\n", "device"),
    ("model = nn.Sequential(nn.Linear(2, 2))\nmodel.to(device)\n", "device"),
    ("model = nn.Sequential(nn.Linear(2, 2))\nmodel.cuda()\n", "next(model.parameters()).device"),
])
def test_a_layer_given_after_the_move_follows_the_model(move, device):
    fixed = run(move + "model.head = nn.Linear(2, 3)\n").fixed.decode()
    assert f"model.head = nn.Linear(2, 3).to({device})\n" in fixed


@pytest.mark.parametrize("body", [
    "model = nn.Sequential(nn.Linear(2, 2))\nmodel.head = nn.Linear(2, 3)\nmodel.to(device)\n",  # given before the move
    "model = nn.Sequential(nn.Linear(2, 2)).to(device)\nmodel.head = nn.Linear(2, 3)\nmodel.to(device)\n",  # moved again
    "model = nn.Sequential(nn.Linear(2, 2)).to(device)\nmodel.head = nn.Linear(2, 3)\nmodel.head.to(device)\n",  # its own move
    "model = nn.Sequential(nn.Linear(2, 2)).to(device)\nmodel.head = nn.ReLU()\n",  # no parameters
    "model = nn.Sequential(nn.Linear(2, 2)).to(device)\nmodel.head = nn.Linear(2, 3, device=device)\n",  # built in place
    "model = nn.Sequential(nn.Linear(2, 2)).to(device)\nmodel = nn.Sequential()\nmodel.head = nn.Linear(2, 3)\n",  # rebound
    "model = nn.Sequential(nn.Linear(2, 2)).to(device)\nmodel.head = make_head()\n",  # not proven a Module
])
def test_layers_already_placed_or_of_another_model_are_left_alone(body):
    result = run(body)
    assert result.fixed == result.source and not result.findings


def test_a_sequential_head_whose_layers_with_parameters_are_moved_where_built_is_left_alone():
    head = "import torch\nimport torch.nn as nn\n\ndevice = torch.device('cuda')\nmodel = nn.Sequential(nn.Linear(4, 8)).to(device)\n"
    placed = "model.classifier = nn.Sequential(\n    nn.Dropout(p=0.2),\n    nn.Linear(8, 3).to(device))\n"
    assert run_devfix(head + placed, rules=[LayerReplacedAfterMove]).fixed.decode() == head + placed
    partly = "model.classifier = nn.Sequential(nn.Linear(8, 8).to(device), nn.Linear(8, 3))\n"
    assert run_devfix(head + partly, rules=[LayerReplacedAfterMove]).fixed.decode() == head + partly.replace("))\n", ")).to(device)\n")


def test_a_sequential_of_listed_layers_given_to_a_moved_model_is_moved_too():
    source = (
        "import torch\nimport torch.nn as nn\n\ndevice = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"
        "model = nn.Sequential(nn.Linear(4, 4)).to(device)\nlayers = [nn.Linear(4, 2), nn.ReLU()]\n"
        "model.head = nn.Sequential(*layers)\n"
    )
    fixed = run_devfix(source, rules=[LayerReplacedAfterMove]).fixed.decode()  # run_devfix fails on a rule's crash
    assert "model.head = nn.Sequential(*layers).to(device)\n" in fixed
