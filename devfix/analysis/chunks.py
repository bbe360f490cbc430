"""A file as its top-level statements ("chunks"), with the names each binds and reads.

Two parts of devfix analyse less than the whole file and need the same facts to choose what to
analyse: quick diagnostics after an edit (`devfix.incremental`) and a check that only some
statements can hold findings in (`devfix.check_slice`). A chunk is one top-level statement with
the comments and blank lines above it, so the chunks of a file cover every line once.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

from devfix.analysis.ast_nodes import FUNCTIONS, every_node

LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")  # ast's line ends, not str.splitlines'
SIMPLE_STATEMENTS = (ast.Import, ast.ImportFrom, ast.Assign, ast.AnnAssign, ast.AugAssign, ast.Expr, ast.Global)


@dataclass(frozen=True)
class Chunk:
    """One top-level statement with the comments and blank lines above it (lines are 1-based).
    Statements sharing a line (`import a; import b`) form one chunk."""

    start: int
    end: int
    text: str
    simple: bool  # an import or assignment (or an `if` of them): every slice includes it
    binds: frozenset[str]  # module-level names it defines (also through `global`)
    loads: frozenset[str]  # names it reads, anywhere inside
    attributes: frozenset[str] = frozenset()  # attribute names it reads or writes anywhere (`x.numpy`, `self.net`)
    # those of them it reaches through something else than `self` or `super()` (`ev.evaluate`,
    # `self.net.proj`): the ones that may be another class's (`self.<name>` is the method's own class's)
    foreign_attributes: frozenset[str] = frozenset()
    methods: frozenset[str] = frozenset()  # of a class: the methods `obj.name(...)` may call (not dunders)
    assignment: bool = False  # only assignments (`default_cfgs = {...}`)
    imported: frozenset[str] | None = None  # only imports: the top-level packages they import from (`torch`, `numpy`)
    changes: frozenset[str] = frozenset()  # names whose object it may change in place: `xs.append(t)`, `model.cuda()`, `xs[0] = t`
    settings: frozenset[str] = frozenset()  # names it calls a setter of: `torch.set_default_device(...)` (of `changes`, those a module may get)

    @property
    def lines(self) -> int:
        return self.end - self.start + 1


def chunks_of(statements: list[ast.stmt], lines: list[str], offset: int, end: int, at_end: bool) -> list[Chunk] | None:
    """The chunks of `statements`, parsed from `lines[offset:end]` (so their line numbers are
    `offset` less than the file's). Comment lines after the last statement form a chunk of their
    own at the end of the file (`at_end`); elsewhere they belong to the next statement, so such a
    region is refused (None)."""
    groups: list[list[ast.stmt]] = []
    for statement in statements:
        if groups and first_line(statement) <= groups[-1][-1].end_lineno:
            groups[-1].append(statement)
        else:
            groups.append([statement])
    chunks, previous_end = [], offset
    for group in groups:
        group_end = group[-1].end_lineno + offset
        chunks.append(_chunk(group, previous_end + 1, group_end, lines))
        previous_end = group_end
    if previous_end < end:
        if not at_end:
            return None
        chunks.append(Chunk(previous_end + 1, end, "".join(lines[previous_end:end]), False, frozenset(), frozenset()))
    return chunks


def first_line(statement: ast.stmt) -> int:
    decorators = getattr(statement, "decorator_list", ())
    return min([statement.lineno, *(decorator.lineno for decorator in decorators)])


def _chunk(group: list[ast.stmt], start: int, end: int, lines: list[str]) -> Chunk:
    binds: set[str] = set()
    loads: set[str] = set()
    attributes: set[str] = set()
    foreign: set[str] = set()
    methods: set[str] = set()
    changes: set[str] = set()
    settings: set[str] = set()
    for statement in group:
        binds |= _bound_names(statement)
        for node in every_node(statement):
            if isinstance(node, ast.Name):
                if isinstance(node.ctx, ast.Load):
                    loads.add(node.id)
            elif isinstance(node, ast.Attribute):
                attributes.add(node.attr)
                if not _own(node.value):
                    foreign.add(node.attr)
                if isinstance(node.value, ast.Name) and not isinstance(node.ctx, ast.Load):
                    changes.add(node.value.id)  # `x.attr = ...`
            elif isinstance(node, ast.Call):
                if isinstance(node.func, ast.Attribute) and isinstance(node.func.value, ast.Name):
                    changes.add(node.func.value.id)  # `xs.append(t)`, `model.cuda()`
                    if node.func.attr.startswith("set_"):
                        settings.add(node.func.value.id)
            elif isinstance(node, ast.Subscript) and not isinstance(node.ctx, ast.Load) and isinstance(node.value, ast.Name):
                changes.add(node.value.id)  # `xs[0] = t`
            elif isinstance(node, ast.Global):
                binds.update(node.names)  # `global model` in a function: it binds the module's `model`
        if isinstance(statement, ast.ClassDef):
            methods |= {item.name for item in statement.body if isinstance(item, FUNCTIONS) and not item.name.startswith("__")}
    simple = all(_is_simple(statement) for statement in group)
    assignment = all(isinstance(statement, (ast.Assign, ast.AnnAssign)) for statement in group)
    imported = frozenset(_packages(group)) if all(isinstance(statement, (ast.Import, ast.ImportFrom)) for statement in group) else None
    return Chunk(
        start, end, "".join(lines[start - 1 : end]), simple, frozenset(binds), frozenset(loads), frozenset(attributes),
        frozenset(foreign), frozenset(methods), assignment, imported, frozenset(changes),
        frozenset(settings),
    )


def _own(receiver: ast.expr) -> bool:
    """`self` or `super()`: what a method reaches through them is its class's, or a base's."""
    if isinstance(receiver, ast.Call) and not receiver.args:
        receiver = receiver.func
        return isinstance(receiver, ast.Name) and receiver.id == "super"
    return isinstance(receiver, ast.Name) and receiver.id == "self"


def _packages(imports: list[ast.stmt]) -> set[str]:
    """`torch` for `import torch.nn as nn`; `.` for a relative import."""
    found: set[str] = set()
    for statement in imports:
        if isinstance(statement, ast.Import):
            found |= {alias.name.split(".")[0] for alias in statement.names}
        else:
            found.add("." if statement.level else (statement.module or "").split(".")[0])
    return found


def _bound_names(statement: ast.stmt) -> set[str]:
    """Names a top-level statement binds in the module (not inside the functions it defines)."""
    names: set[str] = set()
    pending: list[ast.AST] = [statement]
    while pending:
        node = pending.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
            continue
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            names |= {(alias.asname or alias.name).split(".")[0] for alias in node.names}
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        pending.extend(ast.iter_child_nodes(node))
    return names


def _is_simple(statement: ast.stmt) -> bool:
    """An import or assignment, or an `if` holding only those (`if cuda: generator.cuda()`): the
    setup every slice needs (where its models were moved)."""
    if isinstance(statement, ast.If):
        return all(_is_simple(inner) for inner in [*statement.body, *statement.orelse])
    return isinstance(statement, SIMPLE_STATEMENTS)
