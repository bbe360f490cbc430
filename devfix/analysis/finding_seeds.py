"""Where a rule's findings can be, as top-level statements (`analysis.chunks`): what a check that
analyses only part of a file (`devfix.check_slice`) must start from.

Each function here belongs to one rule (`RuleSpec.findings_in` names it) and answers, from the
file's `ast`, a superset of the chunks that can hold that rule's findings, plus the chunks the rule
reads by name rather than through the names the code uses (`Seeds.reads`). It must never miss
one: a missed chunk is a missed finding. None means "anywhere": the whole file is analysed.
"""

from __future__ import annotations

import ast
import bisect
from dataclasses import dataclass, field

from devfix.analysis.ast_nodes import every_node
from devfix.analysis.chunks import Chunk
from devfix.analysis.torch_api import DEVICE_NAMES, LIST_FILLERS

HOST_MODULES = ("numpy", "matplotlib", "sklearn", "scipy", "pandas")  # DF008's `HOST_LIBRARIES`


@dataclass
class Seeds:
    findings: set[int] = field(default_factory=set)  # chunks that may hold a finding
    reads: set[int] = field(default_factory=set)  # chunks the rule reads besides those the findings' code names


def hardcoded_cuda(chunks: list[Chunk], tree: ast.Module) -> Seeds:
    """DF001 reports `.cuda()`, a CUDA literal (`"cuda"`, `"cuda:0"`, `torch.cuda.FloatTensor`)
    or `set_default_*`, each spelled in its statement. It reads the module's device variables by
    name (to reuse one, or to name its preamble so as not to shadow one)."""
    found = {index for index, chunk in enumerate(chunks) if "cuda" in chunk.text or "set_default_" in chunk.text}
    reads = {index for index, chunk in enumerate(chunks) if chunk.binds & set(DEVICE_NAMES)}  # `global device` too
    return Seeds(found, reads)


def tensor_to_numpy(chunks: list[Chunk], tree: ast.Module) -> Seeds | None:
    """DF008 reports `.numpy()`, a call of a host library's function (`np.mean`, `plt.plot`, a name
    imported from sklearn), and `xs.append(t)` of a list some host call is handed. None when a star
    import from a host library may bind any name."""
    host_names: set[str] = set()
    for node in every_node(tree):
        if isinstance(node, ast.Import):
            host_names |= {(alias.asname or alias.name).split(".")[0] for alias in node.names if _is_host(alias.name)}
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level and _is_host(node.module):
            if any(alias.name == "*" for alias in node.names):
                return None
            host_names |= {alias.asname or alias.name for alias in node.names}
    found = {index for index, chunk in enumerate(chunks) if "numpy" in chunk.text or chunk.loads & host_names}
    calls = [node for node in every_node(tree) if isinstance(node, ast.Call)]
    handed = {arg.id for call in calls if _root_name(call.func) in host_names for arg in call.args if isinstance(arg, ast.Name)}
    if handed:
        starts = [chunk.start for chunk in chunks]
        for call in calls:
            func = call.func
            if isinstance(func, ast.Attribute) and func.attr in LIST_FILLERS and isinstance(func.value, ast.Name) and func.value.id in handed:
                found.add(_chunk_index(starts, call.lineno))
    return Seeds(found)


def _is_host(module: str) -> bool:
    return module.split(".")[0] in HOST_MODULES


def _root_name(node: ast.expr) -> str | None:
    while isinstance(node, ast.Attribute):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


def _chunk_index(starts: list[int], line: int) -> int:
    return max(0, bisect.bisect_right(starts, line) - 1)
