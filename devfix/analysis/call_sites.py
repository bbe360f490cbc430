"""The call sites of a top-level function of the file, and what each passes for one parameter.

A fact about a parameter inside a helper (`logits` is on a device, `model` was moved) can only
come from its callers. It holds when the function's name is used for nothing but calls in this
file, and every call passes, for that parameter, a value the caller's scope proves.
"""

from __future__ import annotations

from collections import Counter

import libcst as cst

from devfix.analysis.cst_bindings import VariablesOnly, bound_names, parameters


def file_functions(module: cst.Module) -> dict[str, cst.FunctionDef]:
    """The file's top-level functions by name (a name defined twice is left out: which one runs?)."""
    functions: dict[str, cst.FunctionDef] = {}
    twice: set[str] = set()
    for statement in module.body:
        if isinstance(statement, cst.FunctionDef):
            name = statement.name.value
            if name in functions:
                twice.add(name)
            else:
                functions[name] = statement
    return {name: function for name, function in functions.items() if name not in twice}


def arguments_for(module: cst.Module, function: cst.FunctionDef, parameter: str) -> list[tuple[cst.Call, cst.BaseExpression]] | None:
    """`(call, value passed for parameter)` for every call of `function`; None when the name is
    also used otherwise (passed around, so callers are unknown), is never called, or a call
    passes the parameter through `*args`/`**kwargs` or not at all."""
    if function not in module.body:
        return None
    params = function.params
    positional = [param.name.value for param in (*params.posonly_params, *params.params)]
    return _passed_at_calls(module, function.name.value, positional, parameter)


def passed_arguments(scope: cst.CSTNode, function: cst.FunctionDef) -> list[dict[str, cst.BaseExpression]] | None:
    """For each call of `function` in `scope` (the module for a top-level function, the function
    that defines a nested one), what it passes for each parameter it gives, from one walk; None
    when the name is also used otherwise, is never called, or a call unpacks `*args`/`**kwargs`."""
    uses = _Uses(function.name.value)
    scope.visit(uses)
    if not uses.calls or uses.names != len(uses.calls) + 1:
        return None
    return _passed_at(uses.calls, function)


def _passed_at(calls: list[cst.Call], function: cst.FunctionDef) -> list[dict[str, cst.BaseExpression]] | None:
    """What each call passes for each parameter of `function` it gives; None when one unpacks."""
    params = function.params
    positional = [param.name.value for param in (*params.posonly_params, *params.params)]
    names = positional + [param.name.value for param in params.kwonly_params]
    found = []
    for call in calls:
        if any(arg.star for arg in call.args):
            return None
        found.append({name: value for name in names if (value := argument_for(call, name, positional)) is not None})
    return found


class CallIndex:
    """One walk of a module that answers `arguments_for` and `method_arguments_for` for any of its
    functions and methods: a rule that asks about many parameters (DF008, one per value a host
    library gets) would otherwise walk the module once for each."""

    def __init__(self, module: cst.Module) -> None:
        self.module = module
        walk = _CallWalk()
        module.visit(walk)
        self.name_uses, self.name_calls = walk.name_uses, walk.name_calls
        self.attribute_uses, self.self_calls = walk.attribute_uses, walk.self_calls
        self.derived = walk.derived
        self._instances: dict[int, list[tuple[cst.Call, str | None]] | None] = {}

    def arguments_for(self, function: cst.FunctionDef, parameter: str) -> list[tuple[cst.Call, cst.BaseExpression]] | None:
        """As the module's `arguments_for` (neither an attribute of the function's name, `plt.imshow`
        beside the file's `imshow`, nor a keyword, `fit(train=True)`, is a use of it)."""
        if function not in self.module.body:
            return None
        calls = self.name_calls.get(function.name.value, [])
        if not calls or self.name_uses[function.name.value] != len(calls) + 1:  # + the `def` itself
            return None
        params = function.params
        return _given(calls, parameter, [param.name.value for param in (*params.posonly_params, *params.params)])

    def passed_arguments(self, function: cst.FunctionDef) -> list[dict[str, cst.BaseExpression]] | None:
        """As the module's `passed_arguments` for a top-level function, from the one walk (DF008 asks
        it of every function whose parameter meets numpy: a walk each was quadratic in the file)."""
        if function not in self.module.body:
            return None
        calls = self.name_calls.get(function.name.value, [])
        if not calls or self.name_uses[function.name.value] != len(calls) + 1:  # + the `def` itself
            return None
        return _passed_at(calls, function)

    def method_arguments_for(
        self, class_def: cst.ClassDef, method: cst.FunctionDef, parameter: str,
    ) -> list[tuple[cst.Call, cst.BaseExpression]] | None:
        """`arguments_for` a parameter of a method of a top-level class, at its calls
        `self.<method>(...)` in the class's methods and `reporter.<method>(...)` on the class's
        instances (`instance_calls`); None when `.<method>` appears anywhere in the file otherwise
        (a reference handed on, another object's method of that name), the class is derived from in
        the file, or a call hides the parameter."""
        name = method.name.value
        if class_def not in self.module.body or class_def.name.value in self.derived:
            return None
        calls = list(self.self_calls.get((class_def.name.value, name), ()))
        if self.attribute_uses[name] > len(calls):  # the rest may be calls on the class's instances
            if id(class_def) not in self._instances:
                self._instances[id(class_def)] = instance_calls(self.module, class_def)
            calls += [call for call, called in self._instances[id(class_def)] or () if called == name]
        if not calls or len(calls) != self.attribute_uses[name]:
            return None
        params = method.params
        return _given(calls, parameter, [param.name.value for param in (*params.posonly_params, *params.params)][1:])


def _given(calls: list[cst.Call], parameter: str, positional: list[str]) -> list[tuple[cst.Call, cst.BaseExpression]] | None:
    found = []
    for call in calls:
        value = argument_for(call, parameter, positional)
        if value is None:
            return None
        found.append((call, value))
    return found


class _CallWalk(cst.CSTVisitor):
    """How often each name and each attribute appears, the calls of plain names, the calls
    `self.<name>(...)` in each top-level class, and the names of the classes derived from."""

    def __init__(self) -> None:
        self.name_uses: Counter[str] = Counter()
        self.name_calls: dict[str, list[cst.Call]] = {}
        self.attribute_uses: Counter[str] = Counter()
        self.self_calls: dict[tuple[str, str], list[cst.Call]] = {}
        self.derived: set[str] = set()
        self._classes: list[str] = []
        self._attribute_names: set[int] = set()

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self._classes.append(node.name.value)
        self.derived |= {base.value.value for base in node.bases if isinstance(base.value, cst.Name)}

    def leave_ClassDef(self, original_node: cst.ClassDef) -> None:
        self._classes.pop()

    def visit_Name(self, node: cst.Name) -> None:
        if id(node) not in self._attribute_names:
            self.name_uses[node.value] += 1

    def visit_Attribute(self, node: cst.Attribute) -> None:
        self.attribute_uses[node.attr.value] += 1
        self._attribute_names.add(id(node.attr))  # `plt.imshow` is no use of the file's `imshow`

    def visit_Arg(self, node: cst.Arg) -> None:
        if node.keyword is not None:
            self._attribute_names.add(id(node.keyword))  # nor is `fit(train=True)` one of its `train` (`_Uses`)

    def visit_Call(self, node: cst.Call) -> bool:
        func = node.func
        if isinstance(func, cst.Name):
            self.name_calls.setdefault(func.value, []).append(node)
            if func.value == "super" and len(node.args) == 2 and isinstance(node.args[0].value, cst.Name):
                return False  # `super(Net, self)`: the Python 2 spelling of a class's own `super()` (`_Uses`)
        elif (isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.value.value == "self"
                and len(self._classes) == 1):
            self.self_calls.setdefault((self._classes[0], func.attr.value), []).append(node)
        return True


def constructor_arguments_for(module: cst.Module, class_def: cst.ClassDef, parameter: str) -> list[tuple[cst.Call, cst.BaseExpression]] | None:
    """`arguments_for` a parameter of a top-level class's `__init__`, at the calls of the class
    (None also when the class has no `__init__` of its own, or a class of the file derives from it:
    its name is then used otherwise than called)."""
    init = _init_of(module, class_def)
    if init is None:
        return None
    positional = [param.name.value for param in (*init.params.posonly_params, *init.params.params)][1:]
    return _passed_at_calls(module, class_def.name.value, positional, parameter)


def constructor_values_for(module: cst.Module, class_def: cst.ClassDef, parameter: str) -> list[cst.BaseExpression] | None:
    """What each call of a top-level class gives a parameter of its `__init__`, its default where a
    call passes nothing; None as for `constructor_arguments_for`, or when a call gives nothing to a
    parameter without a default."""
    init = _init_of(module, class_def)
    declared = next((param for param in parameters(init) if param.name.value == parameter), None) if init is not None else None
    if declared is None:
        return None
    positional = [param.name.value for param in (*init.params.posonly_params, *init.params.params)][1:]
    passed = _passed_at_calls(module, class_def.name.value, positional, parameter, declared.default)
    return None if passed is None else [value for _, value in passed]


def _init_of(module: cst.Module, class_def: cst.ClassDef) -> cst.FunctionDef | None:
    """The `__init__` of a top-level class of `module`, when it defines one."""
    body = class_def.body.body if isinstance(class_def.body, cst.IndentedBlock) else []
    init = next((item for item in body if isinstance(item, cst.FunctionDef) and item.name.value == "__init__"), None)
    return init if class_def in module.body else None


def calls_of(module: cst.Module, name: str) -> list[cst.Call]:
    """Every call of the plain name `name` in the file (`Net(...)`)."""
    uses = _Uses(name)
    module.visit(uses)
    return uses.calls


def is_only_defined(module: cst.Module, name: str) -> bool:
    """The file never uses the name its `def` binds (other files may import and call it)."""
    uses = _Uses(name)
    module.visit(uses)
    return uses.names == 1


def _passed_at_calls(
    module: cst.CSTNode, name: str, positional: list[str], parameter: str, default: cst.BaseExpression | None = None,
) -> list[tuple[cst.Call, cst.BaseExpression]] | None:
    """`(call, value)` at every call of `name`: what it passes for `parameter`, else `default`;
    None when a call passes nothing (and there is no default), or may pass it through `*`/`**`."""
    uses = _Uses(name)
    module.visit(uses)
    if not uses.calls or uses.names != len(uses.calls) + 1:  # + the `def` or `class` itself
        return None
    passed = []
    for call in uses.calls:
        if any(arg.star for arg in call.args):
            return None
        value = argument_for(call, parameter, positional)
        if value is None:
            value = default
        if value is None:
            return None
        passed.append((call, value))
    return passed


def argument_for(call: cst.Call, parameter: str, positional: list[str]) -> cst.BaseExpression | None:
    """What `call` passes for `parameter` (None when a `*args`/`**kwargs` may hide it)."""
    if any(arg.star for arg in call.args):
        return None
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == parameter:
            return arg.value
    index = positional.index(parameter) if parameter in positional else -1
    given = [arg for arg in call.args if arg.keyword is None]
    return given[index].value if 0 <= index < len(given) else None


def argument_at(call: cst.Call, position: int, keyword: str) -> cst.BaseExpression | None:
    """What `call` passes as `keyword`, or at `position` (-1: keyword-only) among its positional
    arguments."""
    named = next((arg.value for arg in call.args if arg.keyword is not None and arg.keyword.value == keyword), None)
    positional = [arg.value for arg in call.args if arg.keyword is None and not arg.star]
    return named if named is not None else positional[position] if 0 <= position < len(positional) else None


class _Uses(VariablesOnly):
    """Calls of a name, and how often the name appears at all (not as `super(Name, self)`, the
    Python 2 spelling of a class's own `super()`, nor as an attribute, `model.train()` inside
    `def train(...)`, nor as a keyword, `fit(train=True)`)."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.names = 0
        self.calls: list[cst.Call] = []

    def visit_Name(self, node: cst.Name) -> None:
        self.names += node.value == self.name

    def visit_Call(self, node: cst.Call) -> bool:
        if isinstance(node.func, cst.Name) and node.func.value == self.name:
            self.calls.append(node)
        if isinstance(node.func, cst.Name) and node.func.value == "super" and len(node.args) == 2 \
                and isinstance(node.args[0].value, cst.Name) and node.args[0].value.value == self.name:
            return False
        return True


def instance_calls(module: cst.Module, class_def: cst.ClassDef) -> list[tuple[cst.Call, str | None]] | None:
    """The calls of the instances of a top-level class (`model(x)`, method None; `model.encode(x)`,
    "encode"), where every instance is a name of one scope (a function, or the top level) bound
    only to a construction of the class (`Net(...)`, `Net(...).to(device)`), used only to be called,
    to call its methods or to read its read-only properties (`meter.avg`); None when the class or an instance is used otherwise (handed to other
    code: callers unknown), or no instance is called."""
    if class_def not in module.body:
        return None
    uses = _Uses(class_def.name.value)
    module.visit(uses)
    if uses.names != len(uses.calls) + 1:  # the class itself is only constructed
        return None
    finder = _Instances(class_def.name.value, _properties(class_def))
    module.visit(finder)
    if finder.escaped or finder.constructions != len(uses.calls):  # built elsewhere too (`self.enc = Net()`)
        return None
    calls = list(finder.calls)
    functions = file_functions(module) if finder.handed else {}
    classes = {statement.name.value for statement in module.body if isinstance(statement, cst.ClassDef)}
    for function_name, position, keyword in finder.handed:
        function = functions.get(function_name) if function_name not in classes else None
        through = _calls_through_parameter(function, position, keyword, finder.properties) if function is not None else None
        if through is None:
            return None
        calls += through
    return calls or None


def _calls_through_parameter(function: cst.FunctionDef, position: int, keyword: str | None,
                             properties: frozenset[str]) -> list[tuple[cst.Call, str | None]] | None:
    """`run_epoch(model, loader)` of a top-level function of the file: the calls of the parameter
    that receives the instance (`model(x, lengths)` in `def run_epoch(model, loader)`), when the
    function never rebinds it nor hands it on; None otherwise (the instance goes where devfix
    cannot follow)."""
    params = function.params
    positional = [param.name.value for param in (*params.posonly_params, *params.params)]
    named = positional + [param.name.value for param in params.kwonly_params]
    parameter = keyword if keyword is not None else positional[position] if position < len(positional) else None
    if parameter is None or parameter not in named:
        return None
    bindings = _Bindings()
    function.body.visit(bindings)
    if parameter in bindings.values:
        return None
    reads = _Reads({parameter}, properties)
    function.body.visit(reads)
    return None if reads.other or reads.handed else reads.calls


class _Instances(cst.CSTVisitor):
    """Per scope, names bound only to constructions of one class, and what is done with them."""

    def __init__(self, class_name: str, properties: frozenset[str] = frozenset()) -> None:
        self.class_name, self.properties = class_name, properties
        self.calls: list[tuple[cst.Call, str | None]] = []
        self.handed: list[tuple[str, int, str | None]] = []  # `run_epoch(model, ...)`: (function, position, keyword)
        self.escaped = False
        self.constructions = 0  # constructions bound to the instances found

    def visit_Module(self, node: cst.Module) -> None:
        self._scope([statement for statement in node.body if not isinstance(statement, (cst.FunctionDef, cst.ClassDef))])

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._scope([node.body])

    def _scope(self, statements: list[cst.CSTNode]) -> None:
        bindings = _Bindings()
        for statement in statements:
            statement.visit(bindings)
        instances = {
            name for name, values in bindings.values.items()
            if any(self._constructs(value) for value in values)
            and all(self._constructs(value) or _moves_itself(value, name) for value in values)
        }
        if not instances:
            return
        self.constructions += sum(self._constructs(value) for name in instances for value in bindings.values[name])
        reads = _Reads(instances, self.properties)
        for statement in statements:
            statement.visit(reads)
        self.calls += reads.calls
        self.handed += reads.handed
        self.escaped = self.escaped or reads.other

    def _constructs(self, value: cst.BaseExpression | None) -> bool:
        while isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) and value.func.attr.value in ("to", "cuda", "eval", "train"):
            value = value.func.value
        return isinstance(value, cst.Call) and isinstance(value.func, cst.Name) and value.func.value == self.class_name


class _Bindings(cst.CSTVisitor):
    """What each plain name of one scope is assigned (None: a target devix cannot see through)."""

    def __init__(self) -> None:
        self.values: dict[str, list[cst.BaseExpression | None]] = {}

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        return False

    def visit_ClassDef(self, node: cst.ClassDef) -> bool:
        return False

    def visit_Assign(self, node: cst.Assign) -> None:
        for target in node.targets:
            if isinstance(target.target, cst.Name):
                self.values.setdefault(target.target.value, []).append(node.value)
            else:
                for name in bound_names(target.target):
                    self.values.setdefault(name, []).append(None)

    def visit_For(self, node: cst.For) -> None:
        for name in bound_names(node.target):
            self.values.setdefault(name, []).append(None)


class _Reads(cst.CSTVisitor):
    """Calls of the instances, the plain calls they are handed to as an argument (`run_epoch(model,
    loader)`: `handed`), and whether any is read otherwise (`[model]`, `f(*models)`)."""

    def __init__(self, instances: set[str], properties: frozenset[str] = frozenset()) -> None:
        self.instances, self.properties = instances, properties
        self.calls: list[tuple[cst.Call, str | None]] = []
        self.handed: list[tuple[str, int, str | None]] = []  # (function, position, keyword)
        self.other = False
        self._accounted: set[int] = set()

    def visit_Attribute(self, node: cst.Attribute) -> None:
        if isinstance(node.value, cst.Name) and node.value.value in self.instances and node.attr.value in self.properties:
            self._accounted.add(id(node.value))  # `meter.avg` of a read-only property: the instance goes nowhere

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        return False

    def visit_ClassDef(self, node: cst.ClassDef) -> bool:
        return False

    def visit_Assign(self, node: cst.Assign) -> None:
        for target in node.targets:
            if isinstance(target.target, cst.Name):
                self._accounted.add(id(target.target))

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if isinstance(func, cst.Name) and func.value in self.instances:
            self.calls.append((node, None))
            self._accounted.add(id(func))
        elif isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.value.value in self.instances:
            self.calls.append((node, func.attr.value))
            self._accounted.add(id(func.value))
        if isinstance(func, cst.Name) and not any(arg.star for arg in node.args):
            positional = [arg for arg in node.args if arg.keyword is None]
            for arg in node.args:
                if isinstance(arg.value, cst.Name) and arg.value.value in self.instances:
                    keyword = arg.keyword.value if arg.keyword is not None else None
                    self.handed.append((func.value, positional.index(arg) if keyword is None else -1, keyword))
                    self._accounted.add(id(arg.value))

    def visit_Name(self, node: cst.Name) -> None:
        if node.value in self.instances and id(node) not in self._accounted:
            self.other = True


def _properties(class_def: cst.ClassDef) -> frozenset[str]:
    """The class's read-only properties (`@property` methods no setter or deleter of the same name
    follows): reading one hands the instance to no other code."""
    functions = [statement for statement in class_def.body.body if isinstance(statement, cst.FunctionDef)]
    decorated = lambda function: {  # noqa: E731
        cst.Module([]).code_for_node(decorator.decorator) for decorator in function.decorators
    }
    properties = {function.name.value for function in functions if decorated(function) == {"property"}}
    changed = {function.name.value for function in functions if any(name.endswith((".setter", ".deleter")) for name in decorated(function))}
    return frozenset(properties - changed)


def _moves_itself(value: cst.BaseExpression | None, name: str) -> bool:
    """`model.to(device)`, `model.cuda()` assigned back to `model`."""
    return isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) and value.func.attr.value in ("to", "cuda") \
        and isinstance(value.func.value, cst.Name) and value.func.value.value == name
