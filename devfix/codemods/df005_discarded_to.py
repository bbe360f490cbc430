"""DF005 discarded-to: `x.to(device)` as a statement does nothing to a tensor.

    Before:  t.to(batch.device)
    After:   t = t.to(batch.device)

`Tensor.to`, `.cuda()` and `.cpu()` return a new tensor; only `Module.to` works in place. The rule
acts on a bare statement whose receiver is a name the value analysis proves to hold a tensor
(assigned from a torch call, a tensor computation or a tensor-annotated parameter).

An item of a name the value analysis proves a dict or a list (`batch[key].to(device)`, one index)
is assigned back the same way, `batch[key] = batch[key].to(device)`; a Module item, moved in place,
is then only assigned itself. A tuple, a slice or a container of unknown kind is left alone.

A move to a device is not assigned where the tensor is then given to a callable of the scope that
nothing moves (`D = Discriminator(conv_dim)`, `x.cuda()`, `D(x)`, a GPU unit test of Udacity's
face-generation project): the thrown-away copy is what keeps the program running, and the moved
tensor would meet the CPU model. It is reported without a fix.

Refuses: a tensor the scope only inspects afterwards, until it is bound again (`tensor.cuda(0)`,
then `tensor.is_cuda  # False`: pytorch-book's lesson on what `.cuda()` returns), receivers that may be Modules (a bare `model.to(device)` is correct and stays) or whose
type devfix cannot prove (a name only used like a tensor, `.device`, `.dtype`: Modules have those too); attributes such as `self.table.to(device)` are reported without a fix
(reassigning a Parameter attribute raises, and a buffer is the better fix).
"""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from devfix.analysis.cst_metadata import ParentProvider, PositionProvider
from devfix.analysis.kinds import ITEM_ASSIGNABLE, Kind
from devfix.analysis.placement import as_move
from devfix.analysis.scopes import ScopeTracker
from devfix.codemods.base import DevfixRule
from devfix.findings import Safety

MOVE_METHODS = frozenset({"to", "cuda", "cpu"})
PLACEMENT_ATTRIBUTES = frozenset({"is_cuda", "is_cpu", "device", "get_device"})  # where a tensor is, nothing computed


class DiscardedTo(ScopeTracker, DevfixRule):
    CODE = "DF005"
    NAME = "discarded-to"
    SAFETY = Safety.SAFE
    DESCRIPTION = "Result of Tensor.to()/.cuda()/.cpu() discarded: the tensor does not move"

    def leave_SimpleStatementLine(
        self, original_node: cst.SimpleStatementLine, updated_node: cst.SimpleStatementLine
    ) -> cst.SimpleStatementLine:
        if len(original_node.body) != 1 or not isinstance(original_node.body[0], cst.Expr):
            return updated_node
        call = original_node.body[0].value
        if not (isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute) and call.func.attr.value in MOVE_METHODS):
            return updated_node
        receiver = call.func.value
        method = call.func.attr.value
        if isinstance(receiver, cst.Attribute) and self._is_tensor_attribute(receiver, original_node):
            code = cst.Module([]).code_for_node(receiver)
            self.report(call, f"`{code}.{method}(...)` returns a moved copy that is thrown away; register the "
                        "tensor as a buffer or assign the result", fixable=False)
            return updated_node
        if isinstance(receiver, cst.Subscript) and self._item_of_a_container(receiver):
            code = cst.Module([]).code_for_node(receiver)
            if not self.report(call, f"`{code}.{method}(...)` returns a moved copy that is thrown away: the item does not move",
                               fix_title=f"assign it back to `{code}`"):
                return updated_node
            assign = cst.Assign(targets=[cst.AssignTarget(updated_node.body[0].value.func.value)], value=updated_node.body[0].value)
            return updated_node.with_changes(body=[assign])
        # proven a tensor: a name only used like one (`.device`, `.dtype`) may be a Module, whose
        # `.to()` works in place
        if not (isinstance(receiver, cst.Name) and self.kind_of(receiver) is Kind.TENSOR):
            return updated_node
        name = receiver.value
        reads = _Reads(name)
        self.enclosing_scope(original_node).visit(reads)  # one walk for both questions below
        if self._only_inspected_after(name, original_node, reads.reads):
            return updated_node  # `tensor.cuda(0)`, then `tensor.is_cuda  # False`: a lesson on what `.cuda()` returns
        if as_move(call, self.qualified) is not None and (host := self._given_to_an_unmoved_callable(name, original_node, reads.reads)):
            self.report(call, f"`{name}.{method}(...)` returns a moved copy that is thrown away, but `{name}` is then given "
                        f"to `{host}`, which nothing moves: assigning the copy would split them across devices", fixable=False)
            return updated_node
        if not self.report(call, f"`{name}.{method}(...)` returns a moved copy that is thrown away: `{name}` does not move",
                           fix_title=f"assign it back to `{name}`"):
            return updated_node
        assign = cst.Assign(targets=[cst.AssignTarget(cst.Name(name))], value=updated_node.body[0].value)
        return updated_node.with_changes(body=[assign])

    def _only_inspected_after(self, name: str, statement: cst.SimpleStatementLine, reads: list[_Read]) -> bool:
        """Until `name` is bound again, the scope reads it (`reads`) only for where it is
        (`tensor.is_cuda`, `tensor.device`), if at all: the thrown-away copy changes no computation."""
        facts = self.scope_facts(statement)
        line = self.line_of(statement)
        other_branches = self._other_branches(statement)
        rebound = min((binding.line for binding in facts.bindings.get(name, ())
                       if binding.line > line and not any(first <= binding.line <= last for first, last in other_branches)), default=None)
        later = [read for read in reads if self.line_of(read.name) > line and (rebound is None or self.line_of(read.name) < rebound)]
        return all(isinstance(read.parent, cst.Attribute) and read.parent.attr.value in PLACEMENT_ATTRIBUTES for read in later)

    def _other_branches(self, statement: cst.CSTNode) -> list[tuple[int, int]]:
        """The lines of the `else` branches of the `if` statements whose body holds `statement`: a
        binding there is on no path from it (`if isinstance(s, Tensor): s.to(d)` / `else: s = ...`)."""
        ranges, child = [], statement
        parent = self.get_metadata(ParentProvider, child, None)
        while parent is not None and not isinstance(parent, (cst.FunctionDef, cst.Module)):
            if isinstance(parent, cst.If) and child is parent.body and parent.orelse is not None:
                position = self.get_metadata(PositionProvider, parent.orelse)
                ranges.append((position.start.line, position.end.line))
            child, parent = parent, self.get_metadata(ParentProvider, parent, None)
        return ranges

    def _given_to_an_unmoved_callable(self, name: str, statement: cst.SimpleStatementLine, reads: list[_Read]) -> str | None:
        """The callee of a later call in the scope given `name` (as it is at `statement`) by position
        (one of `reads`), when the scope binds that callee to a call's result (`D = Discriminator(conv_dim)`)
        and moves it nowhere, neither by a move nor with `device=`."""
        facts = self.scope_facts(statement)
        line = self.line_of(statement)
        held = facts._binding_before(name, line)
        calls = [read.grandparent for read in reads if isinstance(read.parent, cst.Arg) and read.parent.keyword is None
                 and not read.parent.star and isinstance(read.grandparent, cst.Call) and isinstance(read.grandparent.func, cst.Name)]
        for call in calls:
            callee, at = call.func.value, self.line_of(call)
            if at <= line or facts._binding_before(name, at) is not held or callee in facts.moved:
                continue
            bound = facts._binding_before(callee, at)
            value = bound.value if bound is not None else None
            if isinstance(value, cst.Call) and not facts.is_device_value(value) and not any(
                    arg.keyword is not None and arg.keyword.value == "device" for arg in value.args):
                return callee
        return None

    def _item_of_a_container(self, receiver: cst.Subscript) -> bool:
        """`batch[key]` (one index, no slice) of a name the value analysis proves a dict or a list:
        the item can be assigned back (a Module item moved in place is assigned itself, harmlessly)."""
        index = receiver.slice[0].slice if len(receiver.slice) == 1 else None
        return isinstance(index, cst.Index) and isinstance(receiver.value, cst.Name) and self.kind_of(receiver.value) in ITEM_ASSIGNABLE

    def _is_tensor_attribute(self, receiver: cst.Attribute, statement: cst.CSTNode) -> bool:
        """`self.x.to(...)` where the class assigns `self.x` from a torch factory call."""
        if not (isinstance(receiver.value, cst.Name) and receiver.value.value == "self"):
            return False
        current = statement
        while current is not None and not isinstance(current, cst.ClassDef):
            current = self.get_metadata(ParentProvider, current, None)
        if current is None:
            return False
        finder = _AttributeAssignments(receiver.attr.value, self.qualified)
        current.visit(finder)
        return finder.assigned_a_tensor and not finder.assigned_a_parameter


@dataclass(frozen=True)
class _Read:
    """A read of a name, with the nodes around it (`tensor.is_cuda`: the Attribute; `D(x)`: the Arg, then the Call)."""

    name: cst.Name
    parent: cst.CSTNode
    grandparent: cst.CSTNode | None


class _Reads(cst.CSTVisitor):
    """Each `name` read outside nested functions (`_Read`)."""

    def __init__(self, name: str) -> None:
        self.name, self.reads = name, []
        self.parents: list[cst.CSTNode] = []

    def on_visit(self, node: cst.CSTNode) -> bool:
        if isinstance(node, cst.Name) and node.value == self.name and self.parents:
            parent = self.parents[-1]
            if not (isinstance(parent, cst.Attribute) and parent.attr is node):  # `x.name` is no read of `name`
                self.reads.append(_Read(node, parent, self.parents[-2] if len(self.parents) > 1 else None))
        nested = isinstance(node, cst.FunctionDef) and any(isinstance(outer, cst.FunctionDef) for outer in self.parents)
        self.parents.append(node)
        return not nested  # the scope's own body, not the functions defined in it

    def on_leave(self, original_node: cst.CSTNode) -> None:
        self.parents.pop()


class _AttributeAssignments(cst.CSTVisitor):
    def __init__(self, attribute: str, qualified) -> None:
        self.attribute, self.qualified = attribute, qualified
        self.assigned_a_tensor = False
        self.assigned_a_parameter = False

    def visit_Assign(self, node: cst.Assign) -> None:
        for target in node.targets:
            expression = target.target
            if isinstance(expression, cst.Attribute) and expression.attr.value == self.attribute and isinstance(node.value, cst.Call):
                names = self.qualified(node.value.func)
                if any(name.startswith("torch.nn.") for name in names):
                    self.assigned_a_parameter = True
                elif any(name.startswith("torch.") for name in names):
                    self.assigned_a_tensor = True
