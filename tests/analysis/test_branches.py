"""The branches of an `if` whose bindings do not reach each other: the libcst value placement
(`PlacementFacts.exclusive`) and DF008's `ast` screen (`ast_nodes.exclusive_branches`) must read
them alike, or the screen would stop being an over-approximation of the rule."""

from __future__ import annotations

import ast

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider

from devfix.analysis.ast_nodes import exclusive_branches, latest_binding, scope_bindings, scope_nodes
from devfix.analysis.placement import collect

SOURCE = """def f(x, framework):
    if framework == "pt":
        y = x.cuda()
        z = y.numpy()
    elif framework == "tf":
        y = x
        if x:
            w = 1
        else:
            w = (
                2
            )
    else:

        y = None  # after a blank line
    return y
"""


def test_the_ast_screen_and_the_placement_read_the_same_branches():
    wrapper = MetadataWrapper(cst.parse_module(SOURCE))
    positions = wrapper.resolve(PositionProvider)
    function = wrapper.module.body[0]
    facts = collect(function.body.body, lambda node: set(), lambda node: positions[node].start.line)
    tree = ast.parse(SOURCE).body[0]
    screened = exclusive_branches(scope_nodes(tree.body, ()))
    assert sorted(screened) == sorted(facts.exclusive)


def test_an_if_bodys_binding_does_not_reach_its_else_but_reaches_past_the_if():
    tree = ast.parse(SOURCE).body[0]
    nodes = list(scope_nodes(tree.body, ()))
    bindings, exclusive = scope_bindings(nodes), exclusive_branches(nodes)
    assert latest_binding(bindings, "y", 6, exclusive) is None  # the `elif` reads the parameter
    assert latest_binding(bindings, "y", 15, exclusive) is None  # the `else` reads neither branch's
    assert latest_binding(bindings, "y", 16, exclusive)[0] == 15  # past the whole `if`: the latest
    assert latest_binding(bindings, "y", 6)[0] == 3  # without the branches: the body's
