"""devfix's cheaper metadata must answer exactly what libcst's own providers answer, for every node
of real files and of every kind of syntax: a rule reads parents and qualified names to decide."""

from __future__ import annotations

from pathlib import Path

import libcst as cst
import pytest
from libcst.metadata import MetadataWrapper, ParentNodeProvider, QualifiedNameProvider, ScopeProvider
from libcst.metadata import PositionProvider as LibcstPositionProvider

from devfix.analysis.cst_metadata import ParentProvider, PositionProvider, generated_code, scope_qualified_names

REPO = Path(__file__).resolve().parents[1]
# a fixture's after.py is its before.py with a few moves added: the befores stand for both
FILES = sorted([
    *(path for path in REPO.glob("fixtures/**/*.py") if path.name != "after.py"),
    *REPO.glob("tests/programs/**/*.py"), *REPO.glob("devfix/codemods/*.py"),
])
EVERY_KIND_OF_SYNTAX = '''\
"""Docstring."""
from __future__ import annotations
import os.path as osp, torch
from torch import nn as tnn, Tensor
from . import sibling
from ..pkg.mod import (a as b, c)
x: int = 1; y = z = 2
x += 1; del y
@decorator(arg)
class Net(tnn.Module, metaclass=Meta):
    attr: Tensor
    def __init__(self, *args, k=1, **kwargs) -> None:
        super().__init__()
        self.layer = tnn.Linear(2, 2)
    async def forward(self, x, /, y=None, *, z):
        global G
        async with torch.no_grad() as ctx, open(osp.join("a", "b")):
            async for item in stream():
                await item
        w = [i for i in range(3) if i] + list({k: v for k, v in {}.items()})
        g = (lambda q=1, *r: q)(*w, **{})
        if (n := len(w)) > 1 and not x or y is None:
            pass
        elif x:
            raise ValueError("bad") from None
        else:
            return f"{x!r:>{n}} {torch.cuda.is_available()}"
        try:
            yield from w
        except (TypeError, KeyError) as error:
            print(error)
        finally:
            del g
        match x:
            case [1, *rest] if rest:
                pass
            case {"k": tnn.Linear() as lin, **more}:
                pass
            case Net(a=1) | None:
                pass
            case _:
                pass
        while x:
            x = x[1:2, ::3, ...]
            continue
        return x @ y if x else -y ** 2
def outer():
    value = 1
    def inner():
        nonlocal value
        value += 1
    return inner
print(*[a for a in b], sep="", end=("\\n"))
'''


def wrapped(source: str) -> MetadataWrapper:
    return MetadataWrapper(cst.parse_module(source), unsafe_skip_copy=True)


class NameComparison(cst.CSTVisitor):
    METADATA_DEPENDENCIES = (ScopeProvider, QualifiedNameProvider)

    def __init__(self) -> None:
        super().__init__()
        self.differences: list[str] = []
        self.named = 0

    def on_visit(self, node: cst.CSTNode) -> bool:
        expected = {qualified.name for qualified in self.get_metadata(QualifiedNameProvider, node, set())}
        self.named += bool(expected)
        if scope_qualified_names(self, node) != expected:
            self.differences.append(f"{type(node).__name__}: {expected}")
        return True


@pytest.mark.parametrize("source", [EVERY_KIND_OF_SYNTAX, *FILES], ids=lambda item: getattr(item, "name", "syntax"))
def test_parents_and_qualified_names_are_libcsts(source):
    wrapper = wrapped(source if isinstance(source, str) else source.read_text(encoding="utf-8"))
    parents = wrapper.resolve(ParentProvider)
    assert dict(parents) == dict(wrapper.resolve(ParentNodeProvider))
    comparison = NameComparison()
    wrapper.visit(comparison)
    assert comparison.differences == []


def test_the_syntax_sample_is_compared_node_by_node():
    wrapper = wrapped(EVERY_KIND_OF_SYNTAX)
    parents = wrapper.resolve(ParentProvider)
    assert wrapper.module not in parents
    assert len(parents) > 500
    comparison = NameComparison()
    wrapper.visit(comparison)
    assert comparison.named > 50


@pytest.mark.parametrize("source", [EVERY_KIND_OF_SYNTAX, "x = 1\r\ny = 2\r\n", "if x:\n\ty = 1\n", *FILES[::5]], ids=lambda item: getattr(item, "name", "syntax"))
def test_positions_are_libcsts_and_the_code_is_the_modules(source):
    """The positions a check reads and the code it reads them in come from one codegen pass."""
    text = source if isinstance(source, str) else source.read_text(encoding="utf-8")
    wrapper = wrapped(text)
    assert generated_code(wrapper) == wrapper.module.code
    assert dict(wrapper.resolve(PositionProvider)) == dict(wrapper.resolve(LibcstPositionProvider))
    assert wrapper.resolve(PositionProvider) is wrapper.resolve(PositionProvider)  # one pass, kept by the wrapper
