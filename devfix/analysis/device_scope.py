"""Which device expression a fix should use at a given place, and the script preamble.

Preference: an existing device variable visible at that place (a parameter or assignment named
like a device, or anything assigned from `torch.device(...)`); in a method of a plain class (no
Module) that moves values to `self.device` elsewhere, `self.device` (uORF's models, whose
`self.device` follows the user's `--gpu_ids`); otherwise the conventional
`device = torch.device("cuda" if torch.cuda.is_available() else "cpu")` added after the imports,
so the fixed program runs with and without a GPU.
"""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst
from libcst.metadata import (
    Assignment,
    ClassScope,
    FunctionScope,
    GlobalScope,
    Scope,
    ScopeProvider,
)

from devfix.analysis.cst_bindings import bound_names, is_static_method, parameter_names
from devfix.analysis.cst_metadata import ParentProvider, PositionProvider
from devfix.analysis.module_classes import is_module_class
from devfix.analysis.torch_api import DEVICE_CONSTRUCTOR, DEVICE_NAMES
from devfix.analysis.torch_names import call_names, qualified_names

PREAMBLE_NAME = "device"
SPARE_PREAMBLE_NAME = "torch_device"  # when `device` already names another library's device handle
# Libraries whose device handles are never torch devices (`pycuda.driver.Device(0)`, `cupy.cuda.Device`):
# what a call into them returns cannot be passed to `.to()`. A call into anything else may return one
# (`torch.accelerator.current_accelerator()`, a helper of the project, `xm.xla_device()`).
OTHER_DEVICE_LIBRARIES = ("pycuda.", "cupy.", "numba.", "pyopencl.", "pynvml.", "jax.", "tensorflow.")


@dataclass(frozen=True)
class DeviceChoice:
    """`name` to write in the fix; `needs_preamble` when the fix must also add the preamble."""

    name: str
    needs_preamble: bool = False


def device_for(rule: cst.CSTVisitor, node: cst.CSTNode) -> DeviceChoice | None:
    """The device to use at `node`, or None when no unambiguous choice exists."""
    existing = device_variable_in_scope(rule, node)
    if existing is not None:
        return DeviceChoice(existing)
    if _class_moves_to_its_device(rule, node):
        return DeviceChoice("self.device")
    global_scope = _global_scope(rule, node)
    if global_scope is None or not rule.may_add_globals:
        return None  # a library module or a test: no new global state
    name = _free_preamble_name(rule, global_scope)
    if name is not None and _bound_locally(rule, node, name):
        return None  # `def predict(model, x, device=None)`: the global would be shadowed there
    return None if name is None else DeviceChoice(name, needs_preamble=True)


def _bound_locally(rule: cst.CSTVisitor, node: cst.CSTNode, name: str) -> bool:
    """A function (or comprehension) scope around `node` binds `name` itself: a module-level name
    of that spelling is not what `node` would read."""
    scope = rule.get_metadata(ScopeProvider, node, None)
    while scope is not None and not isinstance(scope, GlobalScope):
        if not isinstance(scope, ClassScope) and any(assignment.name == name for assignment in scope.assignments):
            return True
        scope = scope.parent
    return False


def _class_moves_to_its_device(rule: cst.CSTVisitor, node: cst.CSTNode) -> bool:
    """`node` sits in a method of a plain class (not an `nn.Module`, whose stored device would go
    stale) that moves values with `.to(self.device)` or makes them with `device=self.device`."""
    function = rule.get_metadata(ParentProvider, node, None)
    while function is not None and not isinstance(function, (cst.FunctionDef, cst.Lambda, cst.ClassDef, cst.Module)):
        function = rule.get_metadata(ParentProvider, function, None)
    block = rule.get_metadata(ParentProvider, function, None) if isinstance(function, cst.FunctionDef) else None
    owner = rule.get_metadata(ParentProvider, block, None) if isinstance(block, cst.IndentedBlock) else None
    project = getattr(rule, "project", None)
    if not isinstance(owner, cst.ClassDef) or project is None or is_module_class(
            owner, rule.context.filename or "<memory>", project, lambda base: qualified_names(rule, base)):
        return False  # not directly in a method of a plain class
    params = function.params.params
    if not params or params[0].name.value != "self" or is_static_method(function):
        return False
    finder = _SelfDeviceUses()
    owner.body.visit(finder)
    if not finder.found:
        return False
    if function.name.value != "__init__":
        return True
    # in `__init__`, `self.device` must exist already: bound above, or by the base's `__init__`
    # called above when the class binds it nowhere itself
    line = rule.get_metadata(PositionProvider, node).start.line
    earlier = [statement for statement in function.body.body if rule.get_metadata(PositionProvider, statement).end.line < line]
    bound_above = any(_binds_self_device(statement) for statement in earlier)
    base_init_above = any(_calls_base_init(statement) for statement in earlier)
    return bound_above or (base_init_above and not finder.binds)


class _SelfDeviceUses(cst.CSTVisitor):
    """`found`: a `.to(self.device)` or `device=self.device`; `binds`: an assignment of `self.device`."""

    def __init__(self) -> None:
        self.found = False
        self.binds = False

    def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
        self.binds = self.binds or _is_self_device(node.target)

    def visit_Call(self, node: cst.Call) -> None:
        moved = isinstance(node.func, cst.Attribute) and node.func.attr.value == "to" and node.args and _is_self_device(node.args[0].value)
        made = any(arg.keyword is not None and arg.keyword.value == "device" and _is_self_device(arg.value) for arg in node.args)
        self.found = self.found or bool(moved) or made


def _binds_self_device(statement: cst.CSTNode) -> bool:
    finder = _SelfDeviceUses()
    statement.visit(finder)
    return finder.binds


def _calls_base_init(statement: cst.CSTNode) -> bool:
    """`super().__init__(...)` or `Base.__init__(self, ...)` as a statement."""
    if not (isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1 and isinstance(statement.body[0], cst.Expr)):
        return False
    call = statement.body[0].value
    return isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute) and call.func.attr.value == "__init__"


def _is_self_device(value: cst.BaseExpression) -> bool:
    return isinstance(value, cst.Attribute) and value.attr.value == "device" and isinstance(value.value, cst.Name) \
        and value.value.value == "self"


def _free_preamble_name(rule: cst.CSTVisitor, global_scope: GlobalScope) -> str | None:
    """`device` when the module does not use the name; `torch_device` when every module-level
    `device` is proven another library's device handle (`device = cuda.Device(0)` of PyCUDA), so
    the fix neither shadows it nor passes it to torch; None when `device` may be a torch device
    (defined too late to use here, or from a call devfix cannot see into), or both names are taken."""
    if PREAMBLE_NAME not in global_scope:
        return PREAMBLE_NAME
    assignments = list(global_scope[PREAMBLE_NAME])
    proven_other = bool(assignments) and all(_is_other_device_handle(rule, assignment) for assignment in assignments)
    return SPARE_PREAMBLE_NAME if proven_other and SPARE_PREAMBLE_NAME not in global_scope else None


def _is_other_device_handle(rule: cst.CSTVisitor, assignment) -> bool:
    if not (isinstance(assignment, Assignment) and isinstance(assignment.node, cst.Name)):
        return False
    statement = assigning_statement(rule, assignment.node)
    names = call_names(rule, statement.value) if statement is not None and statement.value is not None else set()
    return bool(names) and all(name.startswith(OTHER_DEVICE_LIBRARIES) for name in names)


def device_variable_in_scope(rule: cst.CSTVisitor, node: cst.CSTNode) -> str | None:
    scope: Scope | None = rule.get_metadata(ScopeProvider, node, None)
    line = rule.get_metadata(PositionProvider, node).start.line
    in_function = False
    while scope is not None:
        if isinstance(scope, FunctionScope):
            in_function = True
        if not isinstance(scope, ClassScope):
            found = _device_binding(rule, scope, line, in_function)
            if found is not None:
                return found
        scope = None if isinstance(scope, GlobalScope) else scope.parent
    return None


def _device_binding(rule: cst.CSTVisitor, scope: Scope, before_line: int, in_function: bool) -> str | None:
    for assignment in scope.assignments:
        if not isinstance(assignment, Assignment):
            continue
        if isinstance(scope, GlobalScope) and _line(rule, assignment.node) > before_line \
                and not (in_function and _bound_before_the_file_runs_its_functions(rule, assignment)):
            continue  # a module-level variable defined after this point does not exist yet here
        if _is_device_binding(rule, assignment):
            return assignment.name
    return None


def _bound_before_the_file_runs_its_functions(rule: cst.CSTVisitor, assignment: Assignment) -> bool:
    """A module-level `device = ...` below the functions that would use it exists when they run if
    the top level calls none of the file's functions or classes before binding it: the binding is
    a top-level statement (or one of a top-level `if`, such as `if __name__ == "__main__":`), and
    no statement above it at either level calls a function or class defined in the file."""
    statement = assigning_statement(rule, assignment.node) if isinstance(assignment.node, cst.Name) else None
    line = rule.get_metadata(ParentProvider, statement, None) if statement is not None else None
    block = rule.get_metadata(ParentProvider, line, None) if line is not None else None
    module = rule.module
    defined = {item.name.value for item in module.body if isinstance(item, (cst.FunctionDef, cst.ClassDef))}
    if block is module:
        preceding = module.body[:module.body.index(line)]
    else:
        owner = rule.get_metadata(ParentProvider, block, None) if isinstance(block, cst.IndentedBlock) else None
        if not (isinstance(owner, cst.If) and owner in module.body):
            return False
        preceding = [*module.body[:module.body.index(owner)], *block.body[:block.body.index(line)]]
    return not any(_calls_one_of(item, defined) for item in preceding if not isinstance(item, (cst.FunctionDef, cst.ClassDef)))


def _calls_one_of(statement: cst.CSTNode, names: set[str]) -> bool:
    found = False

    class Finder(cst.CSTVisitor):
        def visit_Call(self, node: cst.Call) -> None:
            nonlocal found
            root = node.func
            while isinstance(root, cst.Attribute):
                root = root.value
            found = found or (isinstance(root, cst.Name) and root.value in names)

    statement.visit(Finder())
    return found


def _is_device_binding(rule: cst.CSTVisitor, assignment: Assignment) -> bool:
    target = assignment.node
    if isinstance(target, cst.Param):
        # `def cuda(self, device=None)`: None unless a caller gives one (torchrl's TensorSpec.cuda,
        # `if device is None: return self.to("cuda")`); `.to(None)` would move nothing
        defaults_to_none = isinstance(target.default, cst.Name) and target.default.value == "None"
        return assignment.name in DEVICE_NAMES and not defaults_to_none
    if not isinstance(target, cst.Name):
        return False
    statement = assigning_statement(rule, target)
    if statement is not None and statement.value is not None:
        is_single_target = not isinstance(statement, cst.Assign) or len(statement.targets) == 1
        if is_single_target and DEVICE_CONSTRUCTOR in call_names(rule, statement.value):
            return True
        return is_single_target and assignment.name in DEVICE_NAMES and _may_name_a_device(statement.value)
    return False


def _may_name_a_device(value: cst.BaseExpression) -> bool:
    """`device = args.device`, `"cuda" if ... else "cpu"`, `x.device`: yes. A call to something
    else (`device = cuda.Device(0)` of pycuda, `get_device()` returning an index) is no device."""
    if isinstance(value, cst.Call):
        return False
    if isinstance(value, (cst.Integer, cst.List, cst.Dict, cst.Tuple)):
        return False
    return True


def assigning_statement(rule: cst.CSTVisitor, target: cst.Name) -> cst.Assign | cst.AnnAssign | None:
    """The `Assign`/`AnnAssign` whose target is exactly `target`, if any."""
    parent = rule.get_metadata(ParentProvider, target, None)
    if isinstance(parent, cst.AssignTarget):
        parent = rule.get_metadata(ParentProvider, parent, None)
    return parent if isinstance(parent, (cst.Assign, cst.AnnAssign)) else None


def _line(rule: cst.CSTVisitor, node: cst.CSTNode) -> int:
    position = rule.get_metadata(PositionProvider, node, None)
    return position.start.line if position is not None else 0


def _global_scope(rule: cst.CSTVisitor, node: cst.CSTNode) -> GlobalScope | None:
    scope = rule.get_metadata(ScopeProvider, node, None)
    return None if scope is None else scope.globals


def preamble_statement(torch_name: str, name: str = PREAMBLE_NAME, idiom: str = "cuda") -> cst.SimpleStatementLine:
    """`device = ...` in the chosen idiom (`FixPolicy.device_idiom`): both give a `torch.device`."""
    if idiom == "accelerator":
        return cst.parse_statement(
            f"{name} = {torch_name}.device({torch_name}.accelerator.current_accelerator().type"
            f' if {torch_name}.accelerator.is_available() else "cpu")\n'
        )
    return cst.parse_statement(
        f'{name} = {torch_name}.device("cuda" if {torch_name}.cuda.is_available() else "cpu")\n'
    )


def insert_preamble(module: cst.Module, torch_name: str, name: str = PREAMBLE_NAME, idiom: str = "cuda") -> cst.Module:
    """Put the preamble after the leading imports (and after `import torch`, wherever it is); or,
    when every use of the name is inside the `if __name__ == "__main__":` block (a demo at the end of
    a library module), at the top of that block: importing the module then defines nothing new."""
    main = _main_block(module)
    if main is not None and not _uses_outside(module, main, name):
        block = main.body
        statement = preamble_statement(torch_name, name, idiom)
        return module.with_deep_changes(block, body=[statement, *block.body])
    body = list(module.body)
    index = 0
    while index < len(body) and _is_header_statement(body[index], index):
        index += 1
    for position, statement in enumerate(body):
        if _imports_torch(statement):
            index = max(index, position + 1)
            while index < len(body) and _is_import(body[index]):
                index += 1  # not in the middle of the import block that holds `import torch`
    statement = preamble_statement(torch_name, name, idiom).with_changes(leading_lines=[cst.EmptyLine()])
    if index < len(body) and not body[index].leading_lines:
        body[index] = body[index].with_changes(leading_lines=[cst.EmptyLine()])
    body.insert(index, statement)
    return module.with_changes(body=body)


def _main_block(module: cst.Module) -> cst.If | None:
    """The top-level `if __name__ == "__main__":` with an indented body, if any (the last one)."""
    found = None
    for statement in module.body:
        if isinstance(statement, cst.If) and isinstance(statement.body, cst.IndentedBlock) and statement.orelse is None:
            test = statement.test
            if isinstance(test, cst.Comparison) and isinstance(test.left, cst.Name) and test.left.value == "__name__":
                found = statement
    return found


def _uses_outside(module: cst.Module, main: cst.If, name: str) -> bool:
    """The global `name` may be read somewhere in the module but inside `main` (a function that
    takes or binds its own `name`, such as `def uniform(shape, device)`, reads its local)."""
    found = False
    local_in: list[bool] = []

    class Finder(cst.CSTVisitor):
        def visit_If(self, node: cst.If) -> bool:
            return node is not main

        def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
            for decorator in node.decorators:
                decorator.visit(self)
            local_in.append(name in _locals_of(node) or bool(local_in and local_in[-1]))
            node.body.visit(self)
            local_in.pop()
            return False  # its name and parameters are bindings, not reads

        def visit_Attribute(self, node: cst.Attribute) -> bool:
            node.value.visit(self)
            return False  # `self.device` is an attribute, not the global

        def visit_Arg(self, node: cst.Arg) -> bool:
            node.value.visit(self)
            return False  # `device=` is a keyword

        def visit_Name(self, node: cst.Name) -> None:
            nonlocal found
            found = found or (node.value == name and not (local_in and local_in[-1]))

    module.visit(Finder())
    return found


def _locals_of(function: cst.FunctionDef) -> set[str]:
    """Parameters and names the function itself assigns (not `global` ones)."""
    names = set(parameter_names(function, stars=True))
    assigned: set[str] = set()
    declared: set[str] = set()

    class Finder(cst.CSTVisitor):
        def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
            return node is function

        def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
            assigned.update(bound_names(node.target))

        def visit_For(self, node: cst.For) -> None:
            assigned.update(bound_names(node.target))

        def visit_Global(self, node: cst.Global) -> None:
            declared.update(item.name.value for item in node.names)

    function.visit(Finder())
    return (names | assigned) - declared


def _is_header_statement(statement: cst.BaseStatement, index: int) -> bool:
    if not isinstance(statement, cst.SimpleStatementLine):
        return False
    if index == 0 and len(statement.body) == 1 and isinstance(statement.body[0], cst.Expr):
        return isinstance(statement.body[0].value, (cst.SimpleString, cst.ConcatenatedString))
    return all(isinstance(small, (cst.Import, cst.ImportFrom)) for small in statement.body)


def _is_import(statement: cst.BaseStatement) -> bool:
    return isinstance(statement, cst.SimpleStatementLine) and all(
        isinstance(small, (cst.Import, cst.ImportFrom)) for small in statement.body
    )


def _imports_torch(statement: cst.BaseStatement) -> bool:
    if not isinstance(statement, cst.SimpleStatementLine):
        return False
    for small in statement.body:
        if isinstance(small, cst.Import) and any(
            cst.Module([]).code_for_node(alias.name) == "torch" for alias in small.names
        ):
            return True
    return False
