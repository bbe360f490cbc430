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
