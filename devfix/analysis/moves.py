"""Moves read with Python's `ast`, as `analysis.placement.as_move` reads them with libcst."""

from __future__ import annotations

import ast

from devfix.analysis.imports import ImportTable
from devfix.analysis.torch_api import CPU_LITERALS, TORCH_DTYPES


def is_move(node: ast.AST, imports: ImportTable) -> bool:
    """`x.cuda()` or `x.to(<device>)`: not a cast (`.to(torch.float16)`) nor `.to("cpu")`."""
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
        return False
    if node.func.attr == "cuda":
        return True
    if node.func.attr != "to":
        return False
    device = next((keyword.value for keyword in node.keywords if keyword.arg == "device"), node.args[0] if node.args else None)
    if device is None or (isinstance(device, ast.Constant) and device.value in CPU_LITERALS):
        return False
    qualified = imports.qualify(device) or ""
    return not (qualified.startswith("torch.") and qualified.rsplit(".", 1)[-1] in TORCH_DTYPES)
