"""Where a rule's findings can be, as top-level statements (`analysis.chunks`): what a check that
analyses only part of a file (`devfix.check_slice`) must start from.

Each function here belongs to one rule (`RuleSpec.findings_in` names it) and answers, from the
file's `ast` facts, a superset of the chunks that can hold that rule's findings, plus the chunks
the rule reads by name rather than through the names the code uses (`Seeds.reads`: the module's
device variables, which a fix reuses). It must never miss one: a missed chunk is a missed
finding. None means "anywhere": the whole file is analysed.

Most rules find calls of a torch function: a chunk can hold one only if it spells the function's
name (`torch.load`, `.cuda()`), or reads a name some import binds to it (`from torch import load
as read`): `_spelling`.
"""

from __future__ import annotations

import ast
import bisect
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from devfix.analysis import signals
from devfix.analysis.ast_nodes import FUNCTIONS, bound_names, every_node, is_self_attribute
from devfix.analysis.chunks import LINE
from devfix.analysis.host_sinks import fed_values, may_be_axes_call
from devfix.analysis.method_factories import class_feeds_fresh_tensors
from devfix.analysis.torch_api import AXES_DATA_METHODS, DEVICE_NAMES, HOST_LIBRARY_MODULES, LIST_FILLERS, LIST_JOINS

if TYPE_CHECKING:
    from devfix.analysis.chunks import Chunk
    from devfix.analysis.facts import FileFacts
    from devfix.analysis.imports import ImportTable

MOVE_METHODS = frozenset({"to", "cuda", "cpu"})  # DF005's


@dataclass
class Seeds:
    findings: set[int] = field(default_factory=set)  # chunks that may hold a finding
    reads: set[int] = field(default_factory=set)  # chunks the rule reads besides those the findings' code names


def hardcoded_cuda(chunks: list[Chunk], facts: FileFacts) -> Seeds:
    """DF001 reports `.cuda()`, a CUDA literal (`"cuda"`, `"cuda:0"`, `torch.cuda.FloatTensor`),
    a call of `torch.set_default_*`, or a GPU flag hard-coded to `True`. It reads the module's device variables by name (to reuse
    one, or to name its preamble so as not to shadow one)."""
    starts = [chunk.start for chunk in chunks]
    flags = {_chunk_index(starts, line) for line in facts.hardcoded_gpu_flags}  # `use_cuda = True`
    return Seeds(_spelling(chunks, facts, ("cuda", "set_default_"), ("set_default_",)) | flags, _device_variables(chunks, facts))


def discarded_move(chunks: list[Chunk], facts: FileFacts) -> Seeds:
    """DF005 reports a statement `x.to(...)`, `x.cuda()` or `x.cpu()`."""
    return Seeds({index for index, chunk in enumerate(chunks) if chunk.attributes & MOVE_METHODS})


def load_without_map_location(chunks: list[Chunk], facts: FileFacts) -> Seeds:
    """DF007 reports `torch.load`, `torch.hub.load_state_dict_from_url` and `model_zoo.load_url`
    calls; it may load onto the module's device variable."""
    return Seeds(_spelling(chunks, facts, ("load",), ("load",)), _device_variables(chunks, facts))


def tensor_to_numpy(chunks: list[Chunk], facts: FileFacts) -> Seeds | None:
    """DF008 reports `.numpy()`, a call of a host library's function (`np.mean`, `plt.plot`, a name
    imported from sklearn), a store into an item of a numpy array, and `xs.append(t)` of a list some
    host call is handed (`xs`, `history["loss"]`, `self.losses`), or a function of the file that
    hands it to one; a data method of a matplotlib Axes (`ax.imshow(t)`) counts as a host call. It
    reads every call of a function that hands a parameter to one (`show(ax, out)`), and what fills a
    list a dict keeps that a torch join takes (`results["logits"].append(out)`). None when a
    star import from a host library may bind any name."""
    host_names: set[str] = set()
    for node in facts.import_statements:
        if isinstance(node, ast.Import):
            host_names |= {(alias.asname or alias.name).split(".")[0] for alias in node.names if _is_host(alias.name)}
        elif node.module and not node.level and _is_host(node.module):
            if any(alias.name == "*" for alias in node.names):
                return None
            host_names |= {alias.asname or alias.name for alias in node.names}
    arrays = facts.numpy_arrays if host_names else frozenset()  # `g_loss[i] = loss`: a store into a numpy array
    imported = facts.imported_host_functions.keys()  # `accuracy(preds, labels)` of a project module's function
    found = {index for index, chunk in enumerate(chunks) if "numpy" in chunk.text or chunk.loads & (host_names | arrays | imported)}
    calls = [node for node in every_node(facts.tree) if isinstance(node, ast.Call)] if host_names or imported else []
    host_args = [_without_key(arg) for call in calls if _root_name(call.func) in host_names or may_be_axes_call(call, facts.imports) for arg in call.args]
    handed = {arg.id for arg in host_args if isinstance(arg, ast.Name)}  # `losses`, `history["loss"]`
    kept = {arg.attr for arg in host_args if is_self_attribute(arg)}  # `self.losses`, `self.history["loss"]`
    functions = facts.host_functions if calls else {}  # `f1(labels, preds)` of a function that hands them to numpy
    handed |= {value.id for call in calls if isinstance(call.func, ast.Name) and call.func.id in functions
               for value in fed_values(call, functions[call.func.id]) if isinstance(value, ast.Name)}
    if handed or kept:
        starts = [chunk.start for chunk in chunks]
        for call in calls:
            func = call.func
            receiver = _without_key(func.value) if isinstance(func, ast.Attribute) and func.attr in LIST_FILLERS else None
            if isinstance(receiver, ast.Name) and receiver.id in handed or is_self_attribute(receiver) and receiver.attr in kept:
                found.add(_chunk_index(starts, call.lineno))
        found |= {_chunk_index(starts, function.lineno) for function in _functions_filling(facts.tree, handed)}
    if facts.imports.imports_any(("matplotlib",)):  # `ax.imshow(t)`: a data method of a matplotlib Axes (`analysis.axes`)
        found |= {index for index, chunk in enumerate(chunks) if chunk.attributes & AXES_DATA_METHODS}
    helpers = _parameters_to_host(facts.tree, host_names, facts.imports) if host_names else set()
    reads = {index for index, chunk in enumerate(chunks) if (chunk.loads | chunk.attributes) & helpers}
    reads |= _item_lists_joined(chunks, facts)
    return Seeds(found, reads)


def _item_lists_joined(chunks: list[Chunk], facts: FileFacts) -> set[int]:
    """The chunks filling a list a dict keeps (`results["logits"].append(out)`) that a torch join
    takes (`torch.cat(results["logits"])`): where the joined tensor is placed depends on them."""
    nodes = list(every_node(facts.tree))
    joined = {call.args[0].value.id for call in nodes
              if isinstance(call, ast.Call) and call.args and facts.imports.qualify(call.func) in LIST_JOINS
              and isinstance(call.args[0], ast.Subscript) and isinstance(call.args[0].value, ast.Name)}
    if not joined:
        return set()
    starts = [chunk.start for chunk in chunks]
    return {_chunk_index(starts, call.lineno) for call in nodes
            if isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and call.func.attr in LIST_FILLERS
            and isinstance(call.func.value, ast.Subscript) and isinstance(call.func.value.value, ast.Name)
            and call.func.value.value.id in joined}


def _functions_filling(tree: ast.Module, handed: set[str]) -> list[ast.FunctionDef | ast.AsyncFunctionDef]:
    """The top-level functions whose result a handed name is bound to or extended with
    (`y_pred, probs = collect(model, xs)`, `history += train(model, loader)`): DF008 brings their
    appended items to the host where they append them."""
    functions = {node.name: node for node in tree.body if isinstance(node, FUNCTIONS)}
    called = set()
    for node in every_node(tree):
        if isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name) and node.target.id in handed:
            value = node.value
        elif isinstance(node, ast.Assign) and any(name in handed for target in node.targets for name in bound_names(target)):
            value = node.value
        else:
            continue
        if isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id in functions:
            called.add(value.func.id)
    return [functions[name] for name in sorted(called)]


def _parameters_to_host(tree: ast.Module, host_names: set[str], imports: ImportTable) -> set[str]:
    """The functions and methods that may hand a parameter to a host library or an Axes
    (`def show(ax, image): ax.imshow(image)`): DF008 reads every call of them (`_given_device_values`)."""
    found = set()
    for function in every_node(tree):
        if not isinstance(function, FUNCTIONS):
            continue
        arguments = function.args
        parameters = {argument.arg for argument in [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs]} - {"self", "cls"}
        for call in every_node(function):
            if not isinstance(call, ast.Call):
                continue
            if _root_name(call.func) in host_names or may_be_axes_call(call, imports):
                if any(isinstance(node, ast.Name) and node.id in parameters for node in ast.walk(call)):
                    found.add(function.name)
                    break
    return found


def _without_key(node: ast.expr) -> ast.expr:
    """`history` of `history["loss"]`; other nodes as they are."""
    return node.value if isinstance(node, ast.Subscript) else node


def legacy_constructor(chunks: list[Chunk], facts: FileFacts) -> Seeds:
    """DF009 reports `torch.cuda.FloatTensor(...)` and its kin, and `nn.Parameter(...).cuda()`;
    it may place on the module's device variable."""
    return Seeds(_spelling(chunks, facts, ("Tensor", "Parameter"), ("Tensor", "Parameter")), _device_variables(chunks, facts))


def cuda_only_call(chunks: list[Chunk], facts: FileFacts) -> Seeds:
    """DF024 reports exactly the calls `analysis.cuda_only_calls` found."""
    starts = [chunk.start for chunk in chunks]
    return Seeds({_chunk_index(starts, line) for line, _ in facts.cuda_only_calls})


def cpu_generator_draw(chunks: list[Chunk], facts: FileFacts) -> Seeds:
    """DF025 reports exactly the draws `analysis.generator_draws` found."""
    starts = [chunk.start for chunk in chunks]
    return Seeds({_chunk_index(starts, line) for line, _ in facts.cpu_generator_draws})


def tensor_attribute(chunks: list[Chunk], facts: FileFacts) -> Seeds | None:
    """DF014 reports a `self.x = <tensor>` of a Module's `__init__`: one the screen took for a
    tensor, or a name it left to the value analysis to prove one."""
    return _sites(chunks, facts.signal_sites(signals.MODULE_TENSOR_ATTRIBUTE))


def distribution_attribute(chunks: list[Chunk], facts: FileFacts) -> Seeds | None:
    """DF027 reports a `self.x = <torch distribution>(...)` of a Module's `__init__`."""
    return _sites(chunks, facts.signal_sites(signals.DISTRIBUTION_ATTRIBUTE))


def module_container(chunks: list[Chunk], facts: FileFacts) -> Seeds | None:
    """DF015 reports a container of submodules that `__init__` stores, or an empty list it stores
    and a method fills with `.append(...)`."""
    return _sites(chunks, facts.signal_sites(signals.MODULE_CONTAINER))


def constructor_device(chunks: list[Chunk], facts: FileFacts) -> Seeds | None:
    """DF004 reports factories, and the inputs of models, in the functions where the screen says a
    factory may meet a tensor (`FileFacts.factory_meeting_lines`); one at the top level, or
    tokenizer encodings fed to a model (`ENCODED_INPUTS`), may be anywhere. It places on the
    module's device variables by name."""
    lines = facts.factory_meeting_lines
    if lines is None or 0 in lines:
        return None
    starts = [chunk.start for chunk in chunks]
    return Seeds({_chunk_index(starts, line) for line in lines}, _device_variables(chunks, facts))


def method_tensor_device(chunks: list[Chunk], facts: FileFacts) -> Seeds | None:
    """DF016 reports factories in the methods of a class whose methods send one where the rule
    looks (`class_feeds_fresh_tensors`)."""
    classes = facts.signal_sites(signals.UNPLACED_FACTORY_IN_METHOD)
    if classes is None:
        return None
    return _sites(chunks, [node for node in classes if class_feeds_fresh_tensors(node, facts.imports, facts.factory_helpers)])


def lookup_table(chunks: list[Chunk], facts: FileFacts) -> Seeds | None:
    """DF012 reports the uses of a plain class's CPU tables in its methods, and in the functions
    of the file they are handed to (`extract(self.alphas_cumprod, t, x)`): the classes, and the
    top-level functions their code calls by name. A table of the top level may be read anywhere:
    None."""
    classes = facts.signal_sites(signals.PLAIN_CLASS_TABLE)
    if classes is None:
        return None
    seeds = _sites(chunks, classes)
    called = {node.func.id for class_node in classes for node in every_node(class_node)
              if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)}
    functions = [node for node in facts.tree.body if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name in called]
    seeds.findings |= _sites(chunks, functions).findings
    return seeds


def device_argument_layer(chunks: list[Chunk], facts: FileFacts) -> Seeds | None:
    """DF019 reports the factories of an `__init__` that receives a device and makes a tensor without it."""
    return _sites(chunks, facts.signal_sites(signals.DEVICE_ARGUMENT_LAYER))


def _sites(chunks: list[Chunk], nodes: list[ast.AST] | None) -> Seeds | None:
    """The chunks holding `nodes` (None: anywhere)."""
    if nodes is None:
        return None
    starts = [chunk.start for chunk in chunks]
    return Seeds({_chunk_index(starts, node.lineno) for node in nodes})


def _spelling(chunks: list[Chunk], facts: FileFacts, words: tuple[str, ...], imported_words: tuple[str, ...]) -> set[int]:
    """Chunks whose text holds one of `words`, or that read a name an import binds to something
    whose dotted name holds one of `imported_words` (`from torch import set_default_device as sdd`)."""
    aliases: set[str] = set()
    if imported_words:
        for node in facts.import_statements:
            if isinstance(node, ast.Import):
                aliases |= {alias.asname or alias.name.split(".")[0] for alias in node.names if _holds(alias.name, imported_words)}
            else:
                module = node.module or ""
                aliases |= {alias.asname or alias.name for alias in node.names if _holds(f"{module}.{alias.name}", imported_words)}
    inside_strings: set[int] | None = None  # computed for the first chunk that spells a word
    found = set()
    for index, chunk in enumerate(chunks):
        if chunk.loads & aliases:
            found.add(index)
        elif _holds(chunk.text, words):
            if inside_strings is None:
                inside_strings = _string_statement_lines(facts.tree)
            if _spelled_in_code(chunk, words, inside_strings):
                found.add(index)
    return found


def _holds(text: str, words: tuple[str, ...]) -> bool:
    return any(word in text for word in words)


def _spelled_in_code(chunk: Chunk, words: tuple[str, ...], inside_strings: set[int]) -> bool:
    """A line of the chunk holding one of `words` lies outside every docstring: diffusers' classes
    spell `.to("cuda")` in the usage examples of hundreds of docstrings, and a rule reads only code."""
    return any(_holds(line, words) and number not in inside_strings for number, line in enumerate(LINE.findall(chunk.text), chunk.start))


def _string_statement_lines(tree: ast.Module) -> set[int]:
    """The lines strictly inside a string that is a statement of its own (a docstring): every
    character there belongs to the string. Its first and last lines may hold code too."""
    lines: set[int] = set()
    pending: list[list[ast.stmt]] = [tree.body]
    while pending:
        for statement in pending.pop():
            if isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Constant) and isinstance(statement.value.value, str):
                lines.update(range(statement.lineno + 1, statement.end_lineno))
            for field_name in ("body", "orelse", "finalbody", "handlers", "cases"):
                inner = getattr(statement, field_name, None)
                if isinstance(inner, list):
                    pending.append(inner)
    return lines


def _device_variables(chunks: list[Chunk], facts: FileFacts) -> set[int]:
    """Chunks binding a name a program's device variable goes by (`global device` too), and the
    top-level statements above the last of them that call a function or class of the file: a
    function may use a `device` bound below it only if none runs before the binding
    (`device_scope._bound_before_the_file_runs_its_functions`)."""
    found = {index for index, chunk in enumerate(chunks) if chunk.binds & set(DEVICE_NAMES)}
    if not found:
        return found
    last = max(chunks[index].end for index in found)
    definitions = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
    defined = {statement.name for statement in facts.tree.body if isinstance(statement, definitions)}
    starts = [chunk.start for chunk in chunks]
    for statement in facts.tree.body:
        if statement.lineno < last and not isinstance(statement, definitions) and any(
            isinstance(node, ast.Call) and _root_name(node.func) in defined for node in every_node(statement)
        ):
            found.add(_chunk_index(starts, statement.lineno))
    return found


def _is_host(module: str) -> bool:
    return module.split(".")[0] in HOST_LIBRARY_MODULES


def _root_name(node: ast.expr) -> str | None:
    while isinstance(node, ast.Attribute):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


def _chunk_index(starts: list[int], line: int) -> int:
    return max(0, bisect.bisect_right(starts, line) - 1)
