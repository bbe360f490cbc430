"""Simulated CUDA for CPU-only machines: run a program as if it had `device_count` GPUs.

    with simulated_cuda():
        model = Net().cuda()          # parameters report device cuda:0; numbers are CPU numbers
        model(torch.randn(2, 3))      # raises the real "Expected all tensors ..." RuntimeError
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from devfix.sim.errors import SimulatorUnsupported
from devfix.sim.mode import SimulatedCudaMode, SimulatedState
from devfix.sim.patches import patched_torch

__all__ = ["SimulatorUnsupported", "simulated_cuda"]


@contextmanager
def simulated_cuda(device_count: int = 1) -> Iterator[SimulatedState]:
    state = SimulatedState(device_count=device_count)
    with patched_torch(state), SimulatedCudaMode(state):
        yield state
