"""`analysis.method_inputs`: which parameters of a class's methods, or of a function, reach a layer
or a moved model."""

from __future__ import annotations

import libcst as cst

from devfix.analysis.call_sites import file_functions
from devfix.analysis.method_inputs import MethodInputs, parameters_fed_to_models


def torch_names(node: cst.CSTNode) -> set[str]:
    """A stand-in for qualified names: `nn.X` is `torch.nn.X`, `torch.x` is itself."""
    code = cst.Module([]).code_for_node(node)
    return {code.replace("nn.", "torch.nn.", 1)} if code.startswith("nn.") else ({code} if code.startswith("torch.") else set())


MODEL = '''\
class CharModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(6, 8)
        self.norm = Custom()

    def forward(self, idx):
        return self.embed(idx)

    def generate(self, idx, steps):
        for _ in range(steps):
            nxt = self(idx[:, -4:]).argmax(-1)
            idx = torch.cat((idx, nxt), dim=1)
        return idx

    def placed(self, idx):
        idx = idx.to(self.embed.weight.device)
        return self.embed(idx)

    def counted(self, idx, extra):
        return self.norm(extra) + len(idx)
'''


def inputs() -> MethodInputs:
    (class_def,) = [statement for statement in cst.parse_module(MODEL).body if isinstance(statement, cst.ClassDef)]
    return MethodInputs(class_def, torch_names)


def test_a_parameter_reaches_a_layer_directly_or_through_forward():
    assert inputs().reaching("forward") == {"idx"}
    assert inputs().reaching("generate") == {"idx"}  # self(idx[...]), idx rebound from a torch.cat of itself
    assert inputs().positional("generate") == ["idx", "steps"]


def test_a_move_or_an_unknown_module_ends_the_chain():
    assert inputs().reaching("placed") == frozenset()
    assert inputs().reaching("counted") == frozenset()  # `Custom()` is not a torch layer devfix knows
    assert inputs().reaching("missing") == frozenset()


def test_a_function_hands_its_parameter_to_a_moved_model():
    module = cst.parse_module(
        "def act(state, scale):\n    return policy(state).argmax(1) * scale\n\n"
        "def placed(state):\n    state = state.to(device)\n    return policy(state)\n"
    )
    functions = file_functions(module)
    assert parameters_fed_to_models(functions["act"], {"policy"}, torch_names) == {"state": {"policy"}}
    assert parameters_fed_to_models(functions["placed"], {"policy"}, torch_names) == {}


PACKING = '''\
class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(10, 4)

    def forward(self, ids, lengths, sizes):
        n = lengths
        packed = torch.nn.utils.rnn.pack_padded_sequence(self.emb(ids), n, batch_first=True)
        other = torch.nn.utils.rnn.pack_padded_sequence(self.emb(ids), sizes.cpu(), batch_first=True)
        return packed, other
'''


def test_lengths_handed_to_a_packing_function_stay_on_the_host():
    (class_def,) = [statement for statement in cst.parse_module(PACKING).body if isinstance(statement, cst.ClassDef)]
    summary = MethodInputs(class_def, torch_names)
    assert summary.kept_on_the_host("forward") == {"lengths"}  # `sizes.cpu()` is brought back by forward itself
    assert summary.kept_on_the_host("missing") == frozenset()
