"""DF024 cuda-only-call: `torch.cuda.synchronize()` and its kin fail on a machine without CUDA.

    Before:  torch.cuda.synchronize()
    After:   if torch.cuda.is_available():
                 torch.cuda.synchronize()

A program that picks its device at run time still crashes on the CPU at the first
`torch.cuda.synchronize()` of its timing loop, `torch.cuda.reset_peak_memory_stats()`, or
`print(torch.cuda.get_device_name(0))`: "Torch not compiled with CUDA enabled". Such a statement
does nothing without CUDA, so it runs only when CUDA is available; on a GPU nothing changes. The
calls and what counts as a check for CUDA are in `analysis/cuda_only_calls.py`.

Entering `with torch.cuda.device(0):` selects GPU 0 and raises the same way: its device becomes
`0 if torch.cuda.is_available() else -1` (a negative index selects nothing). Only a literal GPU
counts (`0`, `"cuda:0"`): a name or an attribute may already hold -1 without CUDA (SimCLR's
`args.gpu_index`).

Pinned memory needs an accelerator too ("Cannot access accelerator device when none is
available"), and only speeds up copies to it: in a program, `x.pin_memory()` becomes
`(x.pin_memory() if torch.cuda.is_available() else x)` (for a receiver read twice without effect:
a name, an attribute, an item; anything else is reported without a fix) and a torch factory's
`pin_memory=True` becomes `pin_memory=torch.cuda.is_available()`. A DataLoader's `pin_memory=True`
only warns without an accelerator and is left alone.

Refuses: a call already checked (under `if torch.cuda.is_available():`, after `if device.type !=
"cuda": return`, in a `try` that catches the error, in a function every caller calls under such a
test); tests; files that place on several GPUs on purpose (DF001's markers). A call whose value is
used (`name = torch.cuda.get_device_name(0)`, `start = torch.cuda.Event(enable_timing=True)`, a
`print` that also computes something else) is reported without a fix in a program, and left alone
in a library module (its function may be meant for CUDA only).
"""

from __future__ import annotations

from collections.abc import Sequence

import libcst as cst

from devfix.analysis.cst_bindings import calls_in
from devfix.analysis.cst_metadata import ParentProvider, PositionProvider
from devfix.analysis.cuda_only_calls import DEVICE_CONTEXT, PIN_KEYWORD, PIN_METHOD, UncheckedCudaCall
from devfix.codemods.base import DevfixRule
from devfix.codemods.edits import starts_a_cell
from devfix.findings import Safety


class CudaOnlyCall(DevfixRule):
    CODE = "DF024"
    NAME = "cuda-only-call"
    SAFETY = Safety.SAFE
    DESCRIPTION = "A torch.cuda call that needs CUDA, with no check for it: the program fails without CUDA"

    def visit_Module(self, node: cst.Module) -> None:
        self._guards: dict[int, cst.If] = {}  # the `if`s this pass wrote (kept alive: ids stay unique)

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.BaseExpression:
        """A call no statement guard can fix: reported (in a program) without a fix; pinned memory
        is pinned only when CUDA is available."""
        found = self._unchecked(original_node)
        if found is None or not self.may_add_globals:
            return updated_node
        if found.name in (PIN_METHOD, PIN_KEYWORD):
            return self._pin_when_available(original_node, updated_node, found)
        if found.name == DEVICE_CONTEXT and self._selects_a_gpu_in_a_with(original_node):
            if not self.report(original_node, _message(found), fix_title="select the GPU only when CUDA is available"):
                return updated_node
            index = updated_node.args[0].value
            chosen = cst.parse_expression(f"0 if {self.torch_name()}.cuda.is_available() else -1").with_changes(body=index)
            return updated_node.with_changes(args=[updated_node.args[0].with_changes(value=chosen)])
        statement = self._statement(original_node)
        if found.guardable and statement is not None and len(statement.body) == 1:
            return updated_node  # `leave_SimpleStatementLine` guards it
        self.report(original_node, f"{_message(found)}; check `torch.cuda.is_available()` first", fixable=False)
        return updated_node

    def leave_SimpleStatementLine(
        self, original_node: cst.SimpleStatementLine, updated_node: cst.SimpleStatementLine
    ) -> cst.BaseStatement:
        if len(original_node.body) != 1 or not isinstance(original_node.body[0], cst.Expr):
            return updated_node
        calls = calls_in(original_node)
        found = [unchecked for call in calls if (unchecked := self._unchecked(call)) is not None]
        if not found or not all(unchecked.guardable for unchecked in found):
            return updated_node
        first = next(call for call in calls if self._unchecked(call) is found[0])
        if not self.report(first, _message(found[0]), fix_title="run it only when CUDA is available"):
            return updated_node
        test = cst.parse_expression(f"{self.torch_name()}.cuda.is_available()")
        body = cst.IndentedBlock(body=[updated_node.with_changes(leading_lines=[])])
        guard = cst.If(test=test, body=body, leading_lines=updated_node.leading_lines)
        self._guards[id(guard)] = guard
        return guard

    def _pin_when_available(self, original: cst.Call, updated: cst.Call, found: UncheckedCudaCall) -> cst.BaseExpression:
        """`x.pin_memory()` → `(x.pin_memory() if torch.cuda.is_available() else x)` for a receiver
        read twice without effect (a name, an attribute, an item); `pin_memory=True` of a torch
        factory → `pin_memory=torch.cuda.is_available()`. Pinning only speeds up copies to the GPU."""
        available = f"{self.torch_name()}.cuda.is_available()"
        message = (f"`{_code(original)}` pins memory, which needs an accelerator: without one it raises "
                   "\"Cannot access accelerator device when none is available\"")
        if found.name == PIN_KEYWORD:
            if not self.report(original, message, fix_title="pin only when CUDA is available"):
                return updated
            args = [arg.with_changes(value=cst.parse_expression(available)) if arg.keyword and arg.keyword.value == "pin_memory" else arg
                    for arg in updated.args]
            return updated.with_changes(args=args)
        receiver = original.func.value
        if not _read_without_effect(receiver):
            self.report(original, message + "; pin only when CUDA is available", fixable=False)
            return updated
        if not self.report(original, message, fix_title="pin only when CUDA is available"):
            return updated
        kept = updated.func.value
        return cst.IfExp(test=cst.parse_expression(available), body=updated, orelse=kept,
                         lpar=[cst.LeftParen()], rpar=[cst.RightParen()])

    def leave_IndentedBlock(self, original_node: cst.IndentedBlock, updated_node: cst.IndentedBlock) -> cst.IndentedBlock:
        return updated_node.with_changes(body=self._merged(updated_node.body))

    def leave_Module(self, original_node: cst.Module, updated_node: cst.Module) -> cst.Module:
        return super().leave_Module(original_node, updated_node.with_changes(body=self._merged(updated_node.body)))

    def _merged(self, statements: Sequence[cst.BaseStatement]) -> list[cst.BaseStatement]:
        """Guards written for consecutive statements become one `if` (comments between them stay
        above their statements), not across the cells of a notebook (its program marks where each
        cell starts: the cells run one by one)."""
        merged: list[cst.BaseStatement] = []
        for statement in statements:
            if id(statement) in self._guards and merged and id(merged[-1]) in self._guards and not starts_a_cell(statement):
                inner = statement.body.body[0].with_changes(leading_lines=statement.leading_lines)
                previous = merged[-1]
                merged[-1] = previous.with_changes(body=previous.body.with_changes(body=[*previous.body.body, inner]))
                self._guards[id(merged[-1])] = merged[-1]
            else:
                merged.append(statement)
        return merged

    def _unchecked(self, call: cst.Call) -> UncheckedCudaCall | None:
        if self.facts is None:
            return None
        position = self.get_metadata(PositionProvider, call)
        start, end = position.start, position.end
        found = self.facts.cuda_only_calls.get((start.line, self.facts.byte_column(start.line, start.column)))
        # `torch.cuda.current_stream().synchronize()` starts where its receiver does: the call must end there too
        ends_there = found is not None and (found.call.end_lineno, found.call.end_col_offset) == (end.line, self.facts.byte_column(end.line, end.column))
        return found if ends_there else None

    def _selects_a_gpu_in_a_with(self, call: cst.Call) -> bool:
        """`with torch.cuda.device(0):`: the item of a `with`, given one positional device.
        `torch.cuda.device(-1)` is documented to do nothing, on any machine."""
        return isinstance(self.get_metadata(ParentProvider, call, None), cst.WithItem) and len(call.args) == 1 \
            and call.args[0].keyword is None and not call.args[0].star

    def _statement(self, node: cst.CSTNode) -> cst.SimpleStatementLine | None:
        statement = self.statement_of(node)
        return statement if isinstance(statement, cst.SimpleStatementLine) else None


def _read_without_effect(node: cst.BaseExpression) -> bool:
    """`x`, `self.images`, `batch["x"]`, `xs[i]`: reading it twice gives the same value, no call runs."""
    if isinstance(node, cst.Name):
        return True
    if isinstance(node, cst.Attribute):
        return _read_without_effect(node.value)
    if isinstance(node, cst.Subscript) and len(node.slice) == 1 and isinstance(node.slice[0].slice, cst.Index):
        index = node.slice[0].slice.value
        return _read_without_effect(node.value) and isinstance(index, (cst.Name, cst.Integer, cst.SimpleString))
    return False


def _code(node: cst.CSTNode) -> str:
    return cst.Module([]).code_for_node(node)


def _message(found: UncheckedCudaCall) -> str:
    return (f"`{found.name}` needs CUDA and nothing checks for it: without CUDA it raises "
            "\"Torch not compiled with CUDA enabled\", even where the program runs on the CPU")
