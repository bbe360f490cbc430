"""What `analysis.returned_moves` proves of a function: it gives back what it moved, and where to."""

from __future__ import annotations

import ast
import textwrap

import pytest

from devfix.analysis.imports import ImportTable
from devfix.analysis.returned_moves import ReturnedMove, returned_listed_moves, returned_move


def _move(source: str) -> ReturnedMove | None:
    tree = ast.parse("import torch\nimport torch.nn as nn\n" + textwrap.dedent(source))
    function = next(node for node in tree.body if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)))
    return returned_move(function, ImportTable.of(tree))


@pytest.mark.parametrize(
    ("source", "parameter", "attribute"),
    [
        ("def build(device):\n    return nn.Linear(2, 2).to(device)\n", "device", None),
        ("def build(n, device):\n    model = nn.Linear(n, 2)\n    model.to(device)\n    model.eval()\n    return model\n", "device", None),
        ("def build(device):\n    model = nn.Linear(2, 2)\n    model = model.to(device).eval()\n    return model\n", "device", None),
        ("def build(args):\n    model = nn.Linear(2, 2)\n    model.to(args.device)\n    return model\n", "args", "device"),
        ("def build():\n    return nn.Linear(2, 2).cuda()\n", None, None),
        ("def build():\n    return nn.Linear(2, 2).to(torch.device('cuda'))\n", None, None),
        ("def to_device(x, device):\n    return x.to(device, non_blocking=True)\n", "device", None),
    ],
)
def test_gives_back_a_move(source: str, parameter: str | None, attribute: str | None) -> None:
    found = _move(source)
    assert found is not None
    assert (found.parameter, found.attribute) == (parameter, attribute)


def test_positional_parameters_locate_the_device_argument() -> None:
    assert _move("def build(n, device, *, depth=2):\n    return nn.Linear(n, n).to(device)\n").positional == ("n", "device")


@pytest.mark.parametrize(
    "source",
    [
        # moved, then rebound to something else before it is given back
        "def build(device):\n    model = nn.Linear(2, 2)\n    model.to(device)\n    model = nn.DataParallel(model)\n    return model\n",
        # moved only under a branch
        "def build(device, gpu):\n    model = nn.Linear(2, 2)\n    if gpu:\n        model.to(device)\n    return model\n",
        # one return moves, the other does not
        "def build(device, gpu):\n    model = nn.Linear(2, 2)\n    if gpu:\n        return model.to(device)\n    return model\n",
        # moved back to the host
        "def build(device):\n    model = nn.Linear(2, 2).to(device)\n    model.cpu()\n    return model\n",
        "def build():\n    return nn.Linear(2, 2).to('cpu')\n",
        # a cast, not a move
        "def cast(x, ref):\n    return x.to(ref.dtype)\n",
        "def cast(x):\n    return x.to(torch.float16)\n",
        # the device is no parameter, or the function rebinds it
        "def build():\n    return nn.Linear(2, 2).to(DEVICE)\n",
        "def build(device):\n    device = pick(device)\n    return nn.Linear(2, 2).to(device)\n",
        # two returns to two devices; a generator; a bare return
        "def build(a, b, first):\n    if first:\n        return nn.Linear(2, 2).to(a)\n    return nn.Linear(2, 2).to(b)\n",
        "def batches(xs, device):\n    for x in xs:\n        yield x.to(device)\n    return xs.to(device)\n",
        "def build(device):\n    nn.Linear(2, 2).to(device)\n    return\n",
        "def build():\n    return nn.Linear(2, 2).cuda(1)\n",
    ],
)
def test_refuses_what_it_cannot_prove(source: str) -> None:
    assert _move(source) is None


def test_a_device_the_file_binds_once_at_its_top_level_is_named_by_the_global() -> None:
    tree = ast.parse("import torch\nimport torch.nn as nn\nDEVICE = torch.device('cuda')\n\n"
                     "def build():\n    model = nn.Linear(2, 2)\n    model.to(DEVICE)\n    return model\n")
    function = tree.body[-1]
    found = returned_move(function, ImportTable.of(tree), frozenset({"DEVICE"}))
    assert (found.parameter, found.attribute, found.global_name) == (None, None, "DEVICE")
    assert returned_move(function, ImportTable.of(tree)) is None  # a name bound more than once, or in another file: unknown


TRAIN = """def train(model, data):
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model = model.to(device)
    {optimizer}
    return model
"""


@pytest.mark.parametrize(("optimizer", "own"), [
    ("opt = torch.optim.SGD(model.parameters(), lr=0.1)", True),
    ("model.eval()", False),  # a Module without parameters would have no `next(model.parameters())`
])
def test_a_model_moved_to_a_device_of_the_functions_own_is_named_by_its_parameters(optimizer, own) -> None:
    found = _move(TRAIN.format(optimizer=optimizer))
    assert (found is not None and found.own_device) is own


def test_a_model_moved_to_a_cpu_string_is_no_move_of_the_functions_own() -> None:
    source = TRAIN.format(optimizer="opt = torch.optim.SGD(model.parameters(), lr=0.1)")
    assert _move(source.replace('torch.device("cuda" if torch.cuda.is_available() else "cpu")', '"cpu"')) is None


@pytest.mark.parametrize(("source", "parameter"), [
    ("def build(n, device):\n    return [nn.Linear(2, 2).to(device) for _ in range(n)]\n", "device"),
    ("def build(device):\n    return [nn.Linear(2, 2).to(device), nn.Linear(2, 1).to(device)]\n", "device"),
    ("def build(n, device):\n    members = []\n    for _ in range(n):\n        members.append(nn.Linear(2, 2).to(device))\n"
     "    return members\n", "device"),
    ("def build(n):\n    return [nn.Linear(2, 2).cuda() for _ in range(n)]\n", None),
])
def test_a_builder_gives_back_a_list_of_moves(source: str, parameter: str | None) -> None:
    tree = ast.parse("import torch\nimport torch.nn as nn\n" + source)
    found = returned_listed_moves(tree.body[2], ImportTable.of(tree))
    assert found is not None and found.parameter == parameter


@pytest.mark.parametrize("source", [
    "def build(device):\n    return [nn.Linear(2, 2).to(device), nn.Linear(2, 2)]\n",  # one member stays on the host
    "def build(a, b):\n    return [nn.Linear(2, 2).to(a), nn.Linear(2, 2).to(b)]\n",  # two devices
    "def build(n, device):\n    members = []\n    members.append(nn.Linear(2, 2).to(device))\n    members.insert(0, nn.Linear(2, 2))\n"
    "    return members\n",  # changed otherwise
    "def build(n, device):\n    members = []\n    members.append(nn.Linear(2, 2).to(device))\n    log(members)\n    return members\n",
    "def build(device):\n    return nn.Linear(2, 2).to(device)\n",  # one model, no list
])
def test_a_list_that_may_hold_anything_else_is_no_list_of_moves(source: str) -> None:
    tree = ast.parse("import torch\nimport torch.nn as nn\n" + source)
    assert returned_listed_moves(tree.body[2], ImportTable.of(tree)) is None


def test_a_comprehension_variable_naming_the_device_is_not_the_files_device() -> None:
    """`[Net().to(device) for device in devices]` in a file that also binds a top-level `device`:
    each member goes to its own device, not to the global one."""
    tree = ast.parse("import torch\nimport torch.nn as nn\n"
                     "def build(devices):\n    return [nn.Linear(2, 2).to(device) for device in devices]\n")
    assert returned_listed_moves(tree.body[2], ImportTable.of(tree), frozenset({"device"})) is None
