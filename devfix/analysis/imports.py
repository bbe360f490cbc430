"""Qualified names from a file's imports, read with `ast`: `T.zeros` → `torch.zeros`, `np.mean` →
`numpy.mean`, `nn.Linear` → `torch.nn.Linear`, `len` → `builtins.len`, a class of the file → its name,
and a name the file binds only to torch dtypes (`dtype = torch.float64`) → that dtype, so that
`x.to(dtype)` reads as the cast it is, not as a move to a device."""

from __future__ import annotations

import ast
import builtins
import sys
from dataclasses import dataclass, field

from devfix.analysis.ast_nodes import every_node
from devfix.analysis.torch_api import TORCH_DTYPES

BUILTIN_NAMES = frozenset(dir(builtins))
NOT_PROJECT_ROOTS = frozenset({"torch", "numpy", "torchvision", "transformers", "diffusers", "timm", "lightning", "pytorch_lightning"})


def may_be_project_name(qualified_name: str) -> bool:
    """`engine.train_one_epoch`, `.models.Net`: a name of a module that may be a file of the project,
    not of the standard library or of the libraries devfix knows."""
    owner = qualified_name.rpartition(".")[0]
    root = owner.lstrip(".").split(".")[0]
    return bool(owner) and (owner.startswith(".") or (root not in sys.stdlib_module_names and root not in NOT_PROJECT_ROOTS))


@dataclass
class ImportTable:
    """Local name → what it stands for; `defined` are the file's own top-level classes and functions;
    `targets` is everything imported anywhere, also what a later import of the same name replaced;
    `dtypes` are the names every binding of which, anywhere in the file, is a torch dtype."""

    names: dict[str, str] = field(default_factory=dict)
    defined: set[str] = field(default_factory=set)
    targets: set[str] = field(default_factory=set)
    dtypes: dict[str, str] = field(default_factory=dict)

    @classmethod
    def of(cls, tree: ast.Module) -> ImportTable:
        table = cls()
        cast_names: set[str] = set()
        assignments: list[ast.Assign] = []
        for node in ast.walk(tree):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                table.add(node)
            elif isinstance(node, ast.Assign):
                assignments.append(node)
            elif (name := cast_argument(node)) is not None:
                cast_names.add(name)
        table.define(tree, cast_names, assignments)
        return table

    def add(self, node: ast.Import | ast.ImportFrom) -> bool:
        """Record one import statement; True for `from ... import *` (names devfix cannot know)."""
        star = self._add(node)
        self.targets.update(self.names.values())
        return star

    def _add(self, node: ast.Import | ast.ImportFrom) -> bool:
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:
                    self.names[alias.asname] = alias.name
                else:
                    head = alias.name.split(".")[0]
                    self.names[head] = head
            return False
        star = False
        for alias in node.names:
            if alias.name == "*":
                star = True
            elif node.level:  # relative, as libcst names it: `..pipeline_utils.DiffusionPipeline`
                self.names[alias.asname or alias.name] = "." * node.level + ".".join(filter(None, [node.module, alias.name]))
            elif node.module:
                self.names[alias.asname or alias.name] = f"{node.module}.{alias.name}"
        return star and bool(node.module) and node.module.split(".")[0] in ("torch", "numpy")

    def define(self, tree: ast.Module, cast_names: set[str], assignments: list[ast.Assign]) -> None:
        """The file's own top-level classes and functions resolve to their bare names; of the
        `cast_names` (`x.to(name)`, `x.type(name)`: `cast_argument`), those that the file's
        `assignments` bind to torch dtypes, and nothing else binds, to the dtype."""
        for node in tree.body:
            if isinstance(node, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
                self.defined.add(node.name)
        candidates = cast_names - set(self.names) - self.defined
        found: dict[int, tuple[str, str]] = {}  # id of the target of `dtype = torch.float64` → (name, dtype)
        for node in assignments if candidates else ():
            target = node.targets[0]
            if len(node.targets) == 1 and type(target) is ast.Name and target.id in candidates:
                dtype = self._dtype_of(node.value)
                if dtype is not None:
                    found[id(target)] = (target.id, dtype)
        self.dtypes = self._bound_only_there(tree, found) if found else {}

    def _bound_only_there(self, tree: ast.Module, found: dict[int, tuple[str, str]]) -> dict[str, str]:
        """The names of `found` that nothing else in the file binds: no parameter, loop target,
        import, definition or other assignment."""
        names = {name for name, _ in found.values()}
        other: set[str] = set()
        for node in every_node(tree):
            kind = type(node)
            if kind is ast.Name:
                if node.id in names and not isinstance(node.ctx, ast.Load) and id(node) not in found:
                    other.add(node.id)
            elif kind is ast.arg:
                other.add(node.arg)
            elif kind in (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef):
                other.add(node.name)
            elif kind in (ast.Global, ast.Nonlocal):
                other.update(node.names)
        dtypes: dict[str, str] = {}
        for name, dtype in found.values():
            dtypes.setdefault(name, dtype)
        return {name: dtype for name, dtype in dtypes.items() if name not in other}

    def _dtype_of(self, value: ast.expr) -> str | None:
        if isinstance(value, ast.IfExp):
            body, orelse = self._dtype_of(value.body), self._dtype_of(value.orelse)
            return body if body is not None and orelse is not None else None
        qualified = self.qualify(value) if isinstance(value, ast.Attribute) else None
        return qualified if qualified is not None and qualified.startswith("torch.") and qualified[6:] in TORCH_DTYPES else None

    def qualify(self, node: ast.expr) -> str | None:
        """The qualified name of a dotted name, or None when it is not one devfix can resolve."""
        parts: list[str] = []
        while isinstance(node, ast.Attribute):
            parts.append(node.attr)
            node = node.value
        if not isinstance(node, ast.Name):
            return None
        head = node.id
        if head in self.dtypes and not parts:
            return self.dtypes[head]
        if head in self.names:
            root = self.names[head]
        elif head in self.defined:
            root = head
        elif head in BUILTIN_NAMES:
            root = f"builtins.{head}"
        else:
            return None
        return ".".join([root, *reversed(parts)])

    def imports_any(self, prefixes: tuple[str, ...]) -> bool:
        """Does the file import any of these modules (or anything in them), anywhere?"""
        return any(target == prefix or target.startswith(prefix + ".") for target in self.targets for prefix in prefixes)


def cast_argument(node: ast.AST) -> str | None:
    """`name` of `x.to(name)` or `x.type(name)`: a name that may stand for a dtype."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in ("to", "type") and len(node.args) == 1:
        argument = node.args[0]
        return argument.id if isinstance(argument, ast.Name) else None
    return None
