"""DF014 tensor-attribute-buffer: a Module keeps a tensor as a plain attribute, so `.to()` leaves it
behind.

    Before:  self.mask = torch.tril(torch.ones(n, n))
    After:   self.register_buffer("mask", torch.tril(torch.ones(n, n)), persistent=False)

`model.to(device)` moves parameters and buffers only; a plain tensor attribute stays on the CPU and
the first forward pass on a GPU fails. A non-persistent buffer follows every `.to()`, `.cuda()` and
`.half()` and does not change `state_dict()` keys, so existing checkpoints still load. A hard-coded
GPU placement of the value (`torch.linspace(0, 1, n).cuda()`) is dropped when the Module holds
parameters: the buffer now moves with them, and the Module also runs on a machine without a GPU.

Applies to a single `self.x = <torch computation>` (a legacy `torch.Tensor(anchors)` too, or
a call of a method of the class, or of a function of the file, that returns one:
`self.build_table()` returning `torch.from_numpy(table).float()`, `sample_b(sigma, size)` returning
`torch.randn(size) * sigma`; or such a value or `None`, a focal loss's `torch.tensor(alpha) if alpha
is not None else None`: a buffer may be `None`) in `__init__` (after `super().__init__()`)
of a class known to be an `nn.Module`, when another method reads `self.x`. A list display of such
tensors (`self.anchors = [torch.tensor([10., 13.]), torch.tensor([16., 30.])]`) becomes one buffer
per item (`anchors_0`, `anchors_1`) and `anchors` a property that lists them, so reads, `len()`
and loops see the same list on the Module's device; only when nothing in the file changes the
list (item stores, `append`, another `.anchors = ...`) and the buffers' names are free. A list
comprehension of one loop (YOLO's `self.anchors = [torch.tensor(a) for a in anchors]`) has no fixed
number of items: a loop registers them (`for index, tensor in enumerate([...]):
self.register_buffer(f"anchors_{index}", tensor, persistent=False)`) and the property lists the
Module's own buffers of that prefix in their order; only when `__init__` names neither `index`
nor `tensor` and the file spells no other `anchors_`.

`Variable(t)` (the pre-0.4 autograd wrapper, AGNN's `self.beta`) is `t`.

An attribute stored once in each branch of one `if`/`else` (AGNN's `if requires_grad: self.beta =
Parameter(...)` / `else: self.beta = Variable(torch.zeros(1), requires_grad=requires_grad)`) is
judged store by store: the tensor branch becomes a buffer, the other keeps its Parameter. There
`requires_grad=requires_grad` is false (the `else` of `if requires_grad:`): no trained tensor.

Reports without a fix: tensors made to require grad (`requires_grad=True`, or given `requires_grad`
later) that no optimizer of the class trains: a buffer's `.to()` copy would never be updated; an
`nn.Parameter` is what they need, and it changes what the optimizer trains.

Refuses: tensors an optimizer the class builds trains (SAC's `log_alpha`: where that optimizer
wants them), attributes that every other method moves where it reads them (`self.pos.to(x.device,
dtype=x.dtype)`, `.to(x)`, `.cuda()`, CLIP's `self.attn_mask[..., -n:, -n:].to(device=x.device)` after
`if self.attn_mask is not None`: the code is right as it is), `__init__` parameters annotated
`nn.Parameter` (assigned to `self`, registered as parameters already), and any `__init__` parameter
kept as is unless every construction of the class in the file gives it a tensor made there (another
Module's `nn.Parameter`, `TrainableDistribution(self.weight_mu, ...)`, is registered by the assignment
and shared; a buffer's `.to()` copy would never see the optimizer's updates), random generators'
states (`rng.get_state()`, `torch.get_rng_state()`: `set_state` takes back only a CPU ByteTensor), complex tables (`torch.polar`:
`.half()` would drop their imaginary part, and DDP broadcasts buffers), tensors placed with a
device the constructor receives (`torch.randn(n, device=device)`:
the layer places its own state, see DF019) or asks for (`device=get_accelerator().current_device()`), state of a torch.nn layer the class derives from (`self.weight
= self._init_weight(self.weight)` of an `nn.Embedding` subclass), attributes assigned in other methods too (lazy caches re-created on the input's device,
`self.x = self.x.to(...)` done by hand), `nn.Parameter`s and Modules, values devfix cannot prove to
be tensors (`build_table(n)`, an argument kept as is such as a dataclass of hyper-parameters), and
classes that are not Modules (see DF012), and tables that a method combines with values it brought
to the host (`noise = self(x.to(self.device)).cpu()`, then `noise * self.betas[t]`: the method
computes on the CPU on purpose, and a buffer would put a CUDA tensor into that product,
`analysis.host_combined_reads`), and tables that a method a DataLoader runs reads (PyG's
`MetaPath2Vec.offset`, added to walks sampled in `collate_fn=self._sample`, `analysis.loader_methods`).
"""

from __future__ import annotations

import re

import libcst as cst
from libcst.metadata import GlobalScope, ScopeProvider

from devfix.analysis.call_sites import constructor_values_for, file_functions
from devfix.analysis.cst_bindings import calls_in, is_generator, parameter_names, return_values
from devfix.analysis.cst_metadata import ParentProvider
from devfix.analysis.host_combined_reads import combines_with_host_values
from devfix.analysis.kinds import Kind
from devfix.analysis.loader_methods import methods_run_by_loaders
from devfix.analysis.module_classes import (
    class_facts,
    holds_parameters,
    is_self_attribute,
    self_attribute_nodes,
    stored_in_either_branch,
    stored_once_in_init,
)
from devfix.analysis.scopes import ScopeTracker
from devfix.analysis.tensors import is_factory_call, is_tensor_expression
from devfix.analysis.torch_api import COMPLEX_MAKERS, HOST_LIBRARIES, PARAMETER_CLASSES, VARIABLE_WRAPPERS
from devfix.analysis.torch_names import is_cuda_device_expression
from devfix.codemods.base import DevfixRule
from devfix.codemods.edits import add_method_after_init, register_buffer
from devfix.findings import Safety

NOT_BUFFERS = ("torch.nn.",)
ZERO_DIM_KEEPING_FUNCTIONS = frozenset(f"torch.{name}" for name in ("sqrt", "rsqrt", "exp", "log", "abs", "neg", "reciprocal", "sigmoid", "tanh"))
RANDOM_STATES = frozenset({"torch.get_rng_state", "torch.random.get_rng_state", "torch.cuda.get_rng_state", "torch.cuda.random.get_rng_state"})
TORCH_LAYER_STATE = frozenset({"weight", "bias", "running_mean", "running_var", "num_batches_tracked", "in_proj_weight", "in_proj_bias"})
CONTAINER_BASES = frozenset({"torch.nn.Module", "torch.nn.modules.module.Module", "torch.nn.Sequential", "torch.nn.ModuleList", "torch.nn.ModuleDict"})
LIST_ITEM_PLACING = ("device=", ".to(", ".cuda(", "requires_grad")
LIST_CHANGING_METHODS = frozenset({"append", "extend", "insert", "pop", "remove", "clear", "sort", "reverse", "__setitem__"})


class TensorAttributeBuffer(ScopeTracker, DevfixRule):
    CODE = "DF014"
    NAME = "tensor-attribute-buffer"
    SAFETY = Safety.SAFE
    DESCRIPTION = "Tensor kept as a plain Module attribute: .to(device) does not move it"

    def visit_Module(self, node: cst.Module) -> None:
        super().visit_Module(node)
        self._buffers: dict[cst.Assign, tuple[str, bool]] = {}  # statement → (attribute, drop a `.cuda()`)
        self._lists: dict[cst.Assign, tuple[str, int]] = {}  # `self.x = [t0, t1]` → (attribute, items)
        self._comprehensions: dict[cst.Assign, str] = {}  # `self.x = [torch.tensor(a) for a in xs]` → attribute
        self._properties: dict[int, list[str]] = {}  # id of a class → the list properties its fixes add
        self._trained_tensors: dict[cst.Assign, str] = {}  # `self.beta = Variable(t, requires_grad=True)`: reported only

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        if not self.is_module_classdef(node):
            return
        facts = class_facts(node, self.line_of)
        init = facts.methods.get("__init__")
        if init is None or facts.super_init_line is None:
            return
        tensors = self.scope_tensors(init.body)
        moves_as_a_whole = holds_parameters(facts, self.qualified)
        registered: list[frozenset[str]] = []

        def registered_by_bases(name: str) -> bool:
            """A base's buffer (sbi's `_mean_base`, registered in another file): assigning it updates
            it. Read once a candidate needs it."""
            if not registered:
                registered.append(self.facts.registered_by_bases(node.name.value) if self.facts is not None else frozenset())
            return name in registered[0]

        parent_of = lambda child: self.get_metadata(ParentProvider, child, None)  # noqa: E731
        stores = [(name, statement, frozenset()) for name, statement in stored_once_in_init(facts, self.line_of)]
        for name, statement, falsy in [*stores, *stored_in_either_branch(facts, self.line_of, parent_of)]:
            if self.fix_asked_elsewhere(statement):
                continue
            if self._moved_where_read(name, facts.methods):
                continue
            trained = self._trained(name, statement.value, node, falsy)
            if trained is not None:
                if not trained.optimized and is_tensor_expression(_without_variable(statement.value, self.qualified), tensors, self.qualified):
                    self._trained_tensors[statement] = name  # reported: an `nn.Parameter` changes what is trained
                continue
            if name in _self_reads(statement.value) or self._state_of_a_torch_layer_base(node, name):
                continue  # gluonts' `self.weight = self._init_weight(self.weight)` of an `nn.Embedding`: its Parameter
            # `torch.tensor(alpha) if alpha is not None else None`: a buffer may be None; `Variable(t)` is `t`
            value = _without_variable(_unless_none(statement.value), self.qualified)
            if isinstance(value, (cst.List, cst.ListComp)) and self._handed_to_the_host(name, facts.methods):
                continue  # `[s.numpy() for s in self.sizes]`: on a device, numpy would refuse them
            if isinstance(value, cst.List):
                if self._tensor_list(value, tensors, name, node, facts.methods) and not registered_by_bases(name):
                    self._lists[statement] = (name, len(value.elements))
                continue
            if isinstance(value, cst.ListComp):
                if self._tensor_comprehension(value, init, name, node, facts.methods) and not registered_by_bases(name):
                    self._comprehensions[statement] = name
                continue
            if any(qualified.startswith(NOT_BUFFERS) for qualified in self._callee_names(value)):
                continue
            if _is_random_state(value, self.qualified):
                continue  # `rng.get_state()`: `set_state` takes it back only as a CPU ByteTensor
            if isinstance(value, cst.Name) and self.kind_of(value) is not Kind.TENSOR:
                continue  # an argument kept as is: only a value proven a tensor can be a buffer
            if isinstance(value, cst.Name) and self._given_a_parameter(init, value.value):
                continue  # fairscale's MEVO `proj_weight: nn.Parameter` (tied weights): `self.x = p` registers it
            if isinstance(value, cst.Name) and value.value in parameter_names(init) and not self._given_fresh_tensors(node, value.value):
                continue  # torch-uncertainty's sampler keeps its layer's `nn.Parameter`s: the caller's own state
            made = is_tensor_expression(value, tensors, self.qualified) or self._returned_tensor(value, facts.methods)
            if made and self._may_be_complex(value, facts.methods):
                continue  # `torch.polar(...)`: `.half()` would drop its imaginary part, and DDP broadcasts buffers
            if made and self._zero_dim(value) and self._only_in_arithmetic(name, facts.methods):
                continue  # `self.scale = torch.sqrt(torch.tensor(float(d)))` dividing the scores: a 0-dim CPU tensor joins any device
            if made and not _placed_by_argument(value, init) and not self._reads_placed_attributes(value, facts, init) \
                    and not self._computed_with_on_the_host(name, facts.methods) and not self._handed_to_the_host(name, facts.methods) \
                    and not registered_by_bases(name):
                self._buffers[statement] = (name, moves_as_a_whole)

    def _zero_dim(self, value: cst.BaseExpression) -> bool:
        """A 0-dim tensor: `torch.tensor(<a number>)`, a torch math function of one
        (`torch.sqrt(torch.tensor(float(d)))`), or arithmetic of those and numbers. (`torch.FloatTensor([d])`
        has one dimension: a CUDA tensor does not take it beside itself.)"""
        if isinstance(value, cst.BinaryOperation) and not isinstance(value.operator, cst.MatrixMultiply):
            sides = [value.left, value.right]
            numbers = [isinstance(side, (cst.Integer, cst.Float)) for side in sides]
            return not all(numbers) and all(number or self._zero_dim(side) for side, number in zip(sides, numbers))
        if not isinstance(value, cst.Call):
            return False
        if self.is_scalar_tensor(value):
            return True
        names = self.qualified(value.func)
        return len(value.args) == 1 and not value.args[0].keyword and not value.args[0].star \
            and any(name in ZERO_DIM_KEEPING_FUNCTIONS for name in names) and self._zero_dim(value.args[0].value)

    def _only_in_arithmetic(self, name: str, methods: dict[str, cst.FunctionDef]) -> bool:
        """Every read of `self.<name>` outside `__init__` is an operand of an arithmetic operator
        (not `@`), where a 0-dim CPU tensor may meet a tensor of any device."""
        reads = [node for method_name, method in methods.items() if method_name != "__init__" for node in self_attribute_nodes(method, name)]
        return bool(reads) and all(self._arithmetic_operand(read) for read in reads)

    def _arithmetic_operand(self, read: cst.Attribute) -> bool:
        parent = self.get_metadata(ParentProvider, read, None)
        return isinstance(parent, cst.BinaryOperation) and not isinstance(parent.operator, cst.MatrixMultiply)

    def _given_fresh_tensors(self, class_def: cst.ClassDef, name: str) -> bool:
        """Every construction of the class in the file gives `__init__`'s parameter `name` a tensor
        made there (a call, not an `nn.Parameter`), and there is one: a name or attribute passed may
        be another Module's `nn.Parameter` (registered by the assignment, and shared: a buffer's
        `.to()` copy would no longer see its updates) or a tensor the caller keeps and changes."""
        values = constructor_values_for(self.module, class_def, name)
        return bool(values) and all(
            isinstance(value, cst.Call) and not self.qualified(value.func) & PARAMETER_CLASSES for value in values
        )

    def _given_a_parameter(self, init: cst.FunctionDef, name: str) -> bool:
        """`__init__`'s parameter `name` is annotated `nn.Parameter`: assigned to `self`, a Module
        registers it as a parameter already."""
        params = [*init.params.params, *init.params.kwonly_params]
        annotation = next((param.annotation for param in params if param.name.value == name), None)
        return annotation is not None and bool(self.qualified(annotation.annotation) & PARAMETER_CLASSES)

    def _state_of_a_torch_layer_base(self, class_def: cst.ClassDef, name: str) -> bool:
        """`weight`, `bias`, `running_mean`... of a class deriving from a torch.nn layer (`nn.Embedding`,
        `nn.Linear`): the base registered them; `register_buffer` of that name raises KeyError."""
        return name in TORCH_LAYER_STATE and any(
            qualified.startswith("torch.nn.") and qualified not in CONTAINER_BASES
            for base in class_def.bases for qualified in self.qualified(base.value))

    def _reads_placed_attributes(self, value: cst.BaseExpression, facts, init: cst.FunctionDef) -> bool:
        """`self.paddings = torch.div(8 * self.dilations, 2)` of tsai's HydraPlus, where `self.dilations =
        2 ** torch.arange(n, device=device)`: computed from state the layer placed with a device it was
        given, so placed by it too."""
        for read in _self_reads(value):
            use = facts.attributes.get(read)
            if use is not None and any(method == "__init__" and _placed_by_argument(statement.value, init)
                                       for method, statement in use.assignments):
                return True
        return False

    def _tensor_list(self, value: cst.List, tensors: set[str], name: str, class_node: cst.ClassDef,
                     methods: dict[str, cst.FunctionDef]) -> bool:
        """`self.anchors = [torch.tensor([10., 13.]), torch.tensor([16., 30.])]`: a list display of
        tensors made here without a device or a trained flag, which nothing in the file changes
        (item stores, `append`, a new list), in a class with no other member of that name and no
        attribute named like the buffers (`anchors_0`)."""
        items = [element.value for element in value.elements]
        if not items or not all(isinstance(element, cst.Element) for element in value.elements):
            return False
        if not all(is_tensor_expression(item, tensors, self.qualified) and self._buffer_item(item, methods) for item in items):
            return False
        text = self.facts.text if self.facts is not None else self.module.code  # the file's text, without a codegen pass
        if any(re.search(rf"\b{name}_{index}\b", text) for index in range(len(items))):
            return False  # the name of a buffer it would register is taken
        return self._list_kept_as_stored(name, class_node)

    def _tensor_comprehension(self, value: cst.ListComp, init: cst.FunctionDef, name: str, class_node: cst.ClassDef,
                              methods: dict[str, cst.FunctionDef]) -> bool:
        """`self.anchors = [torch.tensor(a) for a in anchors]` (YOLO's layers): one `for` whose item
        is a tensor made here without a device or a trained flag, on the terms of `_tensor_list`,
        in an `__init__` that names neither `index` nor `tensor` (the loop that registers the items
        binds them there), in a file that spells no `<name>_` (the buffers' prefix)."""
        if value.for_in.inner_for_in is not None or value.for_in.asynchronous is not None:
            return False
        item = value.elt
        if not (is_factory_call(item, self.qualified) or is_tensor_expression(item, set(), self.qualified)) \
                or not self._buffer_item(item, methods) or {"index", "tensor"} & _names_in(init):
            return False
        text = self.facts.text if self.facts is not None else self.module.code
        if f"{name}_" in text:
            return False  # a buffer of that prefix may be the class's or another's
        return self._list_kept_as_stored(name, class_node)

    def _buffer_item(self, item: cst.BaseExpression, methods: dict[str, cst.FunctionDef]) -> bool:
        """An item of a list of tensors (a display's or a comprehension's) that may be a buffer:
        not placed or trained where it is made, no `torch.nn` object, no complex table."""
        code = cst.Module([]).code_for_node(item)
        return not any(placing in code for placing in LIST_ITEM_PLACING) \
            and not any(qualified.startswith(NOT_BUFFERS) for qualified in self._callee_names(item)) \
            and not self._may_be_complex(item, methods)

    def _list_kept_as_stored(self, name: str, class_node: cst.ClassDef) -> bool:
        """No other member of the class is called `name` (the property takes it), and nothing in the
        file changes the list (item stores, `append`, another `.name = ...`)."""
        if any(isinstance(member, (cst.FunctionDef, cst.ClassDef)) and member.name.value == name for member in class_node.body.body):
            return False
        changes = _ListChanges(name)
        self.module.visit(changes)
        return changes.stores == 1 and not changes.changed

    def _trained(self, name: str, value: cst.BaseExpression, class_node: cst.ClassDef, falsy: frozenset[str]) -> _Training | None:
        """The tensor is trained: made with `requires_grad=True`, or the class sets `requires_grad` on
        `self.<name>` or hands it to a `torch.optim` optimizer (minimalRL's SAC: `self.log_alpha =
        torch.tensor(np.log(init_alpha))`, `self.log_alpha.requires_grad = True`, `optim.Adam([self.log_alpha])`).
        A buffer is no place for it (`.to()` would give the module a copy the optimizer never updates).
        The walk tells whether the class's own optimizer trains it (then it is where that one wants it).
        `falsy`: names false where the value is made (`requires_grad=requires_grad` in the `else` of
        `if requires_grad:` makes no trained tensor)."""
        finder = _Training(name, self.qualified)
        class_node.visit(finder)
        made_trainable = isinstance(value, cst.Call) and any(
            arg.keyword is not None and arg.keyword.value == "requires_grad"
            and not (isinstance(arg.value, cst.Name) and (arg.value.value == "False" or arg.value.value in falsy))
            for arg in value.args)
        return finder if made_trainable or finder.found else None

    def _may_be_complex(self, value: cst.BaseExpression, methods: dict[str, cst.FunctionDef]) -> bool:
        """The value, or the method or function of the file it calls, makes a complex tensor
        (`torch.polar`, `torch.view_as_complex`, a complex dtype)."""
        called = self._called_function(value, methods)
        parts: list[cst.CSTNode] = [value] if called is None else [value, called]
        found = False

        class Finder(cst.CSTVisitor):
            def visit_Name(self, node: cst.Name) -> None:
                nonlocal found
                found = found or node.value in COMPLEX_MAKERS

            def visit_Attribute(self, node: cst.Attribute) -> None:
                nonlocal found
                found = found or node.attr.value in COMPLEX_MAKERS

        for part in parts:
            part.visit(Finder())
        return found

    def _computed_with_on_the_host(self, name: str, methods: dict[str, cst.FunctionDef]) -> bool:
        """A method combines `self.<name>` with values it brought to the host (`analysis.host_combined_reads`),
        or a DataLoader runs a method that reads it (`collate_fn=self._sample`, `analysis.loader_methods`):
        the table is a CPU tensor on purpose."""
        if any(self_attribute_nodes(methods[method], name) for method in methods_run_by_loaders(methods)):
            return True
        return any(combines_with_host_values(method, name, self.qualified) for method_name, method in methods.items() if method_name != "__init__")

    def _handed_to_the_host(self, name: str, methods: dict[str, cst.FunctionDef]) -> bool:
        """A statement of another method reads `self.<name>` and calls `.numpy()` or a host library
        (`np.round(self.prior.numpy(), 2)`, `[s.numpy() for s in self.sizes]`): the code relies on the
        tensor being on the CPU, and a buffer would follow the Module to the GPU."""
        for method_name, method in methods.items():
            if method_name == "__init__":
                continue
            for statement in _statements_reading(method, name):
                finder = _HostCalls(self.qualified)
                statement.visit(finder)
                if finder.found:
                    return True
        return False

    def _moved_where_read(self, name: str, methods: dict[str, cst.FunctionDef]) -> bool:
        """Every read of `self.<name>` outside `__init__` moves it first (`self.pos.to(x.device,
        dtype=x.dtype)`, `.cuda()`, `.type_as(x)`): the code places it where it is used, and is
        right as it is."""
        reads = [
            node for method_name, method in methods.items() if method_name != "__init__"
            for node in self_attribute_nodes(method, name) if not self._tested_for_none(node)
        ]
        return bool(reads) and all(self._moved(read) for read in reads)

    def _tested_for_none(self, read: cst.Attribute) -> bool:
        """`if self.attn_mask is not None:`: no use of the tensor."""
        parent = self.get_metadata(ParentProvider, read, None)
        return isinstance(parent, cst.Comparison) and parent.left is read and all(
            isinstance(item.operator, (cst.Is, cst.IsNot)) and isinstance(item.comparator, cst.Name)
            and item.comparator.value == "None" for item in parent.comparisons)

    def _moved(self, read: cst.Attribute) -> bool:
        method = self.get_metadata(ParentProvider, read, None)
        while isinstance(method, cst.Subscript) and method.value is read:  # CLIP's `self.attn_mask[..., -n:, -n:].to(...)`
            read, method = method, self.get_metadata(ParentProvider, method, None)
        call = self.get_metadata(ParentProvider, method, None) if isinstance(method, cst.Attribute) else None
        if not (isinstance(call, cst.Call) and call.func is method and method.value is read):
            return False
        if method.attr.value in ("cuda", "type_as"):
            return True
        if method.attr.value != "to":
            return False
        keywords = {arg.keyword.value for arg in call.args if arg.keyword is not None}
        positional = [arg.value for arg in call.args if arg.keyword is None]
        if "device" in keywords or (positional and "dtype" in keywords):  # `.to(device, dtype=...)`: the first is a device
            return True
        first = positional[0] if positional else None  # `.to(x)`, `.to(device)`: a name is taken for a move (not sure: leave it)
        return isinstance(first, (cst.Name, cst.SimpleString)) or (isinstance(first, cst.Attribute) and first.attr.value == "device")

    def _returned_tensor(self, value: cst.BaseExpression, methods: dict[str, cst.FunctionDef]) -> bool:
        """`self.table = self.build_table()`, a method of the class, or `self.b = sample_b(sigma,
        size)`, a function the file defines once at its top level (the name bound nowhere else):
        not a generator, and every `return` gives a tensor expression (`torch.from_numpy(table).float()`,
        `torch.randn(size) * sigma`)."""
        function = self._called_function(value, methods)
        if function is None or function.name.value == "__init__" or is_generator(function):
            return False
        if self._makes_parameters(function):
            return False  # patchtst's `_init_pe` returns `nn.Parameter(...)`: trained, or loaded from checkpoints
        returned = return_values(function)
        tensors = self.scope_tensors(function.body)
        return bool(returned) and all(item is not None and is_tensor_expression(item, tensors, self.qualified) for item in returned)

    def _makes_parameters(self, function: cst.FunctionDef) -> bool:
        """The function builds an `nn.Parameter` (or says it returns one)."""
        annotation = function.returns.annotation if function.returns is not None else None
        if annotation is not None and self.qualified(annotation) & PARAMETER_CLASSES:
            return True
        return any(self.qualified(call.func) & PARAMETER_CLASSES for call in calls_in(function.body))

    def _called_function(self, value: cst.BaseExpression, methods: dict[str, cst.FunctionDef]) -> cst.FunctionDef | None:
        """The method of the class (`self.build_table()`) or the function of the file
        (`sample_b(sigma, size)`, its name bound nowhere else) that `value` calls, if any."""
        if not isinstance(value, cst.Call):
            return None
        if is_self_attribute(value.func):
            return methods.get(value.func.attr.value)
        if not isinstance(value.func, cst.Name):
            return None
        scope = self.get_metadata(ScopeProvider, value.func, None)
        bound = list(scope[value.func.value]) if scope is not None else []
        if len(bound) != 1 or not isinstance(bound[0].scope, GlobalScope) or not isinstance(bound[0].node, cst.FunctionDef):
            return None
        return file_functions(self.module).get(value.func.value)

    def leave_SimpleStatementLine(
        self, original_node: cst.SimpleStatementLine, updated_node: cst.SimpleStatementLine
    ) -> cst.BaseStatement | cst.FlattenSentinel:
        if len(original_node.body) == 1 and original_node.body[0] in self._lists:
            return self._list_as_buffers(original_node, updated_node)
        if len(original_node.body) == 1 and original_node.body[0] in self._comprehensions:
            return self._comprehension_as_buffers(original_node, updated_node)
        if len(original_node.body) == 1 and original_node.body[0] in self._trained_tensors:
            name = self._trained_tensors[original_node.body[0]]
            self.report(original_node.body[0], f"`self.{name}` requires grad but is a plain tensor attribute: `.to(device)` leaves it on "
                        "the CPU and `parameters()` leaves it out; make it an `nn.Parameter` if the optimizer is to train it",
                        fixable=False)
            return updated_node
        if len(original_node.body) != 1 or original_node.body[0] not in self._buffers:
            return updated_node
        name, drop_cuda = self._buffers[original_node.body[0]]
        if not self.report(original_node.body[0], f"`self.{name}` is a plain tensor attribute: `.to(device)` leaves it on the CPU",
                           fix_title=f"register `{name}` as a non-persistent buffer"):
            return updated_node
        value = updated_node.body[0].value
        if drop_cuda:
            value = self._without_cuda_placement(value)
        return updated_node.with_changes(body=[cst.Expr(register_buffer(name, value))])

    def _list_as_buffers(
        self, original_node: cst.SimpleStatementLine, updated_node: cst.SimpleStatementLine
    ) -> cst.BaseStatement | cst.FlattenSentinel:
        """Each item becomes a non-persistent buffer `<name>_<i>`; the class gets a property `<name>`
        that lists them (reads, `len()` and loops see the same list, on the Module's device)."""
        name, count = self._lists[original_node.body[0]]
        if not self.report(original_node.body[0], f"`self.{name}` is a list of plain tensors: `.to(device)` leaves them on the CPU",
                           fix_title=f"register the tensors as non-persistent buffers and make `{name}` a property that lists them"):
            return updated_node
        items = [element.value for element in updated_node.body[0].value.elements]
        lines = [cst.SimpleStatementLine([cst.Expr(register_buffer(f"{name}_{index}", item))]) for index, item in enumerate(items)]
        lines[0] = lines[0].with_changes(leading_lines=updated_node.leading_lines)
        class_node = self._class_of_statement(original_node)
        self._properties.setdefault(id(class_node), []).append(
            f"@property\ndef {name}(self):\n    return [{', '.join(f'self.{name}_{index}' for index in range(count))}]\n"
        )
        return cst.FlattenSentinel(lines)

    def _comprehension_as_buffers(self, original_node: cst.SimpleStatementLine, updated_node: cst.SimpleStatementLine) -> cst.BaseStatement:
        """A loop registers each item as a non-persistent buffer `<name>_<i>`; the class gets a
        property `<name>` that lists them in their order (the file spells no other `<name>_`)."""
        name = self._comprehensions[original_node.body[0]]
        if not self.report(original_node.body[0], f"`self.{name}` is a list of plain tensors: `.to(device)` leaves them on the CPU",
                           fix_title=f"register the tensors as non-persistent buffers and make `{name}` a property that lists them"):
            return updated_node
        loop = cst.parse_statement(
            f'for index, tensor in enumerate(ITEMS):\n    self.register_buffer(f"{name}_{{index}}", tensor, persistent=False)\n',
            config=self.module.config_for_parsing,
        )
        loop = loop.with_changes(iter=cst.Call(cst.Name("enumerate"), [cst.Arg(updated_node.body[0].value)]),
                                 leading_lines=updated_node.leading_lines)
        self._properties.setdefault(id(self._class_of_statement(original_node)), []).append(
            f"@property\ndef {name}(self):\n"
            f'    return [buffer for key, buffer in self.named_buffers(recurse=False) if key.startswith("{name}_")]\n'
        )
        return loop

    def _class_of_statement(self, node: cst.CSTNode) -> cst.ClassDef | None:
        while node is not None and not isinstance(node, cst.ClassDef):
            node = self.get_metadata(ParentProvider, node, None)
        return node

    def leave_ClassDef(self, original_node: cst.ClassDef, updated_node: cst.ClassDef) -> cst.ClassDef:
        for code in reversed(self._properties.get(id(original_node), [])):
            updated_node = add_method_after_init(updated_node, code)
        return updated_node

    def _without_cuda_placement(self, value: cst.BaseExpression) -> cst.BaseExpression:
        """`t.cuda()` or `t.to("cuda")` → `t`: the buffer follows the Module's own `.to()`."""
        if not (isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute)):
            return value
        method, args = value.func.attr.value, value.args
        if (method == "cuda" and not args) or (
            method == "to" and len(args) == 1 and args[0].keyword is None and is_cuda_device_expression(args[0].value, self.qualified)
        ):
            return value.func.value
        return value

    def _callee_names(self, value: cst.BaseExpression) -> set[str]:
        while isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) and not self.qualified(value.func):
            value = value.func.value
        return self.qualified(value.func) if isinstance(value, cst.Call) else set()


def _without_variable(value: cst.BaseExpression, qualified) -> cst.BaseExpression:
    """`Variable(torch.zeros(1))` is `torch.zeros(1)` since PyTorch 0.4 (AGNN's `self.beta`)."""
    if isinstance(value, cst.Call) and qualified(value.func) & VARIABLE_WRAPPERS and value.args and value.args[0].keyword is None:
        return value.args[0].value
    return value


def _unless_none(value: cst.BaseExpression) -> cst.BaseExpression:
    """The other branch of a conditional expression one branch of which is `None` (focal losses'
    `self.alpha = torch.tensor(alpha) if alpha is not None else None`): `register_buffer` takes
    either, and the Module's reads see `None` as before."""
    if isinstance(value, cst.IfExp):
        for branch, other in ((value.body, value.orelse), (value.orelse, value.body)):
            if isinstance(other, cst.Name) and other.value == "None":
                return branch
    return value


def _placed_by_argument(value: cst.BaseExpression, init: cst.FunctionDef) -> bool:
    """`device=device`, `.to(device)` or `device=self.device`: the layer places this state itself
    with a device it was given, deliberately; or with one it asks for where it is built
    (DeepSpeed's scratch tensors, `device=get_accelerator().current_device()`)."""
    parameters = {param.name.value for param in init.params.params} - {"self"}
    code = cst.Module([]).code_for_node(value).replace(" ", "")
    devices = [*parameters, "self."]
    if any(f"device={name}" in code or f".to({name}" in code for name in devices):
        return True
    return any(arg.keyword is not None and arg.keyword.value == "device" and isinstance(arg.value, cst.Call)
               for call in calls_in(value) for arg in call.args)


def _statements_reading(method: cst.FunctionDef, name: str) -> list[cst.CSTNode]:
    """The simple statements, and the headers of compound ones (`for s in self.sizes:`), of a
    method that mention `self.<name>` or a local bound from it (`p = self.prior` ... `p.numpy()`)."""
    statements: list[cst.CSTNode] = []

    class Statements(cst.CSTVisitor):
        def visit_SimpleStatementLine(self, node: cst.SimpleStatementLine) -> bool:
            statements.append(node)
            return False

        def visit_For(self, node: cst.For) -> None:
            statements.append(node)  # the loop's body reads its rows

    method.body.visit(Statements())
    found: list[cst.CSTNode] = []
    found_ids: set[int] = set()
    bound: set[str] = set()
    while True:
        more = [statement for statement in statements if id(statement) not in found_ids and _reads(statement, name, bound)]
        if not more:
            return found
        found += more
        found_ids.update(id(statement) for statement in more)
        bound |= {target for statement in more for target in _bound_by(statement)}


def _reads(statement: cst.CSTNode, name: str, bound: set[str]) -> bool:
    """The statement (a loop's header only) mentions `self.<name>` or one of the `bound` locals."""
    part = statement.iter if isinstance(statement, cst.For) else statement
    return bool(self_attribute_nodes(part, name)) or bool(bound & _names_in(part))


def _bound_by(statement: cst.CSTNode) -> set[str]:
    """The names a statement binds: a loop's target, or the plain targets of its assignments."""
    if isinstance(statement, cst.For):
        return _names_in(statement.target)
    targets = [target.target for small in getattr(statement, "body", ()) if isinstance(small, cst.Assign)
               for target in small.targets]
    targets += [small.target for small in getattr(statement, "body", ()) if isinstance(small, (cst.AnnAssign, cst.AugAssign))]
    return {name for target in targets if not isinstance(target, (cst.Attribute, cst.Subscript))
            for name in _names_in(target)}


class _HostCalls(cst.CSTVisitor):
    """`.numpy()`, or a call of a host library (numpy, matplotlib, ...)."""

    def __init__(self, qualified) -> None:
        self.qualified = qualified
        self.found = False

    def visit_Call(self, node: cst.Call) -> None:
        if isinstance(node.func, cst.Attribute) and node.func.attr.value == "numpy" \
                or any(name.startswith(HOST_LIBRARIES) for name in self.qualified(node.func)):
            self.found = True


def _names_in(code: cst.CSTNode) -> set[str]:
    """Every name a piece of code spells (a function's parameters, locals, globals it reads), but
    the attributes it asks for (`tensor` of `torch.tensor`)."""
    found: set[str] = set()

    class Names(cst.CSTVisitor):
        def visit_Attribute(self, node: cst.Attribute) -> bool:
            node.value.visit(self)
            return False

        def visit_Name(self, node: cst.Name) -> None:
            found.add(node.value)

    code.visit(Names())
    return found


def _self_reads(value: cst.BaseExpression) -> set[str]:
    """The attributes `self.<x>` a value reads."""
    found: set[str] = set()

    class Finder(cst.CSTVisitor):
        def visit_Attribute(self, node: cst.Attribute) -> None:
            if isinstance(node.value, cst.Name) and node.value.value == "self":
                found.add(node.attr.value)

    value.visit(Finder())
    return found


class _Training(cst.CSTVisitor):
    """`self.<name>.requires_grad = ...`, `self.<name>.requires_grad_()`, or `self.<name>` in the
    arguments of a `torch.optim` constructor."""

    def __init__(self, name: str, qualified) -> None:
        self.name, self.qualified, self.found = name, qualified, False
        self.optimized = False  # handed to an optimizer of the class

    def _is_attribute(self, node: cst.CSTNode) -> bool:
        return (isinstance(node, cst.Attribute) and node.attr.value == self.name and isinstance(node.value, cst.Name)
                and node.value.value == "self")

    def visit_Attribute(self, node: cst.Attribute) -> None:
        if node.attr.value in ("requires_grad", "requires_grad_") and self._is_attribute(node.value):
            self.found = True

    def visit_Call(self, node: cst.Call) -> None:
        if any(name.startswith("torch.optim.") for name in self.qualified(node.func)):
            finder = _AttributeFound(self._is_attribute)
            for arg in node.args:
                arg.value.visit(finder)
            self.found = self.found or finder.found
            self.optimized = self.optimized or finder.found


class _AttributeFound(cst.CSTVisitor):
    def __init__(self, matches) -> None:
        self.matches, self.found = matches, False

    def visit_Attribute(self, node: cst.Attribute) -> None:
        self.found = self.found or self.matches(node)


class _ListChanges(cst.CSTVisitor):
    """Over the file: how many statements store `<anything>.<name> = ...`, and whether anything
    changes such a list in place (`x.name[i] = ...`, `x.name += ...`, `x.name.append(...)`, `del`)."""

    def __init__(self, name: str) -> None:
        self.name, self.stores, self.changed = name, 0, False

    def _named(self, node: cst.CSTNode) -> bool:
        return isinstance(node, cst.Attribute) and node.attr.value == self.name

    def _store(self, target: cst.BaseExpression) -> None:
        if self._named(target):
            self.stores += 1
        elif isinstance(target, cst.Subscript) and self._named(target.value):
            self.changed = True
        elif isinstance(target, (cst.Tuple, cst.List)):
            for element in target.elements:
                self._store(element.value)

    def visit_Assign(self, node: cst.Assign) -> None:
        for target in node.targets:
            self._store(target.target)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        self._store(node.target)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self.changed = self.changed or self._named(node.target) or isinstance(node.target, cst.Subscript) and self._named(node.target.value)

    def visit_Del(self, node: cst.Del) -> None:
        self.changed = True if self.name in cst.Module([]).code_for_node(node.target) else self.changed

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if isinstance(func, cst.Attribute) and func.attr.value in LIST_CHANGING_METHODS and self._named(func.value):
            self.changed = True
        if isinstance(func, cst.Name) and func.value == "setattr" and len(node.args) >= 2 \
                and isinstance(node.args[1].value, cst.SimpleString) and node.args[1].value.evaluated_value == self.name:
            self.stores += 1


def _is_random_state(value: cst.BaseExpression, qualified) -> bool:
    """A random generator's state (`g.get_state()`, `torch.get_rng_state()`): a CPU ByteTensor that
    `set_state` / `torch.set_rng_state` take back only as it is."""
    if not isinstance(value, cst.Call):
        return False
    if isinstance(value.func, cst.Attribute) and value.func.attr.value == "get_state" and not value.args:
        return True
    return bool(qualified(value.func) & RANDOM_STATES)
