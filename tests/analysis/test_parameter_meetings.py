"""`parameters_meet`: does a helper combine two of its parameters in one tensor operation?"""

from __future__ import annotations

import libcst as cst
import pytest

from devfix.analysis.call_sites import file_functions
from devfix.analysis.method_inputs import parameters_given_with_models
from devfix.analysis.parameter_meetings import meeting_pairs, meetings_in_text, parameters_meet


def torch_names(node: cst.CSTNode) -> set[str]:
    """A stand-in for qualified names: `torch.x` and `F.x` are torch functions."""
    code = cst.Module([]).code_for_node(node)
    return {code.replace("F.", "torch.nn.functional.", 1)} if code.startswith(("torch.", "F.")) else set()


def meet(source: str, first: str = "output", second: str = "target") -> bool:
    function = file_functions(cst.parse_module(source))["helper"]
    return parameters_meet(function, first, second, torch_names)


@pytest.mark.parametrize("body", [
    "    return (output.argmax(dim=1) == target).float().mean()\n",
    "    pred = output.argmax(dim=1)\n    return (pred == target).sum().item()\n",
    "    pred = output.argmax(1)\n    correct = pred.eq(target.view_as(pred))\n    return correct.sum()\n",
    "    return F.cross_entropy(output, target)\n",
    "    diff = output - target\n    return diff.abs().mean()\n",
    "    total = 0\n    for k in range(3):\n        total += (output[:, k] * target[:, k]).sum()\n    return total\n",
    "    joined = torch.cat((output, target), dim=1)\n    return joined.sum()\n",  # the tuple's tensors meet
])
def test_operations_that_combine_the_two_parameters(body):
    assert meet(f"def helper(output, target):\n{body}")


@pytest.mark.parametrize("body", [
    "    return (output.argmax(1).cpu() == target).float().mean()\n",  # brought to the host first
    "    target = target.to(output.device)\n    return (output == target).sum()\n",  # the helper places it
    "    return len(output) == len(target)\n",  # unknown calls end the chain
    "    return output.shape[0] == target.shape[0]\n",  # metadata
    "    return output[target]\n",  # CPU indices may index a device tensor
    "    packed = torch.nn.utils.rnn.pack_padded_sequence(output, target)\n    return packed\n",  # CPU lengths, as asked
    "    return output.sum(), target.sum()\n",  # never in one operation
    "    def inner():\n        return output == target\n    return inner\n",  # called who knows when
])
def test_uses_that_do_not_combine_them(body):
    assert not meet(f"def helper(output, target):\n{body}")


def test_a_name_defined_twice_is_not_summarised():
    module = cst.parse_module("def helper(a, b):\n    return a + b\n\n\ndef helper(a, b):\n    return a\n")
    assert "helper" not in file_functions(module)


@pytest.mark.parametrize(("body", "expected"), [
    # handed to the model, and compared with its output
    ("    preds = model(xs).argmax(1)\n    return (preds == ys).float().mean()\n", {"xs": {"model"}, "ys": {"model"}}),
    # the labels meet nothing of the model's
    ("    preds = model(xs).argmax(1)\n    return preds, ys.sum()\n", {"xs": {"model"}}),
    # placed by the function itself: nothing to ask of the callers
    ("    xs = xs.to(next(model.parameters()).device)\n    return model(xs)\n", {}),
    # a model the function never calls
    ("    return (xs == ys).sum()\n", {}),
    # lists of tensors, their elements fed and met one pair at a time
    ("    for x, y in zip(xs, ys):\n        loss = F.mse_loss(model(x), y)\n    return loss\n", {"xs": {"model"}, "ys": {"model"}}),
    ("    for i, x in enumerate(xs):\n        out = model(x)\n    return out, ys\n", {"xs": {"model"}}),
])
def test_parameters_given_with_a_model_parameter(body, expected):
    function = file_functions(cst.parse_module("def helper(model, xs, ys):\n" + body))["helper"]
    assert parameters_given_with_models(function, torch_names) == expected


def test_all_pairs_read_at_once_are_the_pairs_that_meet_one_by_one():
    """`meeting_pairs` reads the function once for every pair: the same answers as asking each."""
    source = (
        "def helper(a, b, c, d, e):\n"
        "    h = a.relu()\n"
        "    s = (h == b).float()\n"
        "    t = torch.cat((c, d), dim=1)\n"
        "    u = e.cpu()\n"
        "    return s, t, u + a\n"
    )
    function = file_functions(cst.parse_module(source))["helper"]
    names = ["a", "b", "c", "d", "e"]
    one_by_one = [(x, y) for i, x in enumerate(names) for y in names[i + 1:] if parameters_meet(function, x, y, torch_names)]
    assert meeting_pairs(function, names, torch_names) == one_by_one == [("a", "b"), ("c", "d")]


def test_another_file_is_read_for_the_function_alone():
    """Only the asked function and the imports are parsed: a part of the file the parser rejects
    elsewhere (a newer syntax, a template) does not hide what the function does."""
    text = (
        "import torch\n\n\n"
        "def accuracy(output, target):\n"
        "    return (output.argmax(1) == target).float().mean()\n\n\n"
        "def broken(:\n    pass\n"
    )
    found = meetings_in_text(text, "accuracy")
    assert found is not None and found.parameters == ["output", "target"] and found.pairs == [("output", "target")]
    assert meetings_in_text(text, "missing") is None
