"""`analysis.sampled_batches`: names a plain class's method unpacks from a batch another class of
the file samples on the host, as DF020 moves them (and only then)."""

from __future__ import annotations

import pytest

from devfix.analysis.project import ProjectIndex
from devfix.codemods import ALL_RULES
from devfix.engine import process
from devfix.fix_policy import FixPolicy

AGENT = '''\
import numpy as np
import torch
from torch import nn

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")


class Buffer:
    def __init__(self):
        self.rows = []

    def sample(self):
        states = torch.from_numpy(np.stack(self.rows)).float()
        rewards = torch.from_numpy(np.ones((len(self.rows), 1))).float()
        return states, rewards


class Agent:
    def __init__(self):
        self.q = nn.Linear(3, 1).to(device)
        self.memory = Buffer()

    def step(self):
        batch = self.memory.sample()
        return self.learn(batch)

    def learn(self, batch):
        states, rewards = batch
        return (rewards + self.q(states)).sum()
'''


def fixed(source: str) -> str:
    return process(source.encode(), "agent.py", ALL_RULES, ProjectIndex(), FixPolicy(apply=True, unsafe=True)).fixed.decode()


def test_names_unpacked_from_a_sampled_host_batch_are_moved_where_they_meet_the_model():
    after = fixed(AGENT)
    assert "self.q(states.to(next(self.q.parameters()).device))" in after
    assert "rewards.to(next(self.q.parameters()).device) + " in after


@pytest.mark.parametrize(
    ("change", "why"),
    [
        (("        batch = self.memory.sample()\n", "        batch = self.memory.sample()\n        batch = (batch[0], batch[1])\n"),
         "the caller binds the batch twice"),
        (("        return self.learn(batch)\n", "        return self.learn(batch) + self.learn(self.other())\n\n    def other(self):\n        return None\n"),
         "another call passes something else"),
        (("        return states, rewards\n", "        return states.to(device), rewards.to(device)\n"), "the buffer places its batch"),
        (("        states = torch.from_numpy(np.stack(self.rows)).float()\n", "        states = np.stack(self.rows)\n"),
         "the buffer returns a numpy array"),
        (("        self.memory = Buffer()\n", "        self.memory = Buffer()\n        self.memory = Buffer()\n"), "the buffer is built twice"),
    ],
)
def test_a_batch_not_proven_host_tensors_from_every_call_is_left_alone(change, why):
    source = AGENT.replace(*change)
    assert source != AGENT
    learn = source[source.index("    def learn"):]
    assert learn in fixed(source), why


@pytest.mark.parametrize(("sample", "moved"), [
    ("self.memory.sample()", True),
    ("self.memory.sample(32)", True),  # what it is given changes nothing: every return is made on the host
    ("self.memory.rows", False),  # no method of the buffer
])
def test_names_a_method_unpacks_from_the_sample_itself_are_moved(sample, moved):
    """A DQN agent's `update`: `states, rewards = self.buffer.sample(batch_size)`, then the networks."""
    source = AGENT.replace("    def sample(self):", "    def sample(self, n=None):").replace(
        "        batch = self.memory.sample()\n        return self.learn(batch)\n",
        f"        states, rewards = {sample}\n        return (rewards + self.q(states)).sum()\n")
    after = fixed(source)
    assert ("self.q(states.to(next(self.q.parameters()).device))" in after) is moved
