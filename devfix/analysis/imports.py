"""Qualified names from a file's imports, read with `ast`: `T.zeros` → `torch.zeros`, `np.mean` →
`numpy.mean`, `nn.Linear` → `torch.nn.Linear`, `len` → `builtins.len`, a class of the file → its name."""

from __future__ import annotations

import ast
import builtins
from dataclasses import dataclass, field

BUILTIN_NAMES = frozenset(dir(builtins))


@dataclass
class ImportTable:
    """Local name → what it stands for; `defined` are the file's own top-level classes and functions;
    `targets` is everything imported anywhere, also what a later import of the same name replaced."""

    names: dict[str, str] = field(default_factory=dict)
    defined: set[str] = field(default_factory=set)
    targets: set[str] = field(default_factory=set)

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
        """The file's own top-level classes and functions resolve to their bare names."""
        for node in tree.body:
            if isinstance(node, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
                self.defined.add(node.name)

    def qualify(self, node: ast.expr) -> str | None:
        """The qualified name of a dotted name, or None when it is not one devfix can resolve."""
        parts: list[str] = []
        while isinstance(node, ast.Attribute):
            parts.append(node.attr)
            node = node.value
        if not isinstance(node, ast.Name):
            return None
        head = node.id
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
