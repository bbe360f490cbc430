"""Does code that DataLoader workers run place values on a device (DF029)? A Dataset class of the
file whose `__getitem__` places items (or reads tensors its `__init__` placed), a function of the
file given as a `collate_fn`, or a Dataset class imported from the project whose `__getitem__`
moves its items to the GPU (`gpu_moving_getitem`), while a DataLoader of the file has workers. The
`ast` screen's answer: a superset of where the rule finds anything, cheap enough for every file that
mentions `num_workers`."""

from __future__ import annotations

import ast
from collections.abc import Callable

from devfix.analysis.ast_nodes import defined_once, last_method
from devfix.analysis.imports import ImportTable
from devfix.analysis.moves import places_anything
from devfix.analysis.torch_api import DATALOADER_NAMES


def places_items_in_workers(tree: ast.Module, imports: ImportTable, imported_moves_items: Callable[[str], bool] | None = None) -> bool:
    """`imported_moves_items(name)`: is `name` a Dataset class of another file of the project whose
    `__getitem__` moves its items to the GPU."""
    collates = _collates_of_loaders_with_workers(tree, imports)
    if collates is None:
        return False
    if imported_moves_items is not None and any(
        imported_moves_items(name) for name in sorted(_constructed_names(tree) & imports.names.keys())
    ):
        return True
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


def _constructed_names(tree: ast.Module) -> set[str]:
    return {node.func.id for node in ast.walk(tree) if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)}


def gpu_moving_getitem(tree: ast.Module, imports: ImportTable, class_name: str) -> bool:
    """The module's class `class_name` defines `__getitem__`, which moves what it reads to the GPU:
    `.cuda()`, or `.to(...)` of a `"cuda"` string or of a module-level name bound once to a
    `torch.device` or string that names CUDA (`device = torch.device("cuda" if ... else "cpu")`)."""
    class_def = defined_once(tree.body, (ast.ClassDef,), class_name)
    getitem = last_method(class_def, "__getitem__") if class_def is not None else None
    if getitem is None:
        return False
    gpu_names = _module_gpu_devices(tree)
    for node in ast.walk(getitem):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            if node.func.attr == "cuda" and not node.args:
                return True
            if node.func.attr == "to" and node.args and not node.keywords:
                target = node.args[0]
                if isinstance(target, ast.Constant) and isinstance(target.value, str) and target.value.startswith("cuda"):
                    return True
                if isinstance(target, ast.Name) and target.id in gpu_names:
                    return True
    return False


def _module_gpu_devices(tree: ast.Module) -> set[str]:
    """Module-level names bound once, to a value that names CUDA (`torch.device("cuda" if ...)`)."""
    bound: dict[str, list[ast.expr]] = {}
    for node in tree.body:
        targets = node.targets if isinstance(node, ast.Assign) else []
        for target in targets:
            if isinstance(target, ast.Name):
                bound.setdefault(target.id, []).append(node.value)
    return {
        name for name, values in bound.items() if len(values) == 1
        and any(isinstance(inner, ast.Constant) and isinstance(inner.value, str) and inner.value.startswith("cuda") for inner in ast.walk(values[0]))
    }
