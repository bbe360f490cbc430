"""DF012 lookup-table-device: a CPU table held by a plain object is indexed with device indices.

    Before:  alpha_bar = self.alphas_cumprod[t]          (in a scheduler class, t on the GPU)
    After:   alpha_bar = self.alphas_cumprod.to(t.device)[t]

Indexing a CPU tensor with CUDA indices raises "indices should be either on cpu or on the same
device as the indexed tensor (cpu)". When the table belongs to an object that is not an
`nn.Module` (a noise scheduler, a loss helper), nothing moves it with the model, so the table is
aligned to the index at the use site (a CPU index into a CUDA table is fine, so only this
direction is needed). Tables of `nn.Module`s should be buffers instead (module rules).

Refuses: indices that may be Python ints or lists (no tensor evidence), tables that are not
assigned from torch calls in the class, and Module classes.
"""

from __future__ import annotations

import libcst as cst

from devfix.analysis.scopes import ScopeTracker
from devfix.analysis.tensors import is_tensor_expression
from devfix.codemods.base import DevfixRule
from devfix.findings import Safety


class LookupTableDevice(ScopeTracker, DevfixRule):
    CODE = "DF012"
    NAME = "lookup-table-device"
    SAFETY = Safety.SAFE
    DESCRIPTION = "CPU table of a plain object indexed with device indices"
    TRIGGERS = ('class ',)

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        filename = self.context.filename or "<memory>"
        is_module = any(
            self.project.is_module_class(filename, name) is not False
            for base in node.bases
            for name in (self.qualified(base.value) or {cst.Module([]).code_for_node(base.value)})
        )
        self._tables = set() if is_module else _tensor_attributes(node, self.qualified)

    def leave_ClassDef(self, original_node: cst.ClassDef, updated_node: cst.ClassDef) -> cst.ClassDef:
        self._tables = set()
        return updated_node

    def leave_Subscript(self, original_node: cst.Subscript, updated_node: cst.Subscript) -> cst.BaseExpression:
        table = original_node.value
        if not (getattr(self, "_tables", None) and _is_self_attribute(table) and table.attr.value in self._tables):
            return updated_node
        if len(original_node.slice) != 1 or not isinstance(original_node.slice[0].slice, cst.Index):
            return updated_node
        index = original_node.slice[0].slice.value
        reference = self._reference(original_node, index)
        if reference is None:
            return updated_node
        code = cst.Module([]).code_for_node(table)
        index_code = cst.Module([]).code_for_node(index)
        if not self.report(original_node, f"`{code}` is a CPU tensor of a plain object; indexing it with `{index_code}` "
                           "fails when the index is on a GPU", fix_title=f"align it to `{reference}.device` first"):
            return updated_node
        aligned = cst.Call(func=cst.Attribute(value=updated_node.value, attr=cst.Name("to")),
                           args=[cst.Arg(cst.parse_expression(f"{reference}.device"))])
        return updated_node.with_changes(value=aligned)

    def _reference(self, subscript: cst.Subscript, index: cst.BaseExpression) -> str | None:
        """The index itself when it is surely a tensor; else a tensor parameter of the method: the
        index normally lives with the data, and a CPU or integer index into a GPU table is fine."""
        tensors = self.scope_tensors(subscript)
        if isinstance(index, cst.Name) and index.value in tensors:
            return index.value
        if not isinstance(index, cst.Name):
            return None
        scope = self.enclosing_scope(subscript)
        if isinstance(scope, cst.Module):
            return None
        for param in scope.params.params:
            if param.name.value in tensors:
                return param.name.value
        return None


def _is_self_attribute(node: cst.BaseExpression) -> bool:
    return isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name) and node.value.value == "self"


def _tensor_attributes(class_node: cst.ClassDef, qualified) -> set[str]:
    """`self.<name>` attributes the class assigns only from torch computations."""
    finder = _SelfAssignments()
    class_node.body.visit(finder)
    tables = set()
    for name, values in finder.values.items():
        if values and all(is_tensor_expression(value, set(), qualified) and not _placed(value) for value in values):
            tables.add(name)
    return tables


def _placed(value: cst.BaseExpression) -> bool:
    """The class already puts this table somewhere (`.to(device)`, `.cuda()`, `device=`)."""
    finder = _PlacementFinder()
    value.visit(finder)
    return finder.found


class _PlacementFinder(cst.CSTVisitor):
    def __init__(self) -> None:
        self.found = False

    def visit_Attribute(self, node: cst.Attribute) -> None:
        if node.attr.value in ("to", "cuda"):
            self.found = True

    def visit_Arg(self, node: cst.Arg) -> None:
        if node.keyword is not None and node.keyword.value == "device":
            self.found = True


class _SelfAssignments(cst.CSTVisitor):
    def __init__(self) -> None:
        self.values: dict[str, list[cst.BaseExpression]] = {}

    def visit_Assign(self, node: cst.Assign) -> None:
        for target in node.targets:
            if _is_self_attribute(target.target):
                self.values.setdefault(target.target.attr.value, []).append(node.value)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        if _is_self_attribute(node.target):
            self.values.setdefault(node.target.attr.value, []).append(node.value)
