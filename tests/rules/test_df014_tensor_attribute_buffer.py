"""DF014 leaves alone tensor attributes the code already places where it reads them, and complex
tables (a buffer would be cast by `.half()` and broadcast by DDP)."""

from __future__ import annotations

import pytest

from devfix.codemods import TensorAttributeBuffer
from tests.conftest import run_devfix

MODULE = """import torch
from torch import nn


def rotary_table(dim, end):
    freqs = 1.0 / (10000 ** (torch.arange(0, dim, 2).float() / dim))
    angles = torch.outer(torch.arange(end).float(), freqs)
    return torch.polar(torch.ones_like(angles), angles)


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.table = VALUE

    def forward(self, x):
        return self.fc(x) + READ
"""


def findings(value: str, read: str) -> list[str]:
    source = MODULE.replace("VALUE", value).replace("READ", read)
    return [finding.code for finding in run_devfix(source, fix=False, rules=[TensorAttributeBuffer]).findings]


@pytest.mark.parametrize("read", [
    "self.table.to(x.device, dtype=x.dtype)", "self.table.to(x.device)", "self.table.to(device=x.device)",
    "self.table.cuda()", "self.table.type_as(x)", "self.table.to(\"cuda\")", "self.table.to(x)",
])
def test_a_table_moved_where_every_method_reads_it_is_left_alone(read):
    assert findings("torch.randn(4)", read) == []


@pytest.mark.parametrize("read", ["self.table", "self.table.float()", "self.table.to(torch.float16)"])
def test_a_table_read_without_a_move_is_reported(read):
    assert findings("torch.randn(4)", read) == ["DF014"]


@pytest.mark.parametrize("value", ["rotary_table(4, 8)", "torch.polar(torch.ones(4), torch.zeros(4))", "torch.randn(4, dtype=torch.cfloat)"])
def test_a_complex_table_is_left_alone(value):
    assert findings(value, "self.table.real[0, :4]") == []


@pytest.mark.parametrize("value", [
    "torch.zeros(4, requires_grad=True)",
    "torch.zeros(4)\n        self.table.requires_grad = True",
    "torch.zeros(4)\n        self.table.requires_grad_()",
])
def test_a_trained_tensor_is_no_buffer(value):
    """A buffer's `.to()` copy is not what the optimizer updates: such a tensor needs `nn.Parameter`,
    which changes what is trained: reported without a fix."""
    source = MODULE.replace("VALUE", value).replace("READ", "self.table")
    result = run_devfix(source, rules=[TensorAttributeBuffer])
    assert [(finding.code, finding.fixable) for finding in result.findings] == [("DF014", False)]
    assert "nn.Parameter" in result.findings[0].message
    assert result.fixed.decode() == source


@pytest.mark.parametrize("value", [
    "torch.zeros(4)\n        self.table_optimizer = torch.optim.Adam([self.table], lr=0.01)",
    "torch.zeros(4, requires_grad=True)\n        self.table_optimizer = torch.optim.Adam([self.table], lr=0.01)",
])
def test_a_tensor_an_optimizer_of_the_class_trains_is_left_alone(value):
    """minimalRL's SAC: the entropy temperature is trained where its own optimizer wants it."""
    assert findings(value, "self.table") == []


@pytest.mark.parametrize(("value", "fixed"), [
    # AGNN's `self.beta`: `Variable(t)` is `t` since PyTorch 0.4
    ("Variable(torch.rand(1))", 'self.register_buffer("table", Variable(torch.rand(1)), persistent=False)'),
    ("Variable(torch.rand(1), requires_grad=False)", 'self.register_buffer("table", Variable(torch.rand(1), requires_grad=False), persistent=False)'),
    ("Variable(torch.rand(1), requires_grad=True)", None),  # trained: reported only
    ("Variable(torch.rand(1), requires_grad=requires_grad)", None),
])
def test_a_variable_is_the_tensor_it_wraps(value, fixed):
    source = MODULE.replace("import torch\n", "import torch\nfrom torch.autograd import Variable\n").replace(
        "def __init__(self):", "def __init__(self, requires_grad=True):").replace("VALUE", value).replace("READ", "self.table")
    result = run_devfix(source, rules=[TensorAttributeBuffer])
    assert result.fixed.decode() == (source.replace(f"self.table = {value}", fixed) if fixed else source)
    if fixed is None:
        assert [(finding.code, finding.fixable) for finding in result.findings] == [("DF014", False)]


BRANCHES = MODULE.replace("import torch\n", "import torch\nfrom torch.autograd import Variable\n").replace(
    "def __init__(self):", "def __init__(self, requires_grad=True):").replace(
    "        self.table = VALUE\n", "        if TEST:\n            self.table = FIRST\n        else:\n            self.table = SECOND\n").replace(
    "READ", "self.table")


@pytest.mark.parametrize(("test", "first", "second", "fixed"), [
    # AGNN: a Parameter when trained, else a plain tensor made without gradients (`requires_grad` is false there)
    ("requires_grad", "nn.Parameter(torch.rand(4))", "Variable(torch.zeros(4), requires_grad=requires_grad)", "SECOND"),
    ("not requires_grad", "Variable(torch.zeros(4), requires_grad=requires_grad)", "nn.Parameter(torch.rand(4))", "FIRST"),
    ("requires_grad", "torch.zeros(4)", "None", "FIRST"),
    ("requires_grad", "torch.zeros(4)", "torch.ones(4)", "FIRST SECOND"),  # each branch's own store
    ("requires_grad", "nn.Parameter(torch.rand(4))", "torch.zeros(4, device=torch.device('cpu'))", ""),  # placed where made
])
def test_an_attribute_stored_in_either_branch_of_an_if_is_a_buffer_where_a_tensor_is_stored(test, first, second, fixed):
    source = BRANCHES.replace("TEST", test).replace("FIRST", first).replace("SECOND", second)
    expected = source
    for branch, value in (("FIRST", first), ("SECOND", second)):
        if branch in fixed:
            expected = expected.replace(f"self.table = {value}\n", f'self.register_buffer("table", {value}, persistent=False)\n')
    assert run_devfix(source, rules=[TensorAttributeBuffer]).fixed.decode() == expected


def test_a_tensor_made_to_require_grad_where_the_flag_is_true_is_reported_only():
    source = BRANCHES.replace("TEST", "requires_grad").replace("FIRST", "Variable(torch.zeros(4), requires_grad=requires_grad)").replace(
        "SECOND", "None")
    result = run_devfix(source, rules=[TensorAttributeBuffer])
    assert result.fixed.decode() == source
    assert [(finding.code, finding.fixable) for finding in result.findings] == [("DF014", False)]


@pytest.mark.parametrize("stores", [
    # two stores in one branch, or in branches of two different `if`s: not one value per run
    "        if requires_grad:\n            self.table = torch.zeros(4)\n            self.table = torch.ones(4)\n",
    "        if requires_grad:\n            self.table = torch.zeros(4)\n        if not requires_grad:\n            self.table = torch.ones(4)\n",
    "        self.table = torch.zeros(4)\n        if requires_grad:\n            self.table = torch.ones(4)\n",
])
def test_stores_that_are_not_one_per_branch_of_an_if_are_left_alone(stores):
    source = MODULE.replace("def __init__(self):", "def __init__(self, requires_grad=True):").replace(
        "        self.table = VALUE\n", stores).replace("READ", "self.table")
    assert run_devfix(source, rules=[TensorAttributeBuffer]).fixed.decode() == source


@pytest.mark.parametrize(("value", "found"), [
    ("torch.randn(4) if torch.is_grad_enabled() else None", ["DF014"]),
    ("None if torch.is_grad_enabled() else torch.randn(4)", ["DF014"]),
    ("torch.randn(4) if torch.is_grad_enabled() else 1.0", []),
    ("nn.Parameter(torch.randn(4)) if torch.is_grad_enabled() else None", []),
])
def test_a_tensor_or_none_is_a_buffer_that_may_be_none(value, found):
    """A focal loss's `self.alpha = torch.tensor(alpha) if alpha is not None else None`:
    `register_buffer` takes `None` too, and reads see it as before; another value in the other
    branch is no buffer's."""
    assert findings(value, "self.table") == found


def test_a_tensor_or_none_is_registered_whole():
    source = MODULE.replace("VALUE", "torch.randn(4) if torch.is_grad_enabled() else None").replace("READ", "self.table")
    fixed = run_devfix(source, rules=[TensorAttributeBuffer]).fixed.decode()
    assert 'self.register_buffer("table", torch.randn(4) if torch.is_grad_enabled() else None, persistent=False)' in fixed


def test_a_tensor_made_without_gradients_is_still_a_buffer():
    assert findings("torch.zeros(4, requires_grad=False)", "self.table") == ["DF014"]


@pytest.mark.parametrize(("program", "found"), [
    ("model = Model()\nprint(model(torch.ones(4)))\n", []),  # on the CPU from start to end (minimalRL's V-trace)
    ("model = Model().to('cuda')\nprint(model(torch.ones(4, device='cuda')))\n", ["DF014"]),
])
def test_a_program_that_places_nothing_keeps_its_tensor_attributes(program, found):
    source = MODULE.replace("VALUE", "torch.randn(4)").replace("READ", "self.table") + "\n\n" + program
    assert [finding.code for finding in run_devfix(source, fix=False, rules=[TensorAttributeBuffer]).findings] == found


LIST_HEAD = """import torch
from torch import nn


class Head(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(4, 2, 1)
        self.anchors = {anchors}

    def forward(self, x):
        return self.conv(x).mean((2, 3)) * self.anchors[0]
{more}

head = Head().to("cuda")
"""


def test_a_list_of_tensors_becomes_buffers_and_a_property_that_lists_them():
    source = LIST_HEAD.format(anchors="[torch.tensor([1.0, 2.0]), torch.ones(2) * 3]", more="")
    fixed = run_devfix(source, rules=[TensorAttributeBuffer]).fixed.decode()
    assert 'self.register_buffer("anchors_0", torch.tensor([1.0, 2.0]), persistent=False)\n' \
           '        self.register_buffer("anchors_1", torch.ones(2) * 3, persistent=False)\n' in fixed
    assert "    @property\n    def anchors(self):\n        return [self.anchors_0, self.anchors_1]\n" in fixed


@pytest.mark.parametrize("anchors, more", [
    ("[torch.tensor([1.0, 2.0]), torch.ones(2)]", "\n    def grow(self):\n        self.anchors.append(torch.ones(2))\n"),
    ("[torch.tensor([1.0, 2.0]), torch.ones(2)]", "\n    def reset(self, x):\n        self.anchors[0] = x\n"),
    ("[torch.tensor([1.0, 2.0]), torch.ones(2)]", "\n\nclass Wide(Head):\n    def __init__(self):\n        super().__init__()\n"
                                                  "        self.anchors = [torch.ones(2)]\n"),  # a subclass stores its own list
    ("[torch.tensor([1.0, 2.0]), torch.ones(2)]", "\n    def anchors_0(self):\n        return 0\n"),  # the buffer's name is taken
    ("[torch.tensor([1.0, 2.0]), torch.ones(2, requires_grad=True)]", ""),  # trained
    ("[torch.tensor([1.0, 2.0]), torch.ones(2).cuda()]", ""),  # placed by hand
    ("[torch.tensor([1.0, 2.0]), 3.0]", ""),  # not all tensors
    ("[]", ""),
])
def test_a_list_that_changes_or_holds_other_things_is_left_alone(anchors, more):
    source = LIST_HEAD.format(anchors=anchors, more=more)
    result = run_devfix(source, rules=[TensorAttributeBuffer])
    assert result.fixed.decode() == source and not result.findings


def test_a_comprehension_of_tensors_becomes_buffers_registered_in_a_loop():
    source = LIST_HEAD.format(anchors="[torch.tensor(size) for size in [(1.0, 2.0), (3.0, 4.0)]]", more="")
    fixed = run_devfix(source, rules=[TensorAttributeBuffer]).fixed.decode()
    assert "        for index, tensor in enumerate([torch.tensor(size) for size in [(1.0, 2.0), (3.0, 4.0)]]):\n" \
           '            self.register_buffer(f"anchors_{index}", tensor, persistent=False)\n' in fixed
    assert '        return [buffer for key, buffer in self.named_buffers(recurse=False) if key.startswith("anchors_")]\n' in fixed


@pytest.mark.parametrize("anchors, more", [
    ("[torch.tensor(a) for a in [(1.0, 2.0)]]", "\n    def grow(self):\n        self.anchors.append(torch.ones(2))\n"),
    ("[torch.tensor(a) for a in [(1.0, 2.0)]]", "\n    def anchors_of(self):\n        return 0\n"),  # the prefix is spelled
    ("[torch.tensor(a) for a in [(1.0, 2.0)]]\n        index = 0", ""),  # the loop would rebind `index`
    ("[torch.tensor(a) for a in [(1.0, 2.0)]]\n        tensor = None", ""),
    ("[torch.tensor(a, device=a.device) for a in sizes]", ""),  # placed
    ("[torch.tensor(a) for row in [[(1.0, 2.0)]] for a in row]", ""),  # two loops
    ("[a for a in [torch.ones(2)]]", ""),  # the items are the names it iterates: made elsewhere
])
def test_a_comprehension_that_changes_or_clashes_is_left_alone(anchors, more):
    source = LIST_HEAD.format(anchors=anchors, more=more)
    result = run_devfix(source, rules=[TensorAttributeBuffer])
    assert result.fixed.decode() == source and not result.findings


HOST_READ = """import numpy as np
import torch
from torch import nn


class Head(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(2, 2)
        self.prior = {value}

    def forward(self, x):
        return self.fc(x)

    def describe(self):
        {read}


head = Head().to("cuda")
"""


@pytest.mark.parametrize("value, read", [
    ("torch.tensor([0.2, 0.8])", "return np.round(self.prior.numpy(), 2)"),
    ("torch.tensor([0.2, 0.8])", "return np.asarray(self.prior)"),
    ("[torch.tensor(p) for p in [(0.2, 0.8)]]", "return [p.numpy() for p in self.prior]"),
    ("[torch.tensor([0.2]), torch.tensor([0.8])]", "for p in self.prior:\n            print(p.numpy())"),
    ("torch.tensor([0.2, 0.8])", "p = self.prior\n        return p.numpy()"),
    ("torch.tensor([0.2, 0.8])", "p = self.prior\n        q = p * 2\n        return q.numpy()"),
    ("[torch.tensor([0.2]), torch.tensor([0.8])]", "for p in self.prior:\n            q = p + 1\n            print(q.numpy())"),
])
def test_a_tensor_a_method_hands_to_numpy_stays_on_the_cpu(value, read):
    """The method relies on the tensor being on the CPU: a buffer would follow the Module to the
    GPU, and `.numpy()` would then raise."""
    source = HOST_READ.format(value=value, read=read)
    result = run_devfix(source, rules=[TensorAttributeBuffer])
    assert result.fixed.decode() == source and not result.findings


@pytest.mark.parametrize("read", [
    "return self.prior.tolist()",
    "p = self.prior\n        other = np.zeros(2)\n        return p.tolist(), other",
])
def test_a_tensor_read_on_the_host_by_a_method_that_only_lists_it_is_still_a_buffer(read):
    """`.tolist()` works on any device; numpy used on another value of the method is no host read."""
    source = HOST_READ.format(value="torch.tensor([0.2, 0.8])", read=read)
    assert 'self.register_buffer("prior", torch.tensor([0.2, 0.8]), persistent=False)' in run_devfix(source, rules=[TensorAttributeBuffer]).fixed.decode()


POSITIONS = """import math

import torch
import torch.nn as nn


class PositionalEncoding(nn.Module):
    def __init__(self, num_patches, d_model, learned):
        super().__init__()
        self.position_enc = self._init_pe(num_patches, d_model, learned)

    @staticmethod
    def _init_pe(num_patches, d_model, learned){annotation}:
        if learned:
            return {learned}
        position_enc = torch.zeros(num_patches, d_model)
        position_enc[:, 0::2] = torch.sin(torch.arange(num_patches).unsqueeze(1) / 10000 ** (torch.arange(0, d_model, 2) / d_model))
        return {fixed}

    def forward(self, x):
        return x + self.position_enc
"""


@pytest.mark.parametrize(("annotation", "learned", "fixed"), [
    ("", "nn.Parameter(torch.randn(num_patches, d_model))", "nn.Parameter(position_enc, requires_grad=False)"),
    (" -> nn.Parameter", "torch.randn(num_patches, d_model)", "position_enc"),  # it says what it returns
])
def test_a_method_that_builds_parameters_is_no_table_for_a_buffer(annotation, learned, fixed):
    """patchtst's `_init_pe` returns `nn.Parameter`s: a buffer would never be trained nor loaded."""
    source = POSITIONS.format(annotation=annotation, learned=learned, fixed=fixed)
    result = run_devfix(source, rules=[TensorAttributeBuffer])
    assert result.fixed.decode() == source and not result.findings


def test_a_method_that_builds_plain_tensors_makes_a_buffer():
    source = POSITIONS.format(annotation="", learned="torch.randn(num_patches, d_model)", fixed="position_enc")
    fixed = run_devfix(source, rules=[TensorAttributeBuffer]).fixed.decode()
    assert 'self.register_buffer("position_enc", self._init_pe(num_patches, d_model, learned), persistent=False)' in fixed


DENOISER = """import torch
import torch.nn as nn


class Denoiser(nn.Module):
    def __init__(self, n, steps):
        super().__init__()
        self.net = nn.Linear(n, n)
        self.betas = torch.linspace(1e-3, 2e-2, steps).view(-1, 1)

    def step(self, y, t):
        noise = self.net(y.to(self.net.weight.device)){back}
        drift = y - torch.sign(-noise * torch.sign(y))
        return y - drift * self.betas[t]
"""


def test_a_table_a_method_combines_with_values_it_brought_to_the_host_stays_a_plain_attribute():
    host = DENOISER.format(back=".cpu()")
    result = run_devfix(host, path="denoiser.py", rules=[TensorAttributeBuffer])
    assert not result.findings and result.fixed.decode() == host
    on_the_device = run_devfix(DENOISER.format(back=""), path="denoiser.py", rules=[TensorAttributeBuffer])
    assert 'self.register_buffer("betas", torch.linspace(1e-3, 2e-2, steps).view(-1, 1), persistent=False)' in on_the_device.fixed.decode()
    numbers = run_devfix(DENOISER.format(back=".cpu().item()"), path="denoiser.py", rules=[TensorAttributeBuffer])
    assert "register_buffer" in numbers.fixed.decode()  # `.item()` gives a number, which meets a CUDA table fine


def test_an_attribute_a_method_stores_does_not_make_every_self_read_a_read_of_the_table():
    source = (
        "import torch\nimport torch.nn as nn\n\n\nclass Scaler(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
        "        self.fc = nn.Linear(2, 2)\n        self.factor = 0.5\n        self.scale = torch.ones(2)\n\n"
        "    def forward(self, x):\n        self.last = self.scale * x\n        self.summary = x.cpu() * self.factor\n"
        "        return self.fc(x) * self.scale\n"
    )
    fixed = run_devfix(source, path="scaler.py", rules=[TensorAttributeBuffer]).fixed.decode()
    assert 'self.register_buffer("scale", torch.ones(2), persistent=False)' in fixed


EMBEDDER = """import torch
from torch import nn


class Encoder(nn.Module):
    def __init__(self, atoms):
        super().__init__()
        self.E_c = {layers}
        self.E_a = torch.eye(atoms).cuda()

    def forward(self, ids):
        return self.E_c(ids) + self.E_a.index_select(0, ids)[:, :4].sum()
"""


@pytest.mark.parametrize("layers, dropped", [
    ("nn.Sequential(nn.Embedding(10, 4), nn.Dropout(0.1))", True),  # hgraph2graph's encoder
    ("nn.ModuleList([nn.Linear(4, 4)])", True),
    ("nn.Sequential(nn.ReLU(), nn.Dropout(0.1))", False),  # no parameter: nothing moves the module
])
def test_a_gpu_placement_is_dropped_when_the_layers_in_a_container_hold_parameters(layers, dropped):
    fixed = run_devfix(EMBEDDER.format(layers=layers), rules=[TensorAttributeBuffer]).fixed.decode()
    buffer = 'self.register_buffer("E_a", torch.eye(atoms){}, persistent=False)'
    assert buffer.format("" if dropped else ".cuda()") in fixed


REGISTERED_THEN_ASSIGNED = """import torch
from torch import Tensor, nn


class FeatureMap(nn.Module):
    def __init__(self, weight: Tensor, bias: Tensor) -> None:
        super().__init__()
        {register}
        self.weight = weight
        self.bias = bias

    def forward(self, x: Tensor) -> Tensor:
        return x @ self.weight.T + self.bias
"""


def test_an_attribute_registered_as_a_buffer_is_updated_not_registered_again():
    """botorch's `FourierFeatureMap`: `self.register_buffer("weight", weight)` then `self.weight =
    weight` assigns the buffer; registering it again with `persistent=False` would drop it from
    `state_dict()`."""
    registered = REGISTERED_THEN_ASSIGNED.format(register='self.register_buffer("weight", weight)\n        self.register_buffer("bias", bias)')
    result = run_devfix(registered, path="maps.py", rules=[TensorAttributeBuffer])
    assert result.fixed.decode() == registered and not result.findings
    built = "\n\ndef build():\n    return FeatureMap(torch.randn(4, 3), torch.zeros(4))\n"  # the tensors it is given are made for it
    plain = run_devfix(REGISTERED_THEN_ASSIGNED.format(register="self.scale = 1.0") + built, path="maps.py", rules=[TensorAttributeBuffer])
    assert 'self.register_buffer("weight", weight, persistent=False)' in plain.fixed.decode()



WALK_SAMPLER = """import torch
from torch import Tensor
from torch.nn import Embedding
from torch.utils.data import DataLoader


class MetaPath2Vec(torch.nn.Module):
    def __init__(self, count, embedding_dim, walk_length, offset):
        super().__init__()
        self.walk_length = walk_length
        self.offset = torch.tensor(offset)
        self.embedding = Embedding(count + 1, embedding_dim)

    def forward(self, batch: Tensor) -> Tensor:
        return self.embedding(batch)

    def loader(self, **kwargs):
        return DataLoader(range(10), collate_fn=self._sample, **kwargs)

    def _pos_sample(self, batch: Tensor) -> Tensor:
        rw = torch.stack([batch] * (self.walk_length + 1), dim=-1)
        rw.add_(self.offset.view(1, -1))
        return rw

    def _sample(self, batch):
        if not isinstance(batch, Tensor):
            batch = torch.tensor(batch, dtype=torch.long)
        return self._pos_sample(batch)
"""


@pytest.mark.parametrize("handed", [True, False])
def test_a_table_a_loaders_collate_method_reads_stays_on_the_cpu(handed):
    """PyG's `MetaPath2Vec.offset`: `_pos_sample`, which `collate_fn=self._sample` runs in the
    loader, adds it to walks sampled on the host; a buffer would move it with the model."""
    source = WALK_SAMPLER if handed else WALK_SAMPLER.replace("collate_fn=self._sample", "collate_fn=None")
    result = run_devfix(source, path="metapath2vec.py", rules=[TensorAttributeBuffer])
    assert ('self.register_buffer("offset"' in result.fixed.decode()) is not handed


DEVICE_ATTRIBUTE = """import torch


class Filterbank(torch.nn.Module):
    def __init__(self, n_mels=40):
        super().__init__()
        self.device_inp = torch.device("cpu")
        self.mel = torch.linspace(0, 1, n_mels)

    def forward(self, spectrogram):
        zero = torch.zeros(1, device=self.device_inp)
        return torch.max(zero, spectrogram) * self.mel.sum()
"""


def test_a_torch_device_is_no_tensor_because_torch_has_members_tensors_have():
    """speechbrain's `self.device_inp = torch.device("cpu")`: `torch.device`, `torch.split` are
    members of the torch module, not evidence that `torch` is a tensor; `register_buffer` would
    raise TypeError on a device."""
    fixed = run_devfix(DEVICE_ATTRIBUTE, rules=[TensorAttributeBuffer]).fixed.decode()
    assert "self.device_inp = torch.device(\"cpu\")" in fixed
    assert 'self.register_buffer("mel", torch.linspace(0, 1, n_mels), persistent=False)' in fixed


COMPUTED_FROM_PLACED_STATE = """import torch
from torch import nn


class Hydra(nn.Module):
    def __init__(self, n, device="cpu"):
        super().__init__()
        self.dilations = 2 ** torch.arange(n{placed})
        self.paddings = torch.div(8 * self.dilations, 2, rounding_mode="floor").int()
        self.fc = nn.Linear(4, 4)

    def forward(self, x):
        return self.fc(x) * self.paddings[0] + self.dilations[0]
"""


@pytest.mark.parametrize("placed", [True, False])
def test_a_table_computed_from_state_placed_with_a_given_device_is_placed_too(placed):
    """tsai's HydraPlus places `self.dilations` with the device it is given and computes
    `self.paddings` from it: the layer places both itself."""
    source = COMPUTED_FROM_PLACED_STATE.format(placed=", device=device" if placed else "")
    fixed = run_devfix(source, rules=[TensorAttributeBuffer]).fixed.decode()
    assert ('self.register_buffer("paddings"' in fixed) is not placed


STATE_OF_THE_BASE_LAYER = """import numpy as np
import torch
from torch import nn


class SinusoidalPositionalEmbedding({base}):
    def __init__(self, num_positions: int, embedding_dim: int) -> None:
        super().__init__({arguments})
        self.weight = self._init_weight({source})

    @staticmethod
    def _init_weight(out: torch.Tensor) -> torch.Tensor:
        out.requires_grad = False
        out[:, :] = torch.FloatTensor(np.sin(np.arange(out.numel()).reshape(out.shape)))
        out.detach_()
        return out

    def forward(self, ids):
        return self.weight[ids]
"""


@pytest.mark.parametrize("base, arguments, source, kept", [
    ("nn.Embedding", "num_positions, embedding_dim", "self.weight", True),  # gluonts' PatchTST
    ("nn.Embedding", "num_positions, embedding_dim", "torch.zeros(num_positions, embedding_dim)", True),
    ("nn.Module", "", "torch.zeros(num_positions, embedding_dim)", False),
])
def test_the_state_of_a_torch_layer_the_class_derives_from_is_no_plain_attribute(base, arguments, source, kept):
    """gluonts' `self.weight = self._init_weight(self.weight)` in an `nn.Embedding` subclass:
    `weight` is the base's Parameter; `register_buffer("weight", ...)` raises KeyError."""
    code = STATE_OF_THE_BASE_LAYER.format(base=base, arguments=arguments, source=source)
    fixed = run_devfix(code, rules=[TensorAttributeBuffer]).fixed.decode()
    assert (fixed == code) is kept


SCRATCH_ON_THE_ACCELERATOR = """import torch
from torch import nn


def get_accelerator():
    return torch.cuda if torch.cuda.is_available() else None


class RaggedEmbedding(nn.Module):
    def __init__(self, max_tokens, dim):
        super().__init__()
        self.embed = nn.Embedding(100, dim)
        self._output = torch.empty((max_tokens, dim){placed})

    def forward(self, ids):
        out = self._output[: ids.numel()]
        out.copy_(self.embed(ids))
        return out
"""


@pytest.mark.parametrize("placed, kept", [(", device=get_accelerator().current_device()", True), ("", False)])
def test_scratch_state_placed_where_the_layer_asks_is_left_alone(placed, kept):
    """DeepSpeed's inference modules make scratch tensors with `device=get_accelerator().current_device()`:
    placed deliberately where the layer asks, like a device the constructor is given."""
    source = SCRATCH_ON_THE_ACCELERATOR.format(placed=placed)
    fixed = run_devfix(source, rules=[TensorAttributeBuffer]).fixed.decode()
    assert (fixed == source) is kept


GIVEN_STATE = """from collections import OrderedDict

import torch
from torch import nn


class Block(nn.Module):
    def __init__(self, d_model: int, proj_weight: {annotation}, attn_mask: torch.Tensor = None):
        super().__init__()
        self.ln = nn.LayerNorm(d_model)
        self.proj_weight = proj_weight
        self.attn_mask = attn_mask

    def forward(self, x: torch.Tensor):
        out = self.ln(x) @ self.proj_weight.T
        if self.attn_mask is not None:
            out = out + self.attn_mask[..., -x.shape[0]:].to(dtype=x.dtype, device=x.device)
        return out
"""


@pytest.mark.parametrize("annotation, built, kept", [
    ("nn.Parameter", "", True),
    ("torch.Tensor", "", True),  # nothing in the file says what it is given: maybe another Module's Parameter
    ("torch.Tensor", "\n\nblock = Block(8, torch.randn(8, 8))\n", False),  # made for it: its own state
])
def test_a_given_parameter_and_a_mask_moved_where_read_are_left_alone(annotation, built, kept):
    """fairscale's MEVO keeps `proj_weight: nn.Parameter` (tied weights: assigning it registers the
    Parameter); CLIP's `attn_mask` is moved where it is read, after a None test."""
    source = GIVEN_STATE.format(annotation=annotation) + built
    fixed = run_devfix(source, rules=[TensorAttributeBuffer]).fixed.decode()
    assert 'register_buffer("attn_mask"' not in fixed
    assert ('register_buffer("proj_weight"' in fixed) is not kept


BASE_ESTIMATOR = (
    "import torch\nfrom torch import nn\n\n\nclass VectorFieldEstimator(nn.Module):\n"
    "    def __init__(self, shape):\n        super().__init__()\n"
    "        {registration}\n\n"
    "    def base_mean(self):\n        return self._mean_base\n"
)
SCORE_ESTIMATOR = (
    "    def __init__(self, shape, t_max):\n        super().__init__(shape)\n"
    "        self._mean_base = torch.full((1, shape), t_max).clone()\n\n"
    "    def forward(self, x):\n        return x - self._mean_base\n"
)


@pytest.mark.parametrize(("registration", "registered"), [
    ("self.register_buffer('_mean_base', torch.zeros(1, shape))", True),
    ("self.register_buffer(name='_mean_base', tensor=torch.zeros(1, shape))", True),
    ("self.scale = 1.0", False),
])
def test_a_buffer_a_base_of_another_file_registered_is_updated_by_assignment(tmp_path, registration, registered):
    """sbi's score estimator assigns `self._mean_base`, which its base (another file) registered: a
    second, non-persistent registration would drop the key from the state dict."""
    (tmp_path / "base.py").write_text(BASE_ESTIMATOR.format(registration=registration))
    source = "import torch\n\nfrom base import VectorFieldEstimator\n\n\nclass ScoreEstimator(VectorFieldEstimator):\n" + SCORE_ESTIMATOR
    result = run_devfix(source, str(tmp_path / "score.py"), rules=[TensorAttributeBuffer])
    assert (result.fixed.decode() == source) is registered


def test_a_buffer_a_base_of_the_same_file_registered_is_updated_by_assignment():
    source = (BASE_ESTIMATOR.format(registration="self.register_buffer('_mean_base', torch.zeros(1, shape))")
              + "\n\nclass ScoreEstimator(VectorFieldEstimator):\n" + SCORE_ESTIMATOR)
    assert run_devfix(source, rules=[TensorAttributeBuffer]).fixed.decode() == source


@pytest.mark.parametrize(("construction", "registered"), [
    ("Sampler(self.weight_mu, self.weight_rho)", False),  # the layer's own Parameters, shared
    ("Sampler(torch.zeros(4), torch.ones(4))", True),  # tensors made for it: its state
    ("Sampler(nn.Parameter(torch.zeros(4)), nn.Parameter(torch.ones(4)))", False),
])
def test_a_tensor_the_constructor_is_given_is_registered_only_when_every_construction_makes_one(construction, registered):
    """torch-uncertainty's `TrainableDistribution(self.weight_mu, self.weight_sigma)`: `self.mu = mu`
    registers the layer's `nn.Parameter` (a Module's `__setattr__`); a buffer would be a `.to()`
    copy the optimizer never updates."""
    source = (
        "import torch\nimport torch.nn as nn\nfrom torch import Tensor\n\n\nclass Sampler(nn.Module):\n"
        "    def __init__(self, mu: Tensor, rho: Tensor):\n        super().__init__()\n        self.mu = mu\n        self.rho = rho\n\n"
        "    def sample(self):\n        return self.mu + torch.log1p(torch.exp(self.rho)) * torch.randn_like(self.mu)\n\n\n"
        "class BayesLinear(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
        "        self.weight_mu = nn.Parameter(torch.zeros(4))\n        self.weight_rho = nn.Parameter(torch.ones(4))\n"
        f"        self.sampler = {construction}\n\n    def forward(self, x):\n        return x * self.sampler.sample()\n"
    )
    result = run_devfix(source, rules=[TensorAttributeBuffer]).fixed.decode()
    assert ('self.register_buffer("mu", mu, persistent=False)' in result) is registered


@pytest.mark.parametrize(("init", "registered"), [
    ("self.initial_random_state = rng.get_state()", False),  # deepinv's SDE solver: `rng: torch.Generator | None`
    ("self.initial_random_state = torch.get_rng_state()", False),
    ("self.initial_random_state = torch.zeros(3)", True),
])
def test_a_random_generators_state_stays_on_the_host(init, registered):
    """`self.rng.set_state(self.initial_random_state)` takes a CPU ByteTensor only: a buffer moved
    with the Module would make it raise. `rng.device` is a generator's, no sign of a tensor."""
    source = (
        "import torch\nfrom torch import nn\n\n\nclass Solver(nn.Module):\n"
        "    def __init__(self, drift: nn.Module, rng: torch.Generator | None = None):\n        super().__init__()\n"
        "        self.drift = drift\n        self.rng = rng\n        if rng is not None:\n"
        f"            {init}\n            self.timesteps = torch.linspace(0, 1, 5).to(rng.device)\n\n"
        "    def reset(self):\n        self.rng.set_state(self.initial_random_state)\n\n"
        "    def forward(self, x):\n        return self.drift(x)\n"
    )
    result = run_devfix(source, rules=[TensorAttributeBuffer]).fixed.decode()
    assert ('register_buffer("initial_random_state"' in result) is registered


SCALED_SCORES = """import torch
from torch import nn


class Attention(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.q = nn.Linear(d, d)
        self.scale = {scale}

    def forward(self, x):
        scores = self.q(x) @ x.transpose(-1, -2)
        return {use}
"""


@pytest.mark.parametrize(("scale", "use", "registered"), [
    ("torch.sqrt(torch.tensor(float(d)))", "scores / self.scale", False),  # 0-dim: joins CUDA scores as it is
    ("torch.tensor(8.0) * 2", "scores / self.scale", False),
    ("torch.sqrt(torch.FloatTensor([d]))", "scores / self.scale", True),  # one dimension: a device error on a GPU
    ("torch.sqrt(torch.tensor(float(d)))", "torch.div(scores, self.scale)", True),  # not an operator: not proven
])
def test_a_zero_dim_scale_read_only_in_arithmetic_stays_an_attribute(scale, use, registered):
    """The bentrevett seq2seq attention's `self.scale`: a 0-dim CPU tensor in `scores / self.scale`
    is allowed beside CUDA scores, so the code is right as it is; `torch.FloatTensor([d])` is not."""
    fixed = run_devfix(SCALED_SCORES.format(scale=scale, use=use), rules=[TensorAttributeBuffer]).fixed.decode()
    assert ('self.register_buffer("scale"' in fixed) is registered
