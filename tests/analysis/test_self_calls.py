"""`analysis.self_calls`: what a class's methods are given by, and where their results go in,
the other methods of the class."""

from __future__ import annotations

import libcst as cst

from devfix.analysis.self_calls import parameters_given_tensors, results_fed_to_submodules

LOSS = '''\
class GANLoss(nn.Module):
    def __init__(self):
        super().__init__()
        self.loss = nn.MSELoss()

    def target(self, prediction, real):
        return torch.ones(prediction.shape) * real

    def shifted(self, prediction, offset):
        return torch.zeros(prediction.shape) + offset

    def logged(self, prediction):
        return torch.zeros(3)

    def forward(self, prediction, real):
        goal = self.target(prediction, real)
        counts = self.logged(prediction)
        print(counts.sum())
        return self.loss(prediction, goal) + self.loss(prediction, self.shifted(prediction, 0.5))

    def twice(self, prediction):
        return self.target(prediction.detach(), True)
'''


def methods_of(source: str) -> dict[str, cst.FunctionDef]:
    class_def = cst.parse_module(source).body[0]
    return {item.name.value: item for item in class_def.body.body if isinstance(item, cst.FunctionDef)}


def fed_names(method: cst.FunctionDef) -> set[str]:
    """A stand-in for the rule's tensors: the names `forward` hands to `self.loss`."""
    return {"prediction"} if method.name.value == "forward" else set()


def test_a_parameter_counts_as_a_tensor_only_when_every_call_gives_one():
    given = parameters_given_tensors(methods_of(LOSS), fed_names)
    assert given.get("shifted") == {"prediction"}  # `offset` is given 0.5
    assert given.get("logged") == {"prediction"}
    assert "target" not in given  # `twice` passes `prediction.detach()`, not a name known to hold a tensor


def test_a_static_methods_parameters_are_matched_from_the_first():
    source = LOSS.replace("    def shifted(self, prediction, offset):", "    @staticmethod\n    def shifted(prediction, offset):")
    assert parameters_given_tensors(methods_of(source), fed_names).get("shifted") == {"prediction"}  # not `offset`


def test_a_name_the_value_analysis_proves_a_tensor_counts():
    source = LOSS.replace("self.shifted(prediction, 0.5)", "self.shifted(prediction, margin)")
    given = parameters_given_tensors(methods_of(source), fed_names, proven_tensor=lambda name: name.value == "margin")
    assert given.get("shifted") == {"prediction", "offset"}
    assert parameters_given_tensors(methods_of(source), fed_names).get("shifted") == {"prediction"}


def test_results_fed_directly_or_through_a_name_bound_once():
    fed = results_fed_to_submodules(methods_of(LOSS), {"loss"})
    assert fed == {"target", "shifted"}  # `logged`'s result is only printed


def test_a_name_bound_twice_does_not_carry_the_result():
    source = LOSS.replace("        counts = self.logged(prediction)\n", "        goal = goal * 2\n        counts = self.logged(prediction)\n")
    assert "target" not in results_fed_to_submodules(methods_of(source), {"loss"})


ENCODING = '''\
class Encoding(nn.Module):
    def frequencies(self):
        return torch.arange(4).float()

    def forward(self, t):
        freqs = self.frequencies()
        {use}
'''


def joined(use: str):
    from devfix.analysis.self_calls import results_joining_inputs

    class_def = cst.parse_module(ENCODING.format(use=use)).body[0]
    found = results_joining_inputs(class_def, "frequencies", lambda caller: {"t"}, lambda node: set())
    return None if found is None else sorted(found.values())


def test_a_result_bound_once_then_put_with_an_input_joins_that_input():
    assert joined("return t[:, None].float() * freqs[None]") == ["t"]
    assert joined("a = t * freqs\n        return a + freqs[0] * t.float()") == ["t"]


def test_a_bound_result_read_otherwise_or_with_something_else_does_not():
    assert joined("return freqs") is None  # returned: no input to follow
    assert joined("return t * freqs + freqs.sum()") is None  # also read on its own
    assert joined("return t * freqs + 2 * freqs") is None  # also put with a number
    assert joined("freqs = freqs * 2\n        return t * freqs") is None  # bound twice
