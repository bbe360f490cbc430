"""Moves and casts read with Python's `ast`, as `analysis.placement` reads them with libcst."""

from __future__ import annotations

import ast

from devfix.analysis.imports import ImportTable
from devfix.analysis.torch_api import CAST_KEYWORDS, CPU_LITERALS, PLACEMENT_KEEPING_METHODS, TORCH_DTYPES


def is_move(node: ast.AST, imports: ImportTable) -> bool:
    """`x.cuda()` or `x.to(<device>)`: not a cast (`.to(torch.float16)`) nor `.to("cpu")`; also
    followed by methods that keep the placement (`Net().to(device).eval()`, a cast)."""
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
        return False
    if node.func.attr in PLACEMENT_KEEPING_METHODS or is_cast(node, imports):
        return is_move(node.func.value, imports)
    if node.func.attr == "cuda":
        return True
    if node.func.attr != "to":
        return False
    device = next((keyword.value for keyword in node.keywords if keyword.arg == "device"), node.args[0] if node.args else None)
    if device is None or (isinstance(device, ast.Constant) and device.value in CPU_LITERALS):
        return False
    return not _is_dtype(device, imports)


def places_anything(node: ast.AST, imports: ImportTable) -> bool:
    """A move, or a call given `device=`, anywhere in `node` (a function: does it place anything?)."""
    return any(
        isinstance(inner, ast.Call) and (is_move(inner, imports) or any(keyword.arg == "device" for keyword in inner.keywords))
        for inner in ast.walk(node)
    )


def is_cast(node: ast.AST, imports: ImportTable) -> bool:
    """`x.to(torch.float16)`, `x.to(dtype=...)`, `x.to(dtype)` for a name bound only to dtypes,
    `x.type(torch.float16)`: a copy that stays where `x` is (`analysis.imports` resolves the
    name; `x.type(torch.cuda.FloatTensor)` is no cast)."""
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in ("to", "type")) or not node.args and not node.keywords:
        return False
    if any(keyword.arg not in CAST_KEYWORDS for keyword in node.keywords):
        return False
    return all(_is_dtype(argument, imports) for argument in node.args)


def _is_dtype(node: ast.expr, imports: ImportTable) -> bool:
    """`torch.float16`, or the `.dtype` of a value (`edge_label.to(pred.dtype)`)."""
    if isinstance(node, ast.Attribute) and node.attr == "dtype":
        return True
    qualified = imports.qualify(node) or ""
    return qualified.startswith("torch.") and qualified.rsplit(".", 1)[-1] in TORCH_DTYPES
