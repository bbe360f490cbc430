"""`cst_walk` visits a tree as libcst's rebuilding `visit` does: the same calls, in the same order,
for every kind of syntax and for real files; a check's rules and libcst's metadata rest on it."""

from __future__ import annotations

import importlib

import libcst as cst
import pytest
from hypothesis import HealthCheck, given, settings
from libcst._nodes.base import CSTNode
from libcst.metadata import MetadataWrapper, ScopeProvider

from devfix import cst_walk
from tests.test_cst_metadata import EVERY_KIND_OF_SYNTAX, FILES

SAMPLED_FILES = FILES[::5]  # the order is per node type: the syntax sample holds every type, the files its real mixes

NEWER_SYNTAX = '''\
type Pair[T] = tuple[T, T]
def first[T: (int, str), *Ts, **P](pair: Pair[T], *args: *Ts) -> T:
    return pair[0]
class Box[T = int]:
    value: T
print(f"{first((1, 2))=} {1:{'>'}{3}} {'nested' + f'{2!s}'}")
'''


class Recorder(cst.CSTVisitor):
    """Every call a visit makes, with the node's identity: the order is what the analyses rely on."""

    def __init__(self, prune: type[CSTNode] | None = None) -> None:
        super().__init__()
        self.calls: list[tuple] = []
        self.prune = prune

    def on_visit(self, node: CSTNode) -> bool:
        self.calls.append(("visit", id(node)))
        return not isinstance(node, self.prune) if self.prune else True

    def on_visit_attribute(self, node: CSTNode, attribute: str) -> None:
        self.calls.append(("field", id(node), attribute))

    def on_leave_attribute(self, original_node: CSTNode, attribute: str) -> None:
        self.calls.append(("left field", id(original_node), attribute))

    def on_leave(self, original_node: CSTNode) -> None:
        self.calls.append(("leave", id(original_node)))


def rebuilding_calls(module: cst.Module, monkeypatch, prune=None) -> list[tuple]:
    """The calls libcst's own visit makes (with `install` undone while it runs)."""
    recorder = Recorder(prune)
    with monkeypatch.context() as patch:
        patch.setattr(CSTNode, "visit", cst_walk._rebuilding_visit)
        module.visit(recorder)
    return recorder.calls


def walked_calls(module: cst.Module, prune=None) -> list[tuple]:
    recorder = Recorder(prune)
    cst_walk.walk(module, recorder)
    return recorder.calls


@pytest.mark.parametrize("source", [EVERY_KIND_OF_SYNTAX, NEWER_SYNTAX, *SAMPLED_FILES], ids=lambda item: getattr(item, "name", "syntax"))
def test_the_walk_makes_libcsts_calls_in_libcsts_order(source, monkeypatch):
    module = cst.parse_module(source if isinstance(source, str) else source.read_text(encoding="utf-8"))
    expected = rebuilding_calls(module, monkeypatch)
    assert walked_calls(module) == expected
    assert len(expected) > 10
    pruned = rebuilding_calls(module, monkeypatch, prune=cst.FunctionDef)  # a visitor that skips function bodies
    assert walked_calls(module, prune=cst.FunctionDef) == pruned
    assert len(pruned) < len(expected) or "def " not in module.code


@settings(max_examples=40, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(__import__("hypothesmith").from_grammar())
def test_the_walk_makes_libcsts_calls_on_programs_from_pythons_grammar(program):
    try:
        module = cst.parse_module(program)
    except (cst.ParserSyntaxError, RecursionError):
        return
    with pytest.MonkeyPatch.context() as monkeypatch:
        assert walked_calls(module) == rebuilding_calls(module, monkeypatch)


def test_the_scope_analysis_over_the_walk_is_libcsts(monkeypatch):
    """libcst's scope provider visits subtrees itself (`node.visit`): once `install`ed, those
    visits walk too, and every node gets the scope libcst's own visit gives it."""
    module = cst.parse_module(EVERY_KIND_OF_SYNTAX)
    cst_walk.install()
    walked = MetadataWrapper(module, unsafe_skip_copy=True).resolve(ScopeProvider)
    with monkeypatch.context() as patch:
        patch.setattr(CSTNode, "visit", cst_walk._rebuilding_visit)
        rebuilt = MetadataWrapper(module, unsafe_skip_copy=True).resolve(ScopeProvider)
    assert len(walked) > 300
    assert walked.keys() == rebuilt.keys()
    assert [sorted(str(name) for name in walked[node].accesses._accesses) if walked[node] else None for node in walked] \
        == [sorted(str(name) for name in rebuilt[node].accesses._accesses) if rebuilt[node] else None for node in walked]
    assert [(type(walked[node]).__name__, type(walked[node].parent).__name__ if walked[node] else None) for node in walked] \
        == [(type(rebuilt[node]).__name__, type(rebuilt[node].parent).__name__ if rebuilt[node] else None) for node in walked]


class Renamer(cst.CSTTransformer):
    def __init__(self) -> None:
        super().__init__()
        self.leaves: list[tuple[int, int]] = []

    def leave_Name(self, original_node: cst.Name, updated_node: cst.Name) -> cst.Name:
        self.leaves.append((id(original_node), id(updated_node)))
        return updated_node.with_changes(value=updated_node.value.upper())


def test_a_walked_transformer_sees_each_node_as_its_own_update_and_changes_nothing():
    module = cst.parse_module("total = price * count\n")
    renamer = Renamer()
    cst_walk.walk(module, renamer)
    assert len(renamer.leaves) == 3
    assert all(original == updated for original, updated in renamer.leaves)
    assert module.code == "total = price * count\n"


def test_installed_transformers_still_rebuild_the_tree():
    cst_walk.install()
    cst_walk.install()  # twice is once
    assert cst.parse_module("total = price * count\n").visit(Renamer()).code == "TOTAL = PRICE * COUNT\n"
    importlib.reload(cst_walk)  # the module imported again after an install still knows libcst's visit
    assert cst_walk._rebuilding_visit.__module__.startswith("libcst")
    cst_walk.install()
    assert cst.parse_module("total = price * count\n").visit(Renamer()).code == "TOTAL = PRICE * COUNT\n"


class FieldHooks(cst.CSTVisitor):
    """Field methods as libcst looks them up by name (`visit_<Node>_<field>`), beside a node method."""

    def __init__(self) -> None:
        super().__init__()
        self.calls: list[tuple] = []

    def visit_Call_func(self, node: cst.Call) -> None:
        self.calls.append(("func", id(node)))

    def leave_Call_args(self, node: cst.Call) -> None:
        self.calls.append(("args left", id(node)))

    def visit_Name(self, node: cst.Name) -> None:
        self.calls.append(("name", node.value))


class NodeHooksOnly(cst.CSTVisitor):
    def visit_Name(self, node: cst.Name) -> None:
        pass


@pytest.mark.parametrize("source", [EVERY_KIND_OF_SYNTAX, NEWER_SYNTAX])
def test_field_methods_are_called_as_libcst_calls_them(source, monkeypatch):
    module = cst.parse_module(source)
    expected = FieldHooks()
    with monkeypatch.context() as patch:
        patch.setattr(CSTNode, "visit", cst_walk._rebuilding_visit)
        module.visit(expected)
    walked = FieldHooks()
    cst_walk.walk(module, walked)
    assert walked.calls == expected.calls
    assert sum(call[0] == "func" for call in expected.calls) >= 2


def test_only_visitors_that_can_hear_a_field_are_told_of_one():
    assert cst_walk._hears_fields(FieldHooks()) and cst_walk._hears_fields(Recorder())
    assert not cst_walk._hears_fields(NodeHooksOnly())  # libcst's own field methods are empty stubs
    assert not cst_walk._hears_fields(Renamer())
