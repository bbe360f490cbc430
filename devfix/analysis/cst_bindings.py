"""What a libcst function binds by itself: its parameters, and the names an assignment target
binds (the libcst twins of `ast_nodes.parameters` and `ast_nodes.bound_names`)."""

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
