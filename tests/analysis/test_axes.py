"""What `analysis.axes` proves: which calls are data methods of a matplotlib Axes of their scope."""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest

from devfix.analysis.axes import AxesNames


def plt_names(node: cst.CSTNode) -> set[str]:
    """A stand-in for qualified names: `plt.x` is `matplotlib.pyplot.x`."""
    code = cst.Module([]).code_for_node(node)
    return {"matplotlib.pyplot." + code[4:]} if code.startswith("plt.") else set()


def _axes_calls(source: str) -> list[str]:
    """The code of every call in the module's top level, or its first function, that is an Axes data method."""
    module = cst.parse_module(textwrap.dedent(source))
    function = next((statement for statement in module.body if isinstance(statement, cst.FunctionDef)), None)
    scope = function if function is not None else module
    axes = AxesNames(scope, plt_names)
    calls: list[cst.Call] = []

    class Calls(cst.CSTVisitor):
        def visit_Call(self, node: cst.Call) -> None:
            calls.append(node)

    scope.visit(Calls())
    return [cst.Module([]).code_for_node(call) for call in calls if axes.is_axes_call(call)]


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("fig, ax = plt.subplots()\nax.imshow(x)\n", ["ax.imshow(x)"]),
        ("fig, (a, b) = plt.subplots(1, 2)\na.plot(x)\nb.hist(y)\n", ["a.plot(x)", "b.hist(y)"]),
        ("_, axs = plt.subplots(2, 2)\naxs[0, 1].imshow(x)\naxs[1][0].plot(y)\n", ["axs[0, 1].imshow(x)", "axs[1][0].plot(y)"]),
        ("ax = plt.gca()\nax.scatter(x, y)\n", ["ax.scatter(x, y)"]),
        ("fig = plt.figure()\nax = fig.add_subplot(111)\nax.plot(x)\n", ["ax.plot(x)"]),
        ("plt.gca().plot(x)\n", ["plt.gca().plot(x)"]),
        ("fig, axs = plt.subplots(2, 2)\nfor ax in axs.flat:\n    ax.imshow(x)\n", ["ax.imshow(x)"]),
        ("fig, axs = plt.subplots(2, 2)\nfor i, ax in enumerate(axs.ravel()):\n    ax.imshow(x[i])\n", ["ax.imshow(x[i])"]),
        ("fig, axs = plt.subplots(1, 3)\nfor ax, img in zip(axs, imgs):\n    ax.imshow(img)\n", ["ax.imshow(img)"]),
        ("fig, axs = plt.subplots(2, 2)\nfor row in axs:\n    for ax in row:\n        ax.plot(x)\n", ["ax.plot(x)"]),
        ("def show(x):\n    fig, ax = plt.subplots()\n    ax.imshow(x)\n", ["ax.imshow(x)"]),
    ],
)
def test_finds_axes_data_methods(source: str, expected: list[str]) -> None:
    assert _axes_calls(source) == expected


@pytest.mark.parametrize(
    "source",
    [
        "recorder = Recorder()\nrecorder.plot(x)\n",  # an object of the program's own that shares the method's name
        "if live:\n    ax = plt.gca()\nelse:\n    ax = Recorder()\nax.plot(x)\n",  # bound to something else too
        "def show(ax, x):\n    ax.imshow(x)\n",  # a parameter: whatever the caller gives
        "fig, ax = plt.subplots()\nax.set_title(x)\nax.text(0, 0, x)\n",  # no data method
        "ax = plt.gca()\nax += 1\nax.plot(x)\n",  # rebound by an augmented assignment
        "fig, axs = plt.subplots(2)\nfor ax in others:\n    ax.plot(x)\n",  # a loop over something else
        "import ax\nax.plot(x)\n",
        "ax = make_axes()\nax.plot(x)\n",
    ],
)
def test_leaves_other_receivers(source: str) -> None:
    assert _axes_calls(source) == []
