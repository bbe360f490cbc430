"""Simulated CUDA for CPU-only machines: run a program as if it had `device_count` GPUs.

    with simulated_cuda():
        model = Net().cuda()          # parameters report device cuda:0; numbers are CPU numbers
        model(torch.randn(2, 3))      # raises the real "Expected all tensors ..." RuntimeError
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager

from devfix.sim.errors import SimulatorUnsupported
from devfix.sim.mode import SimulatedCudaMode, SimulatedState
from devfix.sim.patches import patched_torch

__all__ = ["SimulatorUnsupported", "simulated_cuda"]


_active: list[SimulatedState] = []


def _after_fork_in_child() -> None:
    """A child forked once the program used its GPU (a DataLoader worker) cannot use CUDA, as on
    real hardware: CUDA's state does not survive `fork`."""
    for state in _active:
        state.in_bad_fork = state.in_bad_fork or state.started


os.register_at_fork(after_in_child=_after_fork_in_child)


@contextmanager
def simulated_cuda(device_count: int = 1) -> Iterator[SimulatedState]:
    state = SimulatedState(device_count=device_count)
    _active.append(state)
    try:
        with patched_torch(state), SimulatedCudaMode(state):
            yield state
    finally:
        _active.remove(state)
