"""What `analysis.returned_modules` proves of a function: it hands back a Module it built and left
where it was built."""

from __future__ import annotations

import ast
import textwrap

import pytest

from devfix.analysis.imports import ImportTable
from devfix.analysis.returned_modules import returns_built_module

MODULES = {"torch.nn.Linear", "torch.nn.DataParallel", "Net"}  # what the test's `builds_module` counts as Module classes


def _returns_module(source: str) -> bool:
    tree = ast.parse("import torch\nimport torch.nn as nn\n\n\nclass Net(nn.Module):\n    pass\n\n\n" + textwrap.dedent(source))
    imports = ImportTable.of(tree)
    function = next(node for node in tree.body if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)))
    return returns_built_module(function, imports, lambda call: imports.qualify(call.func) in MODULES)


@pytest.mark.parametrize(
    "source",
    [
        "def build():\n    return Net()\n",
        "def build(n):\n    model = Net()\n    model.fc = nn.Linear(8, n)\n    model.eval()\n    return model\n",
        "def build(n, path):\n    model = Net()\n    model.load_state_dict(torch.load(path))\n    return model\n",
        "def build(n):\n    model = Net()\n    n_in = model.fc.in_features\n    return model\n",
        "def build(big):\n    if big:\n        model = Net()\n    else:\n        model = nn.Linear(2, 2)\n    return model\n",
    ],
)
def test_hands_back_a_module_it_built(source: str) -> None:
    assert _returns_module(source)


@pytest.mark.parametrize(
    "source",
    [
        # placed in the function: `analysis.returned_moves` knows where
        "def build(device):\n    model = Net()\n    model.to(device)\n    return model\n",
        "def build(device):\n    model = Net()\n    model.fc = nn.Linear(8, 2, device=device)\n    return model\n",
        "def build():\n    model = Net()\n    model.fc.cuda()\n    return model\n",
        # handed to other code, which may move or wrap it
        "def build():\n    model = Net()\n    place(model)\n    return model\n",
        "def build():\n    model = Net()\n    model = nn.DataParallel(model)\n    return model\n",
        "def build():\n    model = Net()\n    hook = lambda: model\n    return model\n",
        # something else than a construction, or not always
        "def build(model):\n    return model\n",
        "def build():\n    return make()\n",
        "def build(model):\n    model.fc = nn.Linear(8, 2)\n    return model\n",
        "def build(ready):\n    model = Net() if ready else None\n    return model\n",
        "def build(ready):\n    model = Net()\n    if ready:\n        return model\n",
        # a generator; an async function
        "def build():\n    model = Net()\n    yield model\n    return model\n",
        "async def build():\n    return Net()\n",
    ],
)
def test_refuses_what_it_cannot_prove(source: str) -> None:
    assert not _returns_module(source)
