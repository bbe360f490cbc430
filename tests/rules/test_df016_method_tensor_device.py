"""DF016 on a GAN loss that builds its targets with a tensor type it holds (`self.Tensor`): only a
CPU type that no construction in the file replaces proves the targets are made on the CPU."""

from __future__ import annotations

from devfix.codemods import MethodTensorDevice
from tests.conftest import run_devfix

GAN_LOSS = """
import torch
import torch.nn as nn

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")


class GANLoss(nn.Module):
    def __init__(self, tensor=torch.FloatTensor):
        super(GANLoss, self).__init__()
        self.Tensor = tensor
        self.loss = nn.MSELoss()

    def get_target_tensor(self, input):
        return self.Tensor(input.size()).fill_(1.0)

    def forward(self, input):
        return self.loss(input, self.get_target_tensor(input))


D = nn.Linear(3, 1).to(device)
criterion = GANLoss({arguments})
criterion(D(torch.ones(2, 3).to(device)))
"""


def fixed(arguments: str) -> str:
    return run_devfix(GAN_LOSS.format(arguments=arguments), rules=[MethodTensorDevice]).fixed.decode()


def test_the_default_cpu_type_builds_targets_that_follow_the_input():
    assert "return self.Tensor(input.size()).to(input.device).fill_(1.0)" in fixed("")
    assert "return self.Tensor(input.size()).to(input.device).fill_(1.0)" in fixed("tensor=torch.DoubleTensor")


def test_a_type_the_caller_chooses_for_its_device_is_left_alone():
    chosen = "tensor=torch.cuda.FloatTensor if torch.cuda.is_available() else torch.FloatTensor"
    assert "return self.Tensor(input.size()).fill_(1.0)" in fixed(chosen)


POLICY = """
import torch
import torch.nn as nn


class Policy(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Linear(4, 2)

    def act(self, state, step):
{body}
"""


def fixed_policy(body: str) -> str:
    return run_devfix(POLICY.format(body=body), rules=[MethodTensorDevice]).fixed.decode()


def test_a_tensor_made_of_a_parameters_data_takes_the_modules_device():
    """`state` is a numpy observation where `torch.from_numpy` reads it: `state.device` would be
    an AttributeError, or "cpu" under numpy 2; the name only later holds the tensor fed to `self.net`."""
    out = fixed_policy("        state = torch.from_numpy(state).float()\n        return self.net(state)")
    assert "state = torch.from_numpy(state).to(self.device).float()" in out
    out = fixed_policy("        state = torch.tensor([state, step])\n        return self.net(state)")
    assert "state = torch.tensor([state, step], device=self.device)" in out


def test_a_factory_beside_a_tensor_parameter_still_follows_it():
    out = fixed_policy("        out = self.net(state)\n        return out + torch.ones(2)")
    assert "return out + torch.ones(2, device=state.device)" in out
