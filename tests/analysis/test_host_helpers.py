"""What `analysis.host_helpers` proves of a function of another file: every return made on the host."""

from __future__ import annotations

import ast

import pytest

from devfix.analysis.host_helpers import host_copy_methods, module_scope, summarise, summarise_in_text
from devfix.analysis.imports import ImportTable

MODULE = '''"""Helpers."""
from typing import (
    Optional,
)

import numpy as np
import torch as T


def causal_mask(n):
    return T.triu(T.ones(n, n), diagonal=1).bool()


def table(n, d):
    pe = T.zeros(n, d)
    pe[:, 0::2] = T.sin(T.arange(n).unsqueeze(1) * 0.1)
    return pe


def from_array(rows):
    return T.from_numpy(np.asarray(rows, dtype=np.float32))


def placed(n, device):
    return T.ones(n, device=device)


def passthrough(x):
    return x * 2


def moved(n):
    return T.ones(n).cuda()


def count(x):
    return T.tensor(3.0)

class Later:
    pass
'''


@pytest.mark.parametrize("function, host", [
    ("causal_mask", True),
    ("table", True),  # a local built by a factory, filled in place
    ("from_array", True),
    ("placed", False),  # `device=`: where the caller says
    ("passthrough", False),  # a parameter: not proven
    ("moved", False),
])
def test_returns_host_tensors(function, host):
    summary = summarise_in_text(MODULE, function)
    assert summary is not None and summary.returns_host_tensors is host


def test_a_zero_dim_result_is_said_so():
    assert summarise_in_text(MODULE, "count").may_return_a_scalar
    assert not summarise_in_text(MODULE, "causal_mask").may_return_a_scalar


def test_no_such_function_or_one_defined_twice_is_unknown():
    assert summarise_in_text(MODULE, "missing") is None
    assert summarise_in_text(MODULE + "\n\ndef table(n, d):\n    return None\n", "table") is None


def test_a_numpy_result_is_no_tensor():
    module = "import numpy as np\nimport torch\n\n\ndef grid(n):\n    return np.linspace(0, 1, n)\n\n\ndef listed(n):\n    return torch.arange(n).tolist()\n"
    assert not summarise_in_text(module, "grid").returns_host_tensors
    assert not summarise_in_text(module, "listed").returns_host_tensors


SAMPLER_MODULE = '''import torch

codes = torch.tensor([1, 2, 3, 4, 5, 6, 7, 8], dtype=torch.long)
moved_codes = torch.tensor([1, 2, 3, 4]).cuda()
rebound = torch.arange(8)
rebound = rebound.cuda()


def windows():
    starts = torch.randint(4, (2,))
    x = torch.stack([codes[s:s + 3] for s in starts])
    y = torch.stack([codes[s + 1:s + 4] for s in starts])
    return x, y


def moved_windows():
    return torch.stack([moved_codes[s:s + 2] for s in range(2)]), codes


def rebound_windows():
    return rebound[:2], codes[:2]


def window_and_count():
    return codes[:3], 3


def shadowed(codes):
    return codes[:2], codes[2:]
'''


@pytest.mark.parametrize(("function", "size"), [
    ("windows", 2),  # slices of a module-level CPU tensor, stacked
    ("moved_windows", 0),  # one item comes from a tensor the module moved
    ("rebound_windows", 0),  # a module-level name bound twice is not followed
    ("window_and_count", 0),  # a number is no tensor
    ("shadowed", 0),  # the parameter, not the module's `codes`
])
def test_a_tuple_of_host_tensors_is_proven_item_by_item(function: str, size: int) -> None:
    tree = ast.parse(SAMPLER_MODULE)
    definition = next(node for node in tree.body if isinstance(node, ast.FunctionDef) and node.name == function)
    summary = summarise(definition, ImportTable.of(tree), module_scope(tree, set()))
    assert summary.host_tuple_size == size


@pytest.mark.parametrize(("function", "given"), [
    ("shadowed", (2, ((0, "codes"),))),  # host tensors when given one for `codes`
    ("windows", (0, ())),  # proven without the callers: no condition to ask of them
    ("window_and_count", (0, ())),  # a number is no tensor, whatever the callers give
])
def test_a_tuple_of_host_tensors_given_host_tensors_names_what_it_needs(function: str, given) -> None:
    """`def get_batch(data)` returning slices of `data`: made on the host where a call gives host tensors."""
    tree = ast.parse(SAMPLER_MODULE)
    definition = next(node for node in tree.body if isinstance(node, ast.FunctionDef) and node.name == function)
    assert summarise(definition, ImportTable.of(tree), module_scope(tree, set())).given_host_tuple == given


COLLATE_MODULE = '''import torch


def collate(batch):
    labels, texts = [], []
    for label, tokens in batch:
        labels.append(label)
        texts.append(torch.tensor(tokens))
    return torch.tensor(labels), torch.cat(texts)


def collate_moved(batch):
    texts = []
    for tokens in batch:
        texts.append(torch.tensor(tokens).cuda())
    return torch.cat(texts), torch.zeros(1)


def collate_extended(batch, extra):
    texts = []
    for tokens in batch:
        texts.append(torch.tensor(tokens))
    texts.extend(extra)
    return torch.cat(texts), torch.zeros(1)
'''


@pytest.mark.parametrize(("function", "size"), [
    ("collate", 2),  # a list filled only with CPU tensors
    ("collate_moved", 0),  # filled with moved tensors
    ("collate_extended", 0),  # also filled with what the caller gives
])
def test_a_list_filled_by_append_is_judged_item_by_item(function: str, size: int) -> None:
    tree = ast.parse(COLLATE_MODULE)
    definition = next(node for node in tree.body if isinstance(node, ast.FunctionDef) and node.name == function)
    assert summarise(definition, ImportTable.of(tree), module_scope(tree, set())).host_tuple_size == size


FIELDS_MODULE = '''import torch


def encode(rows):
    ids = torch.zeros(len(rows), 4, dtype=torch.long)
    for i, row in enumerate(rows):
        ids[i, : len(row)] = torch.tensor(row)
    return {"input_ids": ids, "attention_mask": (ids != 0).long()}


def encode_with_lengths(rows):
    return {"input_ids": torch.tensor(rows), "lengths": [len(row) for row in rows]}


def encode_placed(rows, device):
    return {"input_ids": torch.tensor(rows, device=device)}


def encode_merged(rows, extra):
    return {"input_ids": torch.tensor(rows), **extra}


def encode_given(ids):
    return {"input_ids": ids}


def encode_empty(rows):
    return {}
'''


@pytest.mark.parametrize(("function", "proven"), [
    ("encode", True),  # every field a tensor made on the host
    ("encode_with_lengths", False),  # a list field has no `.to()`
    ("encode_placed", False),  # made on the caller's device
    ("encode_merged", False),  # `**extra`: fields the caller gives
    ("encode_given", False),  # a parameter, maybe on a device
    ("encode_empty", False),  # nothing to move
])
def test_a_dict_of_host_tensors_is_proven_field_by_field(function: str, proven: bool) -> None:
    tree = ast.parse(FIELDS_MODULE)
    definition = next(node for node in tree.body if isinstance(node, ast.FunctionDef) and node.name == function)
    summary = summarise(definition, ImportTable.of(tree), module_scope(tree, set()))
    assert summary.returns_host_dicts is proven
    assert summary.host_tuple_size == 0 and not summary.returns_host_tensors


def test_methods_returning_host_copies():
    source = (
        "class A:\n"
        "    def predict(self, x):\n        if x is None:\n            return x.cpu()\n        return self(x).numpy(), x.tolist()\n"
        "    def scores(self, x):\n        return self(x).to('cpu')\n"
        "    def encode(self, x):\n        return self(x)\n"
        "    def both(self, x):\n        return x.cpu()\n"
        "class B:\n"
        "    def both(self, x):\n        return x\n"  # another class's `both` returns what it is given
    )
    assert host_copy_methods(ast.parse(source)) == {"predict", "scores"}


def test_a_function_that_returns_a_torch_device_returns_no_tensor():
    source = (
        "import torch\n\n\ndef try_gpu():\n    if torch.cuda.is_available():\n        device = torch.device('cuda:0')\n"
        "    else:\n        device = torch.device('cpu')\n    return device\n"
    )
    tree = ast.parse(source)
    summary = summarise(tree.body[1], ImportTable.of(tree))
    assert not summary.returns_tensors and not summary.returns_host_tensors


def _summary_of(source: str, name: str):
    tree = ast.parse(source)
    functions = {node.name: node for node in tree.body if isinstance(node, ast.FunctionDef)}
    imports = ImportTable.of(tree)

    def helpers(called):
        return summarise(functions[called], imports) if called in functions else None

    return summarise(functions[name], imports, helpers=helpers)


@pytest.mark.parametrize(("body", "host"), [
    ("return torch.ones(c, 1, k, k) / k ** 2", True),  # `k` is one of several sizes: an integer
    ("return torch.ones(shape) / shape", False),  # a lone size may be a tuple, and so may be anything
    ("k = scale(k)\n    return torch.ones(c, 1, k, k) / k", False),  # rebound: the size read is not the parameter
    ("return base(c).expand(c, 1, k, k) * k", True),  # sizes of a shape method; what a helper of the file returns
    ("return base(c).to(k.device) * 2", False),  # placed where a parameter is
])
def test_a_parameter_used_as_a_size_is_a_host_number_and_helpers_of_the_file_are_read(body, host):
    source = (
        "import torch\n\n\ndef scale(k):\n    return k * 2\n\n\n"
        "def base(c):\n    return torch.ones(c, 1, 1, 1)\n\n\n"
        f"def window(k, c, shape=None):\n    {body}\n"
    )
    assert _summary_of(source, "window").returns_host_tensors is host
