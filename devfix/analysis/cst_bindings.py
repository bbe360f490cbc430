"""What a libcst function binds by itself: its parameters, and the names an assignment target
binds (the libcst twins of `ast_nodes.parameters` and `ast_nodes.bound_names`); what it returns;
and the names a piece of code mentions and the calls it makes."""

from __future__ import annotations

import libcst as cst


def parameters(function: cst.FunctionDef) -> list[cst.Param]:
    """Positional parameters in order, then keyword-only ones (with their defaults)."""
    params = function.params
    return [*params.posonly_params, *params.params, *params.kwonly_params]


def parameter_names(function: cst.FunctionDef, stars: bool = False) -> list[str]:
    """Positional parameters in order, then keyword-only ones; with `stars`, `*args` and `**kwargs` too."""
    named = parameters(function)
    if stars:
        named += [param for param in (function.params.star_arg, function.params.star_kwarg) if isinstance(param, cst.Param)]
    return [param.name.value for param in named]


def bound_names(target: cst.BaseExpression) -> set[str]:
    """`x` → {x}; `x, (y, *z)` → {x, y, z}; an attribute or subscript binds no name."""
    if isinstance(target, cst.Name):
        return {target.value}
    if isinstance(target, (cst.Tuple, cst.List)):
        return {name for element in target.elements for name in bound_names(element.value)}
    return set()


def comprehension_targets(comprehension: cst.BaseComp) -> set[str]:
    """The names the `for` clauses of a comprehension bind (`x`, `i` of `[f(x) for i, x in ...]`)."""
    names: set[str] = set()
    clause = comprehension.for_in
    while clause is not None:
        names |= bound_names(clause.target)
        clause = clause.inner_for_in
    return names


def assigned_pairs(target: cst.BaseAssignTargetExpression, value: cst.BaseExpression) -> list[tuple[cst.Name, cst.BaseExpression]]:
    """The names a target binds with their values: `x` to the whole value, and item by item when a
    tuple is unpacked from one of the same length (`x, y = x.to(device), y.to(device)`)."""
    if isinstance(target, cst.Name):
        return [(target, value)]
    if isinstance(target, (cst.Tuple, cst.List)) and isinstance(value, (cst.Tuple, cst.List)) and len(target.elements) == len(value.elements) \
            and not any(isinstance(element, cst.StarredElement) for element in (*target.elements, *value.elements)):
        return [pair for inner, item in zip(target.elements, value.elements) for pair in assigned_pairs(inner.value, item.value)]
    return []


def target_leaves(target: cst.BaseExpression) -> list[cst.BaseExpression]:
    """`x, (self.y, *z[0])` → [x, self.y, z[0]]: what each part of an assignment target stores into."""
    if isinstance(target, (cst.Tuple, cst.List)):
        return [leaf for element in target.elements for leaf in target_leaves(element.value)]
    if isinstance(target, cst.StarredElement):
        return target_leaves(target.value)
    return [target]


def names_in(node: cst.CSTNode) -> set[str]:
    """Every name `node` mentions, read or bound (`device` and `th` in `device.type == th.device("cuda").type`)."""
    finder = _Names()
    node.visit(finder)
    return finder.names


def calls_in(node: cst.CSTNode) -> list[cst.Call]:
    """Every call under `node`, itself included, outermost first (nested functions too)."""
    finder = _Calls()
    node.visit(finder)
    return finder.calls


class _Calls(cst.CSTVisitor):
    def __init__(self) -> None:
        self.calls: list[cst.Call] = []

    def visit_Call(self, node: cst.Call) -> None:
        self.calls.append(node)


class _Names(cst.CSTVisitor):
    def __init__(self) -> None:
        self.names: set[str] = set()

    def visit_Name(self, node: cst.Name) -> None:
        self.names.add(node.value)


def body_calls(function: cst.FunctionDef) -> list[cst.Call]:
    """The calls of a function's body, not of functions or lambdas nested in it."""
    finder = _BodyCalls()
    function.body.visit(finder)
    return finder.calls


class _BodyCalls(_Calls):
    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        return False

    def visit_Lambda(self, node: cst.Lambda) -> bool:
        return False


def variable_counts(function: cst.FunctionDef) -> dict[str, int]:
    """How often a function's body names each variable (not in nested functions; an attribute's or
    a keyword's name is no variable)."""
    finder = _VariableCounts()
    function.body.visit(finder)
    return finder.counts


def variables_in(node: cst.CSTNode) -> set[str]:
    """The variables `node` reads or binds: its names, less attribute names (`x` and `model`, not
    `size`, in `model(x.size(0))`) and keyword names."""
    finder = _Variables()
    node.visit(finder)
    return finder.names


class VariablesOnly(cst.CSTVisitor):
    """A visitor that meets only the names used as variables: not an attribute's name (`train` of
    `model.train()`) nor a keyword's (`fit(train=True)`)."""

    def visit_Attribute(self, node: cst.Attribute) -> bool:
        node.value.visit(self)
        return False

    def visit_Arg(self, node: cst.Arg) -> bool:
        node.value.visit(self)
        return False


class _Variables(VariablesOnly, _Names):
    pass


class _VariableCounts(VariablesOnly):
    def __init__(self) -> None:
        self.counts: dict[str, int] = {}

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        return False

    def visit_Name(self, node: cst.Name) -> None:
        self.counts[node.value] = self.counts.get(node.value, 0) + 1


def return_values(function: cst.FunctionDef) -> list[cst.BaseExpression | None]:
    """What each `return` of `function` returns (not those of functions nested in it)."""
    returns = _Returns()
    function.body.visit(returns)
    return returns.values


def is_static_method(function: cst.FunctionDef) -> bool:
    """Decorated `@staticmethod` or `@classmethod`: its first parameter is no instance."""
    return any(isinstance(decorator.decorator, cst.Name) and decorator.decorator.value in ("staticmethod", "classmethod")
               for decorator in function.decorators)


def is_generator(function: cst.FunctionDef) -> bool:
    """The function yields (its own body, not a function nested in it): calling it returns a generator."""
    returns = _Returns()
    function.body.visit(returns)
    return returns.yields


class _Returns(cst.CSTVisitor):
    def __init__(self) -> None:
        self.values: list[cst.BaseExpression | None] = []
        self.yields = False

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        return False

    def visit_Lambda(self, node: cst.Lambda) -> bool:
        return False

    def visit_ClassDef(self, node: cst.ClassDef) -> bool:
        return False

    def visit_Return(self, node: cst.Return) -> None:
        self.values.append(node.value)

    def visit_Yield(self, node: cst.Yield) -> None:
        self.yields = True


def assigned_names(function: cst.FunctionDef) -> set[str]:
    """The function's locals it assigns (plain, augmented and annotated assignments, loop targets;
    not in nested functions or classes), less those it declares `global` or `nonlocal`."""
    assigned: set[str] = set()
    declared: set[str] = set()

    class Finder(cst.CSTVisitor):
        def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
            return node is function

        def visit_ClassDef(self, node: cst.ClassDef) -> bool:
            return False

        def visit_Lambda(self, node: cst.Lambda) -> bool:
            return False

        def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
            assigned.update(bound_names(node.target))

        def visit_AugAssign(self, node: cst.AugAssign) -> None:
            assigned.update(bound_names(node.target))

        def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
            assigned.update(bound_names(node.target))

        def visit_For(self, node: cst.For) -> None:
            assigned.update(bound_names(node.target))

        def visit_Global(self, node: cst.Global) -> None:
            declared.update(item.name.value for item in node.names)

        def visit_Nonlocal(self, node: cst.Nonlocal) -> None:
            declared.update(item.name.value for item in node.names)

    function.visit(Finder())
    return assigned - declared
