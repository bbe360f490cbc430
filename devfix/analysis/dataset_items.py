"""Which positions of a DataLoader's batches hold no tensor, from the Dataset class of the file it loads.

`default_collate` stacks tensors, numbers and numpy arrays into tensors, but gives strings back as
a tuple of strings (a caption, a file name, a label name) and a list item as a list (of collated
items: `[x1, y1, x2, y2]` becomes a list of four tensors). A rule that moves a loop's batch
variables (DF002, DF010, DF020) must not write `.to(device)` on those (`for images, texts in loader:`
with `__getitem__` returning `self.images[i], self.texts[i]`: AttributeError on a tuple). A position
holds no tensor when every `return` of `__getitem__` is a tuple display of one length whose item
there is proven a string or a list: a string literal or f-string, a `str(...)`/`.format(...)`/
`.join(...)` call, a list display or comprehension, a name of `__getitem__` bound once to such a
value, or an item of a `self.<attr>` that `__init__` binds once to a list display or comprehension
of such values (and nothing else in the class stores). The same holds for a dataset that is a list
of rows (`list(zip(texts, labels))`, a list display of tuples) and for what a `collate_fn` of the
file returns. Only a proof counts: anything else may be a tensor. `non_tensor_names` finds the loop
variables (or the names a loop body takes the batch apart into) that hold such positions.
"""

from __future__ import annotations

import ast
from collections.abc import Callable

import libcst as cst

from devfix.analysis.cst_bindings import bound_names, return_values

STRING_METHODS = frozenset({"format", "join", "strip", "lower", "upper", "replace", "lstrip", "rstrip"})


def non_tensor_positions_of_rows(dataset: cst.BaseExpression | None, bound: Callable[[cst.Name], cst.BaseExpression | None]) -> frozenset[int]:
    """For a dataset that is a list of rows: `list(zip(texts, labels))` (positions of the lists
    zipped), or a list display of tuple displays (`[("good movie", 1), ...]`), the positions that
    collate into no tensor. `bound` gives the value a name of the scope is bound to once (or None)."""
    judge = _NonTensors(None, None, None)
    resolve = lambda value: bound(value) if isinstance(value, cst.Name) else value  # noqa: E731
    if isinstance(dataset, cst.Call) and isinstance(dataset.func, cst.Name) and dataset.func.value == "list" and len(dataset.args) == 1:
        dataset = dataset.args[0].value
    if isinstance(dataset, cst.Call) and isinstance(dataset.func, cst.Name) and dataset.func.value == "zip" \
            and all(arg.keyword is None and not arg.star for arg in dataset.args):
        return frozenset(
            position for position, arg in enumerate(dataset.args)
            if (items := _displayed_items(resolve(arg.value))) and all(judge.collates_to_no_tensor(item) for item in items)
        )
    rows = _displayed_items(resolve(dataset))
    if not rows or not all(isinstance(row, cst.Tuple) for row in rows) or len({len(row.elements) for row in rows}) != 1:
        return frozenset()
    return frozenset(
        position for position in range(len(rows[0].elements))
        if all(judge.collates_to_no_tensor(row.elements[position].value) for row in rows)
    )


def non_tensor_positions(dataset_class: cst.ClassDef | None) -> frozenset[int | str]:
    """The positions of the items of `dataset_class` (a Dataset class of the file) that collate into
    no tensor (module docstring); empty when unknown."""
    if dataset_class is None:
        return frozenset()
    methods = {item.name.value: item for item in dataset_class.body.body if isinstance(item, cst.FunctionDef)}
    getitem = methods.get("__getitem__")
    if getitem is None:
        return frozenset()
    return _positions_returned(getitem, _NonTensors(dataset_class, methods.get("__init__"), getitem))


def non_tensor_positions_of_collate(collate: cst.FunctionDef | None) -> frozenset[int | str]:
    """For a `collate_fn` of the file, the positions of the batches it builds that hold no tensor
    (`return [torch.tensor(t) for t, _ in batch], torch.tensor(labels)`: a list of tensors first)."""
    return _positions_returned(collate, _NonTensors(None, None, collate)) if collate is not None else frozenset()


def _positions_returned(function: cst.FunctionDef, judge: _NonTensors) -> frozenset[int | str]:
    """The positions where every `return` of `function`, a tuple display of one length, gives no
    tensor; or the keys, where every `return` is a dict display of string keys (`{"text": ...}`)."""
    returned = return_values(function)
    if returned and all(isinstance(value, cst.Dict) for value in returned):
        return _keys_returned(returned, judge)
    if not returned or not all(isinstance(value, cst.Tuple) for value in returned):
        return frozenset()
    sizes = {len(value.elements) for value in returned}
    if len(sizes) != 1:
        return frozenset()
    return frozenset(
        position for position in range(sizes.pop())
        if all(judge.collates_to_no_tensor(value.elements[position].value) for value in returned)
    )


def _keys_returned(returned: list[cst.Dict], judge: _NonTensors) -> frozenset[int | str]:
    """The string keys that every dict display in `returned` has, each with a value that collates
    into no tensor; none when a display unpacks another mapping (`**extra`: which keys?)."""
    items_of = []
    for value in returned:
        items = {}
        for element in value.elements:
            if not (isinstance(element, cst.DictElement) and isinstance(element.key, cst.SimpleString)):
                return frozenset()
            items[element.key.evaluated_value] = element.value
        items_of.append(items)
    keys = set.intersection(*(set(items) for items in items_of))
    return frozenset(key for key in keys if all(judge.collates_to_no_tensor(items[key]) for items in items_of))


def index_of(subscript: cst.Subscript) -> int | None:
    """`batch[1]` → 1 (any integer literal: `0x1`, `00`, `1_0`)."""
    index = subscript.slice[0].slice if len(subscript.slice) == 1 else None
    return ast.literal_eval(index.value.value) if isinstance(index, cst.Index) and isinstance(index.value, cst.Integer) else None


def item_taken(value: cst.BaseExpression, batch: str) -> int | str | None:
    """What `value` takes out of the batch named `batch`: `batch[1]` → 1, `batch["labels"]` and
    `batch.pop("labels")` → "labels"; None for anything else."""
    if isinstance(value, cst.Subscript) and isinstance(value.value, cst.Name) and value.value.value == batch and len(value.slice) == 1:
        index = value.slice[0].slice
        if isinstance(index, cst.Index) and isinstance(index.value, cst.SimpleString):
            return index.value.evaluated_value
        return index_of(value)
    if isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) and value.func.attr.value == "pop" \
            and isinstance(value.func.value, cst.Name) and value.func.value.value == batch \
            and len(value.args) == 1 and not value.args[0].keyword and not value.args[0].star \
            and isinstance(value.args[0].value, cst.SimpleString):
        return value.args[0].value.evaluated_value
    return None


def non_tensor_names(loop: cst.For, target: cst.BaseExpression, positions: frozenset[int | str]) -> set[str]:
    """The loop's batch names that hold a position (or key) the dataset collates into no tensor: of the
    loop's own target (`for images, captions in loader`), or of the body's first statements taking the
    batch apart (`images, captions = batch`, `captions = batch[1]`, `texts = batch["text"]`)."""
    if not positions:
        return set()
    if isinstance(target, cst.Tuple):
        return {name for position, name in enumerate(_flat_names(target)) if position in positions}
    if not isinstance(target, cst.Name) or not isinstance(loop.body, cst.IndentedBlock):
        return set()
    found: set[str] = set()
    for statement in loop.body.body[:4]:
        assign = statement.body[0] if isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1 else None
        if not (isinstance(assign, cst.Assign) and len(assign.targets) == 1):
            continue
        names = _flat_names(assign.targets[0].target)
        if isinstance(assign.value, cst.Name) and assign.value.value == target.value and len(names) > 1:
            found |= {name for position, name in enumerate(names) if position in positions}
        values = [element.value for element in assign.value.elements] if isinstance(assign.value, cst.Tuple) else [assign.value]
        for name, value in zip(names, values) if len(names) == len(values) else ():
            if item_taken(value, target.value) in positions:
                found.add(name)
    return found


class _NonTensors:
    def __init__(self, dataset_class: cst.ClassDef | None, init: cst.FunctionDef | None, getitem: cst.FunctionDef | None) -> None:
        # `self.texts` → the value `__init__` binds it to; the names `__getitem__` binds once
        self.attributes = _stored_once(dataset_class, init) if dataset_class is not None else {}
        self.locals = _bound_once(getitem) if getitem is not None else {}

    def collates_to_no_tensor(self, value: cst.BaseExpression, depth: int = 0) -> bool:
        """A string, or a list (of anything): `default_collate` gives back strings and lists."""
        if isinstance(value, (cst.List, cst.ListComp)):
            return True
        if isinstance(value, cst.Name):
            bound = self.locals.get(value.value)
            if bound is not None and isinstance(bound, (cst.List, cst.ListComp)):
                return True
        if isinstance(value, cst.Subscript) and _is_self_attribute(value.value):
            items = _displayed_items(self.attributes.get(value.value.attr.value))
            if items and all(isinstance(item, (cst.List, cst.ListComp)) for item in items):
                return True  # `self.boxes[i]` of a list of lists
        return self.is_string(value, depth)

    def is_string(self, value: cst.BaseExpression, depth: int = 0) -> bool:
        if depth > 4:
            return False
        if isinstance(value, (cst.SimpleString, cst.FormattedString, cst.ConcatenatedString)):
            return True
        if isinstance(value, cst.Name):
            bound = self.locals.get(value.value)
            return bound is not None and self.is_string(bound, depth + 1)
        if isinstance(value, cst.Call):
            if isinstance(value.func, cst.Name):
                return value.func.value == "str"
            # `"{}".format(i)`, `" ".join(words)`, `name.strip()` of a string
            return isinstance(value.func, cst.Attribute) and value.func.attr.value in STRING_METHODS \
                and self.is_string(value.func.value, depth + 1)
        if isinstance(value, cst.Subscript) and _is_self_attribute(value.value):
            container = self.attributes.get(value.value.attr.value)
            items = _displayed_items(container)
            return bool(items) and all(self.is_string(item, depth + 1) for item in items)
        return False


def _displayed_items(value: cst.BaseExpression | None) -> list[cst.BaseExpression]:
    if isinstance(value, cst.List):
        return [element.value for element in value.elements if isinstance(element, cst.Element)]
    if isinstance(value, cst.ListComp):
        return [value.elt]
    return []


def _is_self_attribute(node: cst.BaseExpression) -> bool:
    return isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name) and node.value.value == "self"


def _stored_once(dataset_class: cst.ClassDef, init: cst.FunctionDef | None) -> dict[str, cst.BaseExpression]:
    """`self.<attr>` bound exactly once in the class, in `__init__`, and never changed in place."""
    finder = _SelfStores()
    dataset_class.visit(finder)
    in_init = _SelfStores()
    if init is not None:
        init.visit(in_init)
    return {
        name: values[0] for name, values in in_init.values.items()
        if len(values) == 1 and len(finder.values.get(name, ())) == 1 and name not in finder.changed
    }


class _SelfStores(cst.CSTVisitor):
    def __init__(self) -> None:
        self.values: dict[str, list[cst.BaseExpression]] = {}
        self.changed: set[str] = set()  # `self.texts.append(...)`, `self.texts[i] = ...`, `self.texts += ...`

    def visit_Assign(self, node: cst.Assign) -> None:
        for target in node.targets:
            if _is_self_attribute(target.target):
                self.values.setdefault(target.target.attr.value, []).append(node.value)
            elif isinstance(target.target, cst.Subscript) and _is_self_attribute(target.target.value):
                self.changed.add(target.target.value.attr.value)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        if _is_self_attribute(node.target):
            self.changed.add(node.target.attr.value)

    def visit_Call(self, node: cst.Call) -> None:
        if isinstance(node.func, cst.Attribute) and _is_self_attribute(node.func.value):
            self.changed.add(node.func.value.attr.value)  # a method of the container: it may change it


def _bound_once(function: cst.FunctionDef) -> dict[str, cst.BaseExpression]:
    """Local names `function` binds exactly once, by a plain assignment."""
    counts: dict[str, int] = {}
    values: dict[str, cst.BaseExpression] = {}

    class Finder(cst.CSTVisitor):
        def visit_Assign(self, node: cst.Assign) -> None:
            for target in node.targets:
                if isinstance(target.target, cst.Name):
                    counts[target.target.value] = counts.get(target.target.value, 0) + 1
                    values[target.target.value] = node.value
                else:
                    for name in bound_names(target.target):
                        counts[name] = counts.get(name, 0) + 2  # unpacked: not followed

        def visit_For(self, node: cst.For) -> None:
            for name in bound_names(node.target):
                counts[name] = counts.get(name, 0) + 2

    function.body.visit(Finder())
    return {name: value for name, value in values.items() if counts.get(name) == 1}


def _flat_names(target: cst.BaseExpression) -> list[str]:
    """`x, y` → ["x", "y"], by position; a nested or starred target → [] (positions unknown)."""
    if isinstance(target, cst.Name):
        return [target.value]
    if isinstance(target, (cst.Tuple, cst.List)) and all(isinstance(element, cst.Element) and isinstance(element.value, cst.Name)
                                                          for element in target.elements):
        return [element.value.value for element in target.elements]
    return []

