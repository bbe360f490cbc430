"""DF025: which generators are proven CPU ones, which devices may be a GPU, and how the call is
rewritten (the draw stays on the CPU, then moves)."""

from __future__ import annotations

from devfix.codemods import GeneratorDevice
from tests.conftest import run_devfix

HEAD = "import torch\n\ndevice = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"


def fixed(body: str) -> str:
    return run_devfix(HEAD + body, rules=[GeneratorDevice]).fixed.decode()


def test_a_draw_from_a_cpu_generator_onto_a_device_is_made_on_the_cpu_then_moved():
    assert "x = torch.randn(3, generator=g).to(device)" in fixed("g = torch.Generator().manual_seed(0)\nx = torch.randn(3, generator=g, device=device)\n")
    assert "x = torch.rand(3, generator=g, dtype=torch.float64).to(device)" in fixed(
        "g = torch.Generator('cpu')\nx = torch.rand(3, device=device, generator=g, dtype=torch.float64)\n")
    assert "x = torch.randint(0, 5, (3,), generator=torch.Generator().manual_seed(1)).to(device)" in fixed(
        "x = torch.randint(0, 5, (3,), generator=torch.Generator().manual_seed(1), device=device)\n")


def test_a_trailing_comma_and_the_lines_of_the_call_are_kept():
    out = fixed("g = torch.Generator()\nx = torch.randn(\n    3,\n    generator=g,\n    device=device,\n)\n")
    assert "x = torch.randn(\n    3,\n    generator=g,\n).to(device)\n" in out


def test_a_generator_bound_in_the_function_that_draws_is_the_one_read():
    out = fixed("g = torch.Generator()\n\n\ndef draw(n):\n    g = torch.Generator(device=device)\n    return torch.randn(n, generator=g, device=device)\n")
    assert "torch.randn(n, generator=g, device=device)" in out
    out = fixed("g = torch.Generator()\n\n\ndef draw(n):\n    return torch.randn(n, generator=g, device=device)\n")
    assert "torch.randn(n, generator=g).to(device)" in out


def test_generators_of_unknown_device_and_cpu_draws_are_left_alone():
    for body in (
        "def draw(g, n):\n    return torch.randn(n, generator=g, device=device)\n",  # a parameter
        "g = torch.Generator()\ng = torch.Generator(device=device)\nx = torch.randn(3, generator=g, device=device)\n",
        "g = torch.Generator()\nx = torch.randn(3, generator=g, device='cpu')\n",
        "g = torch.Generator()\nx = torch.randn(3, generator=g, device=torch.device('cpu'))\n",
        "g = torch.Generator()\nx = torch.randn(3, generator=g, device=device, **options)\n",
        "g = torch.Generator()\nx = torch.randn(3, generator=g)\n",
    ):
        assert fixed(body) == HEAD + body


def test_a_parameter_rebound_to_a_cpu_generator_under_an_if_may_still_hold_the_callers():
    """deepinv's tests: `rng` is a fixture (`torch.Generator(device)`), rebound to a CPU one only
    for some operators: elsewhere the draw reads the device generator the caller gave."""
    body = (
        "def test_norm(name, rng, device):\n    if name == 'CS':\n        device = torch.device('cpu')\n"
        "        rng = torch.Generator('cpu')\n    return torch.randn(3, device=device, generator=rng)\n"
    )
    assert fixed(body) == HEAD + body
