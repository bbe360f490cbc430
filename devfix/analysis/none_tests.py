"""Is a name proven None where a node runs? `if indices is None: indices = torch.arange(n)`.

A fix that writes `indices.device` at a factory (DF016) must not do so in the branch of an `if` (or a
conditional expression) whose test proved `indices` None: there it raises AttributeError (pykeen's
`_plain_forward(self, indices=None)` got `torch.arange(self.max_id, device=indices.device)`).
"""

from __future__ import annotations

from collections.abc import Callable

import libcst as cst

ParentOf = Callable[[cst.CSTNode], "cst.CSTNode | None"]


def proven_none_at(node: cst.CSTNode, name: str, parent_of: ParentOf) -> bool:
    """`node` runs in a branch taken only when `name` is None (up to the enclosing function)."""
    child, parent = node, parent_of(node)
    while parent is not None and not isinstance(parent, (cst.FunctionDef, cst.Module, cst.Lambda)):
        if isinstance(parent, (cst.If, cst.IfExp)) and child is not parent.test:
            tested = none_test(parent.test, name)
            if tested is not None and (child is parent.body) == tested:
                return True
        child, parent = parent, parent_of(parent)
    return False


def none_test(test: cst.BaseExpression, name: str) -> bool | None:
    """`name is None` → True (the body is where it is None), `name is not None` → False (the other
    branch is); None for any other test."""
    if not (isinstance(test, cst.Comparison) and isinstance(test.left, cst.Name) and test.left.value == name and len(test.comparisons) == 1):
        return None
    comparison = test.comparisons[0]
    if not (isinstance(comparison.comparator, cst.Name) and comparison.comparator.value == "None"):
        return None
    if isinstance(comparison.operator, cst.Is):
        return True
    return False if isinstance(comparison.operator, cst.IsNot) else None
