"""Which fixes a run applies: a value the CLI, the language server and the engine share without
importing the rules (or libcst)."""

from __future__ import annotations

from dataclasses import dataclass

from devfix.findings import Position

DEVICE_IDIOMS = ("cuda", "accelerator")


@dataclass(frozen=True)
class FixPolicy:
    """Which fixes a pass applies, and how they choose the device. `only` limits it to the finding
    that starts at that position; `device_idiom` is the preamble's form (`[tool.devfix]
    device-idiom`): `cuda` (CUDA or the CPU) or `accelerator` (PyTorch 2.6+: also Apple MPS, Intel
    XPU, ...)."""

    apply: bool = False
    unsafe: bool = False
    only: tuple[str, Position] | None = None
    device_idiom: str = "cuda"
