"""Qualified names from a file's imports, read with `ast`: `T.zeros` → `torch.zeros`, `np.mean` →
`numpy.mean`, `nn.Linear` → `torch.nn.Linear`, `len` → `builtins.len`, a class of the file → its name,
and a name the file binds only to torch dtypes (`dtype = torch.float64`) → that dtype, so that
`x.to(dtype)` reads as the cast it is, not as a move to a device."""

from __future__ import annotations

import ast
import builtins
from dataclasses import dataclass, field

from devfix.analysis.ast_nodes import every_node
from devfix.analysis.torch_api import TORCH_DTYPES

BUILTIN_NAMES = frozenset(dir(builtins))


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
        for node in ast.walk(tree):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                table.add(node)
        table.define(tree)
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

    def define(self, tree: ast.Module) -> None:
        """The file's own top-level classes and functions resolve to their bare names; names bound
        only to torch dtypes, to the dtype."""
        for node in tree.body:
            if isinstance(node, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
                self.defined.add(node.name)
        self.dtypes = self._dtype_names(tree)

    def _dtype_names(self, tree: ast.Module) -> dict[str, str]:
        """`dtype = torch.float64` (or `torch.float16 if half else torch.float32`), and no other
        binding of the name anywhere: no parameter, loop target, import or other assignment."""
        found: dict[str, str] = {}
        other: set[str] = set(self.names) | self.defined
        for node in every_node(tree):
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                dtype = self._dtype_of(node.value)
                if dtype is not None:
                    found.setdefault(node.targets[0].id, dtype)
                    node.targets[0]._devfix_dtype = True
                    continue
            if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)) and not getattr(node, "_devfix_dtype", False):
                other.add(node.id)
            elif isinstance(node, ast.arg):
                other.add(node.arg)
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                other.add(node.name)
            elif isinstance(node, (ast.Global, ast.Nonlocal)):
                other.update(node.names)
        return {name: dtype for name, dtype in found.items() if name not in other}

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
