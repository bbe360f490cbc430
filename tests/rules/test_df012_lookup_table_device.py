"""DF012 on arithmetic: a plain object's CPU tables meet a method argument."""

from __future__ import annotations

import pytest

from devfix.codemods import LookupTableDevice
from tests.conftest import run_devfix

NORMALIZER = (
    "import torch\n\n\nclass Normalizer:\n    def __init__(self, mean, std):\n"
    "        self.mean = torch.tensor(mean)\n        self.std = torch.tensor(std)\n\n"
    "    def __call__(self, x):\n        return (x - self.mean) / self.std\n"
)


def fix(source: str):
    return run_devfix(source, rules=[LookupTableDevice])


PLACES = "\n\ndevice = torch.device('cuda')"  # a program that places something (else it runs on the CPU)


def test_an_argument_without_tensor_evidence_gets_a_diagnostic_but_no_fix():
    result = fix(NORMALIZER + PLACES + "\nnormalize = Normalizer([0.5], [0.2])\nprint(normalize(3.0))\n")
    assert result.fixed == result.source  # `x` may be a float: `x.device` would not exist
    assert [finding.fixable for finding in result.findings] == [False, False]


def test_a_tensor_passed_at_every_call_is_evidence():
    source = NORMALIZER + PLACES + "\nnormalize = Normalizer([0.5], [0.2])\nprint(normalize(torch.ones(2)))\n"
    assert "(x - self.mean.to(x.device)) / self.std.to(x.device)" in fix(source).fixed.decode()


def test_a_program_that_places_nothing_is_left_alone():
    """Dive-into-DL's linear regression from scratch: `features.index_select(0, j)` with `j =
    torch.LongTensor(...)`, on the CPU from start to end: no index is on a device."""
    source = NORMALIZER + "\n\nnormalize = Normalizer([0.5], [0.2])\nprint(normalize(torch.ones(2)))\n"
    result = fix(source)
    assert result.fixed == result.source and not result.findings


def test_one_call_with_a_number_is_enough_to_refuse():
    source = NORMALIZER + "\n\nnormalize = Normalizer([0.5], [0.2])\nprint(normalize(torch.ones(2)), normalize(1.0))\n"
    result = fix(source)
    assert result.fixed == result.source


def test_module_classes_are_left_to_the_module_rules():
    source = NORMALIZER.replace("class Normalizer:", "class Normalizer(torch.nn.Module):").replace(
        "def __init__(self, mean, std):\n", "def __init__(self, mean, std):\n        super().__init__()\n"
    ) + "\n\nnormalize = Normalizer([0.5], [0.2])\nprint(normalize(torch.ones(2)))\n"
    assert not fix(source).findings


CONDITIONAL = """
import torch
import torch.nn as nn

codes = torch.eye(4)


class Conditional(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(7, 1)

    def forward(self, x, y):
        return self.fc(torch.cat([x, codes[y]], dim=1))
{extra}

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
model = Conditional().to(device).eval()
x, y = torch.randn(2, 3).to(device), torch.randint(0, 4, (2,)).to(device)
{calls}
"""


def conditional(calls: str, extra: str = "") -> str:
    return fix(CONDITIONAL.format(calls=calls, extra=extra)).fixed.decode()


def test_a_top_level_table_indexed_in_forward_follows_the_tensor_every_call_gives():
    assert "codes.to(y.device)[y]" in conditional("print(model(x, y))\nprint(model(x * 2, y + 1))")
    assert "codes.to(y.device)[y]" in conditional("print(model(x, y=y))")  # by keyword


def test_forward_is_left_alone_when_someone_else_may_call_it():
    assert "codes[y]" in conditional("print(model(x, 1))")  # a number for `y` at one call
    assert "codes[y]" in conditional("print(model(x, **{\"y\": y}))")  # `**`: not understood
    assert "codes[y]" in conditional("print(model(x, y))\nprint(model(x, y=2))")  # a number by keyword
    assert "codes[y]" in conditional("print(model(x, y))\nprint(model.forward(x, 2))")
    assert "codes[y]" in conditional("print(model(x, y))\nrun(model)")  # handed on: `run` may pass a number
    assert "codes[y]" in conditional("print(model(x, y))\nother = Conditional()\nprint(other(x, 2))")
    assert "codes[y]" in conditional("print(model(x, y))", extra="\n    def first(self, x):\n        return self(x, 0)\n")


METER = """
import torch


class Meter:
    def __init__(self):
        self.count = torch.zeros(1)

    def update(self, preds, target):
        self.count += {value}


meter = Meter()
meter.update(torch.ones(3), torch.ones(3))
"""


def updated(value: str) -> str:
    return fix(METER.format(value=value)).fixed.decode()


def test_a_counter_updated_in_place_aligns_the_value_computed_from_the_inputs():
    assert "self.count += (preds == target).sum().to(self.count.device)" in updated("(preds == target).sum()")
    assert "self.count += (preds - target).to(self.count.device)" in updated("preds - target")


def test_a_counter_fed_host_or_placed_values_is_left_alone():
    for value in ("(preds == target).sum().item()", "torch.ones(1)", "(preds == target).sum().cpu()", "1"):
        assert f"self.count += {value}\n" in updated(value)


CONSTANTS = (
    "import numpy as np\nimport torch\n\ndevice = torch.device('cuda')\nMEAN = torch.tensor([0.5, 0.4]).view(1, 2)\n\n\n"
    "def normalize(x):\n    return x - MEAN\n\n\n{calls}"
)


def test_top_level_constants_meet_a_parameter_callers_give_on_a_device():
    fixed = run_devfix(CONSTANTS.format(calls="print(normalize(torch.rand(3, 2).to(device)))\n"), rules=[LookupTableDevice]).fixed.decode()
    assert "    return x - MEAN.to(x.device)\n" in fixed


def test_top_level_constants_stay_when_no_caller_gives_a_device_tensor_or_one_gives_something_else():
    for calls in (
        "print(normalize(torch.rand(3, 2)))\n",  # on the host: consistent
        "print(normalize(torch.rand(3, 2).to(device)))\nprint(normalize(np.ones((3, 2))))\n",  # an array has no `.device`
        "f = normalize\nprint(f(torch.rand(3, 2).to(device)))\n",  # callers unknown
    ):
        source = CONSTANTS.format(calls=calls)
        result = run_devfix(source, rules=[LookupTableDevice])
        assert result.fixed == result.source, calls


CLASS_CONSTANT = (
    "import torch\nfrom torch import nn\n\n\nclass Net(nn.Module):\n    MEAN = {constant}\n\n"
    "    def __init__(self):\n        super().__init__()\n        self.lin = nn.Linear(3, 3)\n{store}\n"
    "    def forward(self, x):\n        return self.lin(x - self.MEAN)\n\n\n"
    "net = Net().to('cuda')\nprint(net({argument}))\n"
)


def test_a_class_constant_of_a_module_meets_a_tensor_given_to_forward_and_is_aligned():
    source = CLASS_CONSTANT.format(constant="torch.zeros(3)", store="", argument="torch.ones(2, 3).cuda()")
    assert "self.lin(x - self.MEAN.to(x.device))" in fix(source).fixed.decode()


def test_class_constants_placed_shadowed_or_not_tensors_are_left_alone():
    for constant, store in (
        ("torch.zeros(3).cuda()", ""),  # placed where it is made
        ("torch.zeros(3)", "        self.MEAN = 0.5\n"),  # the instance's own value
        ("[0.0, 0.0, 0.0]", ""),  # no tensor
    ):
        source = CLASS_CONSTANT.format(constant=constant, store=store, argument="torch.ones(2, 3).cuda()")
        result = fix(source)
        assert result.fixed == result.source and not result.findings, constant


def test_a_class_constant_meeting_a_number_gets_a_diagnostic_but_no_fix():
    result = fix(CLASS_CONSTANT.format(constant="torch.zeros(3)", store="", argument="3.0"))
    assert result.fixed == result.source and [finding.fixable for finding in result.findings] == [False]


GATHER = """import torch

betas = torch.linspace(1e-4, 0.02, 10)
alphas = torch.cumprod(1 - betas, dim=0)


def extract(a, t):
    return {read}


device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
t = torch.randint(0, 10, (4,), device=device)
print(extract(alphas, t))
"""


def test_a_handed_table_gathered_with_tensor_indices_goes_where_they_are():
    for read, fixed in (
        ("a.gather(-1, t)", "a.to(t.device).gather(-1, t)"),
        ("a.gather(dim=-1, index=t)", "a.to(t.device).gather(dim=-1, index=t)"),
        ("a.index_select(0, t)", "a.to(t.device).index_select(0, t)"),
        ("a.take(t)", "a.to(t.device).take(t)"),
    ):
        assert f"    return {fixed}\n" in fix(GATHER.format(read=read)).fixed.decode()


def test_gathers_with_host_indices_or_other_indices_are_left_alone():
    for read in ("a.gather(-1, t.cpu())", "a.gather(-1, torch.tensor([1, 2]))", "a.gather(-1)"):
        source = GATHER.format(read=read)
        assert fix(source).fixed.decode() == source


def test_a_torch_function_reading_a_top_level_table_by_device_indices_aligns_the_table():
    source = (
        "import torch\nimport torch.nn.functional as F\n\nTABLE = torch.randn(10, 4)\nSCALE = torch.rand(10)\n\n\n"
        "def lookup(ids):\n    return F.embedding(ids, weight=TABLE) * torch.gather(SCALE, 0, ids).unsqueeze(-1)\n\n\n"
        "print(lookup(torch.arange(3).cuda()))\n"
    )
    fixed = fix(source).fixed.decode()
    assert "F.embedding(ids, weight=TABLE.to(ids.device)) * torch.gather(SCALE.to(ids.device), 0, ids)" in fixed
    host = source.replace("print(lookup(torch.arange(3).cuda()))", "print(lookup([1, 2]))")
    assert fix(host).fixed == fix(host).source  # a list of indices: no tensor to align with


POINTS = (
    "import torch\n\n\nclass Points:\n    def __init__(self, labels, u):\n"
    "        self.i = torch.as_tensor(labels)\n        self.u = torch.as_tensor(u)\n\n"
    "    def scaled(self, t: torch.Tensor):\n{body}" + PLACES + "\n"
)


def test_an_index_made_from_the_objects_own_tables_and_writes_into_them_are_left_alone():
    # DensePose's `_flip_iuv_semantics`: `mask = i_old == k` of `i_old = self.i.clone()`, then
    # `self.i[mask] = ...` and `self.u[mask] * 255`: the mask is where the tables are, and `.to()`
    # in front of a write would write into a copy
    body = ("        i_old = self.i.clone()\n        mask = i_old == 1\n        self.i[mask] = 2\n"
            "        self.u[t] += 1\n        return (self.u[mask] * 255).long()\n")
    result = fix(POINTS.format(body=body))
    assert result.fixed == result.source
    read = "        return self.u[t] * 2\n"  # the caller's tensor index still aligns the table
    assert "self.u.to(t.device)[t]" in fix(POINTS.format(body=read)).fixed.decode()


SCHEDULE = '''import torch


class Scheduler:
    def __init__(self, steps=10, device="cpu"):
        self.betas = torch.linspace(1e-4, 0.02, steps){move}
        self.alphas = 1.0 - self.betas
        self.alphas_cumprod = torch.cumprod(self.alphas, dim=0)
        self.alpha_t = torch.sqrt(self.alphas_cumprod)

    def add_noise(self, x, t):
        self.alphas_cumprod = self.alphas_cumprod.to(device=x.device)
        return x * self.alphas_cumprod[t]

    def step(self, model_output, timestep):
        return model_output * self.alpha_t[timestep]


scheduler = Scheduler()
device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
out = torch.randn(2, device=device)
print(scheduler.step(out, torch.tensor([1, 2], device=device)))
'''


def test_tables_computed_from_one_the_same_method_placed_are_placed_too():
    placed = run_devfix(SCHEDULE.format(move=".to(device)"), rules=[LookupTableDevice])
    assert "self.alpha_t[timestep]" in placed.fixed.decode()  # `__init__` moved `betas`: all of it follows
    unplaced = run_devfix(SCHEDULE.format(move=""), rules=[LookupTableDevice])
    # `add_noise` moves `alphas_cumprod` later: `alpha_t`, made from it in `__init__`, stays on the CPU
    assert "self.alpha_t.to(timestep.device)[timestep]" in unplaced.fixed.decode()


def test_a_handed_table_read_with_an_index_made_on_the_host_here_is_left_alone():
    # a training step drawing its own minibatch: `perm = torch.randperm(n)`, `X[idx]` of the full CPU data
    source = (
        "import torch\nfrom torch import nn\n\ndevice = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"
        "X, y = torch.randn(40, 5), torch.randint(0, 3, (40,))\nmodel = nn.Linear(5, 3).to(device)\n\n\n"
        "def train_epoch(model, X, y):\n    perm = torch.randperm(len(X))\n    for i in range(0, len(X), 8):\n"
        "        idx = perm[i:i + 8]\n        xb, yb = X[idx].to(device), y[idx].to(device)\n"
        "        nn.functional.cross_entropy(model(xb), yb).backward()\n\n\ntrain_epoch(model, X, y)\n"
    )
    result = fix(source)
    assert result.fixed == result.source and not result.findings


SWAPPER_SIZES = """import torch


class OptimizerSwapper:
    def __init__(self, dtype, min_aio_bytes):
        self.min_aio_bytes = min_aio_bytes
        self.swap_element_size = torch.tensor([], dtype=dtype){size}

    def swappable_tensor(self, param=None, numel=None):
        if param is not None:
            return self.min_aio_bytes <= (param.numel() * self.swap_element_size)
        return self.min_aio_bytes <= (numel * self.swap_element_size)
"""


def test_a_tensors_element_size_is_a_number():
    """DeepSpeed's `self.swap_element_size = torch.tensor([], dtype=dtype).element_size()` is an int;
    `param.numel() * self.swap_element_size` got `.to(param.device)` on it (AttributeError)."""
    source = SWAPPER_SIZES.format(size=".element_size()")
    result = run_devfix(source, path="optimizer_utils.py", rules=[LookupTableDevice])
    assert result.fixed.decode() == source and not result.findings


def test_statistics_of_samples_the_object_was_given_are_no_cpu_tables():
    """sbi's LC2ST: `self.theta_p_mean = torch.mean(self.theta_p, dim=0)` of the samples it was
    given lives where they do, maybe on a GPU: nothing proves a CPU table to align."""
    source = (
        "import torch\n\n\nclass Normalizer:\n    def __init__(self, samples):\n        self.samples = samples\n"
        "        self.mean = torch.mean(self.samples, dim=0)\n        self.std = torch.std(self.samples, dim=0)\n\n"
        "    def __call__(self, x: torch.Tensor):\n        return (x - self.mean) / self.std\n\n\n"
        "device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"
        "normalize = Normalizer(torch.randn(8, 2, device=device))\nprint(normalize(torch.randn(3, 2, device=device)))\n"
    )
    result = run_devfix(source, rules=[LookupTableDevice])
    assert result.fixed.decode() == source and not result.findings


@pytest.mark.parametrize(("stored", "table"), [
    ("w = w.detach().float()\n        self.u = -(torch.linalg.pinv(w) @ b)", False),
    ("self.u = torch.cumsum(w[w > 0].long(), dim=0)", False),
    ("self.u = w @ b", False),
    ("self.u = torch.linspace(0.0, 1.0, 2) * w", True),
    ("self.u = torch.tensor([0.5, 0.5])", True),
])
def test_a_table_computed_from_tensors_the_object_was_given_lives_where_they_do(stored, table):
    """pytorch-ood's ViM: `self.u = -(torch.linalg.pinv(w) @ b)` of the classifier's weights is on
    their device; a table the object makes with factories is on the CPU (`w` there may be a number)."""
    source = (
        "import torch\n\n\nclass Detector:\n    def __init__(self, w, b):\n"
        f"        {stored}\n\n"
        "    def score(self, x: torch.Tensor):\n        return (x - self.u).norm(dim=-1)\n"
    )
    result = run_devfix(source, rules=[LookupTableDevice])
    assert ("self.u.to(x.device)" in result.fixed.decode()) is table


@pytest.mark.parametrize(("construction", "table"), [("Schedule(make_betas(10))", True), ("Schedule(torch.rand(10, device=device))", False)])
def test_a_schedule_given_by_the_constructions_is_a_cpu_table_when_every_one_gives_a_host_tensor(construction, table):
    """A diffusion object given its betas: computed from what every construction in the file passes,
    made on the host by the file's helper, its tables are on the CPU; given a device tensor, not."""
    source = (
        "import torch\n\ndevice = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n\n\n"
        "def make_betas(n):\n    return torch.linspace(1e-4, 0.02, n)\n\n\n"
        "class Schedule:\n    def __init__(self, betas):\n        self.betas = betas\n"
        "        self.alphas_cumprod = torch.cumprod(1.0 - self.betas, dim=0)\n\n"
        "    def scale(self, x, t: torch.Tensor):\n        return x * self.alphas_cumprod[t]\n\n\n"
        f"schedule = {construction}\n"
        "print(schedule.scale(torch.ones(2, device=device), torch.tensor([1, 2], device=device)))\n"
    )
    assert ("self.alphas_cumprod.to(t.device)[t]" in run_devfix(source, rules=[LookupTableDevice]).fixed.decode()) is table


@pytest.mark.parametrize(("update", "aligned"), [
    ("self.correct[c] += (preds[mask] == c).sum()", "self.correct[c] += (preds[mask] == c).sum().to(self.correct.device)"),
    ("self.total[c] += mask.sum()", "self.total[c] += mask.sum().to(self.total.device)"),
    ("self.total[c] += 1", None),
])
def test_an_item_of_a_plain_meters_table_updated_with_a_given_device_tensor_takes_the_value_to_the_table(update, aligned):
    """A per-class accuracy meter keeps CPU counts; `meter.update(model(x).argmax(1), y)` gives it
    device tensors (a moved model's output through a tensor method, a loader's labels), and what the
    method computes from them (`mask = labels == c`) is a tensor too."""
    source = (
        "import torch\nimport torch.nn as nn\nfrom torch.utils.data import DataLoader, TensorDataset\n\n\n"
        "class ClassAccuracy:\n    def __init__(self, n):\n        self.correct = torch.zeros(n)\n        self.total = torch.zeros(n)\n\n"
        "    def update(self, preds, labels):\n        for c in range(len(self.correct)):\n            mask = labels == c\n"
        f"            {update}\n\n\n"
        "device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\nmodel = nn.Linear(4, 3).to(device)\n"
        "meter = ClassAccuracy(3)\nloader = DataLoader(TensorDataset(torch.randn(9, 4), torch.randint(0, 3, (9,))), batch_size=3)\n"
        "for x, y in loader:\n    x, y = x.to(device), y.to(device)\n    meter.update(model(x).argmax(1), y)\n"
    )
    result = run_devfix(source, rules=[LookupTableDevice]).fixed.decode()
    assert (aligned or update) in result and (aligned is not None or result == source)


TRACKER = """import torch
import torch.nn as nn


class LossTracker:
    def __init__(self):
        self.losses = torch.tensor([])

    def update(self, loss):
        self.losses = {join}

    def mean(self):
        return self.losses.mean().item()


device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
model = nn.Linear(4, 3).to(device)
criterion = nn.CrossEntropyLoss(reduction="none")
tracker = LossTracker()
x, y = torch.randn(4, 4).to(device), torch.randint(0, 3, (4,)).to(device)
tracker.update({argument})
"""


@pytest.mark.parametrize(("join", "fixed"), [
    ("torch.cat([self.losses, loss.detach()])", "torch.cat([self.losses, loss.detach().to(self.losses.device)])"),
    ("torch.cat((self.losses, loss), dim=0)", "torch.cat((self.losses, loss.to(self.losses.device)), dim=0)"),
    ("torch.cat([self.losses, loss.detach().cpu()])", None),  # placed by the user: the attribute is no proven CPU table
    ("torch.cat([self.losses, torch.ones(1)])", None),  # a host tensor: nothing to bring
])
def test_an_accumulator_joined_with_itself_takes_the_given_tensors_to_the_table(join, fixed):
    """modyn's RHO-LOSS selector: `self.rho_loss = torch.cat([self.rho_loss, loss])` of an attribute
    made empty on the CPU in `__init__`, with a loss of a moved model at every call. The join runs only
    where the loss is where the table is, so the table stays on the CPU: the loss is brought to it, as
    an update in place is."""
    source = TRACKER.format(join=join, argument="criterion(model(x), y)")
    result = fix(source)
    assert f"self.losses = {fixed or join}\n" in result.fixed.decode()
    assert [finding.code for finding in result.applied + result.findings] == (["DF012"] if fixed else [])


def test_an_accumulator_joined_with_an_argument_of_unknown_kind_gets_a_diagnostic_without_a_fix():
    result = fix(TRACKER.format(join="torch.cat([self.losses, loss * 2])", argument="compute()"))
    assert result.fixed == result.source
    assert [finding.fixable for finding in result.findings] == [False]


@pytest.mark.parametrize(("schedule", "tables"), [
    ("torch.linspace(1e-4, 0.02, self.steps)", True),
    ("torch.linspace(1e-4, 0.02, self.steps).to(self.device)", False),  # placed by the method
    ("torch.linspace(1e-4, 0.02, self.steps, device=self.device)", False),
    ("torch.tensor(0.02)", False),  # 0-dim: meets device tensors as it is
])
def test_tables_of_a_sampler_from_its_own_method_and_from_each_other(schedule, tables):
    """The diffusion tutorial's sampler without `.to(device)`: `self.beta = self.prepare_noise_schedule()`
    returning `torch.linspace(...)`, `self.alpha = 1.0 - self.beta` computed from it: both are CPU
    tables, indexed by the steps' device tensors in `sample`."""
    source = (
        "import torch\n\n\nclass Diffusion:\n    def __init__(self, steps=10, device='cuda'):\n"
        "        self.steps = steps\n        self.device = device\n"
        "        self.beta = self.prepare_noise_schedule()\n        self.alpha = 1.0 - self.beta\n\n"
        f"    def prepare_noise_schedule(self):\n        return {schedule}\n\n"
        "    def sample(self, n):\n        t = (torch.ones(n) * 3).long().to(self.device)\n"
        "        return self.alpha[t] * self.beta[t]\n\n\n"
        "print(Diffusion(device=torch.device('cuda')).sample(2))\n"
    )
    fixed = run_devfix(source, rules=[LookupTableDevice]).fixed.decode()
    assert ("return self.alpha.to(t.device)[t] * self.beta.to(t.device)[t]\n" in fixed) is tables
    assert tables or fixed == source
