"""A walk over a libcst tree that visits it without rebuilding it.

libcst's `CSTNode.visit` rebuilds every node it passes, even for a `CSTVisitor`, which changes
nothing and gets the node itself back (its source says so: "TODO: provide traversal where children
are not replaced"). The scope analysis visits the whole tree twice (the batched providers, then
`ScopeVisitor`) and a check runs each rule over it once more, so a large part of libcst's time went
to building copies that were thrown away (diffusers' 30 files that reach libcst: 18 % of it).

`walk` makes the same calls, in the same order, as libcst's visit (`on_visit`, then for each field
it visits `on_visit_attribute`, the field's nodes, `on_leave_attribute`, then `on_leave`), reading
the fields in the order libcst's own `_visit_and_replace_children` visits them, learnt once per node
type. The field calls are left out for a visitor they cannot reach (it has no `visit_<Node>_<field>`
or `leave_<Node>_<field>` method of its own, which is all libcst's calls look for). A transformer
walked this way (a rule in a check, which edits nothing) gets the node itself as its updated node,
and what it returns is dropped. `install` makes libcst's `visit` walk so for every `CSTVisitor`
(the metadata providers' visitors visit subtrees themselves, through `node.visit`).
"""

from __future__ import annotations

import dataclasses
import re

import libcst as cst
from libcst._batched_visitor import _BatchedCSTVisitor
from libcst._nodes.base import CSTNode

_FIELD_ORDER: dict[object, tuple[str, ...]] = {}
_NULLABLE: dict[type[CSTNode], tuple[str, ...]] = {}
_HEARS_FIELDS: dict[type, object] = {}
_PER_INSTANCE = object()  # libcst's batched visitor: what it hears depends on the providers it batches
_IS_VISITOR: dict[type, bool] = {}
_NODE_TYPES: set[type] = set()  # the node types met (`isinstance` of libcst's abstract node class costs more than the visit)
_FIELD_HOOK = re.compile(r"(visit|leave)_[A-Za-z0-9]+_")  # node types' names have no underscore
_rebuilding_visit = getattr(CSTNode.visit, "__wrapped__", CSTNode.visit)  # libcst's, even if installed before a reload


class _FieldRecorder(cst.CSTVisitor):
    """Notes the fields a node's `_visit_and_replace_children` visits, without going into them."""

    def __init__(self) -> None:
        self.fields: list[str] = []

    def on_visit(self, node: CSTNode) -> bool:
        return False

    def on_visit_attribute(self, node: CSTNode, attribute: str) -> None:
        self.fields.append(attribute)

    def on_leave_attribute(self, original_node: CSTNode, attribute: str) -> None:
        pass

    def on_leave(self, original_node: CSTNode) -> None:
        pass


def visited_fields(node: CSTNode) -> tuple[str, ...]:
    """The fields libcst visits of `node`, in its order. Each type's `_visit_and_replace_children`
    is one constructor call naming its fields in order, so nodes of a type share it, but for a field
    left out when it is None (an f-string expression's `format_spec`): nodes are told apart by which
    of the fields that may be None are."""
    node_type = type(node)
    nullable = _NULLABLE.get(node_type)
    if nullable is None:
        nullable = _NULLABLE[node_type] = tuple(
            field.name for field in dataclasses.fields(node_type) if field.default is None or "Optional" in str(field.type)
        )
    key = (node_type, *(getattr(node, name) is None for name in nullable)) if nullable else node_type
    fields = _FIELD_ORDER.get(key)
    if fields is None:
        recorder = _FieldRecorder()
        node._visit_and_replace_children(recorder)
        fields = _FIELD_ORDER[key] = tuple(recorder.fields)
    return fields


def children(node: CSTNode) -> list[CSTNode]:
    """`node`'s children as libcst visits them (`CSTNode.children`, without its visitor)."""
    found: list[CSTNode] = []
    for name in visited_fields(node):
        found += _nodes_in(getattr(node, name))
    return found


def _nodes_in(value: object) -> list[CSTNode] | tuple[CSTNode, ...]:
    """The nodes a field's value holds: a node, a sequence of them, or none (None, a sentinel)."""
    value_type = value.__class__
    if value_type in _NODE_TYPES:
        return [value]
    if value_type is tuple or value_type is list:
        return value
    if value is None or value is cst.MaybeSentinel.DEFAULT:
        return ()
    if isinstance(value, CSTNode):  # a node of a type not met yet
        _NODE_TYPES.add(value_type)
        return [value]
    return tuple(value)  # another sequence


def walk(node: CSTNode, visitor: cst.CSTVisitor | cst.CSTTransformer) -> None:
    """Visit `node` and its subtree as `node.visit(visitor)` does, building nothing. libcst visits
    each child through the child's own `visit`; only `Module` overrides it, and a module is nobody's
    child, so the walk recurses itself."""
    _walk(node, visitor, _hears_fields(visitor), not isinstance(visitor, cst.CSTVisitor))


def _walk(node: CSTNode, visitor: cst.CSTVisitor | cst.CSTTransformer, hears_fields: bool, transformer: bool) -> None:
    if visitor.on_visit(node):
        if hears_fields:
            for name in visited_fields(node):
                visitor.on_visit_attribute(node, name)
                for child in _nodes_in(getattr(node, name)):
                    _walk(child, visitor, hears_fields, transformer)
                visitor.on_leave_attribute(node, name)
        else:
            for child in children(node):
                _walk(child, visitor, hears_fields, transformer)
    if transformer:
        visitor.on_leave(node, node)  # a check's transformer: its result is not kept
    else:
        visitor.on_leave(node)


def _hears_fields(visitor: cst.CSTVisitor | cst.CSTTransformer) -> bool:
    """Whether a field's `on_visit_attribute`/`on_leave_attribute` can run anything of `visitor`:
    it overrides them, or has a field method that is not one of libcst's empty stubs (for libcst's
    batched visitor: one of the methods it gathered)."""
    visitor_type = type(visitor)
    hears = _HEARS_FIELDS.get(visitor_type)
    if hears is None:
        hears = _HEARS_FIELDS[visitor_type] = _type_hears_fields(visitor_type)
    if hears is _PER_INSTANCE:
        hears = visitor.__dict__.get("_devfix_hears_fields")
        if hears is None:
            hears = visitor.__dict__["_devfix_hears_fields"] = any(_FIELD_HOOK.match(name) for name in visitor.visitor_methods)
    return hears


def _type_hears_fields(visitor_type: type) -> bool | object:
    if issubclass(visitor_type, _BatchedCSTVisitor):
        return _PER_INSTANCE
    base = cst.CSTVisitor if issubclass(visitor_type, cst.CSTVisitor) else cst.CSTTransformer
    return (
        visitor_type.on_visit_attribute is not base.on_visit_attribute
        or visitor_type.on_leave_attribute is not base.on_leave_attribute
        or hasattr(visitor_type, "__getattr__")
        or any(_FIELD_HOOK.match(name) and not getattr(getattr(visitor_type, name), "_is_no_op", False) for name in dir(visitor_type))
    )


def _visit(self: CSTNode, visitor):  # noqa: ANN001, ANN202 - libcst's signature
    visitor_type = type(visitor)
    is_visitor = _IS_VISITOR.get(visitor_type)
    if is_visitor is None:
        is_visitor = _IS_VISITOR[visitor_type] = isinstance(visitor, cst.CSTVisitor)
    if is_visitor:
        _walk(self, visitor, _hears_fields(visitor), False)
        return self  # what libcst's visit returns for a visitor
    return _rebuilding_visit(self, visitor)


def install() -> None:
    """Make libcst's `visit` walk without rebuilding for visitors (transformers still rebuild: they
    may change the tree). Idempotent."""
    _visit.__wrapped__ = _rebuilding_visit
    CSTNode.visit = _visit
