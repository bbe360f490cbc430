"""DF012 lookup-table-device: a CPU table held by a plain object or a class attribute meets device tensors.

    Before:  alpha_bar = self.alphas_cumprod[t]          (in a scheduler class, t on the GPU)
    After:   alpha_bar = self.alphas_cumprod.to(t.device)[t]
    Before:  return (x - self.mean) / self.std           (in a normalizer class)
    After:   return (x - self.mean.to(x.device)) / self.std.to(x.device)

Indexing a CPU tensor with CUDA indices raises "indices should be either on cpu or on the same
device as the indexed tensor (cpu)". When the table belongs to an object that is not an
`nn.Module` (a noise scheduler, a loss helper), nothing moves it with the model, so the table is
aligned to the index at the use site (a CPU index into a CUDA table is fine, so only this
direction is needed). Tables of `nn.Module`s should be buffers instead (module rules).

A helper of the file that every call hands such a table (`extract(self.alphas_cumprod, t, x)`),
or a CPU table of the top level (`extract(alphas_cumprod.sqrt(), t, x.shape)` with
`alphas_cumprod = torch.cumprod(1 - betas, 0)` built from numbers, placed nowhere), aligns it where
it indexes it with an index proven to be a tensor: `schedule[t]` → `schedule.to(t.device)[t]`. So
does a function that reads such a top-level table as a global: `alphas_cumprod[t]` in
`def q_sample(x0, t, noise)` → `alphas_cumprod.to(t.device)[t]`; and the top level itself, with an
index it placed on a device (`class_weights[y]` in a training loop that moved `y`). Such a table
in arithmetic with a parameter of a top-level function (`(images - MEAN) / STD` in `def
normalize(images)`) is aligned to the parameter when the file calls the function only with
tensors for it, one of them at least on a device: `MEAN.to(images.device)`.

Reading such a table by indices with a tensor method is indexing too: `a.gather(-1, t)`,
`index_select(0, t)`, `take(t)` (the annotated diffusion's `extract` without its `t.cpu()`) →
`a.to(t.device).gather(-1, t)`; so is a torch function that does (`F.embedding(ids, TABLE)` →
`F.embedding(ids, TABLE.to(ids.device))`, `torch.gather(table, 0, t)`). A top-level table may also come from a function of the file that
returns a tensor made on the host (`betas = linear_beta_schedule(timesteps)`, `analysis.host_helpers`), and a plain object's table from a
method of its class that does (`self.beta = self.prepare_noise_schedule()`) or from its other tables
(`self.alpha = 1.0 - self.beta`).

Arithmetic with a method argument is aligned the same way when the argument is certainly a
tensor: evidence in the method, or a tensor passed at every call of an instance in the file
(`normalize = Normalizer(...)`, `normalize(batch)`; a moved model's output, through tensor methods
too, or a value the analysis proves a tensor), and so is what the method computes from such
arguments (`mask = labels == c`). Without that, a diagnostic without a fix. An update in place of
such a table, or of an item of it (a meter's `self.correct[c] += (preds[mask] == c).sum()`), keeps
the table where it is: the value is brought to it, `.to(self.correct.device)`; so does a join of the
table with itself (`self.losses = torch.cat([self.losses, loss.detach()])`, an accumulator made empty
in `__init__`): `loss.detach().to(self.losses.device)`.

A tensor of the class body (`MEAN = torch.tensor([0.5, 0.4, 0.3]).view(1, 3, 1, 1)`), read as
`self.MEAN` in a method, is no buffer either, of a Module too: `.to()` leaves it on the CPU. It is
aligned the same way, `(x - self.MEAN.to(x.device))`, where `x` is proven a tensor (for `forward`,
a tensor at every call of the Module's instances in the file).

Refuses: indices that may be Python ints or lists (no tensor evidence), top-level tables in a file
that uses `torch.distributed.rpc` (a parameter server's table: RPC carries CPU tensors only), tables that are not
assigned from torch calls in the class, and the attributes a Module stores in `self` (DF014 makes them buffers).
"""

from __future__ import annotations

from collections.abc import Callable

import libcst as cst

from devfix.analysis.call_sites import argument_at, arguments_for, constructor_values_for
from devfix.analysis.cst_metadata import ParentProvider
from devfix.analysis.given_tensors import GivenTensors
from devfix.analysis.host_made import HostContext, host_made
from devfix.analysis.kinds import Kind
from devfix.analysis.parameter_meetings import assignments_of
from devfix.analysis.placement import PlacementFacts
from devfix.analysis.scopes import ScopeTracker
from devfix.analysis.tensors import is_tensor_expression, without_tensor_methods
from devfix.analysis.torch_api import (
    DEVICE_CHANGING_METHODS,
    INDEX_READING_FUNCTIONS,
    INDEX_READING_METHODS,
    JOINS,
    PLACEMENT_KEEPING_METHODS,
)
from devfix.codemods.base import DevfixRule
from devfix.codemods.edits import moved_to, parenthesized
from devfix.findings import Safety

MODULE_RETURNING_METHODS = (DEVICE_CHANGING_METHODS - {"type_as", "pin_memory"}) | PLACEMENT_KEEPING_METHODS


class LookupTableDevice(ScopeTracker, DevfixRule):
    CODE = "DF012"
    NAME = "lookup-table-device"
    SAFETY = Safety.SAFE
    DESCRIPTION = "CPU table of a plain object indexed with device indices"

    def visit_Module(self, node: cst.Module) -> None:
        super().visit_Module(node)
        self._constants_of: dict[cst.ClassDef, set[str]] = {}  # class → its tensor constants (`_class_constants`)
        self._tensor_arguments = _TensorArguments(self)
        node.visit(self._tensor_arguments)
        self._helper_tables = _HelperTables(self, node)
        node.visit(self._helper_tables)
        self._table_parameters: set[str] = set()
        self._given_device_verdicts: dict[tuple[str, str], bool] = {}  # (function, parameter) → `_given_device_tensors`

    def plain_tables(self, node: cst.ClassDef) -> set[str]:
        """The CPU tables of a class that `.to()` does not move: those its methods store in a plain
        object, and its class-level constants (`MEAN = torch.tensor(...)` in the class body, for a
        Module too: a class attribute is no buffer)."""
        constants = self._class_constants(node)
        if self._is_module_class(node):
            return constants
        return _tensor_attributes(node, self.qualified, lambda: self._host_given(node), lambda method: self._returns_host_tensors(node, method)) | constants

    def _returns_host_tensors(self, class_def: cst.ClassDef, method: str) -> bool:
        """That method of the class returns, at every `return`, a tensor made on the host that is
        not 0-dim (`return torch.linspace(...)`, `analysis.host_helpers`)."""
        summary = self.facts.method_summary(class_def.name.value, method) if self.facts is not None else None
        return summary is not None and summary.returns_host_tensors and not summary.may_return_a_scalar

    def _host_given(self, class_def: cst.ClassDef) -> frozenset[str]:
        """The `__init__` parameters every construction of the class in the file gives a value made
        on the host (`GaussianDiffusion(beta_schedule(50))`, the file's helper returning
        `torch.linspace(...)`): what the class computes from them is on the CPU too."""
        init = next((item for item in class_def.body.body if isinstance(item, cst.FunctionDef) and item.name.value == "__init__"), None) \
            if isinstance(class_def.body, cst.IndentedBlock) else None
        if init is None or self.facts is None:
            return frozenset()

        def cpu_helper(name: str) -> bool:
            helper = self.facts.local_helper(name)
            return helper is not None and helper.returns_host_tensors

        found = set()
        for param in init.params.params[1:]:
            values = constructor_values_for(self.module, class_def, param.name.value)
            if values and all(value is not None and host_made(value, self.line_of(value), 0, HostContext(
                    self.scope_facts(value), self.qualified, cpu_helper, kind_of=self.kind_of)) for value in values):
                found.add(param.name.value)
        return frozenset(found)

    def _class_constants(self, node: cst.ClassDef) -> set[str]:
        """`_class_constants` of the class, once a class (`plain_tables` and the messages ask)."""
        if node not in self._constants_of:
            self._constants_of[node] = _class_constants(node, self.qualified)
        return self._constants_of[node]

    def _is_module_class(self, node: cst.ClassDef) -> bool:
        filename = self.context.filename or "<memory>"
        return any(
            self.project.is_module_class(filename, name) is not False
            for base in node.bases
            for name in (self.qualified(base.value) or {cst.Module([]).code_for_node(base.value)})
        )

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self._class_name = node.name.value
        self._class_node = node
        self._tables = self.plain_tables(node)

    def _holder(self, attribute: str) -> str:
        """How a message names where the table lives."""
        return "a class attribute, which `.to()` does not move" if attribute in self._class_constants(self._class_node) else "a plain object"

    def leave_ClassDef(self, original_node: cst.ClassDef, updated_node: cst.ClassDef) -> cst.ClassDef:
        self._tables = set()
        return updated_node

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        if node in self.module.body:  # a helper of the file handed a table (`extract(self.betas, t, x)`)
            self._table_parameters = self._helper_tables.table_parameters(node)

    def leave_FunctionDef(self, original_node: cst.FunctionDef, updated_node: cst.FunctionDef) -> cst.FunctionDef:
        if original_node in self.module.body:
            self._table_parameters = set()
        return updated_node

    def leave_Subscript(self, original_node: cst.Subscript, updated_node: cst.Subscript) -> cst.BaseExpression:
        slices = original_node.slice
        index = slices[0].slice.value if len(slices) == 1 and isinstance(slices[0].slice, cst.Index) else None
        found = self._table_alignment(original_node, original_node.value, index) if index is not None else None
        if found is None:
            return updated_node
        what, reference = found
        code, index_code = cst.Module([]).code_for_node(original_node.value), cst.Module([]).code_for_node(index)
        if not self.report(original_node, f"`{code}` is {what}; indexing it with `{index_code}` fails when the index is on a GPU",
                           fix_title=f"align it to `{reference}.device` first"):
            return updated_node
        return updated_node.with_changes(value=moved_to(updated_node.value, f"{reference}.device"))

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.BaseExpression:
        """`a.gather(-1, t)` (`index_select(0, t)`, `take(t)`) of such a table: gathering with
        indices on a GPU from a CPU table fails as indexing does (the annotated diffusion's
        `extract(a, t, x_shape)` without its `t.cpu()`)."""
        func = original_node.func
        if self.qualified(func) & INDEX_READING_FUNCTIONS.keys():
            return self._align_function_table(original_node, updated_node)
        if not (isinstance(func, cst.Attribute) and func.attr.value in INDEX_READING_METHODS):
            return updated_node
        position = INDEX_READING_METHODS[func.attr.value]
        index = next((arg.value for arg in original_node.args if arg.keyword is not None and arg.keyword.value == "index"), None)
        positional = [arg.value for arg in original_node.args if arg.keyword is None and not arg.star]
        index = index if index is not None else positional[position] if position < len(positional) else None
        found = self._table_alignment(original_node, func.value, index) if isinstance(index, cst.Name) else None
        if found is None:
            return updated_node
        what, reference = found
        code = cst.Module([]).code_for_node(func.value)
        if not self.report(original_node, f"`{code}` is {what}; `{func.attr.value}` with `{index.value}` fails when the index is on a GPU",
                           fix_title=f"align it to `{reference}.device` first"):
            return updated_node
        return updated_node.with_changes(func=func.with_changes(value=moved_to(updated_node.func.value, f"{reference}.device")))

    def _align_function_table(self, original_node: cst.Call, updated_node: cst.Call) -> cst.Call:
        """`F.embedding(ids, table)`, `torch.gather(table, 0, t)`: the table goes to the index."""
        table_at, index_at = INDEX_READING_FUNCTIONS[min(self.qualified(original_node.func) & INDEX_READING_FUNCTIONS.keys())]
        table, index = argument_at(original_node, *table_at), argument_at(original_node, *index_at)
        found = self._table_alignment(original_node, table, index) if table is not None and isinstance(index, cst.Name) else None
        if found is None:
            return updated_node
        what, reference = found
        code, function = cst.Module([]).code_for_node(table), cst.Module([]).code_for_node(original_node.func)
        if not self.report(table, f"`{code}` is {what}; `{function}` with `{index.value}` fails when the index is on a GPU",
                           fix_title=f"align it to `{reference}.device` first"):
            return updated_node
        position = next(number for number, arg in enumerate(original_node.args) if arg.value is table)
        args = list(updated_node.args)
        args[position] = args[position].with_changes(value=moved_to(args[position].value, f"{reference}.device"))
        return updated_node.with_changes(args=args)

    def _table_alignment(self, anchor: cst.CSTNode, table: cst.BaseExpression, index: cst.BaseExpression) -> tuple[str, str] | None:
        """For a CPU table read at `anchor` with `index` (`table[index]`, `table.gather(0, index)`):
        what the message calls the table, and the name whose device it goes to. A table handed to a
        helper at every call, or read from the top level, goes to the index when the index is proven
        a tensor (a CPU index leaves it where it is); a plain object's table to `_reference`'s name."""
        if isinstance(table, cst.Name):
            what = self._handed_table(anchor, table.value, index)
            tensor_index = isinstance(index, cst.Name) and self._index_is_a_tensor(anchor, index)
            return (what, index.value) if what is not None and tensor_index and not self._index_made_on_host(anchor, index) else None
        if getattr(self, "_tables", None) and _is_self_attribute(table) and table.attr.value in self._tables:
            if self._stored_into(anchor) or self._made_from_own_tables(anchor, index):
                return None
            reference = self._reference(anchor, index)
            return None if reference is None else (f"a CPU tensor of {self._holder(table.attr.value)}", reference)
        return None

    def _stored_into(self, subscript: cst.CSTNode) -> bool:
        """`self.i[mask] = value`, `self.counts[y] += 1`: a write, which `.to()` would send into a copy."""
        parent = self.get_metadata(ParentProvider, subscript, None)
        return isinstance(parent, cst.AssignTarget) or (isinstance(parent, (cst.AugAssign, cst.AnnAssign)) and parent.target is subscript)

    def _made_from_own_tables(self, anchor: cst.CSTNode, index: cst.BaseExpression, depth: int = 0) -> bool:
        """The index is computed from the object's own tables (DensePose's `mask = i_old == i + 1`
        of `i_old = self.i.clone()`, then `self.u[mask]`): it lives where they do."""
        if depth > 4:
            return False
        finder = _SelfAttributes()
        index.visit(finder)
        if finder.attributes & self._tables:
            return True
        facts, line = self.scope_facts(anchor), self.line_of(anchor)
        for name in finder.names:
            binding = facts._binding_before(name, line)
            if binding is not None and binding.value is not None and self._made_from_own_tables(binding.value, binding.value, depth + 1):
                return True
        return False

    def _handed_table(self, anchor: cst.CSTNode, name: str, index: cst.BaseExpression) -> str | None:
        """How a message names the CPU table `name` read at `anchor` with `index`: a parameter every
        call hands such a table, or the top level's (`_reads_a_top_level_table`); None for anything else."""
        if name in self._table_parameters:
            return "a CPU table at every call of this function"
        return "a CPU table of the top level" if self._reads_a_top_level_table(anchor, name, index) else None

    def _reads_a_top_level_table(self, anchor: cst.CSTNode, name: str, index: cst.BaseExpression) -> bool:
        """`alphas_bar[t]` in a function that reads the top level's CPU table as a global (it binds
        no local of that name), or at the top level itself with an index placed on a device there
        (`class_weights[y]` after `x, y = x.to(device), y.to(device)`)."""
        if name not in self._helper_tables.top_tables:
            return False
        if self.facts is not None and self.facts.framework == "torch.distributed.rpc":
            return False  # a parameter server's table: what RPC carries must stay on the CPU
        scope = self.enclosing_scope(anchor)
        if isinstance(scope, cst.Module):
            return isinstance(index, cst.Name) and self.scope_facts(anchor).is_device_value(index)
        if not isinstance(scope, cst.FunctionDef):
            return False
        facts, parameters = self.scope_facts(anchor), self.scope_parameters(anchor)
        if name in facts.bindings or name in parameters:
            return False
        # an index the callers give, or one placed here; a local made on the CPU leaves the table alone
        return isinstance(index, cst.Name) and (index.value in parameters and index.value not in facts.bindings or facts.is_device_value(index))

    def _index_made_on_host(self, anchor: cst.CSTNode, index: cst.Name) -> bool:
        """`idx = perm[i:i + 8]` of `perm = torch.randperm(n)`: a CPU index reads a CPU table as it
        is, so aligning the table would be a needless move."""
        facts = self.scope_facts(anchor)
        return host_made(index, self.line_of(anchor), 0, HostContext(facts, self.qualified, lambda _: False, kind_of=self.kind_of))

    def _index_is_a_tensor(self, anchor: cst.CSTNode, index: cst.Name) -> bool:
        return self.kind_of(index) is Kind.TENSOR or self._given_a_tensor(anchor, index.value)

    def _given_a_tensor(self, anchor: cst.CSTNode, name: str) -> bool:
        """`y` in `def forward(self, x, y)` of a Module class of the file whose every call gives a
        tensor for it (`model(x, y)`, with `model = CondNet().to(device)`), not rebound there."""
        scope = self.enclosing_scope(anchor)
        owner = self.class_of_method(scope) if isinstance(scope, cst.FunctionDef) and scope.name.value == "forward" else None
        if owner is None or not self.is_module_classdef(owner) or name in self.scope_facts(anchor).bindings:
            return False
        positional = [param.name.value for param in scope.params.params[1:]]
        return any(positional[index] == name for index in self._tensor_arguments.forward_positions(owner.name.value) if index < len(positional))

    def leave_BinaryOperation(self, original_node: cst.BinaryOperation, updated_node: cst.BinaryOperation) -> cst.BaseExpression:
        """`(x - self.mean) / self.std` in a plain object's method: the tables meet `x`, which may
        be on a GPU; they are aligned to it (a no-op when `x` is on the CPU)."""
        updated_node = self._align_top_level_tables(original_node, updated_node)
        if not getattr(self, "_tables", None):
            return updated_node
        for side, other in (("left", "right"), ("right", "left")):
            table = getattr(original_node, side)
            if not (_is_self_attribute(table) and table.attr.value in self._tables):
                continue
            operand = getattr(original_node, other)
            code = cst.Module([]).code_for_node(table)
            reference = self._tensor_in(original_node, operand)
            if reference is None:
                if self._parameter_in(original_node, operand):
                    self.report(table, f"`{code}` is a CPU tensor of {self._holder(table.attr.value)} and meets a method argument that may be "
                                "on a GPU; move it with `.to(<argument>.device)`", fixable=False)
                continue
            if self.report(table, f"`{code}` is a CPU tensor of {self._holder(table.attr.value)} and meets `{reference}`, which may be on a GPU",
                           fix_title=f"align it to `{reference}.device`"):
                aligned = moved_to(getattr(updated_node, side), f"{reference}.device")
                updated_node = updated_node.with_changes(**{side: aligned})
        return updated_node

    def _align_top_level_tables(self, original_node: cst.BinaryOperation, updated_node: cst.BinaryOperation) -> cst.BinaryOperation:
        """`(images - MEAN) / STD` in `def normalize(images)`, a top-level function that reads CPU
        tables of the top level as globals, where `images` is a parameter the function does not
        rebind and the file calls it only with tensors, one of them at least on a device
        (`normalize(images.to(device))`): the tables are aligned to the parameter."""
        scope = self.enclosing_scope(original_node)
        if not (isinstance(scope, cst.FunctionDef) and scope in self.module.body):
            return updated_node
        facts = self.scope_facts(original_node)
        for side, other in (("left", "right"), ("right", "left")):
            table = getattr(original_node, side)
            if not (isinstance(table, cst.Name) and table.value in self._helper_tables.top_tables) or table.value in facts.bindings:
                continue
            parameter = next((name for name in _operand_names(getattr(original_node, other))
                              if name in self.scope_parameters(original_node) and name not in facts.bindings), None)
            if parameter is None or not self._given_device_tensors(scope, parameter):
                continue
            if self.report(table, f"`{table.value}` is a CPU table of the top level and meets `{parameter}`, which callers "
                           "give on a GPU", fix_title=f"align it to `{parameter}.device`"):
                updated_node = updated_node.with_changes(**{side: moved_to(getattr(updated_node, side), f"{parameter}.device")})
        return updated_node

    def _given_device_tensors(self, function: cst.FunctionDef, parameter: str) -> bool:
        """Every use of the top-level `function` is a call passing a tensor for `parameter`, and
        one of them at least a value on a device."""
        key = (function.name.value, parameter)
        if key not in self._given_device_verdicts:
            passed = arguments_for(self.module, function, parameter)
            placed = [self.scope_facts(call).is_device_value(value) for call, value in passed or ()]
            self._given_device_verdicts[key] = bool(passed) and any(placed) and all(
                on_device or self.kind_of(value) is Kind.TENSOR for (_, value), on_device in zip(passed, placed)
            )
        return self._given_device_verdicts[key]

    def leave_AugAssign(self, original_node: cst.AugAssign, updated_node: cst.AugAssign) -> cst.AugAssign:
        """`self.correct += (logits.argmax(1) == y).sum()` in a plain meter: an in-place update of a
        CPU table keeps it where it is, so the value, certainly a tensor, is aligned to the table.
        So is an update of an item (`self.correct[c] += (preds[mask] == c).sum()`)."""
        table = original_node.target
        if isinstance(table, cst.Subscript):
            table = table.value
        if not (getattr(self, "_tables", None) and _is_self_attribute(table) and table.attr.value in self._tables):
            return updated_node
        tensors = self._tensors_of_method(original_node)
        value = original_node.value  # a tensor computed from the method's inputs, not a fresh one of its own
        if not (is_tensor_expression(value, tensors, self.qualified) and _names_in(value) & tensors) or _placed_here(value):
            return updated_node
        code = cst.Module([]).code_for_node(table)
        if not self.report(original_node.value, f"`{code}` is a CPU tensor of a plain object; updating it in place with a "
                           "tensor on a GPU fails", fix_title=f"align the value to `{code}.device`"):
            return updated_node
        return updated_node.with_changes(value=moved_to(parenthesized(updated_node.value), f"{code}.device"))

    def leave_Assign(self, original_node: cst.Assign, updated_node: cst.Assign) -> cst.Assign:
        """`self.losses = torch.cat([self.losses, loss.detach()])` in a plain object's method: the
        join runs only where `loss` is where the CPU table is, so it keeps the table there, as an
        update in place does: the other tensors are brought to it (modyn's RHO-LOSS selector)."""
        target = original_node.targets[0].target if len(original_node.targets) == 1 else None
        if not (getattr(self, "_tables", None) and _is_self_attribute(target) and target.attr.value in self._tables):
            return updated_node
        others = _joined_with_itself(target.attr.value, original_node.value, self.qualified)
        if not others:
            return updated_node
        tensors = self._tensors_of_method(original_node)
        others = [(index, element) for index, element in others if not _placed_here(element)]  # `loss.detach().cpu()`
        moving = [index for index, element in others
                  if is_tensor_expression(element, tensors, self.qualified) and _names_in(element) & tensors]
        code = cst.Module([]).code_for_node(target)
        if not moving:
            if any(self._parameter_in(original_node, element) for _, element in others):
                self.report(original_node.value, f"`{code}` is a CPU tensor of a plain object and is joined with a method argument "
                            f"that may be on a GPU; bring it there with `.to({code}.device)`", fixable=False)
            return updated_node
        if not self.report(original_node.value, f"`{code}` is a CPU tensor of a plain object; joining it with a tensor on a GPU fails",
                           fix_title=f"align the joined values to `{code}.device`"):
            return updated_node
        join = updated_node.value
        display = join.args[0].value
        elements = list(display.elements)
        for index in moving:
            elements[index] = elements[index].with_changes(value=moved_to(parenthesized(elements[index].value), f"{code}.device"))
        args = [join.args[0].with_changes(value=display.with_changes(elements=elements)), *join.args[1:]]
        return updated_node.with_changes(value=join.with_changes(args=args))

    def _tensors_of_method(self, anchor: cst.CSTNode) -> set[str]:
        """Names certainly holding tensors in the method around `anchor`: by evidence there, or
        parameters that every call of an instance in the file gives a tensor."""
        tensors = self.scope_tensors(anchor)
        scope = self.enclosing_scope(anchor)
        if isinstance(scope, cst.FunctionDef):
            positional = [param.name.value for param in scope.params.params[1:]]
            given = self._tensor_arguments.positions(self._class_name, scope.name.value)
            if scope.name.value == "forward" and self._is_module_class(self._class_node):
                given = given | self._tensor_arguments.forward_positions(self._class_name)  # `net(x)`
            given_names = {positional[index] for index in given if index < len(positional)}
            if given_names - tensors:  # what the method computes from them is a tensor too (`mask = labels == c`)
                tensors = tensors | given_names
                for names, value in assignments_of(scope):
                    if len(names) == 1 and is_tensor_expression(value, tensors, self.qualified):
                        tensors |= names
        return tensors

    def _tensor_in(self, anchor: cst.CSTNode, operand: cst.BaseExpression) -> str | None:
        """A name in `operand` (an operand, or inside arithmetic) that certainly holds a tensor:
        by evidence in the method, or a parameter that every call in the file passes a tensor."""
        tensors = self._tensors_of_method(anchor)
        return next((name for name in _operand_names(operand) if name in tensors), None)

    def _parameter_in(self, anchor: cst.CSTNode, operand: cst.BaseExpression) -> bool:
        return bool(set(_operand_names(operand)) & (self.scope_parameters(anchor) - {"self", "cls"}))

    def _reference(self, anchor: cst.CSTNode, index: cst.BaseExpression) -> str | None:
        """The index itself when it is surely a tensor (by evidence in the method, or proven by the
        value analysis: `diffusion.q_sample(x0, t)` with `t` a tensor at every call); else a
        tensor parameter of the method: the index normally lives with the data, and a CPU or
        integer index into a GPU table is fine."""
        tensors = self.scope_tensors(anchor)
        if isinstance(index, cst.Name) and (index.value in tensors or self.kind_of(index) is Kind.TENSOR):
            return index.value
        if not isinstance(index, cst.Name):
            return None
        scope = self.enclosing_scope(anchor)
        if isinstance(scope, cst.Module):
            return None
        for param in scope.params.params:
            if param.name.value in tensors:
                return param.name.value
        return None


class _TensorArguments(cst.CSTVisitor):
    """Which positional arguments of `<instance>(...)` / `<instance>.<method>(...)` are tensors at
    every call in the file, for instances bound (always) to a class of this file:
    `normalize = Normalizer(...)` then `normalize(batch)` with `batch` a tensor. A Module's instance
    may be moved where it is built (`model = CondNet().to(device)`: `.to()` returns the module);
    its calls are its `forward`'s only when neither the class nor its instances are used otherwise
    (passed on, stored, subclassed: someone else may call it)."""

    def __init__(self, rule: LookupTableDevice) -> None:
        self.rule = rule
        self.classes: set[str] = set()
        self.instances: dict[str, set[str]] = {}
        self.calls: list[tuple[str, str, cst.Call]] = []
        self.names: dict[str, int] = {}  # every `Name` node of the file, by name
        self.definitions: dict[str, int] = {}  # those that define a class or build it into a name
        self.instance_uses: dict[str, int] = {}  # those that bind a name, call it or read its attributes

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self.classes.add(node.name.value)
        _count(self.definitions, node.name)

    def visit_Assign(self, node: cst.Assign) -> None:
        value = _built_here(node.value)
        built = value.func.value if isinstance(value, cst.Call) and isinstance(value.func, cst.Name) else None
        if built is not None:
            _count(self.definitions, value.func)
        for target in node.targets:
            if isinstance(target.target, cst.Name):
                self.instances.setdefault(target.target.value, set()).add(built or "")
                _count(self.instance_uses, target.target)

    def visit_Call(self, node: cst.Call) -> None:
        if isinstance(node.func, cst.Name):
            self.calls.append((node.func.value, "__call__", node))
            _count(self.instance_uses, node.func)
        elif isinstance(node.func, cst.Attribute) and isinstance(node.func.value, cst.Name):
            self.calls.append((node.func.value.value, node.func.attr.value, node))

    def visit_Attribute(self, node: cst.Attribute) -> None:
        if isinstance(node.value, cst.Name):
            _count(self.instance_uses, node.value)  # `model.eval()`, `model.parameters()`

    def visit_Name(self, node: cst.Name) -> None:
        _count(self.names, node)

    def forward_positions(self, class_name: str) -> set[int]:
        """The positional parameters of a Module class's `forward` (after `self`) that every call of
        it in the file gives a tensor: its instances are only called, never handed on, and its
        `forward` is not called by name."""
        instances = [name for name, built in self.instances.items() if built == {class_name}]
        if not instances or self.names.get(class_name) != self.definitions.get(class_name) or any(
                self.names.get(name) != self.instance_uses.get(name) for name in instances):
            return set()
        if any(called == "forward" and instance in instances or instance == "self" and called in ("forward", "__call__")
               for instance, called, _ in self.calls):
            return set()  # `model.forward(x, 3)`, `self(x, 3)`
        return self.positions(class_name, "__call__")

    def positions(self, class_name: str, method: str) -> set[int]:
        found: set[int] | None = None
        for instance, called, call in self.calls:
            built = self.instances.get(instance, set())
            if called != method or built != {class_name} or class_name not in self.classes:
                continue
            here = {index for index, arg in enumerate(call.args) if arg.keyword is None and not arg.star and self._is_tensor(arg.value, call)}
            found = here if found is None else found & here
        return found or set()

    def _is_tensor(self, value: cst.BaseExpression, call: cst.Call) -> bool:
        """A tensor by evidence or by the value analysis, or what a Module of the caller's scope
        returns (`model(x)`, also through tensor methods: `model(x).argmax(1)`)."""
        if is_tensor_expression(value, self.rule.scope_tensors(call), self.rule.qualified):
            return True
        if isinstance(value, cst.Name) and self.rule.kind_of(value) is Kind.TENSOR:
            return True  # `y` of `for x, y in loader` over a TensorDataset
        value = without_tensor_methods(value)
        if not (isinstance(value, cst.Call) and isinstance(value.func, cst.Name)):
            return False
        facts = self.rule.scope_facts(call)
        modules = set(self.rule.scope_modules(call)) | (facts.moved.keys() & facts.called)  # built here, or moved and called
        return value.func.value in modules


def _placed_here(value: cst.BaseExpression) -> bool:
    """`(...).to(self.correct.device)`, `.cpu()`, `.cuda()`: the value is placed where it is used."""
    return isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) and value.func.attr.value in DEVICE_CHANGING_METHODS


def _names_in(expression: cst.BaseExpression) -> set[str]:
    finder = _NameFinder()
    expression.visit(finder)
    return finder.names


class _NameFinder(cst.CSTVisitor):
    def __init__(self) -> None:
        self.names: set[str] = set()

    def visit_Name(self, node: cst.Name) -> None:
        self.names.add(node.value)

    def visit_Attribute(self, node: cst.Attribute) -> bool:
        node.value.visit(self)  # `x` of `x.sum`, not `sum`
        return False


def _count(counts: dict[str, int], name: cst.Name) -> None:
    counts[name.value] = counts.get(name.value, 0) + 1


def _built_here(value: cst.BaseExpression) -> cst.BaseExpression:
    """`CondNet()` of `CondNet().to(device).eval()`: a Module's `.to()`, `.cuda()`, `.eval()`...
    return the module itself."""
    while isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) and value.func.attr.value in MODULE_RETURNING_METHODS:
        value = value.func.value
    return value


class _HelperTables(cst.CSTVisitor):
    """Parameters of the file's top-level functions that every call hands a plain object's CPU
    table (`extract(self.alphas_cumprod, t, x)` in a scheduler class), when the function is
    used by calls alone."""

    def __init__(self, rule: LookupTableDevice, module: cst.Module) -> None:
        self.rule = rule
        self.functions = {statement.name.value: statement for statement in module.body if isinstance(statement, cst.FunctionDef)}
        self.tables: list[set[str]] = []  # of the classes around the current node
        self.passed: dict[str, list[set[int]]] = {}  # function → per call, the positions given a table
        self.uses: dict[str, int] = {}
        top = rule.scope_facts(module)
        self.top_bindings = top.bindings
        self.top_tables = _top_level_tables(top, rule)

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self.tables.append(self.rule.plain_tables(node))

    def leave_ClassDef(self, original_node: cst.ClassDef) -> None:
        self.tables.pop()

    def visit_Name(self, node: cst.Name) -> None:
        if node.value in self.functions:
            self.uses[node.value] = self.uses.get(node.value, 0) + 1

    def visit_Call(self, node: cst.Call) -> None:
        if not (isinstance(node.func, cst.Name) and node.func.value in self.functions):
            return
        tables = self.tables[-1] if self.tables else set()
        positions = {
            index for index, arg in enumerate(node.args)
            if arg.keyword is None and not arg.star
            and ((_is_self_attribute(arg.value) and arg.value.attr.value in tables) or self._is_top_level_table(arg.value, node))
        }
        if any(arg.star for arg in node.args):
            positions = set()
        self.passed.setdefault(node.func.value, []).append(positions)

    def _is_top_level_table(self, value: cst.BaseExpression, call: cst.Call) -> bool:
        """`alphas_cumprod` or `(1 - alphas_cumprod).sqrt()`: computed only from CPU tables of the
        top level, which the calling scope does not rebind."""
        names = set(_operand_names(value))
        if not names or not names <= self.top_tables or names & set(self.rule.scope_facts(call).bindings) - set(self.top_bindings):
            return False
        return is_tensor_expression(value, self.top_tables, self.rule.qualified) and not _placed(value)

    def table_parameters(self, function: cst.FunctionDef) -> set[str]:
        calls = self.passed.get(function.name.value, [])
        if not calls or self.uses.get(function.name.value, 0) != len(calls) + 1:  # + the `def` itself
            return set()
        positions = set.intersection(*calls)
        names = [param.name.value for param in function.params.params]
        return {names[index] for index in positions if index < len(names)}


def _operand_names(expression: cst.BaseExpression) -> list[str]:
    """Names whose values `expression` computes with: `x` in `x`, `x * 2`, `-x`, `x.float()`."""
    if isinstance(expression, cst.Name):
        return [expression.value]
    if isinstance(expression, cst.BinaryOperation):
        return _operand_names(expression.left) + _operand_names(expression.right)
    if isinstance(expression, cst.UnaryOperation):
        return _operand_names(expression.expression)
    if isinstance(expression, cst.Call) and isinstance(expression.func, cst.Attribute):
        return _operand_names(expression.func.value)
    if isinstance(expression, cst.Subscript):
        return _operand_names(expression.value)
    return []


def _is_self_attribute(node: cst.BaseExpression) -> bool:
    return isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name) and node.value.value == "self"


def _top_level_tables(top: PlacementFacts, rule: LookupTableDevice) -> set[str]:
    """Names the top level binds once, to a tensor torch computes on the CPU from numbers and other
    such tables, placed nowhere (`betas = torch.linspace(...)`, `alphas = torch.cumprod(1 - betas, 0)`;
    not `torch.randn_like(x)`, which is where `x` is)."""
    tables: set[str] = set()
    for name, bindings in sorted(top.bindings.items(), key=lambda item: item[1][0].line):
        value = bindings[0].value
        if len(bindings) == 1 and _host_helper_call(value, rule, tables):
            tables.add(name)  # `betas = linear_beta_schedule(timesteps)`, the file's function returning `torch.linspace(...)`
            continue
        if len(bindings) != 1 or value is None or not is_tensor_expression(value, tables, rule.qualified) or _placed(value):
            continue
        if all(root.value in tables or rule.kind_of(root).is_known_non_tensor for root in _computed_from(value, rule.qualified)) \
                and not _follows_an_input(value):
            tables.add(name)
    return tables


def _host_helper_call(value: cst.BaseExpression | None, rule: LookupTableDevice, tables: set[str]) -> bool:
    """A call of a top-level function of the file that returns tensors made on the host, never a
    0-dim one (`analysis.host_helpers`), given numbers or such tables."""
    if not (isinstance(value, cst.Call) and isinstance(value.func, cst.Name)) or rule.facts is None:
        return False
    helper = rule.facts.local_helper(value.func.value)
    if helper is None or not helper.returns_host_tensors or helper.may_return_a_scalar:
        return False
    return all(root.value in tables or rule.kind_of(root).is_known_non_tensor
               for arg in value.args for root in _computed_from(arg.value, rule.qualified))


def _computed_from(node: cst.BaseExpression, qualified) -> list[cst.Name]:
    """The names a value computes with: operands, arguments and method receivers, not module
    attributes (`torch.float32`, `math.pi`) nor `dtype=`."""
    if isinstance(node, cst.Name):
        return [node]
    if isinstance(node, cst.Attribute):
        return [] if qualified(node) else _computed_from(node.value, qualified)
    if isinstance(node, cst.Call):
        receiver = _computed_from(node.func.value, qualified) if isinstance(node.func, cst.Attribute) and not qualified(node.func) else []
        return receiver + [name for arg in node.args if not (arg.keyword and arg.keyword.value == "dtype")
                           for name in _computed_from(arg.value, qualified)]
    if isinstance(node, cst.BinaryOperation):
        return _computed_from(node.left, qualified) + _computed_from(node.right, qualified)
    if isinstance(node, cst.UnaryOperation):
        return _computed_from(node.expression, qualified)
    if isinstance(node, cst.Subscript):
        return _computed_from(node.value, qualified)
    if isinstance(node, (cst.Tuple, cst.List)):
        return [name for element in node.elements for name in _computed_from(element.value, qualified)]
    return []


def _follows_an_input(value: cst.BaseExpression) -> bool:
    """`torch.zeros_like(x)`, `torch.randn_like(x)`: made where their input is."""
    finder = _LikeFinder()
    value.visit(finder)
    return finder.found


class _LikeFinder(cst.CSTVisitor):
    def __init__(self) -> None:
        self.found = False

    def visit_Attribute(self, node: cst.Attribute) -> None:
        self.found = self.found or node.attr.value.endswith("_like")

    def visit_Name(self, node: cst.Name) -> None:
        self.found = self.found or node.value.endswith("_like")


def _tensor_attributes(class_node: cst.ClassDef, qualified, host_given: Callable[[], frozenset[str]] | None = None,
                       host_method: Callable[[str], bool] = lambda method: False) -> set[str]:
    """`self.<name>` attributes the class assigns only from torch computations, none of them placed
    or computed from an attribute placed just before (`_derived_from_placed`). A computation may
    read such attributes (`self.alpha = 1.0 - self.beta`, to a fixed point) or call a method of the
    class that returns a tensor made on the host (`self.beta = self.prepare_noise_schedule()`)."""
    finder = _SelfAssignments()
    class_node.body.visit(finder)
    placed = {name for name, values in finder.values.items() if any(_placed(value) for value in values)}
    methods = [(method, _assigned_in_order(method)) for method in class_node.body.body
               if isinstance(method, cst.FunctionDef)] if isinstance(class_node.body, cst.IndentedBlock) else []
    for _, in_order in methods:
        placed |= _derived_from_placed(in_order)

    def made_as_tensor(value: cst.BaseExpression, known: frozenset[str]) -> bool:
        if isinstance(value, cst.Call) and _is_self_attribute(value.func) and host_method(value.func.attr.value):
            return True
        return is_tensor_expression(value, set(), qualified, self_tensors=known)

    tables: frozenset[str] = frozenset()
    while True:  # grows only: more known tables make more values tensors
        found = frozenset(name for name, values in finder.values.items()
                          if values and name not in placed and all(made_as_tensor(value, tables) for value in values))
        if found == tables:
            break
        tables = found
    tables = set(tables)
    # computed from tensors a method was given, or from state kept from them (lc2st's `self.theta_p_mean =
    # torch.mean(self.theta_p, dim=0)` of the samples it was given, maybe on a GPU): no proven CPU table
    stored = []
    for method, in_order in methods:
        reader = GivenTensors(method, qualified)
        # `self.losses = torch.cat([self.losses, loss])` runs only where `loss` is where the table is: it keeps the table
        stored += [(name, value, reader, method.name.value == "__init__") for name, value in in_order
                   if _joined_with_itself(name, value, qualified) is None]
    without = _tables_of_own_state(tables, stored, frozenset())
    if without == tables or host_given is None:
        return without
    return _tables_of_own_state(tables, stored, host_given())  # the constructions' arguments, read only when they matter


def _joined_with_itself(name: str, value: cst.BaseExpression, qualified) -> list[tuple[int, cst.BaseExpression]] | None:
    """`torch.cat([self.<name>, loss])`: the other elements of a join of a display holding
    `self.<name>`, with their positions (None: no such join)."""
    if not (isinstance(value, cst.Call) and value.args and value.args[0].keyword is None and not value.args[0].star
            and isinstance(value.args[0].value, (cst.List, cst.Tuple)) and qualified(value.func) & JOINS):
        return None
    elements = value.args[0].value.elements
    if any(not isinstance(element, cst.Element) for element in elements):
        return None  # `torch.cat([self.x, *rest])`
    own = [_is_self_attribute(element.value) and element.value.attr.value == name for element in elements]
    return [(index, element.value) for index, element in enumerate(elements) if not own[index]] if any(own) else None


def _tables_of_own_state(tables: set[str], stored, host_parameters: frozenset[str]) -> set[str]:
    """`tables` without those computed from tensors a method was given (for `__init__`, but for
    `host_parameters`), or from state kept from them, to a fixed point."""
    tables = set(tables)
    given = frozenset(name for name, value, reader, init in stored
                      if reader.computes_with(value, whole=True, host_parameters=host_parameters if init else frozenset()))
    while True:
        unknown = {name for name, value, reader, init in stored
                   if name in tables and reader.computes_with(value, given, host_parameters=host_parameters if init else frozenset())}
        if not unknown:
            return tables
        tables -= unknown
        given |= unknown


def _assigned_in_order(method: cst.FunctionDef) -> list[tuple[str, cst.BaseExpression]]:
    """The method's `self.<name> = value` assignments, in order."""
    ordered = _SelfAssignments()
    method.body.visit(ordered)
    return ordered.in_order


def _derived_from_placed(in_order: list[tuple[str, cst.BaseExpression]]) -> set[str]:
    """The `self.<name>` a method computes, in order (`in_order`), from attributes it placed just
    before (`self.beta = s.to(device)` then `self.alpha = 1. - self.beta`): not from a placement
    another method makes later (`self.alpha_t = torch.sqrt(self.alphas_cumprod)` in `__init__`
    stays where it was made when `add_noise` moves `self.alphas_cumprod`)."""
    here: set[str] = set()
    for name, value in in_order:
        if _placed(value) or _self_reads(value) & here:
            here.add(name)
    return here


def _self_reads(value: cst.BaseExpression) -> set[str]:
    reads = _SelfAttributes()
    value.visit(reads)
    return reads.attributes


def _class_constants(class_node: cst.ClassDef, qualified) -> set[str]:
    """Names the class body binds once, to a torch computation placed nowhere (`MEAN =
    torch.tensor([0.485, 0.456, 0.406])`), that no method stores in `self` (where `self.MEAN`
    would then read the instance's own value)."""
    body = class_node.body.body if isinstance(class_node.body, cst.IndentedBlock) else []
    bound: dict[str, list[cst.BaseExpression]] = {}
    for statement in body:
        for small in statement.body if isinstance(statement, cst.SimpleStatementLine) else []:
            if isinstance(small, (cst.Assign, cst.AnnAssign, cst.AugAssign)):
                targets = [target.target for target in small.targets] if isinstance(small, cst.Assign) else [small.target]
                for target in targets:
                    if isinstance(target, cst.Name):
                        bound.setdefault(target.value, []).append(small.value if isinstance(small, cst.Assign) else None)
    stored = _SelfAssignments()
    class_node.body.visit(stored)
    return {
        name for name, values in bound.items()
        if len(values) == 1 and values[0] is not None and name not in stored.values
        and is_tensor_expression(values[0], set(), qualified) and not _placed(values[0])
    }


def _placed(value: cst.BaseExpression) -> bool:
    """The class already puts this table somewhere (`.to(device)`, `.cuda()`, `device=`)."""
    finder = _PlacementFinder()
    value.visit(finder)
    return finder.found


class _SelfAttributes(cst.CSTVisitor):
    """The `self.<attr>` an expression reads, and its other names."""

    def __init__(self) -> None:
        self.attributes: set[str] = set()
        self.names: set[str] = set()

    def visit_Attribute(self, node: cst.Attribute) -> bool:
        if _is_self_attribute(node):
            self.attributes.add(node.attr.value)
            return False
        return True

    def visit_Name(self, node: cst.Name) -> None:
        self.names.add(node.value)


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
        self.in_order: list[tuple[str, cst.BaseExpression]] = []

    def visit_Assign(self, node: cst.Assign) -> None:
        for target in node.targets:
            if _is_self_attribute(target.target):
                self.values.setdefault(target.target.attr.value, []).append(node.value)
                self.in_order.append((target.target.attr.value, node.value))
