"""Does a Dataset class of the file place items on a device in `__getitem__`, while a DataLoader
of the file runs it in worker processes (DF029)? The `ast` screen's answer: a superset of where
the rule finds anything, cheap enough for every file that mentions `num_workers`."""

from __future__ import annotations

import ast

from devfix.analysis.imports import ImportTable
from devfix.analysis.moves import is_move
from devfix.analysis.torch_api import DATALOADER_NAMES


def places_items_in_workers(tree: ast.Module, imports: ImportTable) -> bool:
    return _loader_with_workers(tree, imports) and any(
        _getitem_places(node, imports) for node in tree.body if isinstance(node, ast.ClassDef)
    )


def _loader_with_workers(tree: ast.Module, imports: ImportTable) -> bool:
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and imports.qualify(node.func) in DATALOADER_NAMES:
            keywords = {keyword.arg: keyword.value for keyword in node.keywords}
            workers = keywords.get("num_workers")
            if workers is not None and "multiprocessing_context" not in keywords \
                    and not (isinstance(workers, ast.Constant) and workers.value == 0):
                return True
    return False


def _getitem_places(class_def: ast.ClassDef, imports: ImportTable) -> bool:
    for item in class_def.body:
        if isinstance(item, ast.FunctionDef) and item.name == "__getitem__":
            return any(
                isinstance(node, ast.Call) and (is_move(node, imports) or any(keyword.arg == "device" for keyword in node.keywords))
                for node in ast.walk(item)
            )
    return False
