"""DF007 load-map-location: `torch.load` of a GPU checkpoint fails on a CPU-only machine.

    Before:  model.load_state_dict(torch.load("ckpt.pt"))
    After:   model.load_state_dict(torch.load("ckpt.pt", map_location="cpu"))

Without `map_location`, tensors saved on a GPU are restored to that GPU, and a machine without one
raises "Attempting to deserialize object on a CUDA device". When the result feeds
`load_state_dict` (directly, through a variable, or through `ckpt["model"]`), `"cpu"` is right:
`load_state_dict` copies into the parameters, which keep their device. A loaded tensor that meets
the program's device values (`batch - mean`) is loaded onto the device in scope (or the
conventional `device` preamble). Anything else (a pickled model, weights a helper copies into a
model, features) keeps the placement it had where it ran: `map_location=None if
torch.cuda.is_available() else "cpu"` (onto a GPU, a file saved from the CPU would go to the GPU,
where the program never put it: a 7B model's weights twice in GPU memory, `.numpy()` failing); but
a load whose next use moves it
(`torch.load(p).to(device)`, `if opt.cuda: model = model.cuda()`) gets `"cpu"`: the program places
it itself, and on the device in scope it would sit on the GPU where the program chose the CPU.
`torch.jit.load` of a TorchScript module traced on a GPU fails the same way on a CPU-only machine
and is placed by the same reasoning (`"cpu"` where the script moves it next, or places nothing).
Data handed to a Dataset (`TensorDataset(data["x"], ...)`, a `Dataset` class of the file) is loaded
with `"cpu"`: DataLoader workers and numpy need it on the host. So is anything in a program that never places values on a
device (no `.cuda()`, `.to(...)`, `device=`): it runs on the CPU, and a device preamble would be noise.

Refuses: calls that already pass `map_location` (by keyword or position), and a load not fed to
`load_state_dict` of what the same scope saved with `torch.save` into the same `io.BytesIO()` (a
clone through an in-memory buffer: the copy is meant to be where the original is); `map_location="cpu"`
followed by `.to(device)` is the correct idiom and stays. Tests are left alone, and so is a library
module's `torch.load` unless it feeds `load_state_dict` (only a program knows where other data
should go: a library may load onto a device on purpose).
"""

from __future__ import annotations

import libcst as cst

from devfix.analysis.call_sites import argument_for
from devfix.analysis.cst_bindings import target_leaves
from devfix.analysis.cst_metadata import ParentProvider
from devfix.analysis.device_scope import device_for
from devfix.analysis.facts import FileRole
from devfix.analysis.scopes import ScopeTracker
from devfix.analysis.torch_api import CHECKPOINT_LOADERS
from devfix.analysis.torch_names import dotted_head, keyword
from devfix.codemods.base import DevfixRule
from devfix.codemods.edits import add_keyword
from devfix.findings import Safety


class LoadMapLocation(ScopeTracker, DevfixRule):
    CODE = "DF007"
    NAME = "load-map-location"
    SAFETY = Safety.SAFE
    DESCRIPTION = "torch.load without map_location: GPU checkpoints fail on CPU-only machines"

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.BaseExpression:
        names = self.qualified(original_node.func)
        if not names & CHECKPOINT_LOADERS or keyword(original_node, "map_location") is not None:
            return updated_node
        positional = [arg for arg in original_node.args if arg.keyword is None]
        if len(positional) > 1 or any(arg.star for arg in original_node.args):
            return updated_node
        message = "checkpoint loaded without `map_location`: tensors saved on a GPU fail to load on a CPU-only machine"
        if self._feeds_load_state_dict(original_node):  # right in any file: the parameters keep their device
            return self._load_with(original_node, updated_node, message, '"cpu"', 'load it with `map_location="cpu"`')
        if self._saved_here(original_node):
            return updated_node  # a clone of what this process holds, meant to be where the original is
        if self.facts is not None and self.facts.role is not FileRole.PROGRAM:
            return updated_node  # where anything else goes, only a program knows
        if self._moved_before_use(original_node):  # the program places it itself, maybe only with --cuda
            return self._load_with(original_node, updated_node, message, '"cpu"', 'load it with `map_location="cpu"`: the code moves it next')
        if self._feeds_a_dataset(original_node) or not self.file_places_devices():
            # data for a Dataset, or a program that never places anything on a GPU: the host
            return self._load_with(original_node, updated_node, message, '"cpu"', 'load the data with `map_location="cpu"`')
        if not self._meets_device_values(original_node):
            # where the program puts it is unknown: keep what it does where it runs (the GPU it was
            # saved from), and load onto the CPU only where there is no GPU
            torch = self._torch_head(original_node.func) or self.torch_name()
            return self._load_with(original_node, updated_node, message, f'None if {torch}.cuda.is_available() else "cpu"',
                                   "load it onto the CPU where there is no GPU")
        choice = device_for(self, original_node)
        if choice is None:
            self.report(original_node, message, fixable=False)
            return updated_node
        if not self.report(original_node, message, fix_title=f"load it onto `{choice.name}`"):
            return updated_node
        return add_keyword(updated_node, "map_location", self.use_device(choice))

    def _torch_head(self, func: cst.BaseExpression) -> str | None:
        """`T` of `T.load(...)` where `T` is bound to torch there; not `model_zoo` of AdvSemiSeg's
        `model_zoo.load_url(...)` (`from torch.utils import model_zoo`: it has no `cuda`)."""
        head = dotted_head(func) if isinstance(func, cst.Attribute) else None
        if head is None:
            return None
        rest = cst.Module([]).code_for_node(func)[len(head):]
        return head if f"torch{rest}" in self.qualified(func) else None

    def _load_with(self, original: cst.Call, updated: cst.Call, message: str, location: str, title: str) -> cst.Call:
        """The finding, and `map_location=<location>` when the fix applies."""
        if not self.report(original, message, fix_title=title):
            return updated
        return add_keyword(updated, "map_location", location)

    def _saved_here(self, call: cst.Call) -> bool:
        """`torch.save(module, buffer)` then `torch.load(buffer)` in the same scope, `buffer` an
        `io.BytesIO()` (a clone through serialization): what is read was written by this process,
        where it meant the copy to be (a file it saved may be meant to land elsewhere)."""
        source = argument_for(call, "f", ["f"])
        if not isinstance(source, cst.Name):
            return False
        saves = _SavesInto(source.value, self.line_of(call), self.line_of, self.qualified)
        self.enclosing_scope(call).visit(saves)
        return saves.found and saves.in_memory

    def _assigned_name(self, call: cst.Call) -> str | None:
        """`name` of `name = torch.load(...)`."""
        parent = self.get_metadata(ParentProvider, call, None)
        if isinstance(parent, cst.Assign) and len(parent.targets) == 1 and isinstance(parent.targets[0].target, cst.Name):
            return parent.targets[0].target.value
        return None

    def _meets_device_values(self, call: cst.Call) -> bool:
        """`mean = torch.load(p)` then `batch - mean` with `batch` on a device: the loaded value
        must be where the program's device values are."""
        name = self._assigned_name(call)
        if name is None:
            return False
        facts = self.scope_facts(call)
        meetings = _Meetings(name)
        self.enclosing_scope(call).visit(meetings)
        return any(facts.is_device_value(other) for other in meetings.others)

    def _feeds_load_state_dict(self, call: cst.Call) -> bool:
        parent = self.get_metadata(ParentProvider, call, None)
        if isinstance(parent, cst.Arg):
            return _is_load_state_dict(self.get_metadata(ParentProvider, parent, None))
        name = self._assigned_name(call)
        if name is not None:
            finder = _StateDictUses(name)
            self.enclosing_scope(call).visit(finder)
            return finder.inside > 0 and finder.outside == 1  # the assignment itself is the one outside use
        return False

    def _moved_before_use(self, call: cst.Call) -> bool:
        """`torch.load(...).to(device)`, or `model = torch.load(...)` whose next use moves it
        (`if opt.cuda: model = model.cuda()`): where it goes is the program's own choice, and a
        load onto the device in scope would put it on the GPU when the program chose the CPU."""
        parent = self.get_metadata(ParentProvider, call, None)
        if isinstance(parent, cst.Attribute) and parent.attr.value in MOVES:
            return True
        name = self._assigned_name(call)
        if name is None:
            return False
        uses = _UsesAfter(name, self.line_of(call), self.line_of)
        self.enclosing_scope(call).visit(uses)
        return uses.first_is_a_move is True

    def _feeds_a_dataset(self, call: cst.Call) -> bool:
        """`data = torch.load("train.pt")` handed to a dataset (`TensorDataset(data["x"], ...)`, a
        Dataset class of the project): data for DataLoader workers and numpy, so it stays on the CPU."""
        name = self._assigned_name(call)
        if name is None:
            return False
        finder = _DatasetArguments(name, self._is_dataset_class)
        self.enclosing_scope(call).visit(finder)
        return finder.found

    def _is_dataset_class(self, callee: cst.BaseExpression) -> bool:
        for name in self.qualified(callee):
            if name.startswith("torch.utils.data."):
                return True
            if self._subclasses_dataset(name):
                return True
        return False

    def _subclasses_dataset(self, class_name: str) -> bool:
        for statement in self.module.body:
            if isinstance(statement, cst.ClassDef) and statement.name.value == class_name:
                return any(name.startswith("torch.utils.data.") for base in statement.bases for name in self.qualified(base.value))
        return False


MOVES = ("to", "cuda", "cpu")


class _UsesAfter(cst.CSTVisitor):
    """Whether the first read of `name` after line `after` is a move, `name.to(...)`/`.cuda()`."""

    def __init__(self, name: str, after: int, line_of) -> None:
        self.name, self.after, self.line_of = name, after, line_of
        self.first_is_a_move: bool | None = None

    def visit_Assign(self, node: cst.Assign) -> bool:
        node.value.visit(self)  # the value is read before the targets are bound
        for target in node.targets:
            self._visit_target(target.target)
        return False

    def _visit_target(self, target: cst.BaseExpression) -> None:
        """Names bound by a target are no reads (`x, y = pipeline(args)`); `x[i]` and `x.a` read `x`."""
        for leaf in target_leaves(target):
            if not isinstance(leaf, cst.Name):
                leaf.visit(self)

    def visit_Attribute(self, node: cst.Attribute) -> bool:
        if self.first_is_a_move is None and isinstance(node.value, cst.Name) and node.value.value == self.name and self.line_of(node) > self.after:
            self.first_is_a_move = node.attr.value in MOVES
            return False
        return True

    def visit_Name(self, node: cst.Name) -> None:
        if self.first_is_a_move is None and node.value == self.name and self.line_of(node) > self.after:
            self.first_is_a_move = False


class _Meetings(cst.CSTVisitor):
    """The operands that meet `name` (or `name[...]`) in arithmetic and comparisons."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.others: list[cst.BaseExpression] = []

    def _is_name(self, node: cst.BaseExpression) -> bool:
        node = node.value if isinstance(node, cst.Subscript) else node
        return isinstance(node, cst.Name) and node.value == self.name

    def visit_BinaryOperation(self, node: cst.BinaryOperation) -> None:
        if self._is_name(node.left):
            self.others.append(node.right)
        elif self._is_name(node.right):
            self.others.append(node.left)

    def visit_Comparison(self, node: cst.Comparison) -> None:
        operands = [node.left, *(item.comparator for item in node.comparisons)]
        if any(self._is_name(operand) for operand in operands):
            self.others += [operand for operand in operands if not self._is_name(operand)]


class _DatasetArguments(cst.CSTVisitor):
    """Is `name` (or `name[...]`) an argument of a call that builds a dataset?"""

    def __init__(self, name: str, is_dataset_class) -> None:
        self.name, self.is_dataset_class = name, is_dataset_class
        self.found = False

    def visit_Call(self, node: cst.Call) -> None:
        for arg in node.args:
            value = arg.value.value if isinstance(arg.value, cst.Subscript) else arg.value
            if isinstance(value, cst.Name) and value.value == self.name and self.is_dataset_class(node.func):
                self.found = True


def _is_load_state_dict(node: cst.CSTNode | None) -> bool:
    return isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value == "load_state_dict"


class _StateDictUses(cst.CSTVisitor):
    """Counts uses of `name` inside and outside `load_state_dict(...)` arguments."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.inside = 0
        self.outside = 0
        self._depth = 0

    def visit_Call(self, node: cst.Call) -> None:
        if _is_load_state_dict(node):
            self._depth += 1

    def leave_Call(self, original_node: cst.Call) -> None:
        if _is_load_state_dict(original_node):
            self._depth -= 1

    def visit_Name(self, node: cst.Name) -> None:
        if node.value == self.name:
            if self._depth:
                self.inside += 1
            else:
                self.outside += 1


class _SavesInto(cst.CSTVisitor):
    """Is there a `torch.save(obj, <name>)` before line `before` (in the scope visited)?"""

    def __init__(self, name: str, before: int, line_of, qualified) -> None:
        self.name, self.before, self.line_of, self.qualified = name, before, line_of, qualified
        self.found = False
        self.in_memory = False  # the name is bound to `io.BytesIO()` (by `with ... as` or an assignment)

    def visit_WithItem(self, node: cst.WithItem) -> None:
        if node.asname is not None and isinstance(node.asname.name, cst.Name) and node.asname.name.value == self.name:
            self.in_memory = self._is_bytes_io(node.item)

    def visit_Assign(self, node: cst.Assign) -> None:
        if any(isinstance(target.target, cst.Name) and target.target.value == self.name for target in node.targets):
            self.in_memory = self._is_bytes_io(node.value)

    def _is_bytes_io(self, value: cst.BaseExpression) -> bool:
        return isinstance(value, cst.Call) and "io.BytesIO" in self.qualified(value.func)

    def visit_Call(self, node: cst.Call) -> None:
        if "torch.save" not in self.qualified(node.func) or self.line_of(node) >= self.before:
            return
        target = argument_for(node, "f", ["obj", "f"])
        if isinstance(target, cst.Name) and target.value == self.name:
            self.found = True
