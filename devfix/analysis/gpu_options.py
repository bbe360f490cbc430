"""One GPU chosen by a command-line option: `parser.add_argument("--gpu", type=int, default=0)`.

`.cuda(args.gpu)`, `torch.cuda.set_device(args.gpu)` and `f"cuda:{args.gpu}"` (or `"cuda:{}".format(...)`,
`"cuda:%d" % ...`, `"cuda:" + str(...)`) name a GPU by a
number the user gives; a script of one process then places everything on that one GPU, and fails
without CUDA ("Torch not compiled with CUDA enabled") like any hard-coded `.cuda()`. Such uses are
not multi-GPU placement, which DF001 leaves alone.

The option counts only when the facts say so, whatever its name: the parser's argument has
`type=int` and a non-negative integer default (not `None`, which pytorch/examples' ImageNet script
reads as "every GPU"), `args = parser.parse_args()` binds the namespace once in the file (at the
top level or in one function), nothing assigns `args.<dest>` (a distributed launcher's
`main_worker` sets `args.gpu = gpu` in each process), and it is the only option the file names a GPU
with. The file's other multi-GPU markers still count (`torch_api.places_on_several_gpus`).
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

from devfix.analysis.ast_nodes import every_node

DEVICE_VARIABLE = "device"  # what DF001 binds right after the parse


@dataclass(frozen=True)
class GpuOption:
    """`args.gpu`: the namespace's name, the option's attribute, the line `args = parser.parse_args()`
    starts on, the top-level function holding that statement (None at the top level), and the lines
    of the top-level statement holding it when that is another (`if __name__ == "__main__":`)."""

    namespace: str
    dest: str
    parse_line: int
    parse_function: str | None
    enclosing: tuple[int, int] | None
    device_name_free: bool  # nothing in the file binds `device`: the fix may bind it after the parse

    def reaches(self, line: int, function: str | None, nested: bool) -> bool:
        """A device variable bound right after the parse is bound when code at `line` runs: code of
        the parse's own function after it (`nested`: in a function inside it, never), or, for a
        parse outside functions, the top level after it and the functions defined before the
        statement holding it (they read the global when called)."""
        if self.parse_function is not None:
            return function == self.parse_function and not nested and line > self.parse_line
        if function is None:
            return line > self.parse_line and (self.enclosing is None or line <= self.enclosing[1])
        return self.enclosing is None or line < self.enclosing[0]

    @property
    def code(self) -> str:
        return f"{self.namespace}.{self.dest}"

    def masked(self, text: str) -> str:
        """`text` without the option's GPU uses, for the search of multi-GPU markers."""
        attribute = rf"{re.escape(self.namespace)}\s*\.\s*{re.escape(self.dest)}\b"
        text = re.sub(rf"\.cuda\(\s*{attribute}", ".cuda(", text)
        return re.sub(rf"set_device\(\s*{attribute}\s*\)", "set_device(0)", text)


def gpu_option(tree: ast.Module) -> GpuOption | None:
    """The option the file names its one GPU with, when every fact above holds."""
    parses = [(node, function) for node, function in _statements(tree) if _parses_arguments(node)]
    if len(parses) != 1:
        return None
    parse, function = parses[0]
    namespace, parser = parse.targets[0].id, parse.value.func.value.id
    nodes = list(every_node(tree))  # walked once for every fact below
    integers = _integer_options(nodes, parser)
    used = {node.attr for node in _gpu_uses(nodes, namespace)}
    if len(used) != 1 or not used <= set(integers):
        return None
    dest = used.pop()
    for node in nodes:
        if isinstance(node, ast.Attribute) and isinstance(node.ctx, (ast.Store, ast.Del)) and node.attr == dest \
                and isinstance(node.value, ast.Name) and node.value.id == namespace:
            return None  # `args.gpu = gpu` in each spawned process
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store) and node.id == namespace and node is not parse.targets[0]:
            return None  # another namespace of the same name
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("setattr", "vars"):
            return None
    holder = next(statement for statement in tree.body if statement.lineno <= parse.lineno <= (statement.end_lineno or 0))
    enclosing = None if holder is parse or function is not None else (holder.lineno, holder.end_lineno or holder.lineno)
    device_bound = any(
        isinstance(node, ast.Name) and node.id == DEVICE_VARIABLE and not isinstance(node.ctx, ast.Load)
        or isinstance(node, ast.arg) and node.arg == DEVICE_VARIABLE
        or isinstance(node, ast.alias) and (node.asname or node.name) == DEVICE_VARIABLE
        or isinstance(node, (ast.FunctionDef, ast.ClassDef, ast.AsyncFunctionDef)) and node.name == DEVICE_VARIABLE
        for node in nodes
    )
    return GpuOption(namespace, dest, parse.lineno, function, enclosing, not device_bound)


def _statements(tree: ast.Module) -> list[tuple[ast.stmt, str | None]]:
    """Every statement of the file with the name of the top-level function holding it."""
    found: list[tuple[ast.stmt, str | None]] = []
    for statement in tree.body:
        function = statement.name if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef)) else None
        found.extend((node, function) for node in every_node(statement) if isinstance(node, ast.stmt))
    return found


def _parses_arguments(node: ast.stmt) -> bool:
    """`args = parser.parse_args()` (`parser` a plain name)."""
    return (
        isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)
        and isinstance(node.value, ast.Call) and isinstance(node.value.func, ast.Attribute)
        and node.value.func.attr == "parse_args" and isinstance(node.value.func.value, ast.Name)
    )


def _integer_options(nodes: list[ast.AST], parser: str) -> set[str]:
    """The attributes of `parser`'s options that are `type=int` with a non-negative integer default."""
    found: set[str] = set()
    for node in nodes:
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "add_argument"
                and isinstance(node.func.value, ast.Name) and node.func.value.id == parser):
            continue
        keywords = {keyword.arg: keyword.value for keyword in node.keywords}
        kind, default = keywords.get("type"), keywords.get("default")
        if not (isinstance(kind, ast.Name) and kind.id == "int" and isinstance(default, ast.Constant)
                and type(default.value) is int and default.value >= 0) or "nargs" in keywords or "action" in keywords:
            continue
        dest = _destination(node, keywords.get("dest"))
        if dest is not None:
            found.add(dest)
    return found


def _destination(call: ast.Call, dest: ast.expr | None) -> str | None:
    """The attribute an option is stored in: `dest=`, else its first long flag, else its first flag."""
    if isinstance(dest, ast.Constant) and isinstance(dest.value, str):
        return dest.value
    flags = [arg.value for arg in call.args if isinstance(arg, ast.Constant) and isinstance(arg.value, str)]
    if not flags or len(flags) != len(call.args):
        return None
    long = [flag for flag in flags if flag.startswith("--")]
    chosen = (long or flags)[0].lstrip("-").replace("-", "_")
    return chosen if chosen.isidentifier() else None


def _gpu_uses(nodes: list[ast.AST], namespace: str) -> list[ast.Attribute]:
    """`args.X` where the file names a GPU with it: `.cuda(args.X)`, `torch.cuda.set_device(args.X)`,
    `f"cuda:{args.X}"`."""
    uses: list[ast.Attribute] = []
    for node in nodes:
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in ("cuda", "set_device") \
                and node.args:
            uses.append(node.args[0])
        elif isinstance(node, ast.JoinedStr):
            parts = node.values
            uses.extend(value.value for before, value in zip(parts, parts[1:])
                        if isinstance(before, ast.Constant) and str(before.value).endswith("cuda:")
                        and isinstance(value, ast.FormattedValue))
        elif (named := gpu_in_device_string(node)) is not None:
            uses.append(named)
    return [use for use in uses if isinstance(use, ast.Attribute) and isinstance(use.value, ast.Name) and use.value.id == namespace]


def gpu_in_device_string(node: ast.AST) -> ast.expr | None:
    """`x` of a device string built from one value: `f"cuda:{x}"`, `"cuda:{}".format(x)`,
    `"cuda:%d" % x`, `"cuda:" + str(x)`."""
    if isinstance(node, ast.JoinedStr) and len(node.values) == 2:
        text, value = node.values
        if isinstance(text, ast.Constant) and text.value == "cuda:" and isinstance(value, ast.FormattedValue) \
                and value.conversion == -1 and value.format_spec is None:
            return value.value
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "format" \
            and isinstance(node.func.value, ast.Constant) and node.func.value.value == "cuda:{}" and len(node.args) == 1 and not node.keywords:
        return node.args[0]
    if isinstance(node, ast.BinOp) and isinstance(node.left, ast.Constant):
        if isinstance(node.op, ast.Mod) and node.left.value in ("cuda:%d", "cuda:%s", "cuda:%i"):
            return node.right
        right = node.right
        if isinstance(node.op, ast.Add) and node.left.value == "cuda:" and isinstance(right, ast.Call) \
                and isinstance(right.func, ast.Name) and right.func.id == "str" and len(right.args) == 1:
            return right.args[0]
    return None
