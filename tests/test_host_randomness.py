"""Draws aimed at the GPU come from the CPU's generator on the CUDA machine (`host_randomness`).

No GPU here: the `meta` device stands in for it (its draws consume no random numbers, as CUDA's
consume none of the CPU's), and `cpu` as the redirected device checks the values and autograd."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from devfix.host_randomness import HostDrawnRandomness

DRAWS = {
    "randn": lambda device: torch.randn(3, 2, device=device),
    "rand": lambda device: torch.rand(5, device=torch.device(device)),
    "randint": lambda device: torch.randint(0, 9, (4,), device=device),
    "randperm": lambda device: torch.randperm(6, device=device),
    "randn_like": lambda device: torch.randn_like(torch.empty(3, device=device)),
    "normal_": lambda device: torch.empty(4, device=device).normal_(),
    "nn.init.uniform_": lambda device: torch.nn.init.uniform_(torch.empty(2, 3, device=device)),
    "a layer made on the device": lambda device: torch.nn.Linear(3, 2, device=device).weight,
}


def _next_draws_after(draw) -> torch.Tensor:
    torch.manual_seed(0)
    draw()
    return torch.rand(2)


@pytest.mark.parametrize("draw", DRAWS.values(), ids=DRAWS.keys())
def test_a_draw_on_the_device_uses_the_cpu_generator_and_stays_on_the_device(draw):
    on_the_cpu_machine = _next_draws_after(lambda: draw("cpu"))
    assert not torch.equal(_next_draws_after(lambda: draw("meta")), on_the_cpu_machine)  # meta draws nothing
    with HostDrawnRandomness("meta"):
        assert draw("meta").device.type == "meta"
        assert torch.equal(_next_draws_after(lambda: draw("meta")), on_the_cpu_machine)


def test_values_of_a_dropout_and_a_leaf_drawn_with_requires_grad():
    x = torch.randn(4, 5)
    torch.manual_seed(3)
    expected = F.dropout(x, 0.5, training=True)
    torch.manual_seed(3)
    with HostDrawnRandomness("cpu"):
        dropped = F.dropout(x, 0.5, training=True)
        weight = torch.randn(2, device="cpu", requires_grad=True)
    assert torch.equal(dropped, expected)
    assert weight.is_leaf and weight.requires_grad


def test_a_draw_given_its_own_generator_is_left_alone():
    """`torch.randn(..., device="cuda", generator=cpu_generator)` must still fail as on a GPU."""
    generator = torch.Generator().manual_seed(0)
    with HostDrawnRandomness("meta"):
        drawn = torch.randn(3, device="cpu", generator=generator)
    assert torch.equal(drawn, torch.randn(3, generator=torch.Generator().manual_seed(0)))
