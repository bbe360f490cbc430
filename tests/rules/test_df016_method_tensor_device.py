"""DF016 on a GAN loss that builds its targets with a tensor type it holds (`self.Tensor`): only a
CPU type that no construction in the file replaces proves the targets are made on the CPU."""

from __future__ import annotations

import pytest

from devfix.codemods import MethodTensorDevice
from tests.conftest import run_devfix

GAN_LOSS = """
import torch
import torch.nn as nn

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")


class GANLoss(nn.Module):
    def __init__(self, tensor=torch.FloatTensor):
        super(GANLoss, self).__init__()
        self.Tensor = tensor
        self.loss = nn.MSELoss()

    def get_target_tensor(self, input):
        return self.Tensor(input.size()).fill_(1.0)

    def forward(self, input):
        return self.loss(input, self.get_target_tensor(input))


D = nn.Linear(3, 1).to(device)
criterion = GANLoss({arguments})
criterion(D(torch.ones(2, 3).to(device)))
"""


def fixed(arguments: str) -> str:
    return run_devfix(GAN_LOSS.format(arguments=arguments), rules=[MethodTensorDevice]).fixed.decode()


def test_the_default_cpu_type_builds_targets_that_follow_the_input():
    assert "return self.Tensor(input.size()).to(input.device).fill_(1.0)" in fixed("")
    assert "return self.Tensor(input.size()).to(input.device).fill_(1.0)" in fixed("tensor=torch.DoubleTensor")


def test_a_type_the_caller_chooses_for_its_device_is_left_alone():
    chosen = "tensor=torch.cuda.FloatTensor if torch.cuda.is_available() else torch.FloatTensor"
    assert "return self.Tensor(input.size()).fill_(1.0)" in fixed(chosen)


POLICY = """
import torch
import torch.nn as nn


class Policy(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Linear(4, 2)

    def act(self, state, step):
{body}
"""


def fixed_policy(body: str) -> str:
    return run_devfix(POLICY.format(body=body), rules=[MethodTensorDevice]).fixed.decode()


def test_a_tensor_made_of_a_parameters_data_takes_the_modules_device():
    """`state` is a numpy observation where `torch.from_numpy` reads it: `state.device` would be
    an AttributeError, or "cpu" under numpy 2; the name only later holds the tensor fed to `self.net`."""
    out = fixed_policy("        state = torch.from_numpy(state).float()\n        return self.net(state)")
    assert "state = torch.from_numpy(state).to(self.device).float()" in out
    out = fixed_policy("        state = torch.tensor([state, step])\n        return self.net(state)")
    assert "state = torch.tensor([state, step], device=self.device)" in out


def test_a_factory_beside_a_tensor_parameter_still_follows_it():
    out = fixed_policy("        out = self.net(state)\n        return out + torch.ones(2)")
    assert "return out + torch.ones(2, device=state.device)" in out


MASKED = (
    "import torch\nfrom torch import nn\nfrom torch.nn.utils.rnn import pack_padded_sequence\n\n\n"
    "class Net(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
    "        self.emb = nn.Embedding(10, 4)\n        self.rnn = nn.GRU(4, 4, batch_first=True)\n\n"
    "    def forward(self, x, lens):\n{body}"
)


def test_a_legacy_cpu_constructor_meeting_a_submodules_output_is_moved_after_it():
    body = "        mask = torch.BoolTensor([[t < n for t in range(5)] for n in lens])\n        return self.emb(x) * mask.unsqueeze(-1)\n"
    fixed = run_devfix(MASKED.format(body=body), rules=[MethodTensorDevice]).fixed.decode()
    assert "mask = torch.BoolTensor([[t < n for t in range(5)] for n in lens]).to(x.device)\n" in fixed


def test_lengths_handed_to_pack_padded_sequence_stay_on_the_host():
    for make in ("torch.tensor(lens)", "torch.LongTensor(lens)"):
        body = f"        lengths = {make}\n        return self.rnn(pack_padded_sequence(self.emb(x), lengths, batch_first=True))\n"
        result = run_devfix(MASKED.format(body=body), rules=[MethodTensorDevice])
        assert result.fixed == result.source and not result.findings, make


STATELESS = """
import torch
import torch.nn as nn

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")


class Encoding(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.dim = dim

    def table(self, length):
        return torch.ones(length, self.dim)

    def forward(self, x):
        return {use}


encode = Encoding(4).to(device)
encode(torch.ones(2, 3, 4).to(device))
"""


def stateless(use: str):
    return run_devfix(STATELESS.format(use=use), rules=[MethodTensorDevice])


def test_a_module_without_parameters_moves_its_result_where_it_meets_an_input():
    result = stateless("x + self.table(x.size(1))")
    assert "return x + self.table(x.size(1)).to(x.device)" in result.fixed.decode()
    assert "torch.ones(length, self.dim)\n" in result.fixed.decode()  # the method itself is left alone


def test_a_result_that_goes_elsewhere_is_reported_for_what_it_is():
    """Returned as is, it has no input to follow; the message says why there is no fix (the class
    stores no `self.device`: it has no parameter to take the device from)."""
    result = stateless("self.table(x.size(1))")
    assert result.fixed.decode() == STATELESS.format(use="self.table(x.size(1))")
    [finding] = result.findings
    assert "no parameter or layer of the module's own" in finding.message and "self.device" not in finding.message


def test_a_result_read_on_the_host_or_already_moved_needs_nothing():
    result = stateless("x + self.table(x.size(1)).to(x.device) + self.table(2).shape[0]")
    assert result.fixed.decode() == STATELESS.format(use="x + self.table(x.size(1)).to(x.device) + self.table(2).shape[0]")
    assert not result.findings


LAZY_CACHE = """import torch
import torch.nn as nn

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")


class Encoding(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.dim = dim
        self.cache = None

    def table(self, length):
        rows = torch.arange(length).float().unsqueeze(1)
        return (rows * torch.ones(1, self.dim)).unsqueeze(0)

    def forward(self, x):
        if self.cache is None or self.cache.size(1) < x.size(1):
            self.cache = self.table(x.size(1))
        return x + self.cache[:, : x.size(1)]
{more}

encode = Encoding(4).to(device)
encode(torch.ones(2, 3, 4).to(device))
"""


def test_a_cache_a_module_without_parameters_builds_lazily_is_made_where_the_input_is():
    result = run_devfix(LAZY_CACHE.format(more=""), rules=[MethodTensorDevice]).fixed.decode()
    assert "            self.cache = self.table(x.size(1)).to(x.device)\n" in result
    assert "        return (rows * torch.ones(1, self.dim)).unsqueeze(0)\n" in result  # the method itself is left alone


def test_a_lazy_cache_read_anywhere_else_has_no_input_to_follow():
    for more in ("\n    def rows(self):\n        return self.cache\n",
                 "\n    def reset(self, table):\n        self.cache = table\n"):
        source = LAZY_CACHE.format(more=more)
        assert run_devfix(source, rules=[MethodTensorDevice]).fixed.decode() == source, more


RELATIVE = """import torch
import torch.nn as nn


class RelativePositionBias(nn.Module):
    def __init__(self, size):
        super().__init__()
        self.table = nn.Parameter(torch.zeros(2 * size - 1, 4))

    {decorator}def positions(self, size):
        index = torch.zeros(size, size, dtype=torch.long)
        index[:] = torch.arange(size).view(-1, 1) - torch.arange(size).view(1, -1) + size - 1
        return index

    def forward(self, size):
        index = self.positions(size)
        return self.table[index.view(-1)]{more}


device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
bias = RelativePositionBias(3).to(device)
print(bias(3).shape)
"""


def test_cpu_indices_a_method_returns_for_indexing_are_left_alone():
    """beit's `generate_relative_position_index`: CPU indices may index a table on any device
    (`table[index.view(-1)]` too), and the method's own `index` local is no use of the result."""
    source = RELATIVE.format(decorator="", more="")
    result = run_devfix(source, rules=[MethodTensorDevice])
    assert result.fixed.decode() == source and not result.findings


def test_a_static_method_gets_no_self_device():
    """mega's `@staticmethod get_sinusoid_embeddings`: `self.device` is no name there."""
    source = RELATIVE.format(decorator="@staticmethod\n    ", more=" + self.positions(size).float().sum()").replace(
        "def positions(self, size)", "def positions(size)")
    result = run_devfix(source, rules=[MethodTensorDevice])
    assert "self.device" not in result.fixed.decode() and "next(self.parameters())" not in result.fixed.decode()


def test_an_index_also_used_otherwise_follows_the_module():
    fixed = run_devfix(RELATIVE.format(decorator="", more=" + self.positions(size).float().sum()"), rules=[MethodTensorDevice]).fixed.decode()
    assert "index = torch.zeros(size, size, dtype=torch.long, device=self.device)" in fixed


INIT_HIDDEN = """import torch
import torch.nn as nn


class CharRNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.gru = nn.GRU(4, 8)

    def init_hidden(self):
        if torch.cuda.is_available():
            hidden = torch.zeros(1, 1, 8).cuda()
        else:
            hidden = {cpu_branch}
        return hidden

    def forward(self, x):
        return self.gru(x, self.init_hidden())
"""


def test_a_factory_in_the_branch_that_runs_only_without_cuda_is_left_alone():
    source = INIT_HIDDEN.format(cpu_branch="torch.zeros(1, 1, 8)")
    result = run_devfix(source, rules=[MethodTensorDevice])
    assert not result.findings and result.fixed.decode() == source
    # a file that may pick another accelerator without CUDA: the branch may run on `mps`
    other = source.replace("return self.gru(x, self.init_hidden())", "return self.gru(x.to('mps'), self.init_hidden())")
    assert "torch.zeros(1, 1, 8, device=self.device)" in run_devfix(other, rules=[MethodTensorDevice]).fixed.decode()


def test_a_factory_under_a_global_default_device_is_made_there():
    source = INIT_HIDDEN.format(cpu_branch="torch.zeros(1, 1, 8)").replace(
        "        if torch.cuda.is_available():\n            hidden = torch.zeros(1, 1, 8).cuda()\n        else:\n            hidden = torch.zeros(1, 1, 8)\n",
        "        hidden = torch.zeros(1, 1, 8)\n",
    ) + "\n\nif __name__ == '__main__':\n    torch.set_default_tensor_type('torch.cuda.FloatTensor')\n    CharRNN().cuda()\n"
    result = run_devfix(source, rules=[MethodTensorDevice])
    assert "hidden = torch.zeros(1, 1, 8)\n" in source and not result.findings and result.fixed.decode() == source
    without = source.replace("    torch.set_default_tensor_type('torch.cuda.FloatTensor')\n", "    pass\n")
    assert "torch.zeros(1, 1, 8, device=self.device)" in run_devfix(without, rules=[MethodTensorDevice]).fixed.decode()


CHAR_TAGGER = """import torch
import torch.nn as nn


class Tagger(nn.Module):
    def __init__(self):
        super().__init__()
        self.char = nn.Embedding(26, 4)
        self.lstm = nn.LSTM(8, 8)

    def forward(self, x, word):
        char = torch.FloatTensor()
        for letters in word:
            ids = torch.LongTensor(letters)
            part = self.char(ids.cuda() if torch.cuda.is_available() else ids).sum(0, keepdim=True)
            char = torch.cat((char, part.cpu().data), 0)
        {move}
        return self.lstm(torch.cat((x, char), 1).unsqueeze(1))
"""


@pytest.mark.parametrize("move, fixed", [
    ("if torch.cuda.is_available():\n            char = char.cuda()", False),  # pytorch-beginner's seq-lstm
    # the input's own test: without CUDA there, `x` and the LSTM it feeds are off CUDA, and so is `char`
    ("if x.is_cuda:\n            char = char.cuda()", False),
    ("if word:\n            char = char.cuda()", True),  # no CUDA test: the other path may meet a GPU input
])
def test_a_tensor_moved_under_a_cuda_test_is_placed_where_cuda_runs(move, fixed):
    source = CHAR_TAGGER.format(move=move)
    result = run_devfix(source, rules=[MethodTensorDevice])
    assert (result.fixed != result.source) is fixed


def test_a_factory_the_method_moves_itself_when_its_input_is_on_cuda_is_left_alone():
    # pytorch-a2c-ppo-acktr-gail's DiagGaussian: `if x.is_cuda: zeros = zeros.cuda()`
    source = (
        "import torch\nfrom torch import nn\n\n\nclass Head(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
        "        self.fc = nn.Linear(4, 2)\n        self.bias = nn.Linear(2, 2)\n\n    def forward(self, x):\n"
        "        zeros = torch.zeros(x.size(0), 2)\n{check}        return self.fc(x) + self.bias(zeros)\n"
    )
    guarded = source.format(check="        if x.is_cuda:\n            zeros = zeros.cuda()\n")
    result = run_devfix(guarded, rules=[MethodTensorDevice])
    assert result.fixed.decode() == guarded and not result.findings
    unguarded = source.format(check="")  # nothing places it: the rule's fix stands
    assert "torch.zeros(x.size(0), 2, device=x.device)" in run_devfix(unguarded, rules=[MethodTensorDevice]).fixed.decode()


REGULARIZERS = """
import torch
import torch.nn as nn

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")


class Penalty(nn.Module):
    def forward(self, dx):
        return dx.abs().mean(1)


class Regularizers(nn.Module):
    def __init__(self, weights):
        super().__init__()
        terms = []
        for weight in weights:
            terms.append({term})
        self.terms = nn.ModuleList(terms)
        self.width = len(weights)

    def forward(self, x):
        if self.width == 0:
            reg = {zeros}
        else:
            reg = x[:, : self.width]
        return reg, x


regularizers = Regularizers([]).to(device)
print(regularizers(torch.ones(2, 3, device=device)))
"""


def test_a_module_whose_layers_hold_no_parameters_gets_no_parameter_device():
    """conditional-flow-matching's AugmentationModule: a ModuleList of parameter-free regularizers
    of the file. `next(self.parameters())` would raise StopIteration there on every machine."""
    source = REGULARIZERS.format(term="Penalty()", zeros="torch.zeros(1)")
    result = run_devfix(source, rules=[MethodTensorDevice])
    assert result.fixed.decode() == source
    assert [finding.fixable for finding in result.findings] == [False]


def test_a_module_list_of_layers_with_parameters_gives_the_module_its_device():
    source = REGULARIZERS.format(term="nn.Linear(3, 3)", zeros="torch.zeros(1)")
    fixed = run_devfix(source, rules=[MethodTensorDevice]).fixed.decode()
    assert "reg = torch.zeros(1, device=self.device)" in fixed
    assert "return next(self.parameters()).device" in fixed


def test_a_factory_cast_with_type_as_is_already_placed():
    """`torch.zeros(1).type_as(x)` takes `x`'s type, device included."""
    source = REGULARIZERS.format(term="nn.Linear(3, 3)", zeros="torch.zeros(1).type_as(x)")
    result = run_devfix(source, rules=[MethodTensorDevice])
    assert result.fixed.decode() == source and not result.findings


BUILT_BY_A_HELPER = """import torch
import torch.nn as nn


class Cell(nn.Module):
    def __init__(self, hidden):
        super().__init__()
        self.hidden = hidden
        self._create_layers()

    def _create_layers(self):
        self.gate = nn.Linear(self.hidden, self.hidden)

    def forward(self, x):
        h = torch.zeros(x.size(0), self.hidden)
        return self.gate(h) + x


device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
print(Cell(4).to(device)(torch.ones(2, 4, device=device)))
"""


def test_layers_built_by_a_method_the_constructor_calls_are_submodules():
    """pytorch_geometric_temporal's cells build their layers in `_create_parameters_and_layers()`,
    which only `__init__` calls: a tensor fed to them is fed to the module's layers."""
    fixed = run_devfix(BUILT_BY_A_HELPER, rules=[MethodTensorDevice]).fixed.decode()
    assert "h = torch.zeros(x.size(0), self.hidden, device=x.device)" in fixed


def test_a_layer_also_assigned_outside_the_constructor_is_no_submodule_it_builds():
    source = BUILT_BY_A_HELPER.replace("        return self.gate(h) + x\n", "        return self.gate(h) + x\n\n    def reset(self):\n        self._create_layers()\n", 1)
    result = run_devfix(source, rules=[MethodTensorDevice])
    assert "device=x.device" not in result.fixed.decode()


@pytest.mark.parametrize("check, fixed", [
    ("next(self.lstm.parameters()).is_cuda", False),  # QuaPy's `__init_hidden`: the module's own placement decides
    ("next(iter(self.parameters())).is_cuda", False),
    ("self.training", True),  # no CUDA test: the CPU zeros may meet a GPU module
])
def test_a_state_moved_when_the_modules_parameters_are_on_cuda_is_left_alone(check, fixed):
    source = (
        "import torch\nfrom torch import nn\n\n\nclass Net(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
        "        self.lstm = nn.LSTM(4, 4)\n\n    def init_hidden(self, n):\n        h = torch.zeros(1, n, 4)\n"
        f"        if {check}:\n            h = h.cuda()\n        return h\n\n"
        "    def forward(self, x):\n        return self.lstm(x, (self.init_hidden(x.size(1)), self.init_hidden(x.size(1))))\n"
    )
    result = run_devfix(source, rules=[MethodTensorDevice])
    assert (result.fixed != result.source) is fixed



IMPORTED_LOSS = """import torch
from torch import nn

from vicreg_loss import VICRegLoss


class VICRegLLoss(nn.Module):
    def __init__(self, lambda_param: float = 25.0):
        super().__init__()
        self.vicreg_loss = VICRegLoss(lambda_param)
{layer}
    def forward(self, feats):
        loss = torch.tensor(0.0)
        for a in feats:
            loss += (a - feats[0]).pow(2).mean()
        return loss + self.vicreg_loss(feats[0], feats[1]){use}
"""

LOSS_OF_ANOTHER_FILE = """import torch
from torch import nn


class VICRegLoss(nn.Module):
    def __init__(self, lambda_param: float = 25.0):
        super().__init__()
        self.lambda_param = lambda_param

    def forward(self, a, b):
        return self.lambda_param * (a - b).pow(2).mean()
"""


def test_a_module_holding_only_a_parameter_free_module_of_another_file_has_no_parameter_to_take(tmp_path):
    """lightly's `VICRegLLoss` holds only `VICRegLoss(...)` of another file, which builds no
    parameter: `next(self.parameters())` would raise StopIteration on every machine."""
    (tmp_path / "vicreg_loss.py").write_text(LOSS_OF_ANOTHER_FILE)
    source = IMPORTED_LOSS.format(layer="", use="")
    result = run_devfix(source, str(tmp_path / "vicregl_loss.py"), rules=[MethodTensorDevice])
    assert result.fixed.decode() == source
    assert [(finding.code, finding.fix_safety) for finding in result.findings] == [("DF016", None)]


def test_an_input_proven_none_in_the_branch_gives_no_device_there():
    """pykeen's `_plain_forward(self, indices=None)`: under `if indices is None:` the factory takes
    the module's device, never `indices.device` (AttributeError on None)."""
    source = (
        "import torch\nfrom torch import nn\n\n\nclass Bag(nn.Module):\n"
        "    def __init__(self, assignment):\n        super().__init__()\n"
        "        self.register_buffer('assignment', assignment)\n"
        "        self.bag = nn.EmbeddingBag(5, 3)\n\n"
        "    def forward(self, indices: torch.Tensor = None):\n"
        "        if indices is None:\n            indices = torch.arange(10)\n"
        "        mask = torch.isin(self.assignment[:, 0], indices)\n"
        "        return self.bag(self.assignment[mask][:, 1], indices)\n"
    )
    result = run_devfix(source, rules=[MethodTensorDevice]).fixed.decode()
    assert "indices.device" not in result and "torch.arange(10, device=" in result


STATEFUL_LSTM = (
    "import torch\nfrom torch import nn\n\n\nclass Tagger(nn.Module):\n"
    "    def __init__(self, n_in, hidden, batch):\n        super().__init__()\n        self.hidden_size = hidden\n"
    "        self.lstm = nn.{layer}(n_in, hidden)\n        self.fc = nn.Linear(hidden, 2)\n"
    "        self.hidden = self.init_hidden(batch)\n\n"
    "    def init_hidden(self, batch):\n        return {state}\n\n"
    "    def forward(self, seq):\n{first}        out, self.hidden = self.lstm(seq, self.hidden)\n        return self.fc(out[-1])\n\n\n"
    "device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\nmodel = Tagger(3, 5, 4).to(device)\n"
    "{calls}print(model(torch.randn(6, 4, 3, device=device)))\n"
)
ZEROS = "torch.zeros(1, batch, self.hidden_size)"


@pytest.mark.parametrize(("layer", "state", "first", "calls", "read"), [
    ("LSTM", f"({ZEROS}, {ZEROS})", "", "", "tuple(item.to(seq.device) for item in self.hidden)"),
    ("GRU", ZEROS, "", "", "self.hidden.to(seq.device)"),
    ("GRU", ZEROS.replace(")", ", device=next(self.parameters()).device)", 1), "", "", None),
    ("GRU", ZEROS, "        self.hidden = self.hidden.detach()\n", "", None),
    ("GRU", ZEROS, "", "model.hidden = model.init_hidden(4)\n", None),
])
def test_a_state_made_while_the_module_is_built_goes_where_the_layer_meets_it(layer, state, first, calls, read):
    """The LSTM tagger of the tutorials: `self.hidden = self.init_hidden(batch)` in `__init__` only is
    made before any move; `.to()` leaves it on the CPU, so `self.lstm(seq, self.hidden)` gets it on
    `seq`'s device. Made with a device, rebound first in `forward`, or reset by the program through
    `init_hidden` (DF016's own fix of that method), it is left alone here."""
    source = STATEFUL_LSTM.format(layer=layer, state=state, first=first, calls=calls)
    fixed = run_devfix(source, rules=[MethodTensorDevice]).fixed.decode()
    if read is None:
        assert ".to(seq.device)" not in fixed
    else:
        assert f"self.lstm(seq, {read})" in fixed


def test_one_tensor_a_constructor_only_method_makes_and_nothing_rebinds_is_left_to_df014():
    """`self.mask = self.causal_mask(n)` bound only in `__init__`: DF014 makes it a buffer, so DF016
    does not also move it where `self.attn` reads it."""
    source = (
        "import torch\nfrom torch import nn\n\n\nclass Block(nn.Module):\n    def __init__(self, d, n):\n        super().__init__()\n"
        "        self.attn = nn.MultiheadAttention(d, 2, batch_first=True)\n        self.mask = self.causal_mask(n)\n\n"
        "    def causal_mask(self, n):\n        return torch.zeros(n, n)\n\n"
        "    def forward(self, x):\n        out, _ = self.attn(x, x, x, attn_mask=self.mask)\n        return out\n\n\n"
        "device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\nblock = Block(8, 5).to(device)\n"
        "print(block(torch.randn(2, 5, 8, device=device)))\n"
    )
    assert ".to(x.device)" not in run_devfix(source, rules=[MethodTensorDevice]).fixed.decode()


@pytest.mark.parametrize(("index", "aligned"), [("targets.unsqueeze(1).data.cpu()", False), ("targets.unsqueeze(1)", True)])
def test_a_tensor_computed_with_a_value_brought_to_the_host_stays_there(index, aligned):
    """torchreid's label-smoothing loss scatters into CPU zeros with a CPU index, then moves the
    result itself when the class asks for the GPU: zeros on the input's device would make the
    scatter meet a CPU index."""
    source = (
        "import torch\nimport torch.nn as nn\n\n\nclass SmoothLoss(nn.Module):\n"
        "    def __init__(self, use_gpu=True):\n        super().__init__()\n        self.use_gpu = use_gpu\n"
        "        self.logsoftmax = nn.LogSoftmax(dim=1)\n\n"
        "    def forward(self, inputs, targets):\n        log_probs = self.logsoftmax(inputs)\n"
        "        zeros = torch.zeros(log_probs.size())\n"
        f"        targets = zeros.scatter_(1, {index}, 1)\n"
        "        if self.use_gpu:\n            targets = targets.cuda()\n"
        "        return (-targets * log_probs).mean(0).sum()\n"
    )
    result = run_devfix(source, rules=[MethodTensorDevice]).fixed.decode()
    assert ("torch.zeros(log_probs.size(), device=inputs.device)" in result) is aligned


def test_a_tensor_a_method_gives_self_goes_where_forward_hands_it():
    """A GAN generator's `sample(n)`: `z = torch.randn(n, self.z_dim)` then `self(z)`, whose `forward`
    hands `z` to `self.net`: the draw is made on the module's device."""
    source = (
        "import torch\nimport torch.nn as nn\n\n\nclass Generator(nn.Module):\n    def __init__(self, z_dim):\n"
        "        super().__init__()\n        self.z_dim = z_dim\n        self.net = nn.Linear(z_dim, 4)\n\n"
        "    def forward(self, z):\n        return self.net(z)\n\n    def sample(self, n):\n"
        "        z = torch.randn(n, self.z_dim)\n        return self(z)\n\n\n"
        "G = Generator(8).to(torch.device('cuda' if torch.cuda.is_available() else 'cpu'))\nprint(G.sample(2))\n"
    )
    assert "z = torch.randn(n, self.z_dim, device=self.device)" in run_devfix(source, rules=[MethodTensorDevice]).fixed.decode()


DECODER = """import torch
from torch import nn


class Decoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.cell = nn.GRUCell(4, 4)
        self.out = nn.Linear(4, 3)

    def forward(self, x, steps):
        h = torch.zeros_like(x)
        outputs = torch.zeros(x.size(0), steps, 3)
        for t in range(steps):
            h = self.cell(x, h)
            outputs[:, t] = {stored}
        return {returned}
"""


@pytest.mark.parametrize(("stored", "returned", "placed"), [
    ("self.out(h)", "outputs", True),
    # what is stored is no submodule's output, or the filled tensor is not what forward returns
    ("t", "outputs", False),
    ("self.out(h)", "h", False),
])
def test_a_tensor_forward_fills_with_each_steps_output_and_returns_is_made_on_the_inputs_device(stored, returned, placed):
    """A seq2seq decoder's `outputs = torch.zeros(...)`, given `self.out(h)` at each step and
    returned: the module's output, where the loss meets the device labels."""
    result = run_devfix(DECODER.format(stored=stored, returned=returned), rules=[MethodTensorDevice]).fixed.decode()
    assert ("outputs = torch.zeros(x.size(0), steps, 3, device=x.device)" in result) is placed


STORING_ITS_DEVICE = """import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
        {layer}

    def forward(self, x):
        return {forward}

    def predict(self, rows):
        return self(torch.tensor(rows, dtype=torch.float32))


model = Model().to("cuda" if torch.cuda.is_available() else "cpu")
print(model.predict([[1.0, 2.0]]))
"""


@pytest.mark.parametrize(("layer", "forward", "fixed"), [
    ("self.fc = nn.Linear(2, 1)", "self.fc(x)", True),
    ("self.act = nn.ReLU()", "self.act(x)", False),  # no parameter to take a device from: reported
])
def test_a_module_storing_its_device_takes_its_parameters_device(layer, forward, fixed):
    """A stored `self.device` may go stale after `.to()`; the parameters say where the module is."""
    result = run_devfix(STORING_ITS_DEVICE.format(layer=layer, forward=forward), rules=[MethodTensorDevice])
    placed = "torch.tensor(rows, dtype=torch.float32, device=next(self.parameters()).device)" in result.fixed.decode()
    assert placed is fixed
    assert [finding.fixable for finding in result.findings] == ([] if fixed else [False])


def test_a_result_its_caller_moves_stays_reported_in_a_module_storing_its_device():
    """facexlib's `batched_transform` returns `torch.from_numpy(frames)`, and its caller moves the
    result to `self.device` before feeding it: no tensor to place where it is made."""
    source = STORING_ITS_DEVICE.format(layer="self.fc = nn.Linear(2, 1)", forward="self.fc(x)").replace(
        "        return self(torch.tensor(rows, dtype=torch.float32))\n",
        "        rows = self.transform(rows)\n        rows = rows.to(self.device)\n        return self(rows)\n\n"
        "    def transform(self, rows):\n        return torch.from_numpy(np.asarray(rows, dtype=np.float32))\n",
    ).replace("import torch\n", "import numpy as np\nimport torch\n", 1)
    result = run_devfix(source, rules=[MethodTensorDevice])
    assert result.fixed == result.source


LAZY = """import torch
import torch.nn as nn


class LazyLinear(nn.Module):
    def __init__(self, out_features):
        super().__init__()
        self.out_features = out_features
        self.weight = None

    def forward(self, x):
        if self.weight is None:
            self.weight = {made}
        return {used}
"""


@pytest.mark.parametrize(("made", "used", "placed"), [
    ("nn.Parameter(torch.randn(x.size(1), self.out_features) * 0.1)", "x @ self.weight",
     "nn.Parameter(torch.randn(x.size(1), self.out_features, device=x.device) * 0.1)"),
    ("torch.zeros(x.size(1))", "x + self.weight[: x.size(1)]", "torch.zeros(x.size(1), device=x.device)"),
    ("torch.zeros(x.size(1))", "x.transpose(0, 1) * self.weight", "torch.zeros(x.size(1), device=x.device)"),
    ("torch.zeros(x.size(1), device=x.device)", "x @ self.weight", None),  # made where the input is
    ("torch.tensor(0.5)", "x * self.weight", None),  # a 0-dim CPU tensor meets a CUDA one
])
def test_an_attribute_a_method_makes_and_puts_with_an_input_is_made_where_the_input_is(made, used, placed):
    """A lazy weight (`if self.weight is None: self.weight = nn.Parameter(torch.randn(...))`, then
    `x @ self.weight`) in a Module with no layer of its own: the input says where."""
    source = LAZY.format(made=made, used=used)
    result = run_devfix(source, rules=[MethodTensorDevice]).fixed.decode()
    assert result == (source.replace(f"self.weight = {made}", f"self.weight = {placed}") if placed else source)


HELPER_MASK = """import torch
import torch.nn as nn


{helper}


class Decoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.block = nn.TransformerEncoderLayer(8, 2, 16, batch_first=True)

    def forward(self, x):
        return self.block(x, src_mask={call})


device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
Decoder().to(device)(torch.randn(2, 3, 8).to(device))
"""
CAUSAL_MASK = "def causal_mask(n):\n    return torch.triu(torch.ones(n, n, dtype=torch.bool), diagonal=1)"


@pytest.mark.parametrize(("helper", "call", "moved"), [
    (CAUSAL_MASK, "causal_mask(x.size(1))", True),
    # the helper places its tensor itself: nothing to do
    (CAUSAL_MASK.replace("(n)", "(n, device)").replace("diagonal=1", "diagonal=1).to(device"), "causal_mask(x.size(1), x.device)", False),
    # a 0-dim result may meet CUDA tensors where it is
    ("def causal_mask(n):\n    return torch.tensor(0.0)", "causal_mask(x.size(1))", False),
])
def test_a_host_tensor_a_helper_of_the_file_returns_goes_where_the_input_is(helper, call, moved):
    source = HELPER_MASK.format(helper=helper, call=call)
    result = run_devfix(source, rules=[MethodTensorDevice]).fixed.decode()
    assert result == (source.replace(call, f"{call}.to(x.device)") if moved else source)


STREAMING = """import torch
import torch.nn as nn


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(4, 4)

    def _chunk_mask(self, n):
        return torch.ones(n, n).tril().bool()

    def forward(self, x):
        mask = self._chunk_mask(x.size(1))
        {first}
        return self.proj(x).masked_fill(~mask.unsqueeze(-1), 0.0)

    def pad_mask(self, x, lengths):
        {second}
        return mask & (torch.arange(x.size(1), device=x.device) < lengths.unsqueeze(1)).unsqueeze(1)
"""


@pytest.mark.parametrize(("first", "second", "moved"), [
    # every call moves the result where it needs it: the method's return is left as it is
    ("mask = mask.to(x.device)", "mask = self._chunk_mask(x.size(1)).to(x.device)", False),
    ("mask = mask.to(x.device)", "mask = self._chunk_mask(x.size(1))\n        mask = mask.cuda()", False),
    # one call uses the CPU result as it is: the method makes it on the module's device
    ("mask = mask.to(x.device)", "mask = self._chunk_mask(x.size(1))", True),
    ("pass", "mask = self._chunk_mask(x.size(1)).to(x.device)", True),
])
def test_a_result_every_caller_moves_at_once_needs_no_device_where_it_is_made(first, second, moved):
    """phi4's `_streaming_mask`: a method without a tensor input returns a CPU mask, and each caller
    moves it at once (`mask = mask.to(x.device)`)."""
    source = STREAMING.format(first=first, second=second)
    result = run_devfix(source, rules=[MethodTensorDevice]).fixed.decode()
    assert (result != source) is moved


STATIC_TARGETS = """import torch
import torch.nn as nn


class Head(nn.Module):
    def __init__(self):
        super().__init__()
        self.classifier = nn.Linear(4, 2)
        self.loss_fn = nn.CrossEntropyLoss()

    @staticmethod
    def targets(n{parameter}):
        return {made}

    def forward(self, h):
        logits = self.classifier(h)
        return self.loss_fn(logits, {call})
"""


@pytest.mark.parametrize(("parameter", "made", "call", "moved"), [
    ("", "torch.full((n,), 1).long()", "self.targets(h.size(0))", True),
    # the static method is given the device: its result is already there
    (", device", "torch.full((n,), 1, device=device).long()", "self.targets(h.size(0), h.device)", False),
    # a plain function of the file named like the method is no call of it
    ("", "torch.full((n,), 1).long()", "targets(h.size(0))", False),
])
def test_a_host_tensor_a_static_method_returns_goes_where_the_input_is(parameter, made, call, moved):
    """CLAM's `create_positive_targets(length)`: a static method has no module of its own to take a
    device from, so the caller moves what it returns."""
    source = STATIC_TARGETS.format(parameter=parameter, made=made, call=call)
    result = run_devfix(source, rules=[MethodTensorDevice]).fixed.decode()
    assert result == (source.replace(call, f"{call}.to(h.device)") if moved else source)


BOX_BIAS = """import torch
import torch.nn as nn
from transformers import PreTrainedModel


class Detector(PreTrainedModel):
    def __init__(self, config):
        super().__init__(config)
        self.box_head = nn.Linear(4, 4)
        self.box_bias = self.compute_box_bias(2, 2)

    @staticmethod
    def normalize_grid(h, w):
        xx, yy = torch.meshgrid(torch.arange(1, w + 1.0), torch.arange(1, h + 1.0), indexing="xy")
        grid = torch.stack((xx, yy), dim=-1)
        grid[..., 0] /= w
        return grid.view(-1, 2)

    def compute_box_bias(self, h, w):
        coords = self.normalize_grid(h, w)
        return torch.cat([coords, coords], dim=-1)

    def forward(self, feats, interpolate=False):
        if interpolate:
            box_bias = self.compute_box_bias(2, 2)
        else:
            box_bias = self.box_bias
        box_bias = box_bias.to(feats.device)
        return self.box_head(feats) + box_bias
"""


def test_a_static_methods_host_tensor_a_method_only_returns_is_left_to_its_callers():
    """OWLv2's `compute_box_bias`: run in `__init__` (maybe on the meta device) and moved by
    `box_predictor` where it is used; `.to(self.device)` inside it would be a rewrite of correct code."""
    assert run_devfix(BOX_BIAS, rules=[MethodTensorDevice]).fixed.decode() == BOX_BIAS

