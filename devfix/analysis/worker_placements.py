"""Does code that DataLoader workers run place values on a device (DF029)? A Dataset class of the
file whose `__getitem__` places items (or reads tensors its `__init__` placed), or a function of
the file given as a `collate_fn`, while a DataLoader of the file has workers. The `ast` screen's
answer: a superset of where the rule finds anything, cheap enough for every file that mentions
`num_workers`."""

from __future__ import annotations

import ast

from devfix.analysis.imports import ImportTable
from devfix.analysis.moves import places_anything
from devfix.analysis.torch_api import DATALOADER_NAMES


def places_items_in_workers(tree: ast.Module, imports: ImportTable) -> bool:
    collates = _collates_of_loaders_with_workers(tree, imports)
    if collates is None:
        return False
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            methods = {item.name: item for item in node.body if isinstance(item, ast.FunctionDef)}
            if "__getitem__" in methods and any(places_anything(methods[name], imports) for name in ("__getitem__", "__init__") if name in methods):
                return True  # items placed where they are read, or the tensors they are read from placed when built
        elif isinstance(node, ast.FunctionDef) and node.name in collates and places_anything(node, imports):
            return True
    return False


def _collates_of_loaders_with_workers(tree: ast.Module, imports: ImportTable) -> set[str] | None:
    """The names given as `collate_fn` to DataLoaders with workers; None when there is no such loader."""
    found: set[str] | None = None
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and imports.qualify(node.func) in DATALOADER_NAMES:
            keywords = {keyword.arg: keyword.value for keyword in node.keywords}
            workers = keywords.get("num_workers")
            if workers is None or "multiprocessing_context" in keywords or isinstance(workers, ast.Constant) and workers.value == 0:
                continue
            found = found or set()
            if isinstance(keywords.get("collate_fn"), ast.Name):
                found.add(keywords["collate_fn"].id)
    return found
