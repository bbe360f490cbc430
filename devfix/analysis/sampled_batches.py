"""Names a plain class's method unpacks from a batch that another class of the file samples.

A DQN agent keeps a replay buffer of the file (`self.memory = ReplayBuffer(...)`) whose `sample()`
builds its tensors on the host (`torch.from_numpy(np.vstack(...)).float()`) and returns them as a
tuple; `step` hands that tuple to `learn(self, experiences, gamma)`, which unpacks it (`states,
actions, rewards, next_states, dones = experiences`) and feeds the names to its moved networks.
Inside `learn` nothing says what `experiences` holds: the class's own calls of `learn` and the
buffer's method do (its summary, `analysis.host_helpers`, proves the tuple's tensors host-made).
A method that unpacks the buffer's batch itself (`states, actions, ... = self.buffer.sample(n)`)
holds host-made names from that line.
"""

from __future__ import annotations

from collections.abc import Callable

import libcst as cst

from devfix.analysis.call_sites import argument_for
from devfix.analysis.module_classes import ClassFacts, is_self_attribute
from devfix.analysis.placement import Binding
from devfix.analysis.self_calls import self_calls

TupleSize = Callable[[str, str], int]  # (class, method) → n when the method returns n host-made tensors, else 0
BindingsIn = Callable[[cst.FunctionDef], dict[str, list[Binding]]]  # every binding of each name in a function's own scope


def host_unpacked_names(
    facts: ClassFacts, classes: set[str], tuple_size: TupleSize, line_of: Callable[[cst.CSTNode], int], bindings_in: BindingsIn,
) -> set[tuple[str, int]]:
    """(name, line) of each name a method of the class unpacks from one of its parameters at that
    line, when every call of the method in the class (one at least) passes for that parameter
    what `self.<attr>.<m>()` returns (directly, or through a name the caller binds only to it),
    `self.<attr>` being built once, in `__init__`, from a class of the file (`classes`) whose `m`
    returns a tuple of that many tensors made on the host (`tuple_size`)."""
    attribute_classes = _attribute_classes(facts, classes)
    if not attribute_classes:
        return set()
    found: set[tuple[str, int]] = set()
    for method in facts.methods.values():  # `states, actions, ... = self.buffer.sample(batch_size)` in the method itself
        for assign, value, names in _unpacks(method, cst.Call):
            if _sampled_size({}, line_of(assign), value, attribute_classes, tuple_size) == len(names):
                found |= {(unpacked, line_of(assign)) for unpacked in names}
    for name, sites in self_calls(facts.methods).items():
        method = facts.methods[name]
        positional = [param.name.value for param in [*method.params.posonly_params, *method.params.params][1:]]
        for assign, parameter, names in _unpacks(method, cst.Name):
            if parameter.value not in positional:
                continue
            sizes = {
                _sampled_size(bindings_in(caller), line_of(call), argument_for(call, parameter.value, positional), attribute_classes, tuple_size)
                for caller, call in sites
            }
            if sizes == {len(names)}:
                found |= {(unpacked, line_of(assign)) for unpacked in names}
    return found


def _attribute_classes(facts: ClassFacts, classes: set[str]) -> dict[str, str]:
    """`self.memory = ReplayBuffer(...)`, its only assignment, in `__init__`: memory → ReplayBuffer."""
    found = {}
    for attribute, use in facts.attributes.items():
        if len(use.assignments) != 1 or use.assignments[0][0] != "__init__":
            continue
        value = use.assignments[0][1].value
        if isinstance(value, cst.Call) and isinstance(value.func, cst.Name) and value.func.value in classes:
            found[attribute] = value.func.value
    return found


def _unpacks(method: cst.FunctionDef, kind: type) -> list[tuple[cst.Assign, cst.BaseExpression, list[str]]]:
    """`a, b, c = <value>` statements of the method's own body whose value is of `kind` (a name, a
    call): (statement, value, names)."""
    finder = _Unpacks(kind)
    method.body.visit(finder)
    return finder.found


def _sampled_size(
    bindings: dict[str, list[Binding]], line: int, value: cst.BaseExpression | None, attribute_classes: dict[str, str], tuple_size: TupleSize,
) -> int:
    """The size of the host-made tuple `value` holds at a call on `line`: `self.memory.sample()`,
    or a name the caller binds only once, before the call, to that (`bindings`: the caller's)."""
    if isinstance(value, cst.Name):
        found = bindings.get(value.value, [])
        if len(found) != 1 or found[0].line >= line or found[0].unpacked:
            return 0
        value = found[0].value
    if not (isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) and is_self_attribute(value.func.value)):
        return 0  # (its arguments change nothing: every `return` of the method makes its tuple on the host)
    owner = attribute_classes.get(value.func.value.attr.value)
    return tuple_size(owner, value.func.attr.value) if owner is not None else 0


class _Unpacks(cst.CSTVisitor):
    def __init__(self, kind: type) -> None:
        self.kind = kind
        self.found: list[tuple[cst.Assign, cst.BaseExpression, list[str]]] = []

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        return False

    def visit_Lambda(self, node: cst.Lambda) -> bool:
        return False

    def visit_Assign(self, node: cst.Assign) -> None:
        if len(node.targets) != 1 or not isinstance(node.value, self.kind):
            return
        target = node.targets[0].target
        if isinstance(target, (cst.Tuple, cst.List)) and all(
            isinstance(element, cst.Element) and isinstance(element.value, cst.Name) for element in target.elements
        ):
            self.found.append((node, node.value, [element.value.value for element in target.elements]))
