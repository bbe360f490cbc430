"""`analysis.output_meetings`: names that meet what a moved model attribute returned."""

from __future__ import annotations

import libcst as cst

from devfix.analysis.output_meetings import OutputMeetings

LEARN = '''\
def learn(self, states, actions, rewards, dones, weights, gamma):
    q = self.q(states).gather(1, actions).squeeze(1)
    next_q = self.target(states).max(1)[0]
    target = rewards + gamma * next_q * (1 - dones.float())
    host = self.q(states).detach().cpu() * weights
    q = counts
    later = q + offsets
    return target
'''


def met_names(source: str, models: set[str]) -> dict[str, str]:
    meetings = OutputMeetings(models)
    cst.parse_module(source).body[0].body.visit(meetings)  # as the rule walks a method: its body
    return {name.value: model for name, model in meetings.met.items()}


def test_operands_and_method_arguments_that_meet_an_output():
    assert met_names(LEARN, {"q", "target"}) == {"actions": "q", "rewards": "target", "gamma": "target", "dones": "target"}


def test_a_host_copy_and_a_rebound_name_hold_no_output():
    """`weights` meets `.cpu()`'s copy; `offsets` meets `q` after `q = counts` rebound it."""
    met = met_names(LEARN, {"q", "target"})
    assert "weights" not in met and "offsets" not in met


def test_nothing_meets_a_model_the_class_did_not_move():
    assert met_names(LEARN, {"other"}) == {}


POLICY = '''\
def update(self, states, actions, returns):
    logp = torch.log_softmax(self.policy(states), -1).gather(1, actions.unsqueeze(1)).squeeze(1)
    return -(logp * returns).mean()
'''


def test_a_torch_function_of_an_output_holds_it_where_the_rule_says_so():
    """`torch.log_softmax(self.policy(states), -1)` is where the policy's output is, when the rule
    names such calls (`follows`): `returns` meets it; `actions` meets the output's `.gather` through
    `.unsqueeze(1)`."""
    meetings = OutputMeetings({"policy"}, follows=lambda call: cst.Module([]).code_for_node(call.func) == "torch.log_softmax")
    cst.parse_module(POLICY).body[0].body.visit(meetings)
    assert {name.value for name in meetings.met} == {"actions", "returns"}
    assert {name.value for name in met_names(POLICY, {"policy"})} == set()


def test_calls_met_where_they_are_made_start_their_chains_of_tensor_methods():
    """`self.bce(self.D(fake), torch.zeros(n, 1).float())`: the call met is `torch.zeros(n, 1)`;
    of one moved first it is the move (no factory there), and an output's own methods and the
    class's methods (`met_method_calls`) are not among them."""
    source = (
        "def losses(self, fake, n):\n"
        "    a = self.bce(self.D(fake), torch.zeros(n, 1).float())\n"
        "    b = self.bce(self.D(fake), torch.ones(n, 1).to(fake.device))\n"
        "    c = self.D(fake) * torch.full((n, 1), 2.0) + self._labels(n)\n"
        "    return self.bce(self.D(fake).sigmoid(), self.D(fake).detach())\n"
    )
    meetings = OutputMeetings({"D"}, meets=lambda call: isinstance(call.func, cst.Attribute) and call.func.attr.value == "bce")
    cst.parse_module(source).body[0].body.visit(meetings)
    module = cst.Module([])
    assert sorted(module.code_for_node(call) for call in meetings.met_calls) == [
        "torch.full((n, 1), 2.0)", "torch.ones(n, 1).to(fake.device)", "torch.zeros(n, 1)"]
