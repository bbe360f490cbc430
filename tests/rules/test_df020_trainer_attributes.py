"""DF020 on a plain class whose model the code holding the object moves (`agent.q.to(device)`):
what a fixture cannot show in one program."""

from __future__ import annotations

from devfix.codemods import TrainerAttributes
from tests.conftest import run_devfix

AGENT = """import torch
import torch.nn as nn


class Agent:
    def __init__(self):
        self.device = torch.device("cpu")
        self.q = nn.Linear(4, 2)

    def act(self, state):
        return self.q(state).argmax()


device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
{use}
"""


def fixed(use: str) -> str:
    return run_devfix(AGENT.format(use=use), rules=[TrainerAttributes]).fixed.decode()


def test_the_input_goes_where_the_moved_model_is_not_to_the_stored_device():
    result = fixed("agent = Agent()\nagent.q.to(device)\nprint(agent.act(torch.zeros(4)))")
    assert "        state = state.to(next(self.q.parameters()).device)\n" in result
    assert "self.device)" not in result


def test_an_object_whose_model_nobody_moves_needs_nothing():
    use = "agent = Agent()\nprint(agent.act(torch.zeros(4)))"
    assert fixed(use) == AGENT.format(use=use)


def test_calls_on_the_moved_object_that_place_their_inputs_need_nothing():
    use = "agent = Agent()\nagent.q.to(device)\nprint(agent.act(torch.zeros(4).to(device)))\nidle = Agent()\nprint(idle.act(torch.zeros(4)))"
    assert fixed(use) == AGENT.format(use=use)
