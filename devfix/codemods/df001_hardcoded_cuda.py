"""DF001 hard-coded-cuda: `.cuda()`, `.to("cuda")` and `device="cuda"` only run with a GPU.

    Before:  model = Net().cuda();        x = torch.zeros(3, device="cuda")
    After:   device = torch.device("cuda" if torch.cuda.is_available() else "cpu")  # once
             model = Net().to(device);    x = torch.zeros(3, device=device)

The program then runs unchanged on a GPU machine and falls back to the CPU elsewhere. An existing
device variable in scope is reused (not a parameter that defaults to None, which callers may leave
so); otherwise the preamble is added after the imports, unless a local of that name would shadow it. Where
`device` already names something else (`device = cuda.Device(0)` of PyCUDA) the preamble is named
`torch_device`: the fix neither shadows that name nor hands it to `.to()`. A
hard-coded `device = "cuda"` variable becomes `"cuda" if torch.cuda.is_available() else "cpu"`, and
so does a global default: `torch.set_default_device("cuda")`, and
`torch.set_default_tensor_type(torch.cuda.FloatTensor)` → `torch.cuda.FloatTensor if
torch.cuda.is_available() else torch.FloatTensor`, and so does an alias of such a type (`dtype =
torch.cuda.FloatTensor`, then `x.type(dtype)`), and a block's default, `with torch.device("cuda"):`.
A GPU flag hard-coded to `True` (`use_cuda = True`, bound once in the file, then `if use_cuda:
model = model.cuda()`) becomes `torch.cuda.is_available()` (`analysis.gpu_flags`): the guarded code
stays, and runs only where it can.
transformers' `pipeline(task, device=0)` (GPU 0) becomes `device=0 if torch.cuda.is_available()
else -1` (-1 is its CPU); a pipeline takes a `torch.device` as well, so `device="cuda"` goes the
usual way.
A GPU a command-line option chooses (`parser.add_argument("--gpu", type=int, default=0)`, proven
by `analysis.gpu_options`) is one GPU, not several: `.cuda(args.gpu)` becomes `.to(device)`, with
`device = torch.device(f"cuda:{args.gpu}" if torch.cuda.is_available() else "cpu")` bound right
after `args = parser.parse_args()`, where that binding exists when the call runs (after the parse
in its function, or, for a parse outside functions, after it at the top level and in the functions
defined above the statement holding it), or first thing in a top-level function given the options
as a parameter (`def train(loader, model, args)`), when nothing else in the file binds `device`;
elsewhere it is reported without a fix. `f"cuda:{args.gpu}"` given as a device (also `"cuda:{}".format(args.gpu)`,
`"cuda:%d" % args.gpu`, `"cuda:" + str(args.gpu)`) falls back to `"cpu"` the same way.
A `torch.load` hook that moves every storage (`map_location=lambda storage, loc: storage.cuda(0)`)
becomes the device itself, `map_location=device`: storages take no positional device, so
`storage.to(device)` would raise.

Refuses (leaves the code alone): code under a test that already checks for CUDA or a GPU flag
(`if torch.cuda.is_available():`, `x.cuda() if use_gpu else x`); a class's own `cuda()` method
(`return self.to("cuda")`: moving to CUDA is its contract); explicit multi-GPU or
distributed placement (`"cuda:1"`, `.cuda(rank)`, `f"cuda:{rank}"`, `device_ids=`,
`init_process_group`, `LOCAL_RANK`); MPS and CPU fallbacks; `map_location="cpu"`. A `device="cuda"`
given to another library's function (`summary(model, size, device="cuda")` of torchsummary,
which asserts "cuda" or "cpu") is reported without a fix: only torch's own callables, the
project's Module classes, and the functions (and classes' `__init__`) of the file or of the
project's modules that use the parameter as a device, never compare or format it (FastChat's
`load_model` tests `device == "cuda"`), are known to take any device. A function
parameter that defaults to `"cuda"` (`def build(width, device="cuda")`) is fixed in a program
when the function places with it and some call of it in the file relies on the default. Inside an
`nn.Module` class a method that hands a parameter straight to a submodule (`forward(self, x)`
calling `self.rnn(x, h0)`) gets that input's device (`.to(x.device)`), so the module runs on any
device; a method without such an input (`init_hidden(self, batch)`) of a module that builds layers
with parameters gets the module's own device (`.to(next(self.parameters()).device)`); `__init__` of a
program's Module gets the program's device variable (`register_buffer("mask", m.to(device))`: placed
as before on a GPU, moved or not); elsewhere in a Module it reports without a fix. In a library
module (a file without top-level program code) no preamble is added: with no device variable in
scope it reports without a fix. Test files are not checked (`rule_registry`): a test that names
"cuda" is a GPU test by intent, often skipped without one (`@RunIf(min_cuda_gpus=1)`).
"""

from __future__ import annotations

import ast
from collections.abc import Sequence

import libcst as cst

from devfix.analysis.call_sites import argument_for
from devfix.analysis.cst_bindings import is_static_method, names_in, parameter_names
from devfix.analysis.cst_metadata import ParentProvider, PositionProvider
from devfix.analysis.device_parameters import takes_any_device
from devfix.analysis.device_scope import device_for
from devfix.analysis.gpu_options import DEVICE_VARIABLE, GpuOption, gpu_in_device_string
from devfix.analysis.met_parameters import parameter_met_by
from devfix.analysis.module_classes import class_facts, holds_parameters, is_self_attribute, module_input
from devfix.analysis.torch_api import (
    DEVICE_CONSTRUCTOR,
    DEVICE_NAMES,
    GUARD_WORDS,
    LEGACY_DTYPES,
    PARAMETER_CLASSES,
    PIPELINE_FACTORIES,
    places_on_several_gpus,
)
from devfix.analysis.torch_names import (
    is_cuda_device_expression,
    is_cuda_literal,
    keyword,
    qualified_names,
    torch_alias,
)
from devfix.codemods.base import DevfixRule
from devfix.findings import Safety

DEVICE_KEYWORDS = ("device", "map_location")
DEFAULT_PLACEMENT_SETTERS = frozenset({"torch.set_default_device", "torch.set_default_tensor_type"})


class HardcodedCuda(DevfixRule):
    CODE = "DF001"
    NAME = "hardcoded-cuda"
    SAFETY = Safety.SAFE
    DESCRIPTION = "Hard-coded CUDA device: use a device chosen at run time"

    def visit_Module(self, node: cst.Module) -> None:
        # the screen's answer, from the text it read: `node.code` would generate the module again
        self._multi_gpu_file = self.facts.several_gpus if self.facts is not None else places_on_several_gpus(node.code)
        self._option_device_needed = False  # a fix wrote the device an option chooses (`_fix_option_cuda_call`)
        self._parse_statement: cst.SimpleStatementLine | None = None
        self._functions_choosing_device: set[str] = set()  # top-level functions given the options, binding the device

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.BaseExpression:
        if self._multi_gpu_file or self._guarded(original_node):
            return updated_node
        method = original_node.func.attr.value if isinstance(original_node.func, cst.Attribute) else None
        if method == "format":
            return self._fix_option_device_string(original_node, updated_node)
        if method == "cuda" and self._is_option_cuda_call(original_node):
            return self._fix_option_cuda_call(original_node, updated_node)
        if method == "cuda" and self._is_plain_cuda_call(original_node):
            return self._fix_cuda_method(original_node, updated_node)
        if method == "to":
            return self._fix_to_call(original_node, updated_node)
        if qualified_names(self, original_node.func) & DEFAULT_PLACEMENT_SETTERS:
            return self._fix_default_placement(original_node, updated_node)
        return self._fix_device_keyword(original_node, updated_node)

    def leave_Assign(self, original_node: cst.Assign, updated_node: cst.Assign) -> cst.Assign:
        """`device = "cuda"` / `device = torch.device("cuda")` → choose at run time."""
        if self._multi_gpu_file or len(original_node.targets) != 1 or self._guarded(original_node):
            return updated_node
        target = original_node.targets[0].target
        if isinstance(target, cst.Name) and self._is_gpu_flag(original_node, target.value):
            return self._fix_gpu_flag(original_node, updated_node, target.value)
        if isinstance(target, cst.Name) and self._names_a_cuda_type(original_node.value):
            return self._fix_cuda_type_alias(original_node, updated_node, target.value)
        if not (isinstance(target, cst.Name) and target.value in DEVICE_NAMES) or self._checked_later(original_node, target.value):
            return updated_node
        literal, path = self._device_literal(original_node.value)
        if literal is None:
            return updated_node
        message = f"`{target.value}` is hard-coded to {literal.value}: the program fails without a GPU"
        if not self._imports_torch():
            # parallelproj's examples: `dev = "cuda"` for the array backend the user picks; the fix
            # would make a numpy-only script import torch
            self.report(original_node.value, f"{message}; the file does not import torch: choose the device where the backend is known",
                        fixable=False)
            return updated_node
        if not self.report(original_node.value, message, fix_title="choose CUDA only when it is available"):
            return updated_node
        conditional = self._conditional(literal)  # names torch: adds `import torch` where only `from torch` is
        if path == "literal":
            return updated_node.with_changes(value=conditional)
        call = updated_node.value
        return updated_node.with_changes(value=call.with_changes(args=[call.args[0].with_changes(value=conditional)]))

    def _imports_torch(self) -> bool:
        """The file imports torch or something of it (without analysis: it binds `torch`)."""
        if self.facts is None:
            return torch_alias(self.module) is not None
        return any(target == "torch" or target.startswith("torch.") for target in self.facts.imports.targets)

    def _is_gpu_flag(self, assignment: cst.Assign, name: str) -> bool:
        """`use_cuda = True`, bound once, guarding CUDA-only code (`analysis.gpu_flags`)."""
        if self.facts is None or not (isinstance(assignment.value, cst.Name) and assignment.value.value == "True"):
            return False
        return self.facts.hardcoded_gpu_flags.get(self.get_metadata(PositionProvider, assignment).start.line) == name

    def _fix_gpu_flag(self, original_node: cst.Assign, updated_node: cst.Assign, name: str) -> cst.Assign:
        """The flag becomes `torch.cuda.is_available()`: `True` on a GPU machine as before, and the
        CPU path its author wrote elsewhere."""
        apply = self.report(
            original_node.value,
            f"`{name}` is hard-coded to True and guards CUDA-only code: the program fails without a GPU",
            fix_title="set it only when CUDA is available",
        )
        if not apply:
            return updated_node
        return updated_node.with_changes(value=cst.parse_expression(f"{self.torch_name()}.cuda.is_available()"))

    def _names_a_cuda_type(self, value: cst.BaseExpression) -> bool:
        """`torch.cuda.FloatTensor`: a legacy CUDA tensor type, written through torch's `cuda` module."""
        return isinstance(value, cst.Attribute) and isinstance(value.value, cst.Attribute) and value.value.attr.value == "cuda" \
            and value.attr.value in LEGACY_DTYPES and f"torch.cuda.{value.attr.value}" in qualified_names(self, value)

    def _cuda_type_or_cpu(self, value: cst.BaseExpression) -> cst.BaseExpression:
        """`torch.cuda.FloatTensor if torch.cuda.is_available() else torch.FloatTensor` (also of the
        type's name as a string): the CPU type where CUDA is missing."""
        code = _code(value)
        return cst.parse_expression(f"{code} if {self.torch_name()}.cuda.is_available() else {code.replace('.cuda.', '.', 1)}")

    def _fix_cuda_type_alias(self, original_node: cst.Assign, updated_node: cst.Assign, name: str) -> cst.Assign:
        """`dtype = torch.cuda.FloatTensor`, then `x.type(dtype)` or `dtype(n)`: the alias becomes the
        CPU type where CUDA is missing, as `set_default_tensor_type` does; every use keeps working."""
        if not self.report(original_node.value, f"`{name}` is a CUDA tensor type: the program fails without a GPU",
                           fix_title="use the CPU tensor type when CUDA is not available"):
            return updated_node
        return updated_node.with_changes(value=self._cuda_type_or_cpu(original_node.value))

    def leave_WithItem(self, original_node: cst.WithItem, updated_node: cst.WithItem) -> cst.WithItem:
        """`with torch.device("cuda"):` makes CUDA the default device of the block: it too chooses
        at run time."""
        if self._multi_gpu_file or self._guarded(original_node):
            return updated_node
        literal, path = self._device_literal(original_node.item)
        if path != "call" or not isinstance(updated_node.item, cst.Call):
            return updated_node
        if not self.report(original_node.item, f"the block's default device is hard-coded to {literal.value}: the program "
                           "fails without a GPU", fix_title="choose CUDA only when it is available"):
            return updated_node
        call = updated_node.item
        return updated_node.with_changes(item=call.with_changes(args=[call.args[0].with_changes(value=self._conditional(literal))]))

    def leave_Param(self, original_node: cst.Param, updated_node: cst.Param) -> cst.Param:
        """`def build(width, device="cuda")` in a program whose calls rely on that default: the
        parameter is a device (the function places with it), so its default chooses at run time."""
        default = original_node.default
        if self._multi_gpu_file or default is None or not is_cuda_literal(default) or not self.may_add_globals:
            return updated_node
        function = self.get_metadata(ParentProvider, self.get_metadata(ParentProvider, original_node))
        name = original_node.name.value
        if not isinstance(function, cst.FunctionDef) or function not in self.module.body:
            return updated_node
        if not _places_with(function, name) or not _some_call_omits(self.module, function, name):
            return updated_node
        if not self.report(default, f"`{name}` defaults to {default.value}: calls that rely on it fail without a GPU",
                           fix_title="default to CUDA only when it is available"):
            return updated_node
        return updated_node.with_changes(default=self._conditional(default))

    def _device_literal(self, value: cst.BaseExpression) -> tuple[cst.SimpleString | None, str]:
        if is_cuda_literal(value):
            return value, "literal"
        if (
            isinstance(value, cst.Call)
            and DEVICE_CONSTRUCTOR in qualified_names(self, value.func)
            and len(value.args) == 1
            and is_cuda_literal(value.args[0].value)
        ):
            return value.args[0].value, "call"
        return None, ""

    def _conditional(self, literal: cst.SimpleString) -> cst.BaseExpression:
        cpu = f"{literal.prefix}{literal.quote}cpu{literal.quote}"  # in the literal's own quotes
        return cst.parse_expression(f"{literal.value} if {self.torch_name()}.cuda.is_available() else {cpu}")

    def _is_plain_cuda_call(self, call: cst.Call) -> bool:
        """`.cuda()`, `.cuda(0)`, `.cuda(non_blocking=True)`: nothing that names another GPU."""
        positional = [arg for arg in call.args if arg.keyword is None]
        keywords = {arg.keyword.value for arg in call.args if arg.keyword is not None}
        if keywords - {"non_blocking"} or len(positional) > 1:
            return False
        return not positional or (isinstance(positional[0].value, cst.Integer) and positional[0].value.value == "0")

    def _moves_a_value(self, call: cst.Call) -> bool:
        """`.cuda(...)` on a value DF001 may move: not a torch namespace, not `nn.Parameter(t)`
        (DF009's: the move belongs inside), not a storage a `map_location` hook is given
        (`leave_Arg` replaces the hook)."""
        receiver = call.func.value
        if isinstance(receiver, (cst.Name, cst.Attribute)) and any(name.startswith("torch.") for name in qualified_names(self, receiver)):
            return False
        if isinstance(receiver, cst.Call) and qualified_names(self, receiver.func) & PARAMETER_CLASSES:
            return False
        return self._loading_hook(call) is None

    def _fix_cuda_method(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        if not self._moves_a_value(original):
            return updated
        device = self._device_name(original, "`.cuda()` hard-codes the GPU: the program fails without one")
        return updated if device is None else _to_device(updated, device)

    def _gpu_option(self) -> GpuOption | None:
        return self.facts.gpu_option if self.facts is not None else None

    def _is_option_cuda_call(self, call: cst.Call) -> bool:
        """`.cuda(args.gpu)` (also with `non_blocking=`) of the option the file names its one GPU with
        (`analysis.gpu_options`)."""
        option = self._gpu_option()
        positional = [arg.value for arg in call.args if arg.keyword is None]
        keywords = {arg.keyword.value for arg in call.args if arg.keyword is not None}
        return option is not None and len(positional) == 1 and not keywords - {"non_blocking"} and _code(positional[0]) == option.code

    def _fix_option_cuda_call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        """`.cuda(args.gpu)` → `.to(device)`, `device` bound right after `args = parser.parse_args()`
        to that GPU when CUDA is available, else the CPU (`leave_SimpleStatementLine`)."""
        if not self._moves_a_value(original):
            return updated
        option = self._gpu_option()
        message = f"`.cuda({option.code})` puts it on the GPU the option chooses: the program fails without one"
        bound_in = self._option_device_reaches(original)
        if bound_in is None:
            self.report(original, message + " (no device variable can be added here)", fixable=False)
            return updated
        if not self.report(original, message, fix_title=f"use `{DEVICE_VARIABLE}`: GPU `{option.code}` when CUDA is available, else the CPU"):
            return updated
        if bound_in == "parse":
            self._option_device_needed = True
        else:
            self._functions_choosing_device.add(bound_in)
        return _to_device(updated, DEVICE_VARIABLE)

    def _option_device_reaches(self, node: cst.CSTNode) -> str | None:
        """Where the fix binds the device `node` reads, in a program whose files bind no other
        `device`: "parse" when the binding right after the parse exists when `node` runs, or the
        top-level function holding `node` that is given the parsed options itself."""
        option = self._gpu_option()
        if option is None or not option.device_name_free or not self.may_add_globals:
            return None
        functions: list[cst.CSTNode] = []
        current = self.get_metadata(ParentProvider, node, None)
        while current is not None and not isinstance(current, cst.Module):
            if isinstance(current, (cst.FunctionDef, cst.Lambda, cst.ClassDef)):
                functions.append(current)
            current = self.get_metadata(ParentProvider, current, None)
        outermost = functions[-1] if functions else None
        function = outermost.name.value if isinstance(outermost, cst.FunctionDef) else None
        if outermost is not None and function is None:
            return None  # a class or lambda at the top level
        line = self.get_metadata(PositionProvider, node).start.line
        if option.reaches(line, function, nested=len(functions) > 1):
            return "parse"
        if len(functions) == 1 and option.namespace in parameter_names(outermost):
            return function  # `def train(loader, model, args)`: bound there too
        return None

    def leave_FormattedString(self, original_node: cst.FormattedString, updated_node: cst.FormattedString) -> cst.BaseExpression:
        return self._fix_option_device_string(original_node, updated_node)

    def leave_BinaryOperation(self, original_node: cst.BinaryOperation, updated_node: cst.BinaryOperation) -> cst.BaseExpression:
        return self._fix_option_device_string(original_node, updated_node)

    def _fix_option_device_string(self, original: cst.BaseExpression, updated: cst.BaseExpression) -> cst.BaseExpression:
        """`f"cuda:{args.gpu}"` (`"cuda:{}".format(args.gpu)`, `"cuda:%d" % args.gpu`, `"cuda:" +
        str(args.gpu)`) given as a device (to `torch.device`, `.to()`, `device=`, or bound to a device
        variable) → `<it> if torch.cuda.is_available() else "cpu"`."""
        option = self._gpu_option()
        if option is None or self._multi_gpu_file or not self._names_the_option_gpu(original) \
                or not self._given_as_a_device(original) or self._guarded(original):
            return updated
        if not self.report(original, f"`{_code(original)}` names the GPU the option chooses: the program fails without one",
                           fix_title="choose that GPU only when CUDA is available, else the CPU"):
            return updated
        quote = "'" if _code(original).lstrip("fFrR").startswith("'") else '"'  # the string's own quotes
        return cst.parse_expression(f"{_code(updated)} if {self.torch_name()}.cuda.is_available() else {quote}cpu{quote}")

    def _names_the_option_gpu(self, node: cst.BaseExpression) -> bool:
        """`node` is a device string built from the option alone (`gpu_options.gpu_in_device_string`)."""
        try:
            named = gpu_in_device_string(ast.parse(_code(node).strip(), mode="eval").body)
        except SyntaxError:
            return False
        return named is not None and ast.unparse(named) == self._gpu_option().code

    def _given_as_a_device(self, node: cst.BaseExpression) -> bool:
        """`node` is what `torch.device(...)` or `.to(...)` is given first, a `device=`/`map_location=`
        of a callable that takes any device, or the value of a device variable."""
        parent = self.get_metadata(ParentProvider, node, None)
        if isinstance(parent, cst.Assign):
            targets = parent.targets
            return len(targets) == 1 and isinstance(targets[0].target, cst.Name) and targets[0].target.value in DEVICE_NAMES
        call = self.get_metadata(ParentProvider, parent, None) if isinstance(parent, cst.Arg) else None
        if not isinstance(call, cst.Call):
            return False
        if parent.keyword is not None:
            return parent.keyword.value in DEVICE_KEYWORDS and self._takes_a_torch_device(call, parent.keyword.value)
        first = call.args[0] is parent
        return first and (DEVICE_CONSTRUCTOR in self._qualified(call.func)
                          or isinstance(call.func, cst.Attribute) and call.func.attr.value == "to")

    def leave_SimpleStatementLine(self, original_node: cst.SimpleStatementLine, updated_node: cst.SimpleStatementLine
                                  ) -> cst.SimpleStatementLine:
        """Keeps `args = parser.parse_args()` as it goes into the tree: the block holding it gets the
        device the option chooses right after it, once a fix uses that (`leave_IndentedBlock`,
        `leave_Module`)."""
        option = self._gpu_option()
        if option is None or self.get_metadata(PositionProvider, original_node).start.line != option.parse_line:
            return updated_node
        self._parse_statement = updated_node
        return updated_node

    def leave_FunctionDef(self, original_node: cst.FunctionDef, updated_node: cst.FunctionDef) -> cst.FunctionDef:
        """A top-level function given the parsed options (`def train(loader, model, args)`) binds the
        device they choose first thing, for its own `.cuda(args.gpu)` fixed to `.to(device)`."""
        if original_node.name.value not in self._functions_choosing_device or original_node not in self.module.body:
            return updated_node
        body = list(updated_node.body.body)
        first = 1 if body and _is_docstring(body[0]) else 0
        return updated_node.with_changes(body=updated_node.body.with_changes(body=[*body[:first], self._option_device_statement(), *body[first:]]))

    def leave_IndentedBlock(self, original_node: cst.IndentedBlock, updated_node: cst.IndentedBlock) -> cst.IndentedBlock:
        if not self._option_device_needed or not any(statement is self._parse_statement for statement in updated_node.body):
            return updated_node
        return updated_node.with_changes(body=self._with_option_device(updated_node.body))

    def leave_Module(self, original_node: cst.Module, updated_node: cst.Module) -> cst.Module:
        if self._option_device_needed and any(statement is self._parse_statement for statement in updated_node.body):
            updated_node = updated_node.with_changes(body=self._with_option_device(updated_node.body))
        return super().leave_Module(original_node, updated_node)

    def _with_option_device(self, body: Sequence[cst.BaseStatement]) -> list[cst.BaseStatement]:
        """`body` with `device = torch.device(f"cuda:{args.gpu}" if torch.cuda.is_available() else
        "cpu")` right after the parse."""
        index = next(index for index, statement in enumerate(body) if statement is self._parse_statement)
        self._option_device_needed = False
        return [*body[:index + 1], self._option_device_statement(), *body[index + 1:]]

    def _option_device_statement(self) -> cst.BaseStatement:
        option, torch = self._gpu_option(), self.torch_name()
        return cst.parse_statement(
            f'{DEVICE_VARIABLE} = {torch}.device(f"cuda:{{{option.code}}}" if {torch}.cuda.is_available() else "cpu")\n',
            config=self.module.config_for_parsing,
        )

    def leave_Arg(self, original_node: cst.Arg, updated_node: cst.Arg) -> cst.Arg:
        """`map_location=lambda storage, loc: storage.cuda()` → `map_location=device`: the hook is
        given storages, whose `.to()` takes no positional device; `torch.load` maps to a device itself."""
        hook = original_node.value
        if not (original_node.keyword is not None and original_node.keyword.value == "map_location" and isinstance(hook, cst.Lambda)):
            return updated_node
        body = hook.body
        if self._multi_gpu_file or not isinstance(body, cst.Call) or self._loading_hook(body) is not original_node \
                or not self._is_plain_cuda_call(body) or self._guarded(original_node):
            return updated_node
        device = self._device_name(original_node, "`map_location` loads every storage onto the GPU with `.cuda()`: the program fails without one")
        return updated_node.with_changes(value=cst.parse_expression(device)) if device is not None else updated_node

    def _loading_hook(self, call: cst.Call) -> cst.Arg | None:
        """The `map_location=` argument when `call` is `storage.cuda(...)`, the whole body of a lambda
        given there and called on its first parameter (`lambda storage, loc: storage.cuda()`)."""
        hook = self.get_metadata(ParentProvider, call, None)
        if not (isinstance(hook, cst.Lambda) and hook.body is call and isinstance(call.func, cst.Attribute) and call.func.attr.value == "cuda"):
            return None
        params = hook.params.params
        if not params or not isinstance(call.func.value, cst.Name) or call.func.value.value != params[0].name.value:
            return None
        argument = self.get_metadata(ParentProvider, hook, None)
        keyword = argument.keyword if isinstance(argument, cst.Arg) else None
        return argument if keyword is not None and keyword.value == "map_location" else None

    def _fix_to_call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        for index, arg in enumerate(original.args):
            if arg.keyword is not None and arg.keyword.value != "device":
                continue
            if is_cuda_device_expression(arg.value, self._qualified):
                device = self._device_name(arg.value, f"`.to({_code(arg.value)})` hard-codes the GPU: the program fails without one")
                if device is None:
                    return updated
                args = list(updated.args)
                args[index] = args[index].with_changes(value=cst.parse_expression(device))
                return updated.with_changes(args=args)
            if arg.keyword is None:
                break  # only the first positional argument can be a device
        return updated

    def _fix_device_keyword(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        if _is_device_option(original):
            return self._fix_option_default(original, updated)
        if self._qualified(original.func) & PIPELINE_FACTORIES:
            return self._fix_pipeline_ordinal(original, updated)
        return self._fix_device_keyword_strings(original, updated)

    def _fix_device_keyword_strings(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        for keyword_name in DEVICE_KEYWORDS:
            arg = keyword(original, keyword_name)
            if arg is None or not is_cuda_device_expression(arg.value, self._qualified):
                continue
            message = f"`{keyword_name}={_code(arg.value)}` hard-codes the GPU: the program fails without one"
            if not self._takes_a_torch_device(original, keyword_name):
                self.report(arg.value, message + f" (`{_code(original.func)}` may accept only that string)", fixable=False)
                return updated
            device = self._device_name(arg.value, message)
            if device is None:
                return updated
            args = [
                a.with_changes(value=cst.parse_expression(device)) if a.keyword and a.keyword.value == keyword_name else a
                for a in updated.args
            ]
            return updated.with_changes(args=args)
        return updated

    def _fix_pipeline_ordinal(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        """`pipeline("sentiment-analysis", device=0)`: GPU 0 of transformers' pipeline, which then
        fails without one; `-1` is its CPU. A device string goes the way of any other (below)."""
        arg = keyword(original, "device")
        if arg is None or not (isinstance(arg.value, cst.Integer) and arg.value.value == "0"):
            return self._fix_device_keyword_strings(original, updated)
        if not self.report(arg.value, "`device=0` puts the pipeline on the first GPU: the program fails without one",
                           fix_title="use the GPU only when it is available, else the CPU (-1)"):
            return updated
        chosen = cst.parse_expression(f"0 if {self.torch_name()}.cuda.is_available() else -1")
        return updated.with_changes(args=[a.with_changes(value=chosen) if a.keyword and a.keyword.value == "device" else a for a in updated.args])

    def _fix_default_placement(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        """`torch.set_default_device("cuda")`, `torch.set_default_tensor_type(torch.cuda.FloatTensor)`:
        every tensor the program makes then needs CUDA. The default is CUDA only when it is available."""
        if len(original.args) != 1 or original.args[0].keyword is not None:
            return updated
        value = original.args[0].value
        literal, _ = self._device_literal(value)
        if literal is not None:
            fallback = self._conditional(literal)
        elif _is_cuda_tensor_type(value):
            fallback = self._cuda_type_or_cpu(value)
        else:
            return updated
        if not self.report(value, f"`{_code(original.func)}({_code(value)})` makes every new tensor need a GPU: "
                           "the program fails without one", fix_title="make CUDA the default only when it is available"):
            return updated
        return updated.with_changes(args=[updated.args[0].with_changes(value=fallback)])

    def _fix_option_default(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        """`parser.add_argument("--device", default="cuda")` → CUDA only when it is available."""
        default = keyword(original, "default")
        if default is None or not is_cuda_literal(default.value):
            return updated
        if not self.report(default.value, f"the `--device` option defaults to {default.value.value}: the program fails without a GPU",
                           fix_title="default to CUDA only when it is available"):
            return updated
        args = [
            arg.with_changes(value=self._conditional(arg.value)) if arg.keyword and arg.keyword.value == "default" else arg
            for arg in updated.args
        ]
        return updated.with_changes(args=args)

    def _takes_a_torch_device(self, call: cst.Call, parameter: str) -> bool:
        """A callable known to take a `torch.device` (or a device string of any form) for `device=`:
        torch's own (`torch.zeros`, `nn.Linear`, `torch.load`), a Module class of the project, or a
        function (or a class's `__init__`) of this file or of a module of the project that uses the
        parameter as a device, never as a string (`analysis.device_parameters`). Another library's may
        accept only some strings (torchsummary's `summary(model, size, device="cuda")` asserts "cuda"
        or "cpu")."""
        names = self._qualified(call.func)
        filename = self.context.filename or "<memory>"
        if any(name.startswith("torch.") or self.project.is_module_class(filename, name) is True for name in names) or names & PIPELINE_FACTORIES:
            return True
        if not isinstance(call.func, cst.Name):
            return False
        name = call.func.value
        if self.facts is None:  # no analysis (a bare libcst pass): the file's own callables, as written
            return any(isinstance(statement, (cst.FunctionDef, cst.ClassDef)) and statement.name.value == name for statement in self.module.body)
        defined = [node for node in self.facts.tree.body if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.name == name]
        if len(defined) == 1 and isinstance(defined[0], ast.ClassDef):
            defined = [item for item in defined[0].body if isinstance(item, ast.FunctionDef) and item.name == "__init__"]
        if defined:
            return len(defined) == 1 and takes_any_device(defined[0], parameter)
        imported = self.facts.imports.names.get(name)
        return imported is not None and self.project.imported_takes_any_device(filename, imported, parameter)

    def _device_name(self, node: cst.CSTNode, message: str) -> str | None:
        """Report at `node`; the device name to write when the fix is to be applied."""
        module_class = self._enclosing_module_class(node)
        if module_class is not None:
            return self._device_of_the_input(node, module_class, message)
        choice = device_for(self, node)
        if choice is None:
            parameter = self._met_parameter(node)
            if parameter is not None:
                # a library helper: where the tensor parameter it meets is, which `.cuda()` was wherever it ran
                if not self.report(node, message, fix_title=f"use the device of the parameter `{parameter}` it meets"):
                    return None
                return f"{parameter}.device"
            self.report(node, message + " (no device variable can be added here)", fixable=False)
            return None
        if choice.name == "self.device" and self._moves_self(node):
            # `self.to("cuda")` in a method of a plain class: to its own device would move nothing
            self.report(node, message + " (the object moves itself: choose its device by hand)", fixable=False)
            return None
        if not self.report(node, message, fix_title=f"use `{choice.name}` chosen at run time"):
            return None
        return self.use_device(choice)

    def _moves_self(self, node: cst.CSTNode) -> bool:
        """`node` is `self.to("cuda")`, `self.cuda()` or the device given to one."""
        call = node
        for _ in range(3):
            if isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute) and call.func.attr.value in ("to", "cuda"):
                return isinstance(call.func.value, cst.Name) and call.func.value.value == "self"
            call = self.get_metadata(ParentProvider, call, None)
        return False

    def _met_parameter(self, node: cst.CSTNode) -> str | None:
        """`mask = torch.ones(n).cuda()` (or `torch.zeros(n, device="cuda")`) in a function that then
        puts it with its tensor parameter `seq` (`analysis.met_parameters`): `seq`."""
        placed = node if isinstance(node, cst.Call) else self.get_metadata(ParentProvider, self.get_metadata(ParentProvider, node, None), None)
        function = self.get_metadata(ParentProvider, placed, None) if isinstance(placed, cst.Call) else None
        while function is not None and not isinstance(function, (cst.FunctionDef, cst.Lambda, cst.Module)):
            function = self.get_metadata(ParentProvider, function, None)
        return parameter_met_by(function, placed, self._qualified) if isinstance(function, cst.FunctionDef) else None

    def _qualified(self, node: cst.CSTNode) -> set[str]:
        return qualified_names(self, node)

    def _guarded(self, node: cst.CSTNode) -> bool:
        """Inside an `if`/conditional expression whose test already asks about CUDA or a GPU, or
        inside a class's own `cuda()` method (torchrl's `TensorSpec.cuda`: `return self.to("cuda")`
        is what the method promises, as `Module.cuda()` does)."""
        current = self.get_metadata(ParentProvider, node, None)
        child = node
        while current is not None:
            if isinstance(current, cst.FunctionDef) and current.name.value == "cuda" \
                    and isinstance(self.get_metadata(ParentProvider, self.get_metadata(ParentProvider, current, None), None), cst.ClassDef):
                return True
            if isinstance(current, (cst.If, cst.IfExp, cst.While)) and child is not current.test:
                if GUARD_WORDS.search(_code(current.test)):
                    return True
            if isinstance(current, cst.IfExp) and child is current.test:
                return True
            child, current = current, self.get_metadata(ParentProvider, current, None)
        return False

    def _checked_later(self, assignment: cst.Assign, name: str) -> bool:
        """A later `if` of the same function asks whether CUDA is available about `name`
        (stable-baselines3's `get_device`: `device = "cuda"` for "auto", then `if device.type ==
        "cuda" and not th.cuda.is_available(): return th.device("cpu")`): the code falls back
        itself."""
        function = self.get_metadata(ParentProvider, assignment, None)
        while function is not None and not isinstance(function, cst.FunctionDef):
            function = self.get_metadata(ParentProvider, function, None)
        if function is None:
            return False
        line_of = lambda node: self.get_metadata(PositionProvider, node).start.line  # noqa: E731
        line = line_of(assignment)
        found = False

        class Tests(cst.CSTVisitor):
            def visit_If(self, node: cst.If) -> None:
                nonlocal found
                code = _code(node.test)
                found = found or (name in names_in(node.test) and "is_available" in code and line_of(node) > line)

        function.body.visit(Tests())
        return found

    def _device_of_the_input(self, node: cst.CSTNode, module_class: cst.ClassDef, message: str) -> str | None:
        """Inside an nn.Module: the device of the method's tensor input (`h0 = torch.zeros(...).cuda()`
        in `forward(self, x)` → `.to(x.device)`), so the module runs wherever its input is."""
        method = self._enclosing_method(node, module_class)
        if method is not None and is_static_method(method):
            # DomainBed's `@staticmethod _irm_penalty(logits, y)`: no `self`; the tensor parameter the
            # value meets says where (`torch.tensor(1.).cuda()` times `logits`)
            parameter = self._met_parameter(node)
            if parameter is None:
                self.report(node, message + " (in a static method of an nn.Module)", fixable=False)
                return None
            if not self.report(node, message + " (inside an nn.Module)", fix_title=f"use the device of the parameter `{parameter}` it meets"):
                return None
            return f"{parameter}.device"
        reference = None if method is None else self._tensor_input(method, module_class)
        if reference is not None:
            if not self.report(node, message + " (inside an nn.Module)", fix_title=f"use the device of the input `{reference}`"):
                return None
            return f"{reference}.device"
        if method is not None and method.name.value != "__init__" and self._holds_parameters(module_class):
            # `init_hidden(self, batch)`: no tensor input, but the module's own parameters moved with it
            if not self.report(node, message + " (inside an nn.Module)", fix_title="use the module's own device"):
                return None
            return "next(self.parameters()).device"
        if method is not None and method.name.value == "__init__" and not self._tensor_attribute(node) \
                and (choice := device_for(self, node)) is not None:
            # `self.register_buffer("mask", m.cuda())`: the device the program chooses, so the module
            # is placed as before on a GPU, whether or not the program moves it afterwards
            if not self.report(node, message + " (inside an nn.Module)", fix_title=f"use `{choice.name}` chosen at run time"):
                return None
            return self.use_device(choice)
        self.report(node, message + " (inside an nn.Module: let `.to()` move it)", fixable=False)
        return None

    def _tensor_attribute(self, node: cst.CSTNode) -> bool:
        """`self.anchors = torch.tensor(...).cuda()`: a tensor kept as a plain attribute, which DF014
        makes a buffer (that `.to()` moves) instead; a layer (`self.proj = nn.Linear(...).cuda()`) is not."""
        move = node
        while move is not None and not (isinstance(move, cst.Call) and isinstance(move.func, cst.Attribute) and move.func.attr.value in ("cuda", "to")):
            move = self.get_metadata(ParentProvider, move, None)
        statement = self.get_metadata(ParentProvider, move, None) if move is not None else None
        if not (isinstance(statement, cst.Assign) and statement.value is move and any(is_self_attribute(t.target) for t in statement.targets)):
            return False
        receiver = move.func.value
        return not (isinstance(receiver, cst.Call) and self._builds_module(receiver))

    def _holds_parameters(self, module_class: cst.ClassDef, depth: int = 3) -> bool:
        """The class, or a base class of the file it derives from (DomainBed's `RSC(ERM)`, whose
        `ERM.__init__` builds `nn.Linear` and which `RSC.__init__` calls), builds layers with parameters."""
        facts = class_facts(module_class, lambda node: self.get_metadata(PositionProvider, node).start.line)
        if holds_parameters(facts, self._qualified):
            return True
        init = facts.methods.get("__init__")
        if depth == 0 or (init is not None and facts.super_init_line is None):
            return False  # an `__init__` of its own that calls no base's: the base builds nothing here
        bases = [next((item for item in self.module.body if isinstance(item, cst.ClassDef) and isinstance(base.value, cst.Name)
                       and item.name.value == base.value.value), None) for base in module_class.bases]
        return any(base is not None and self._holds_parameters(base, depth - 1) for base in bases)

    def _tensor_input(self, method: cst.FunctionDef, module_class: cst.ClassDef) -> str | None:
        """The first parameter the method hands straight to one of the module's submodules."""
        facts = class_facts(module_class, lambda node: self.get_metadata(PositionProvider, node).start.line)
        return module_input(method, facts, self._builds_module)

    def _builds_module(self, call: cst.Call) -> bool:
        filename = self.context.filename or "<memory>"
        return any(self.project.is_module_class(filename, name) is True for name in qualified_names(self, call.func))

    def _enclosing_method(self, node: cst.CSTNode, module_class: cst.ClassDef) -> cst.FunctionDef | None:
        """The method of `module_class` that holds `node` (directly, not in a nested function)."""
        functions = []
        current = self.get_metadata(ParentProvider, node, None)
        while current is not None and current is not module_class:
            if isinstance(current, cst.FunctionDef):
                functions.append(current)
            current = self.get_metadata(ParentProvider, current, None)
        return functions[0] if len(functions) == 1 else None

    def _enclosing_module_class(self, node: cst.CSTNode) -> cst.ClassDef | None:
        current = self.get_metadata(ParentProvider, node, None)
        while current is not None:
            if isinstance(current, cst.ClassDef):
                is_module = any(
                    self.project.is_module_class(self.context.filename or "<memory>", name) is True
                    for base in current.bases
                    for name in qualified_names(self, base.value) | {_code(base.value)}
                )
                return current if is_module else None
            current = self.get_metadata(ParentProvider, current, None)
        return None


def _is_device_option(call: cst.Call) -> bool:
    """An argparse option about the device: `add_argument("--device", ...)`."""
    if not (isinstance(call.func, cst.Attribute) and call.func.attr.value == "add_argument"):
        return False
    flags = [arg.value.evaluated_value for arg in call.args if arg.keyword is None and isinstance(arg.value, cst.SimpleString)]
    return any("device" in flag or "gpu" in flag or "cuda" in flag for flag in flags)


def _is_cuda_tensor_type(node: cst.BaseExpression) -> bool:
    """`torch.cuda.FloatTensor`, or its name as a string (`"torch.cuda.FloatTensor"`)."""
    code = node.evaluated_value if isinstance(node, cst.SimpleString) else _code(node) if isinstance(node, cst.Attribute) else ""
    return isinstance(code, str) and code.startswith("torch.cuda.") and code.endswith("Tensor")


def _code(node: cst.CSTNode) -> str:
    return cst.Module([]).code_for_node(node)


def _to_device(cuda_call: cst.Call, device: str) -> cst.Call:
    """`x.cuda(...)` → `x.to(device)`, keeping `non_blocking=`."""
    kept = [arg for arg in cuda_call.args if arg.keyword is not None]
    args = [cst.Arg(cst.parse_expression(device)), *kept]
    if kept:
        args[0] = args[0].with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
    return cuda_call.with_changes(func=cuda_call.func.with_changes(attr=cst.Name("to")), args=args)


def _places_with(function: cst.FunctionDef, name: str) -> bool:
    """The function hands `name` to torch as a device: `device=name`, `.to(name)`, `torch.device(name)`."""
    found = False

    class Finder(cst.CSTVisitor):
        def visit_Call(self, node: cst.Call) -> None:
            nonlocal found
            for arg in node.args:
                if not (isinstance(arg.value, cst.Name) and arg.value.value == name):
                    continue
                by_keyword = arg.keyword is not None and arg.keyword.value == "device"
                by_move = arg.keyword is None and isinstance(node.func, cst.Attribute) and node.func.attr.value == "to"
                by_constructor = arg.keyword is None and isinstance(node.func, cst.Attribute) and _code(node.func).endswith("torch.device")
                found = found or by_keyword or by_move or by_constructor

    function.body.visit(Finder())
    return found


def _some_call_omits(module: cst.Module, function: cst.FunctionDef, name: str) -> bool:
    """A call of `function` in the file that passes nothing for `name` (so the default runs)."""
    params = function.params
    positional = [param.name.value for param in (*params.posonly_params, *params.params)]
    calls: list[cst.Call] = []

    class Finder(cst.CSTVisitor):
        def visit_Call(self, node: cst.Call) -> None:
            if isinstance(node.func, cst.Name) and node.func.value == function.name.value:
                calls.append(node)

    module.visit(Finder())
    return any(
        not any(arg.star for arg in call.args) and argument_for(call, name, positional) is None
        for call in calls
    )


def _is_docstring(statement: cst.BaseStatement) -> bool:
    return isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1 and isinstance(statement.body[0], cst.Expr) \
        and isinstance(statement.body[0].value, (cst.SimpleString, cst.ConcatenatedString))
