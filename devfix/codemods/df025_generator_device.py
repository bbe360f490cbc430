"""DF025 generator-device: a random draw made on a device from a CPU generator.

    Before:  generator = torch.Generator().manual_seed(0)
             latents = torch.randn(n, 8, generator=generator, device=device)
    After:   latents = torch.randn(n, 8, generator=generator).to(device)

A generator draws only on its own device: on a GPU the call raises "Expected a 'cuda' device type
for generator but found 'cpu'". The draw is made on the CPU, with the generator as it is, and then
moved: the numbers are the same on every machine (a CUDA generator would draw others), and on the
CPU nothing changes. What counts as a CPU generator and as a device that may be a GPU is in
`analysis/generator_draws.py`.

Refuses: generators of unknown device (a parameter, a name bound more than once or by a loop),
devices spelled as the CPU, calls spreading `**kwargs`.
"""

from __future__ import annotations

import libcst as cst

from devfix.analysis.cst_metadata import PositionProvider
from devfix.analysis.generator_draws import CpuGeneratorDraw
from devfix.codemods.base import DevfixRule
from devfix.codemods.edits import moved_to, without_keyword
from devfix.findings import Safety


class GeneratorDevice(DevfixRule):
    CODE = "DF025"
    NAME = "generator-device"
    SAFETY = Safety.SAFE
    DESCRIPTION = "A random draw onto a device from a CPU generator: it raises on a GPU"

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.BaseExpression:
        draw = self._draw(original_node)
        device = next((arg.value for arg in original_node.args if arg.keyword is not None and arg.keyword.value == "device"), None)
        if draw is None or device is None:
            return updated_node
        device_code = cst.Module([]).code_for_node(device)
        if not self.report(original_node, f"`{draw.generator}` is a CPU generator: it cannot draw on `{device_code}` when "
                           "that is a GPU", fix_title=f"draw on the CPU with it, then move to `{device_code}`"):
            return updated_node
        return moved_to(without_keyword(updated_node, "device"), device_code)

    def _draw(self, call: cst.Call) -> CpuGeneratorDraw | None:
        if self.facts is None:
            return None
        start = self.get_metadata(PositionProvider, call).start
        return self.facts.cpu_generator_draws.get((start.line, self.facts.byte_column(start.line, start.column)))
