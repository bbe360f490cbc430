"""`host_sinks.parameters_given_to_host`: which parameters a function of the file hands whole to a
host library, so that a list of device tensors given to it reaches numpy (DF008)."""

from __future__ import annotations

import ast

from devfix.analysis.host_sinks import fed_values, parameters_given_to_host, parameters_only_given_to_host
from devfix.analysis.imports import ImportTable


def host_functions(source: str):
    tree = ast.parse(source)
    return parameters_given_to_host(tree, ImportTable.of(tree))


def test_a_parameter_read_by_numpy_before_it_is_rebound_is_fed():
    found = host_functions(
        "import numpy as np\n\n"
        "def f1(y_true, y_pred, average=None):\n"
        "    y_true = np.asarray(y_true)\n"
        "    return np.mean(y_true == np.array(y_pred))\n"
    )
    assert found["f1"].positional == ["y_true", "y_pred", "average"]
    assert found["f1"].fed == {"y_true", "y_pred"}


def test_a_parameter_brought_to_the_host_first_is_not():
    found = host_functions(
        "import numpy as np\nimport torch\n\n"
        "def accuracy(labels, preds):\n"
        "    labels = torch.cat(labels).cpu()\n"
        "    return np.mean(np.asarray(labels) == np.asarray(preds))\n"
    )
    assert found["accuracy"].fed == {"preds"}


def test_functions_defined_twice_or_rebound_are_not_summarised():
    twice = "import numpy as np\n\ndef f(x):\n    return np.asarray(x)\n\ndef f(x):\n    return x\n"
    rebound = "import numpy as np\n\ndef f(x):\n    return np.asarray(x)\n\nf = None\n"
    assert host_functions(twice) == {} and host_functions(rebound) == {}


def test_arguments_reach_fed_parameters_by_position_and_keyword_but_not_through_unpacking():
    functions = host_functions("import numpy as np\n\ndef f(a, b, c):\n    return np.asarray(b), np.asarray(c)\n")
    call = lambda text: ast.parse(text).body[0].value
    assert [value.id for value in fed_values(call("f(x, y, c=z)"), functions["f"])] == ["y", "z"]
    assert fed_values(call("f(*args)"), functions["f"]) == [] and fed_values(call("f(x, **kw)"), functions["f"]) == []


def only_given(source: str, name: str) -> dict[str, bool]:
    tree = ast.parse(source)
    function = next(node for node in tree.body if isinstance(node, ast.FunctionDef) and node.name == name)
    return parameters_only_given_to_host(function, ImportTable.of(tree))


def test_a_parameter_only_converted_before_it_is_rebound_is_only_given_to_the_host():
    found = only_given(
        "import numpy as np\n\n"
        "def accuracy(preds, labels, report):\n"
        "    preds = np.asarray(preds)\n"
        "    labels = labels.numpy()\n"
        "    report(preds == labels)\n"
        "    return float((preds == labels).mean())\n",
        "accuracy",
    )
    assert found == {"preds": False, "labels": True}  # `labels` only by `.numpy()`; `report` is called


def test_a_parameter_also_used_as_a_tensor_or_rebound_in_a_block_is_not():
    found = only_given(
        "import numpy as np\n\n"
        "def agreement(preds, labels, scale):\n"
        "    matches = (preds == labels).float()\n"
        "    for _ in range(2):\n"
        "        scale = np.asarray(scale)\n"
        "    return np.asarray(preds), np.asarray(labels), np.asarray(matches)\n",
        "agreement",
    )
    assert found == {}
