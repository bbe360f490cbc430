"""DF028 program-device-in-module: a Module's method places its tensors on the program's device while
the program keeps the module on the CPU.

    Before:  DEVICE = torch.device("cuda" if torch.cuda.is_available() else "cpu")
             class Net(nn.Module):
                 def forward(self, x):
                     h = torch.zeros(x.size(0), self.hidden).to(DEVICE)
                     ...
             model = Net()
             out = model(torch.randn(3, 5, 4))
    After:           h = torch.zeros(x.size(0), self.hidden).to(x.device)

Nothing moves `model`, so its layers run on the CPU, and on a GPU machine `h` meets them from CUDA
(SA-ConvLSTM-Pytorch's fixes `df44463`, `5aa2d22`, `5049751`). The tensor follows the module
instead: the method's tensor input (the first parameter it hands straight to a submodule,
`x.device`), else, in a module that builds layers with parameters, its own device
(`next(self.parameters()).device`); otherwise it is reported without a fix. Wherever the module
runs, the tensor is there too, so the fix is right on every device.

Applies only where the file proves that every instance stays on the CPU (`analysis.host_instances`):
each is held by a name or a layer that is only called or asked for an attribute, none is built
moved or moved later (`model.to(device)`, `model.cuda()`), a layer's holder stays on the CPU too,
the model runs (a name holding it is read), and no file beside this one builds the class. The
device is a top-level name the file binds once, to a value naming "cuda" (`torch.device("cuda" if
... else "cpu")`), that the method neither binds nor takes as a parameter.

Refuses: `__init__` (a buffer placed there is DF001's and DF014's concern), a model moved anywhere
or handed to other code (`DataParallel(model)`, `train(model)`), a class that places its own state
(`self.to(DEVICE)`, a layer built moved, `__init__` reading the device), a device the method is
given.
"""

from __future__ import annotations

import libcst as cst

from devfix.analysis.cst_bindings import is_static_method
from devfix.analysis.cst_metadata import PositionProvider
from devfix.analysis.module_classes import class_facts, holds_parameters, module_input
from devfix.analysis.scopes import ScopeTracker
from devfix.codemods.base import DevfixRule
from devfix.findings import Safety


class ProgramDeviceInModule(ScopeTracker, DevfixRule):
    CODE = "DF028"
    NAME = "program-device-in-module"
    SAFETY = Safety.SAFE
    DESCRIPTION = "Module method places tensors on the program's device while the module stays on the CPU"

    def visit_Module(self, node: cst.Module) -> None:
        super().visit_Module(node)
        self._devices = self.facts.program_devices_in_host_classes if self.facts is not None else {}
        self._targets: dict[cst.CSTNode, tuple[str, str]] = {}  # the device name's node → (its name, what replaces it or "")

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        places = self._devices.get(node.name.value)  # (line, byte column) of each device name to replace
        if not places or node not in self.module.body:
            return
        facts = class_facts(node, self.line_of)
        own_device = holds_parameters(facts, self.qualified)
        for name, method in facts.methods.items():
            if name == "__init__":
                continue
            reference = module_input(method, facts, self.builds_module)
            # a static or class method has no `self` to take the module's device from
            own = own_device and not is_static_method(method)
            replacement = f"{reference}.device" if reference is not None else "next(self.parameters()).device" if own else ""
            for device in _names_at(method, places, self._position):
                self._targets[device] = (device.value, replacement)

    def _position(self, node: cst.Name) -> tuple[int, int]:
        start = self.get_metadata(PositionProvider, node).start
        return start.line, self.facts.byte_column(start.line, start.column)

    def leave_Name(self, original_node: cst.Name, updated_node: cst.Name) -> cst.BaseExpression:
        target = self._targets.get(original_node)
        if target is None:
            return updated_node
        device, replacement = target
        message = (f"tensors placed on `{device}` inside a Module whose every instance this program keeps on the CPU: "
                   "on a GPU machine they meet its CPU layers")
        if not replacement:
            self.report(original_node, message + "; place them where the module's input or parameters are", fixable=False)
            return updated_node
        if not self.report(original_node, message, fix_title=f"place them on `{replacement}`"):
            return updated_node
        return cst.parse_expression(replacement)


def _names_at(method: cst.FunctionDef, places: frozenset[tuple[int, int]], position) -> list[cst.Name]:
    """The names in the method's body that stand at one of `places` (`analysis.host_instances`
    found them there)."""
    found: list[cst.Name] = []

    class Finder(cst.CSTVisitor):
        def visit_Name(self, node: cst.Name) -> None:
            if position(node) in places:
                found.append(node)

    method.body.visit(Finder())
    return found
