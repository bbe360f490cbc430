"""`analysis.values`: what a Module keeps from its constructor's arguments."""

from __future__ import annotations

import ast

import pytest

from devfix.analysis.imports import ImportTable
from devfix.analysis.kinds import Kind
from devfix.analysis.values import analyse_values

MIXTURE = '''import torch
import torch.nn as nn


class Mixture(nn.Module):
    def __init__(self, dim, num_components{annotation}):
        super().__init__()
        self.num_components = num_components

    def log_weight(self, scores):
        return scores - torch.log(torch.tensor(self.num_components).float())

{construction}
'''


def _scalar_tensor_made(source: str) -> bool:
    tree = ast.parse(source)
    facts = analyse_values(tree, ImportTable.of(tree), {"Mixture": Kind.MODULE}, set())
    call = next(node for node in ast.walk(tree) if isinstance(node, ast.Call) and ast.unparse(node.func) == "torch.tensor")
    return (call.lineno, call.col_offset) in facts.scalar_tensors


@pytest.mark.parametrize(("annotation", "construction", "scalar"), [
    (": int = 50", "prior = Mixture(**config)", True),  # the annotation says a number, no call says otherwise
    (": float", "prior = Mixture(4, 5.0)", True),
    ("", "prior = Mixture(**config)", False),  # nothing says what it is
    (": int", "prior = Mixture(4, torch.ones(3))", False),  # a call gives a tensor: the calls win
    (": 'int'", "prior = Mixture(**config)", False),  # a string annotation is not read
])
def test_a_count_kept_from_an_argument_annotated_as_a_number_makes_a_zero_dim_tensor(annotation, construction, scalar):
    assert _scalar_tensor_made(MIXTURE.format(annotation=annotation, construction=construction)) is scalar


@pytest.mark.parametrize(("comprehension", "kind"), [
    ("[helper(w) for w in W]", Kind.TENSOR),  # an item of a tensor is a tensor
    ("[helper(w) for w in W for w in range(2)]", Kind.UNKNOWN),  # bound again by a later `for`
    ("[(lambda w: helper(w))(1) for w in W]", Kind.UNKNOWN),  # the lambda's own `w`
    ("[(lambda *w: helper(w))(1) for w in W]", Kind.UNKNOWN),
    ("[[helper(w) for w in row] for w in W]", Kind.UNKNOWN),  # a nested comprehension's own `w` (items of an unknown `row`)
    ("[helper(w) for w in names]", Kind.UNKNOWN),  # items of something not proven tensors
])
def test_a_comprehension_variable_over_a_tensor_is_a_tensor_where_the_comprehension_reads_it(comprehension, kind):
    source = f"import torch\n\n\ndef helper(w):\n    return w\n\n\nW = torch.randn(3, 2, 2)\nout = {comprehension}\n"
    tree = ast.parse(source)
    facts = analyse_values(tree, ImportTable.of(tree), {}, set())
    assert [passed.positional[0] for passed in facts.call_sites["helper"]] == [kind]


SCHEDULE = '''import torch


def extract(table, t, x):
    return table[t]


class Diffusion:
    def __init__(self):
        self.table = torch.linspace(0.1, 0.9, 10)

    def q_sample(self, x0, t, noise=None):
        return extract(self.table, t, x0) * x0

    def loss(self, x0, t):
        return self.q_sample({call})


diffusion = Diffusion()
print(diffusion.loss(torch.randn(4, 2), torch.randint(0, 10, (4,))))
'''


@pytest.mark.parametrize(("call", "kind"), [
    ("x0, t", Kind.TENSOR),
    ("x0, t, noise=x0", Kind.TENSOR),  # a keyword for a parameter
    ("x0=x0, t=t", Kind.TENSOR),
    ("x0, t=3", Kind.SCALAR),
    ("x0, **{'t': t}", Kind.UNKNOWN),  # `**`: not understood
    ("x0, t, scale=2", Kind.UNKNOWN),  # no such parameter: not a call of this method
])
def test_a_method_parameter_takes_the_kind_its_calls_give_by_position_or_keyword(call, kind):
    source = SCHEDULE.format(call=call)
    tree = ast.parse(source)
    facts = analyse_values(tree, ImportTable.of(tree), {}, set())
    line = source.splitlines().index("    return table[t]") + 1
    assert facts.reads[(line, 17)] == kind


WINDOWS = '''import numpy as np
import torch
from torch.utils.data import DataLoader, Dataset


class Windows({base}):
    def __init__(self, series):
        self.series = series

    def __len__(self):
        return len(self.series) - 8

    def __getitem__(self, i):
        x = torch.tensor(self.series[i:i + 8], dtype=torch.float32)
{item}


loader = DataLoader(Windows(np.zeros(40)), batch_size=4)
print(loader)
'''


@pytest.mark.parametrize(("base", "item", "kind"), [
    ("Dataset", "        return x.unsqueeze(-1), torch.tensor(self.series[i + 8])", Kind.TENSOR_LOADER),
    ("Dataset", "        if i == 0:\n            return x, x\n        return x, x + 1", Kind.TENSOR_LOADER),
    ("Dataset", "        return x, self.series[i + 8]", Kind.TENSOR_LOADER),  # an array item: a tensor once collated
    ("Dataset", "        return x, int(self.series[i + 8] > 0)", Kind.TENSOR_LOADER),  # a number: the same
    ("Dataset", "        return self.series[i], int(self.series[i + 8] > 0)", Kind.OBJECT),  # no tensor at all: not proven a dataset of ours
    ("Dataset", "        return x, 'label'", Kind.OBJECT),  # a string stays a string
    ("Dataset", "        if i == 0:\n            return x,\n        return x, x", Kind.OBJECT),  # two lengths
    ("Dataset", "        return {'x': x}", Kind.OBJECT),  # a dict batch
    ("object", "        return x, x", Kind.OBJECT),  # no Dataset: nothing says a DataLoader can load it
])
def test_a_loader_over_a_dataset_class_whose_items_are_tensors_gives_tensor_batches(base, item, kind):
    source = WINDOWS.format(base=base, item=item)
    tree = ast.parse(source)
    facts = analyse_values(tree, ImportTable.of(tree), {}, set())
    line = source.splitlines().index("print(loader)") + 1
    assert facts.reads[(line, 6)] == kind


@pytest.mark.parametrize(("argument", "kind"), [
    ("'pred %d' % W[0, 0, 0]", Kind.STR),  # string formatting, whatever it formats
    ("W % 2", Kind.TENSOR),
    ("'%d' % 2", Kind.STR),
])
def test_a_string_formatted_with_a_tensor_is_a_string(argument, kind):
    source = f"import torch\n\n\ndef helper(w):\n    return w\n\n\nW = torch.randn(3, 2, 2)\nhelper({argument})\n"
    tree = ast.parse(source)
    facts = analyse_values(tree, ImportTable.of(tree), {}, set())
    assert [passed.positional[0] for passed in facts.call_sites["helper"]] == [kind]


@pytest.mark.parametrize(("loop", "kind"), [
    ("for i, img in enumerate(W):\n    helper(img)\n", Kind.TENSOR),  # an item of a tensor, counted
    ("for i, img in enumerate(names):\n    helper(img)\n", Kind.UNKNOWN),
    ("for i, img in enumerate(W):\n    helper(i)\n", Kind.SCALAR),  # the count
    ("for ax, img in zip(names, out.view(-1, 2, 2)):\n    helper(img)\n", Kind.TENSOR),  # `view` given sizes: a tensor's
    ("for ax, img in zip(names, out.view(dtype)):\n    helper(img)\n", Kind.UNKNOWN),  # numpy's `view(dtype)` too
    ("for i, (name, img) in enumerate(zip(names, W)):\n    helper(img)\n", Kind.TENSOR),  # counted pairs
    ("for i, (name, img) in enumerate(zip(names, W)):\n    helper(i)\n", Kind.SCALAR),
    ("for i, (name, img) in enumerate(zip(names, W)):\n    helper(name)\n", Kind.UNKNOWN),
    ("for i, (name, img) in enumerate(pairs(W)):\n    helper(img)\n", Kind.UNKNOWN),  # not zip: nothing known
])
def test_loop_variables_over_enumerated_and_viewed_tensors(loop, kind):
    source = f"import torch\n\n\ndef helper(w):\n    return w\n\n\nW = torch.randn(3, 2, 2)\nout = model(W)\n{loop}"
    tree = ast.parse(source)
    facts = analyse_values(tree, ImportTable.of(tree), {}, set())
    assert [passed.positional[0] for passed in facts.call_sites["helper"]] == [kind]


@pytest.mark.parametrize(("lines", "kind"), [
    ("xs = [a, b]\nfor x in xs:\n    helper(x)", Kind.TENSOR),  # a list display of tensors
    ("xs = [a * w for w in range(3)]\nfor x in xs:\n    helper(x)", Kind.TENSOR),  # a comprehension of tensors
    ("xs = [a, b]\nhelper(xs[0])", Kind.TENSOR),
    ("xs = [a, b]\nhelper(xs[1:])", Kind.TENSOR_LIST),
    ("x, y = [a, b]\nhelper(y)", Kind.TENSOR),
    ("helper([a, b])", Kind.TENSOR_LIST),
    ("xs = [a, b]\nxs.append(a)\nfor x in xs:\n    helper(x)", Kind.TENSOR),
    ("xs = [a, b]\nxs.append(None)\nfor x in xs:\n    helper(x)", Kind.UNKNOWN),  # no longer tensors only
    ("xs = [a, b]\nxs.extend([1, 2])\nfor x in xs:\n    helper(x)", Kind.UNKNOWN),
    ("xs = [a, b]\nxs[0] = 3\nfor x in xs:\n    helper(x)", Kind.UNKNOWN),
    ("xs = [a, b]\nxs[0] = b\nfor x in xs:\n    helper(x)", Kind.TENSOR),
    ("xs = [a, 1]\nfor x in xs:\n    helper(x)", Kind.UNKNOWN),  # a number among them
    ("xs = []\nfor x in xs:\n    helper(x)", Kind.UNKNOWN),
    ("xs = [a, b] if a.sum() > 0 else [1]\nhelper(xs)", Kind.LIST),  # a list, of tensors on one path only
    ("if a.sum() > 0:\n    xs = [a]\nelse:\n    xs = [1]\nhelper(xs)", Kind.LIST),
])
def test_a_list_of_tensors_gives_tensors_until_something_else_is_put_in_it(lines, kind):
    source = "import torch\n\n\ndef helper(w):\n    return w\n\n\na = torch.randn(3)\nb = torch.randn(3)\n" + lines + "\n"
    tree = ast.parse(source)
    facts = analyse_values(tree, ImportTable.of(tree), {}, set())
    assert [passed.positional[0] for passed in facts.call_sites["helper"]] == [kind]


def test_a_parameter_every_call_gives_a_list_of_tensors_iterates_tensors():
    source = (
        "import torch\n\n\ndef helper(w):\n    return w\n\n\ndef total(deltas):\n    for delta in deltas:\n        helper(delta)\n"
        "    return [helper(d) for d in deltas]\n\n\ntotal([torch.randn(3), torch.ones(3)])\n"
    )
    tree = ast.parse(source)
    facts = analyse_values(tree, ImportTable.of(tree), {}, set())
    assert [passed.positional[0] for passed in facts.call_sites["helper"]] == [Kind.TENSOR, Kind.TENSOR]


def _kinds_read(source: str, name: str) -> set[Kind]:
    tree = ast.parse(source)
    facts = analyse_values(tree, ImportTable.of(tree), {}, set())
    return {kind for key, kind in facts.reads.items() if facts.read_names[key] == name}


@pytest.mark.parametrize(("calls", "stride"), [
    ("make(3)\nmake(4)", Kind.SCALAR),  # every call leaves it to its default, a number
    ("make(3)\nmake(4, 16)", Kind.SCALAR),  # or gives a number
    ("make(3)\nmake(4, torch.ones(2))", Kind.UNKNOWN),  # one call gives a tensor
    ("make(3)\nmake(4, stride=None)", Kind.UNKNOWN),  # a number or None
])
def test_a_parameter_left_at_its_literal_default_takes_the_defaults_kind(calls, stride):
    source = f"import torch\n\n\ndef make(n, stride=8):\n    return torch.arange(n) * stride\n\n\n{calls}\n"
    assert _kinds_read(source, "stride") == {stride}


@pytest.mark.parametrize(("body", "kind"), [
    ("return torch.ones(c, 1, k, k) / k", Kind.SCALAR),  # one of several sizes of a factory: an integer
    ("return w.expand(c, 1, k, k) * k", Kind.SCALAR),  # ... of a shape method
    ("return torch.ones(k) * k", Kind.UNKNOWN),  # a lone size may be a tuple
    ("k = k * 2\n    return torch.ones(c, k) / k", Kind.UNKNOWN),  # rebound: the size read is not only the parameter
])
def test_a_parameter_given_as_one_of_several_sizes_is_a_number(body, kind):
    source = f"import torch\n\n\ndef window(w, k, c):\n    {body}\n"
    assert kind in _kinds_read(source, "k")
