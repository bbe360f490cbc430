"""Which names hold matplotlib Axes: `ax.imshow(t)` converts `t` with numpy, as `plt.imshow(t)` does.

DF008 brings a device tensor to the host before a numpy, matplotlib, sklearn... function gets it;
plotting code calls most of matplotlib through the Axes it made (`fig, ax = plt.subplots()`,
`ax.imshow(pred[0])`), where the call's name says nothing of matplotlib. A scope's Axes are the
names bound by

- `fig, ax = plt.subplots()`, `fig, (ax1, ax2) = plt.subplots(1, 2)`, `ax = plt.gca()`,
  `ax = plt.subplot(2, 1, 1)`, `ax = fig.add_subplot(111)` where `fig = plt.figure()`;
- a loop over them (`for ax in axs.flat`, `for i, ax in enumerate(axs.ravel())`,
  `for ax, img in zip(axs, imgs)`); an index picks one from an array of them (`axs[0, 1]`).

A name counts only when every binding of it in the scope is one of these (and it is no
parameter). The Figure that `plt.subplots()` gives beside them counts too: a Figure has no
`imshow` or `plot`, so such a method called on the name is an Axes' (the program fails otherwise).
"""

from __future__ import annotations

import libcst as cst

from devfix.analysis.torch_api import AXES_DATA_METHODS
from devfix.analysis.torch_names import QualifiedNames

AXES_MAKERS = frozenset({
    "matplotlib.pyplot.subplots", "matplotlib.pyplot.subplot", "matplotlib.pyplot.gca", "matplotlib.pyplot.axes",
    "matplotlib.pyplot.subplot2grid", "matplotlib.pyplot.subplot_mosaic",
})
FIGURE_MAKERS = frozenset({"matplotlib.pyplot.figure", "matplotlib.pyplot.gcf"})
FIGURE_AXES_METHODS = frozenset({"add_subplot", "add_axes", "gca", "subplots", "subplot_mosaic"})
ARRAY_VIEWS = frozenset({"ravel", "flatten"})  # `axs.ravel()`: the same Axes, in one dimension


class AxesNames:
    """The Axes names of one scope (a function's body or a module's top level)."""

    def __init__(self, scope: cst.Module | cst.FunctionDef, qualified: QualifiedNames) -> None:
        self.qualified = qualified
        finder = _Bindings()
        body = scope.body if isinstance(scope, cst.Module) else scope.body.body if isinstance(scope.body, cst.IndentedBlock) else ()
        for statement in body:
            statement.visit(finder)
        excluded = set(finder.other) | (_parameters(scope) if isinstance(scope, cst.FunctionDef) else set())
        self.figures: set[str] = set()
        self.names: set[str] = set()
        for _ in range(3):  # a figure bound before its `add_subplot`; a row of an array looped over, then its Axes
            for name, value in finder.assigned:
                if name not in excluded and self._makes_figure(value):
                    self.figures.add(name)
                if name not in excluded and self._makes_axes(value):
                    self.names.add(name)
            for name, iterable in finder.looped:
                if name not in excluded and self.is_axes(iterable):
                    self.names.add(name)
        bound_otherwise = {name for name, value in finder.assigned if not (self._makes_axes(value) or self._makes_figure(value))}
        bound_otherwise |= {name for name, iterable in finder.looped if not self.is_axes(iterable)}
        self.names -= bound_otherwise
        self.figures -= bound_otherwise

    def is_axes_call(self, call: cst.Call) -> bool:
        """`ax.imshow(t)`, `axs[0, 1].plot(xs)`: a data method of an Axes."""
        func = call.func
        return isinstance(func, cst.Attribute) and func.attr.value in AXES_DATA_METHODS and self.is_axes(func.value)

    def is_axes(self, expression: cst.BaseExpression) -> bool:
        """An Axes of the scope, an array of them, one of them picked by an index, or their flat view."""
        while True:
            if isinstance(expression, cst.Subscript) or (isinstance(expression, cst.Attribute) and expression.attr.value == "flat"):
                expression = expression.value
            elif (isinstance(expression, cst.Call) and not expression.args and isinstance(expression.func, cst.Attribute)
                    and expression.func.attr.value in ARRAY_VIEWS):
                expression = expression.func.value
            else:
                break
        if isinstance(expression, cst.Name):
            return expression.value in self.names
        return self._makes_axes(expression)

    def _makes_axes(self, value: cst.BaseExpression) -> bool:
        if not isinstance(value, cst.Call):
            return False
        if self.qualified(value.func) & AXES_MAKERS:
            return True
        func = value.func
        return isinstance(func, cst.Attribute) and func.attr.value in FIGURE_AXES_METHODS and self._makes_figure(func.value, named=True)

    def _makes_figure(self, value: cst.BaseExpression, named: bool = False) -> bool:
        if named and isinstance(value, cst.Name):
            return value.value in self.figures
        return isinstance(value, cst.Call) and bool(self.qualified(value.func) & (FIGURE_MAKERS | {"matplotlib.pyplot.subplots"}))


def _parameters(function: cst.FunctionDef) -> set[str]:
    params = function.params
    found = {param.name.value for param in (*params.posonly_params, *params.params, *params.kwonly_params)}
    for star in (params.star_arg, params.star_kwarg):
        if isinstance(star, cst.Param):
            found.add(star.name.value)
    return found


class _Bindings(cst.CSTVisitor):
    """The scope's bindings: `(name, value)` of assignments (each part of an unpacked call gets the
    whole call), `(name, iterable)` of loops, and the names bound any other way."""

    def __init__(self) -> None:
        self.assigned: list[tuple[str, cst.BaseExpression]] = []
        self.looped: list[tuple[str, cst.BaseExpression]] = []
        self.other: list[str] = []

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        self.other.append(node.name.value)
        return False

    def visit_ClassDef(self, node: cst.ClassDef) -> bool:
        self.other.append(node.name.value)
        return False

    def visit_Lambda(self, node: cst.Lambda) -> bool:
        return False

    def visit_Assign(self, node: cst.Assign) -> None:
        for target in node.targets:
            self._assign(target.target, node.value)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        if node.value is not None:
            self._assign(node.target, node.value)
        else:
            self._other(node.target)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self._other(node.target)

    def visit_NamedExpr(self, node: cst.NamedExpr) -> None:
        self._other(node.target)

    def visit_WithItem(self, node: cst.WithItem) -> None:
        if node.asname is not None:
            self._other(node.asname.name)

    def visit_For(self, node: cst.For) -> None:
        target, iterable = node.target, node.iter
        if isinstance(target, cst.Name):
            self.looped.append((target.value, iterable))
            return
        pairs = _unpacked_loop(target, iterable)
        if pairs is None:
            self._other(target)
            return
        for element, element_iterable in pairs:
            if isinstance(element, cst.Name) and element_iterable is not None:
                self.looped.append((element.value, element_iterable))
            else:
                self._other(element)

    def visit_ImportAlias(self, node: cst.ImportAlias) -> None:
        name = node.asname.name if node.asname is not None else node.name
        if isinstance(name, cst.Name):
            self.other.append(name.value)

    def _assign(self, target: cst.BaseExpression, value: cst.BaseExpression) -> None:
        if isinstance(target, cst.Name):
            self.assigned.append((target.value, value))
        elif isinstance(target, (cst.Tuple, cst.List)):
            if isinstance(value, (cst.Tuple, cst.List)) and len(value.elements) == len(target.elements):
                for element, part in zip(target.elements, value.elements):
                    self._assign(element.value, part.value)
            elif isinstance(value, cst.Call):
                for element in target.elements:  # `fig, (ax1, ax2) = plt.subplots(1, 2)`: each part of the whole
                    self._assign(element.value, value)
            else:
                self._other(target)

    def _other(self, target: cst.CSTNode) -> None:
        if isinstance(target, cst.Name):
            self.other.append(target.value)
        elif isinstance(target, (cst.Tuple, cst.List)):
            for element in target.elements:
                self._other(element.value)
        elif isinstance(target, cst.StarredElement):
            self._other(target.value)


def _unpacked_loop(target: cst.Tuple | cst.List | cst.BaseExpression, iterable: cst.BaseExpression):
    """`for i, ax in enumerate(axs)` → [(i, None), (ax, axs)]; `for ax, img in zip(axs, imgs)` →
    [(ax, axs), (img, imgs)]; None for any other unpacking loop."""
    if not (isinstance(target, (cst.Tuple, cst.List)) and isinstance(iterable, cst.Call) and isinstance(iterable.func, cst.Name)):
        return None
    elements = [element.value for element in target.elements]
    arguments = [arg.value for arg in iterable.args if arg.keyword is None and not arg.star]
    if iterable.func.value == "enumerate" and len(elements) == 2 and len(arguments) >= 1:
        return [(elements[0], None), (elements[1], arguments[0])]
    if iterable.func.value == "zip" and len(arguments) == len(iterable.args) == len(elements):
        return list(zip(elements, arguments))
    return None
