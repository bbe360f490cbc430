"""Does a function of another file of the project return tensors made on the CPU?

Model code often takes its masks and positional tables from a `utils.py`
(`scores.masked_fill(causal_mask(n), ...)`, `x + sinusoid(n, d)`): DF004 moves such a helper's
result where it meets a device tensor when the helper is in the same file; this answers the same
question, on Python's `ast`, for a helper imported from a local module (`project.ProjectIndex`
finds the file). It proves, never guesses: every `return` must build its value on the host from
literals, numpy values, torch factories without `device=`, and arithmetic and methods of those
(`analysis.host_made`, on libcst); a parameter, a loop variable or anything moved is not proven.
A function of the same file may also read the module's names bound once (`data[i:i + n]` of a
top-level `data = torch.tensor(ids)`), and a sampler that returns `x, y` is proven item by item.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from dataclasses import dataclass

from devfix import python_parser
from devfix.analysis.ast_nodes import FUNCTIONS, Binding, latest_binding, may_name_a_device, scope_bindings, scope_nodes
from devfix.analysis.following_returns import Followed, as_followed, followed_parameters, named_parameters
from devfix.analysis.imports import ImportTable
from devfix.analysis.kinds import NUMBER_BUILTINS, makes_no_tensor
from devfix.analysis.moves import is_cast
from devfix.analysis.size_parameters import size_parameters
from devfix.analysis.torch_api import DEVICE_CHANGING_METHODS, FACTORY_FUNCTIONS, MOVED_AFTER, WHOLE_REDUCTIONS

MAX_DEPTH = 12  # names resolve to earlier lines, so chains end; this bounds the cost (the parts of one
# expression, receivers, operands and display items, are at its depth: the source bounds them)
HOST_METHODS = frozenset({"numpy", "tolist", "item"})  # what leaves torch
DATA_FACTORIES = frozenset({"torch.tensor", "torch.as_tensor"})


@dataclass(frozen=True)
class HelperSummary:
    returns_host_tensors: bool
    may_return_a_scalar: bool  # `torch.tensor(v)` of no list, or a whole reduction: 0-dim, allowed beside CUDA tensors
    returns_tensors: bool = False  # every return is made by torch (not a numpy array, a list, a number)
    host_tuple_size: int = 0  # every return is a tuple of this many tensors made on the host (`return x, y`)
    returns_host_dicts: bool = False  # every return is a dict display of host tensors (`return {"input_ids": ids}`)
    follows: Followed = ()  # the parameters every return computes its tensor from (`analysis.following_returns`)
    # a sampler of a tensor it is given (`def get_batch(data)`, `return x, y` of `data[i:i + n]`):
    # the tuple's size and the parameters that must be given host tensors for it to be made on the host
    given_host_tuple: tuple[int, Followed] = (0, ())

    @property
    def gives_tensors(self) -> bool:
        """Every `return` gives a tensor, or a tuple or dict of them: not a list or a number alone
        (diffusers' `_compute_padding`), which DF004 never takes for a CPU tensor."""
        return self.returns_tensors or bool(self.host_tuple_size or self.returns_host_dicts or self.given_host_tuple[0])

    @property
    def makes_host_tensors(self) -> bool:
        """Every `return` makes a tensor (by torch) on the host, never a 0-dim one: what it gives a
        layer beside a device tensor must move (DF016's `causal_mask(t)`)."""
        return self.returns_host_tensors and self.returns_tensors and not self.may_return_a_scalar


def summarise(
    function: ast.FunctionDef | ast.AsyncFunctionDef, imports: ImportTable, module: ModuleScope | None = None,
    helpers: Callable[[str], HelperSummary | None] | None = None,
) -> HelperSummary:
    """With the `module` the function is in, what it reads of the module's names bound once is
    judged too (`data[i:i + block]` of `data = torch.tensor(ids)`); with the summaries of the file's
    other functions (`helpers`), what it builds from their results too (SSIM's `create_window`
    returning a shape of `gaussian(k, 1.5)`)."""
    returns = _returns(function)
    nodes = list(scope_nodes(function.body))
    bindings = scope_bindings(nodes)
    judge = _Judge(bindings, imports, module, {argument.arg for argument in ast.walk(function.args) if isinstance(argument, ast.arg)})
    judge.appended = _appended(nodes)
    judge.sizes = size_parameters(nodes, imports, judge.parameters)
    judge.helpers = helpers
    tensors = bool(returns) and all(value is not None and judge.makes_a_tensor(value, value.lineno, 0) for value in returns)
    host = tensors and all(judge.host_made(value, value.lineno, 0) for value in returns)
    scalar = any(_may_be_zero_dim(node, imports) for value in returns if value is not None for node in ast.walk(value))
    tuple_size = _host_tuple_size(returns, judge)
    return HelperSummary(
        host, scalar, tensors, tuple_size, _returns_host_dicts(returns, judge), followed_parameters(function, imports),
        (0, ()) if tuple_size else _given_host_tuple(function, returns, bindings, imports, module),
    )


def _given_host_tuple(function: ast.FunctionDef | ast.AsyncFunctionDef, returns: list[ast.expr | None], bindings,
                      imports: ImportTable, module: ModuleScope | None) -> tuple[int, Followed]:
    """What `_host_tuple_size` proves when the parameters are given host tensors: the size, and
    the parameters the proof read (each must be given a host tensor at a call)."""
    parameters = frozenset(named_parameters(function))
    judge = _Judge(bindings, imports, module, parameters, assumed_host=parameters)
    size = _host_tuple_size(returns, judge)
    if not size or not judge.assumed_read:
        return (0, ())
    return size, as_followed(function, judge.assumed_read)


def _returns(function: ast.FunctionDef | ast.AsyncFunctionDef) -> list[ast.expr | None]:
    """What each `return` of the function (not of functions or classes inside it) gives back."""
    return [node.value for node in scope_nodes(function.body, (*FUNCTIONS, ast.ClassDef, ast.Lambda)) if isinstance(node, ast.Return)]


def _host_tuple_size(returns: list[ast.expr | None], judge: _Judge) -> int:
    """n when every `return` is a tuple display of n tensors made on the host, else 0."""
    sizes = {len(value.elts) for value in returns if isinstance(value, ast.Tuple)}
    if not returns or len(sizes) != 1 or not all(isinstance(value, ast.Tuple) for value in returns):
        return 0
    proven = all(
        judge.makes_a_tensor(element, value.lineno, 0) and judge.host_made(element, value.lineno, 0)
        for value in returns for element in value.elts
    )
    return sizes.pop() if proven else 0


def _returns_host_dicts(returns: list[ast.expr | None], judge: _Judge) -> bool:
    """Every `return` is a dict display whose keys are strings and whose values are tensors made on
    the host (`return {"input_ids": ids, "attention_mask": mask}`): each value has `.to()`."""
    return bool(returns) and all(
        isinstance(value, ast.Dict) and value.keys
        and all(isinstance(key, ast.Constant) and isinstance(key.value, str) for key in value.keys)
        and all(judge.makes_a_tensor(item, value.lineno, 0) and judge.host_made(item, value.lineno, 0) for item in value.values)
        for value in returns
    )


@dataclass(frozen=True)
class ModuleScope:
    """A module's top level, as its functions read it: `bindings` of every top-level name, and
    `once`, the names bound exactly once there and never declared `global` in a function (their
    value is the same wherever a function reads them)."""

    bindings: dict[str, list[Binding]]
    once: frozenset[str]


def module_scope(tree: ast.Module, declared_global: set[str]) -> ModuleScope:
    bindings = scope_bindings(scope_nodes(tree.body))
    once = {name for name, found in bindings.items() if len(found) == 1 and found[0][1] is not None and name not in declared_global}
    return ModuleScope(bindings, frozenset(once))


def _appended(nodes: list[ast.AST]) -> dict[str, list[ast.expr]]:
    """`texts.append(t)` in the function: what each name's list is given; not for a name the
    function also fills or changes some other way (`extend`, `insert`, `texts[i] = ...`)."""
    found: dict[str, list[ast.expr]] = {}
    other: set[str] = set()
    for node in nodes:
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and isinstance(node.func.value, ast.Name):
            if node.func.attr == "append" and len(node.args) == 1 and not node.keywords:
                found.setdefault(node.func.value.id, []).append(node.args[0])
            elif node.func.attr in ("extend", "insert", "__setitem__", "__iadd__"):
                other.add(node.func.value.id)
        elif isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Store) and isinstance(node.value, ast.Name):
            other.add(node.value.id)
    return {name: values for name, values in found.items() if name not in other}


class _Judge:
    def __init__(self, bindings, imports: ImportTable, module: ModuleScope | None = None, parameters: set[str] = frozenset(),
                 assumed_host: frozenset[str] = frozenset()) -> None:
        self.bindings, self.imports = bindings, imports
        self.module, self.parameters = module, parameters
        self.appended: dict[str, list[ast.expr]] = {}  # a summarised function's `name.append(value)`s
        self.assumed_host = assumed_host  # parameters taken to hold host tensors (`_given_host_tuple`)
        self.assumed_read: set[str] = set()  # … of those, the ones a proof read
        self.sizes: frozenset[str] = frozenset()  # parameters given to a factory as sizes: integers
        self.helpers: Callable[[str], HelperSummary | None] | None = None  # the file's other functions' summaries

    def _helper(self, call: ast.Call, line: int) -> HelperSummary | None:
        """The summary of the function of the file a call names (`gaussian(k, 1.5)`), when no local
        name hides it."""
        if self.helpers is None or not isinstance(call.func, ast.Name) or call.func.id in self.parameters:
            return None
        if latest_binding(self.bindings, call.func.id, line) is not None:
            return None
        return self.helpers(call.func.id)

    def _assumed(self, name: str, line: int) -> bool:
        """`name` is a parameter taken to hold a host tensor, not rebound before `line`."""
        if name in self.assumed_host and latest_binding(self.bindings, name, line) is None:
            self.assumed_read.add(name)
            return True
        return False

    def host_made(self, value: ast.expr, line: int, depth: int) -> bool:
        if depth > MAX_DEPTH:
            return False
        again = lambda inner: self.host_made(inner, line, depth + 1)
        chained = lambda inner: self.host_made(inner, line, depth)  # a part of the same expression: the source bounds it
        if isinstance(value, ast.Constant):
            return True
        if isinstance(value, (ast.List, ast.Tuple)):
            return all(chained(element) for element in value.elts)
        if isinstance(value, ast.Name):
            if self._assumed(value.id, line):
                return True
            binding = latest_binding(self.bindings, value.id, line)
            if binding is None and (found := self._global(value.id)) is not None:
                return _Judge(self.module.bindings, self.imports).host_made(found[1], found[0], depth + 1)  # `data` of the module
            if binding is not None and self._filled_on_the_host(value.id, binding[1], depth):
                return True  # `texts = []`, then only `texts.append(<made on the host>)`
            if binding is None and value.id in self.sizes:
                return True  # a parameter the function gives a factory as a size: an integer
            if binding is None or binding[1] is None or isinstance(binding[1], (ast.List, ast.Tuple, ast.Dict)):
                return False  # a parameter; a container bound to a name may be filled later
            return self.host_made(binding[1], binding[0], depth + 1)
        if isinstance(value, (ast.Subscript, ast.Attribute)):
            return chained(value.value)
        if isinstance(value, (ast.ListComp, ast.GeneratorExp)):  # `[data[i:i + n] for i in ix]`
            return again(value.elt)
        if isinstance(value, ast.IfExp):  # `train_data if split == "train" else val_data`
            return again(value.body) and again(value.orelse)
        if isinstance(value, ast.BinOp):
            return chained(value.left) and chained(value.right)
        if isinstance(value, ast.UnaryOp):
            return chained(value.operand)
        if isinstance(value, ast.Compare):
            return all(chained(operand) for operand in [value.left, *value.comparators])
        if not isinstance(value, ast.Call):
            return False
        if (summary := self._helper(value, line)) is not None:
            return summary.returns_host_tensors
        if isinstance(value.func, ast.Name) and value.func.id in NUMBER_BUILTINS and value.func.id not in self.imports.names \
                and latest_binding(self.bindings, value.func.id, line) is None:
            return True  # `float(s)`: a Python number
        qualified = self.imports.qualify(value.func) or ""
        if qualified in DATA_FACTORIES and value.args and self.makes_a_tensor(value.args[0], line, depth + 1) \
                and not again(value.args[0]):
            return False  # lightly's `torch.tensor(k ** -e)` of `k = torch.arange(n, device=device)`: a copy stays there
        if qualified in FACTORY_FUNCTIONS or qualified in MOVED_AFTER:
            return not may_name_a_device(value)
        if qualified.startswith("numpy."):
            return True
        if isinstance(value.func, ast.Attribute) and not qualified.startswith("torch."):
            if is_cast(value, self.imports):
                return chained(value.func.value)
            if value.func.attr in DEVICE_CHANGING_METHODS:
                return False
            return chained(value.func.value) and all(again(argument) for argument in value.args)
        if not qualified.startswith("torch.") or makes_no_tensor(qualified):
            return False  # a call of something else (`torch.device("cpu")` is no tensor): not followed
        arguments = [argument for argument in value.args if not isinstance(argument, ast.Starred)]
        return bool(arguments) and all(again(argument) for argument in arguments)

    def _filled_on_the_host(self, name: str, value: ast.expr | None, depth: int) -> bool:
        """An empty list the function fills only with `.append` of values made on the host (each
        read where it is appended), and that nothing else in the function rebinds."""
        filled = self.appended.get(name)
        return (
            isinstance(value, ast.List) and not value.elts and bool(filled) and len(self.bindings.get(name, ())) == 1
            and all(self.host_made(item, item.lineno, depth + 1) for item in filled)
        )

    def _global(self, name: str) -> Binding | None:
        """The binding of a module-level name the function reads without binding it."""
        if self.module is None or name in self.parameters or name in self.bindings or name not in self.module.once:
            return None
        return self.module.bindings[name][0]

    def makes_a_tensor(self, value: ast.expr, line: int, depth: int) -> bool:
        """The value is a torch tensor, not a numpy array or a number made on the host too."""
        if depth > MAX_DEPTH:
            return False
        again = lambda inner: self.makes_a_tensor(inner, line, depth + 1)
        chained = lambda inner: self.makes_a_tensor(inner, line, depth)
        if isinstance(value, ast.Name):
            if self._assumed(value.id, line):
                return True
            binding = latest_binding(self.bindings, value.id, line)
            if binding is None and (found := self._global(value.id)) is not None:
                return _Judge(self.module.bindings, self.imports).makes_a_tensor(found[1], found[0], depth + 1)
            return binding is not None and binding[1] is not None and self.makes_a_tensor(binding[1], binding[0], depth + 1)
        if isinstance(value, ast.Subscript):
            return chained(value.value)
        if isinstance(value, ast.IfExp):
            return again(value.body) and again(value.orelse)
        if isinstance(value, ast.BinOp):
            return again(value.left) or again(value.right)
        if isinstance(value, ast.UnaryOp):
            return again(value.operand)
        if isinstance(value, ast.Compare):
            return any(again(operand) for operand in [value.left, *value.comparators])
        if not isinstance(value, ast.Call):
            return False
        if (summary := self._helper(value, line)) is not None:
            return summary.returns_tensors
        qualified = self.imports.qualify(value.func) or ""
        if qualified.startswith("torch."):
            return not makes_no_tensor(qualified)
        if isinstance(value.func, ast.Attribute) and not qualified.startswith("numpy."):
            return value.func.attr not in HOST_METHODS and chained(value.func.value)  # `mask.bool()`, not `.numpy()`
        return False


def _may_be_zero_dim(node: ast.AST, imports: ImportTable) -> bool:
    if not isinstance(node, ast.Call):
        return False
    if (imports.qualify(node.func) or "") in DATA_FACTORIES:
        data = node.args[0] if node.args else None
        return not isinstance(data, (ast.List, ast.Tuple, ast.ListComp))
    reduces = isinstance(node.func, ast.Attribute) and node.func.attr in WHOLE_REDUCTIONS
    return reduces and not node.args and not any(keyword.arg == "dim" for keyword in node.keywords)


def summarise_in_text(text: str, function: str) -> HelperSummary | None:
    """The summary of the top-level `def function(` of a module's text (`function_in_text`)."""
    found = function_in_text(text, function)
    return None if found is None else summarise(*found)


def function_in_text(text: str, function: str) -> tuple[ast.FunctionDef | ast.AsyncFunctionDef, ImportTable] | None:
    """The top-level `def function(` of a module's text, and the module's imports, parsing only
    that function and the module's top-level imports (a project's other files are read for one
    function each, often many of them: parsing them whole cost more than checking the file
    itself). None when the module has no such function, or the snippet does not parse on its own."""
    found = function_source_in_text(text, function)
    if found is None:
        return None
    try:
        tree = python_parser.parse(found[0])
        imports = python_parser.parse(found[1])
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    definition = tree.body[0] if tree.body and isinstance(tree.body[0], FUNCTIONS) else None
    return None if definition is None else (definition, ImportTable.of(imports))


def function_source_in_text(text: str, function: str) -> tuple[str, str] | None:
    """The source of the one top-level `def function(` of a module's text (to its last indented
    line), and the module's top-level imports; None when there is not exactly one."""
    if f"def {function}(" not in text:
        return None  # most asked-for names are no function there: not worth splitting the text
    return _definition_source(text, (f"def {function}(", f"async def {function}("))


def class_source_in_text(text: str, class_name: str) -> tuple[str, str] | None:
    """`function_source_in_text` for the one top-level `class class_name`."""
    if f"class {class_name}" not in text:
        return None
    return _definition_source(text, (f"class {class_name}(", f"class {class_name}:"))


def _definition_source(text: str, heads: tuple[str, ...]) -> tuple[str, str] | None:
    lines = text.splitlines(keepends=True)
    starts = [index for index, line in enumerate(lines) if line.startswith(heads)]
    if len(starts) != 1:
        return None
    end = starts[0] + 1
    while end < len(lines) and (not lines[end].strip() or lines[end][:1] in (" ", "\t", "#")):
        end += 1
    return "".join(lines[starts[0]:end]), _top_level_imports(lines)


def _top_level_imports(lines: list[str]) -> str:
    """The module's `import`/`from ... import` statements at column 0, with their continuation lines."""
    found: list[str] = []
    index = 0
    while index < len(lines):
        line = lines[index]
        index += 1
        if not line.startswith(("import ", "from ")):
            continue
        found.append(line)
        depth = line.count("(") - line.count(")")
        while (depth > 0 or found[-1].rstrip().endswith("\\")) and index < len(lines):
            found.append(lines[index])
            depth += lines[index].count("(") - lines[index].count(")")
            index += 1
    return "".join(found)


HOST_COPY_METHODS = HOST_METHODS | {"cpu"}


def host_copy_methods(tree: ast.Module) -> frozenset[str]:
    """Names of the methods of the file's top-level classes whose every `return` hands back a copy
    on the host (`return probs.cpu()`, `.numpy()`, `.tolist()`, `.item()`, `.to("cpu")`), in each
    class that defines one of that name: what `model.predict(x)` returns is on the host even when
    `model` runs on a device."""
    verdicts: dict[str, bool] = {}
    for node in tree.body:
        if not isinstance(node, ast.ClassDef):
            continue
        for method in node.body:
            if isinstance(method, FUNCTIONS):
                returns = _returns(method)
                copies = bool(returns) and all(value is not None and _is_host_copy(value) for value in returns)
                verdicts[method.name] = verdicts.get(method.name, True) and copies
    return frozenset(name for name, copies in verdicts.items() if copies)


def _is_host_copy(value: ast.expr) -> bool:
    if isinstance(value, ast.Tuple):
        return all(_is_host_copy(element) for element in value.elts)
    if not (isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute)):
        return False
    if value.func.attr in HOST_COPY_METHODS:
        return True
    device = next((keyword.value for keyword in value.keywords if keyword.arg == "device"), value.args[0] if value.args else None)
    return value.func.attr == "to" and isinstance(device, ast.Constant) and device.value == "cpu"
