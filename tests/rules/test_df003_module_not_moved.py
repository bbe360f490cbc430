from __future__ import annotations

import pytest

from devfix.analysis.torch_api import PARAMETER_FREE_NN
from devfix.codemods import ModuleNotMoved
from tests.conftest import run_devfix

HEADER = 'import torch\nfrom torch import nn\ndevice = torch.device("cpu")\nx = torch.ones(1, 2).to(device)\n'


def run(body: str):
    return run_devfix(HEADER + body, rules=[ModuleNotMoved])


def test_module_handed_to_other_code_is_left_alone():
    result = run("model = nn.Linear(2, 2)\nmodel = wrap(model)\nmodel(x)\n")
    assert result.fixed == result.source and not result.findings


def test_unknown_classes_are_not_moved():
    result = run("from transformers import AutoModel\nmodel = AutoModel.from_pretrained('m', device_map='auto')\nmodel(x)\n")
    assert result.fixed == result.source and not result.findings


def test_use_before_the_data_moves_is_not_a_finding():
    source = "import torch\nfrom torch import nn\ndevice = torch.device('cpu')\ny = torch.ones(1, 2)\nmodel = nn.Linear(2, 2)\nmodel(y)\ny = y.to(device)\n"
    result = run_devfix(source, rules=[ModuleNotMoved])
    assert result.fixed == result.source and not result.findings


def test_loss_without_tensor_arguments_needs_no_move():
    result = run("loss = nn.MSELoss()\nloss(x, x)\n")
    assert result.fixed == result.source and not result.findings


@pytest.mark.parametrize("layer", ["nn.UpsamplingBilinear2d(size=x.shape[-2:])", "nn.Unfold(kernel_size=2)", "nn.LogSigmoid()"])
def test_a_torch_layer_without_parameters_or_buffers_needs_no_move(layer):
    result = run(f"upsample = {layer}\nupsample(x)\n")  # pytorch-grad-cam's ScoreCAM
    assert result.fixed == result.source and not result.findings


def test_the_parameter_free_layers_hold_no_state_in_torch():
    import torch.nn as nn

    arguments = {"Threshold": (0.1, 0.0), "ConstantPad1d": (1, 0.0), "ConstantPad2d": (1, 0.0), "ConstantPad3d": (1, 0.0),
                 "Fold": (4, 2), "LPPool1d": (2, 2), "LPPool2d": (2, 2), "LPPool3d": (2, 2), "ChannelShuffle": (2,),
                 "FractionalMaxPool2d": (2, 2), "FractionalMaxPool3d": (2, 2), "LocalResponseNorm": (2,), "CrossMapLRN2d": (2,)}
    for name in sorted(PARAMETER_FREE_NN):
        cls = getattr(nn, name)
        args = arguments.get(name) or ((1,) if "Pad" in name or "Pool" in name or "Unpool" in name or name in ("Unfold", "PixelShuffle", "PixelUnshuffle") else ())
        layer = cls(*args) if name != "Unflatten" else cls(1, (1, 1))
        assert not list(layer.parameters()) and not list(layer.buffers()), name


def test_positional_loss_weight_counts_as_state():
    fixed = run("w = torch.ones(2)\nloss = nn.NLLLoss(w)\nloss(x, torch.zeros(1).long().to(device))\n").fixed.decode()
    assert "loss = nn.NLLLoss(w).to(device)" in fixed


def test_a_module_built_with_a_device_argument_places_itself():
    result = run("model = nn.Linear(2, 2, device=device)\nmodel(x)\n")
    assert result.fixed == result.source and not result.findings


STATELESS = "class Scaled(nn.Module):\n    def __init__(self, scale=2.0, inner=None):\n        super().__init__()\n        self.scale = scale\n        self.inner = inner\n\n    def forward(self, y):\n        return y * self.scale\n\n\n"


def test_a_class_that_stores_only_numbers_needs_no_move():
    result = run(STATELESS + "model = Scaled(0.5)\nmodel(x)\n")
    assert result.fixed == result.source and not result.findings


def test_a_class_given_a_module_to_store_is_moved():
    result = run(STATELESS + "model = Scaled(0.5, nn.Linear(2, 2))\nmodel(x)\n")
    assert b"model = Scaled(0.5, nn.Linear(2, 2)).to(device)\n" in result.fixed


def test_a_class_that_builds_or_registers_state_is_moved():
    for init in ("        self.w = nn.Parameter(torch.ones(2))\n", "        self.register_buffer('w', torch.ones(2))\n"):
        source = f"class Net(nn.Module):\n    def __init__(self):\n        super().__init__()\n{init}\n    def forward(self, y):\n        return y * self.w\n\n\nmodel = Net()\nmodel(x)\n"
        assert b"model = Net().to(device)\n" in run(source).fixed


STATELESS_WRAPPER = """
class AdversarialLoss(nn.Module):
    def __init__(self, smoothing=0.0):
        super().__init__()
        self.smoothing = smoothing
        self.loss = nn.MSELoss() if smoothing else nn.L1Loss()
        self.backup = {store}

    def forward(self, scores, target):
        return self.loss(scores, target * (1 - self.smoothing))


criterion = AdversarialLoss(0.1)
criterion(x, x)
"""


def test_a_class_holding_only_stateless_torch_modules_needs_no_move():
    result = run(STATELESS_WRAPPER.format(store="nn.ReLU()"))
    assert result.fixed == result.source and not result.findings


def test_a_class_holding_a_loss_with_weights_is_moved():
    fixed = run(STATELESS_WRAPPER.format(store="nn.CrossEntropyLoss(weight=torch.ones(2))")).fixed.decode()
    assert "criterion = AdversarialLoss(0.1).to(device)" in fixed


SMOOTHING = (
    "class Smoothing(nn.Module):\n    def __init__(self, classes, smoothing={default}):\n        super().__init__()\n"
    "        self.confidence = 1.0 - smoothing\n        self.share = {share}\n\n"
    "    def forward(self, y):\n        return y * self.confidence + self.share\n\n\n"
)


def test_a_class_that_stores_arithmetic_of_its_numbers_needs_no_move():
    result = run(SMOOTHING.format(default="0.1", share="smoothing / (classes - 1)") + "model = Smoothing(4)\nmodel(x)\n")
    assert result.fixed == result.source and not result.findings


def test_arithmetic_of_a_tensor_or_of_a_call_is_state():
    for default, share, build in (
        ("0.1", "smoothing / (classes - 1)", "Smoothing(4, torch.ones(2))"),  # given a tensor
        ("torch.ones(2)", "smoothing / (classes - 1)", "Smoothing(4)"),  # its default is a tensor
        ("0.1", "torch.ones(2) * smoothing", "Smoothing(4)"),  # builds a tensor
    ):
        fixed = run(SMOOTHING.format(default=default, share=share) + f"model = {build}\nmodel(x)\n").fixed.decode()
        assert f"model = {build}.to(device)\n" in fixed, (default, share)


WEIGHTED = (
    "class Weighted(nn.Module):\n    def __init__(self, weights={default}):\n        super().__init__()\n"
    "        self.weights = weights\n\n"
    "    def forward(self, a, b):\n        return self.weights[0] * a + self.weights[1] * b\n\n\n"
)


@pytest.mark.parametrize(("default", "build", "moved"), [
    ("(1.0, 0.5)", "Weighted()", False),  # a tuple of numbers: `.to()` moves no Python container
    ("(1.0, 0.5)", "Weighted([0.7, 0.3])", False),  # given a list of numbers
    ("(1.0, torch.ones(2))", "Weighted()", True),  # a tuple holding a tensor
    ("(1.0, 0.5)", "Weighted([torch.ones(2), 0.3])", True),  # given a list holding a tensor
])
def test_a_class_that_stores_displays_of_numbers_needs_no_move(default, build, moved):
    source = WEIGHTED.format(default=default) + f"model = {build}\nmodel(x, x)\n"
    assert (f"model = {build}.to(device)\n" in run(source).fixed.decode()) is moved


def test_a_loss_given_only_weights_already_on_the_device_needs_no_move():
    for weights in ("torch.ones(2).to(device)", "torch.ones(2, device=x.device).cuda()"):
        result = run(f"w = {weights}\ncriterion = nn.CrossEntropyLoss(weight=w)\ncriterion(x, torch.zeros(1, dtype=torch.long))\n")
        assert result.fixed == result.source and not result.findings, weights


def test_a_loss_given_weights_on_the_host_is_moved():
    fixed = run("w = torch.ones(2)\ncriterion = nn.CrossEntropyLoss(weight=w)\ncriterion(x, torch.zeros(1, dtype=torch.long))\n").fixed.decode()
    assert "criterion = nn.CrossEntropyLoss(weight=w).to(device)\n" in fixed


LATE_DEVICE = (
    "import torch\nfrom torch import nn\n\n\ndef train(model, device, xs):\n    return [model(x.to(device)) for x in xs]\n\n\n"
    "def main():\n    model = nn.Linear(4, 2)\n{device}    train(model, device, [torch.randn(3, 4)])\n\n\n"
    "def local():\n    model = nn.Linear(4, 2)\n{device}    return model(torch.randn(3, 4).to(device))\n"
)
DEVICE_LINE = "    device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"


def test_a_device_bound_only_after_the_model_is_reported_without_a_fix():
    source = LATE_DEVICE.format(device=DEVICE_LINE)  # `Net().to(device)` would read `device` unbound
    result = run_devfix(source, rules=[ModuleNotMoved])
    assert result.fixed == result.source
    assert len(result.findings) == 2 and not any(finding.fixable for finding in result.findings)


def test_a_device_bound_before_the_model_is_used():
    source = LATE_DEVICE.format(device="").replace("    model = nn.Linear(4, 2)\n", DEVICE_LINE + "    model = nn.Linear(4, 2)\n")
    result = run_devfix(source, rules=[ModuleNotMoved])
    assert result.fixed.decode().count("model = nn.Linear(4, 2).to(device)") == 2


GAN = (
    "import torch\nfrom torch import nn\n{flag}\nTensor = torch.cuda.FloatTensor if cuda else torch.FloatTensor\n"
    "generator = nn.Linear(4, 6)\ndiscriminator = nn.Linear(6, 1)\nif cuda:\n    discriminator.cuda()\n"
    "z = Tensor(8, 4)\nout = discriminator(generator(z))\n"
)


def test_a_generator_fed_a_cuda_type_chosen_by_availability_is_moved():
    result = run_devfix(GAN.format(flag="cuda = True if torch.cuda.is_available() else False"), rules=[ModuleNotMoved])
    assert "generator = nn.Linear(4, 6).to(device)" in result.fixed.decode()


def test_a_cuda_type_chosen_by_a_flag_or_a_name_bound_to_itself_is_no_device_value():
    for flag in ("cuda = USE_GPU and torch.cuda.is_available()", "cuda = cuda"):
        result = run_devfix(GAN.format(flag=flag), rules=[ModuleNotMoved])
        assert result.error is None and result.fixed == result.source


def test_a_torchmetrics_metric_updated_with_device_values_is_moved():
    result = run("import torchmetrics\nmetric = torchmetrics.MeanSquaredError()\nmetric.update(x, x)\n")
    assert "metric = torchmetrics.MeanSquaredError().to(device)\n" in result.fixed.decode()


def test_update_of_a_module_that_is_no_metric_is_no_call():
    # an `update(...)` method of the file's own Module (an EMA, a memory bank) may keep anything
    result = run(
        "class Bank(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.proj = nn.Linear(2, 2)\n"
        "    def update(self, v):\n        self.last = v\n\n\nbank = Bank()\nbank.update(x)\n"
    )
    assert result.fixed == result.source and not result.findings


ENGINE = (
    "def train_one_epoch(model, batches, criterion, device):\n    for x, y in batches:\n"
    "        loss = criterion(model(x.to(device)), y.to(device))\n{extra}    return loss\n"
)


def test_a_loss_handed_with_a_moved_model_to_a_loop_of_another_file_that_calls_it_on_the_output_is_moved(tmp_path):
    from devfix.analysis.project import ProjectIndex
    from devfix.engine import process
    from devfix.fix_policy import FixPolicy

    source = (
        "import torch\nfrom torch import nn\nfrom engine import train_one_epoch\n\n"
        "device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\nmodel = nn.Linear(4, 2).to(device)\n"
        "criterion = nn.CrossEntropyLoss(weight=torch.tensor([1.0, 2.0]))\n"
        "print(train_one_epoch(model, [(torch.randn(3, 4), torch.tensor([0, 1, 1]))], criterion, device))\n"
    )
    main = tmp_path / "main.py"
    main.write_text(source)
    for extra, moved in (("", True), ("    criterion.cpu()\n", False)):  # only called there, or not
        (tmp_path / "engine.py").write_text(ENGINE.format(extra=extra))
        result = process(source.encode(), str(main), [ModuleNotMoved], ProjectIndex(), FixPolicy(apply=True, unsafe=True))
        assert ("nn.CrossEntropyLoss(weight=torch.tensor([1.0, 2.0])).to(device)\n" in result.fixed.decode()) is moved


CAST_TO_ANOTHER_DTYPE = """import torch
from torch import Tensor


def link_pred_loss(pred: Tensor, edge_label: Tensor) -> Tensor:
    loss_fn = torch.nn.BCEWithLogitsLoss(pos_weight=torch.ones(1))
    return loss_fn(pred, edge_label.{cast})
"""


def test_a_cast_to_another_values_dtype_is_no_move():
    """PyG's LightGCN: `edge_label.to(pred.dtype)` keeps the labels where they are; the loss got
    `.to(pred.dtype)` as if `pred.dtype` were a device."""
    cast = CAST_TO_ANOTHER_DTYPE.format(cast="to(pred.dtype)")
    result = run_devfix(cast, rules=[ModuleNotMoved])
    assert result.fixed.decode() == cast and not result.findings
    moved = run_devfix(CAST_TO_ANOTHER_DTYPE.format(cast="to(pred.device)"), rules=[ModuleNotMoved])
    assert "torch.nn.BCEWithLogitsLoss(pos_weight=torch.ones(1)).to(pred.device)" in moved.fixed.decode()


@pytest.mark.parametrize(("wrapped", "moved"), [("*self.model[: k + 1]", False), ("self.model[0], self.model[1]", False),
                                                ("nn.Linear(4, 4), *self.model", True)])
def test_a_container_of_the_objects_own_layers_owns_nothing_to_move(wrapped, moved):
    """pytorch-ood's Multi-Mahalanobis: `Sequential(*self.model[: i + 1])` wraps layers of the
    detector's model, wherever that is; `.to(device)` on it would move the user's model in place."""
    source = (
        "import torch\nfrom torch import nn\n\n\nclass Detector:\n    def __init__(self, model, device=None):\n"
        "        self.model = model\n        self.device = device\n\n"
        "    def predict(self, x):\n        device = self.device or x.device\n        x = x.to(device)\n"
        "        outputs = []\n        for k in range(len(self.model)):\n"
        f"            model = nn.Sequential({wrapped})\n            outputs.append(model(x))\n        return outputs\n"
    )
    assert (".to(device)\n" in run_devfix(source, rules=[ModuleNotMoved]).fixed.decode().split("nn.Sequential(")[1]) is moved


TRAINER = """import torch
from torch import nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 1)

    def forward(self, x):
        return self.fc(x)


class Trainer:
    def __init__(self, model, data):
        self.device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
        self.model = {kept}
        self.data = data
        self.criterion = nn.MSELoss()
        self.optimizer = torch.optim.SGD(self.model.parameters(), lr=0.1)

    def step(self):
        for x, y in self.data:
{moves}
            loss = self.criterion(self.model(x), y)
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()


{built}
trainer = Trainer({given}, [(torch.randn(4, 3), torch.randn(4, 1))])
{after}trainer.step()
"""
MOVES = "            x, y = x.to(self.device), y.to(self.device)"


def trainer(kept="model", moves=MOVES, built="", given="Net()", after=""):
    return TRAINER.format(kept=kept, moves=moves, built=built, given=given, after=after)


@pytest.mark.parametrize("source", [
    trainer(),
    trainer(given="nn.Linear(3, 1)"),
    trainer(built="net = Net()", given="net"),
    trainer(kept="Net()", given="None"),
    trainer(moves="            x = x.to(self.device).float()\n            y = y.to(self.device)"),
    trainer().replace("            self.optimizer.step()\n",
                      "            self.optimizer.step()\n\n    def predict(self, x):\n        self.model.eval()\n        return self.model.forward(x)\n"),
])
def test_a_model_a_trainer_keeps_unmoved_goes_where_its_inputs_are_moved(source):
    """The batches go to `self.device` and the model stays on the CPU: moved where `__init__` keeps it."""
    result = run_devfix(source, rules=[ModuleNotMoved])
    kept = "model" if "self.model = model\n" in source else "Net()"
    assert f"        self.model = {kept}.to(self.device)\n" in result.fixed.decode()
    assert "nn.MSELoss().to(" not in result.fixed.decode()  # no state: works wherever it lives
    assert [finding.code for finding in result.applied] == ["DF003"]


@pytest.mark.parametrize("source", [
    trainer(built="net = Net().to('cuda')", given="net"),  # placed by its caller, maybe on another device
    trainer(given="Net().to('cuda')"),
    trainer(after="trainer.model.to('cuda')\n"),  # moved through the instance
    trainer(moves="            if torch.cuda.is_available():\n                x, y = x.to(self.device), y.to(self.device)"),
    trainer(moves="            x, y = x.cuda(), y.cuda()"),  # no device the object keeps: DF001's
    trainer(built="def make(net):\n    return Trainer(net, [])\n\n\nnet = Net()", given="net"),  # a parameter of that name: maybe anything
    trainer(kept="wrap(model)"),  # what `wrap` returns may place itself
    trainer(given="lambda x: x"),
    trainer().replace("        self.device = torch.device(\"cuda\" if torch.cuda.is_available() else \"cpu\")\n        self.model = model\n",
                      "        self.model = model\n        self.device = torch.device(\"cuda\" if torch.cuda.is_available() else \"cpu\")\n"),
    trainer().replace("            self.optimizer.step()\n", "            self.optimizer.step()\n\n    def reset(self, model):\n        self.model = model\n"),
    trainer().replace("self.optimizer = torch.optim.SGD(self.model.parameters(), lr=0.1)", "self.optimizer = make_optimizer(self.model)"),
    trainer().replace("class Trainer:", "class Trainer(Base):"),
    trainer().replace("            self.optimizer.step()\n", "            self.optimizer.step()\n\n    def halve(self):\n        self.model.half()\n"),
])
def test_a_model_a_trainer_keeps_is_left_alone_unless_proven_unmoved_and_fed_moved_inputs(source):
    result = run_devfix(source, rules=[ModuleNotMoved])
    assert result.fixed.decode() == source and not result.findings


GLOBAL_DEVICE = trainer(moves="            x, y = x.to(device), y.to(device)").replace(
    "\n\nclass Trainer:", '\n\ndevice = torch.device("cuda" if torch.cuda.is_available() else "cpu")\n\n\nclass Trainer:')


def test_a_model_a_trainer_keeps_unmoved_goes_to_the_modules_device_its_inputs_are_moved_to():
    result = run_devfix(GLOBAL_DEVICE, rules=[ModuleNotMoved])
    assert "        self.model = model.to(device)\n" in result.fixed.decode()


@pytest.mark.parametrize("source", [
    GLOBAL_DEVICE.replace("    def __init__(self, model, data):", "    def __init__(self, model, data, device=None):"),  # another `device` there
    GLOBAL_DEVICE.replace("trainer.step()\n", "def use_gpu():\n    global device\n    device = 'cuda'\n\n\ntrainer.step()\n"),
    GLOBAL_DEVICE.replace('device = torch.device("cuda" if torch.cuda.is_available() else "cpu")\n',
                          'device = torch.device("cuda" if torch.cuda.is_available() else "cpu")\nif "--cpu" in sys.argv:\n    device = "cpu"\n'),
])
def test_a_module_device_rebound_or_shadowed_is_no_device_for_the_model(source):
    result = run_devfix(source, rules=[ModuleNotMoved])
    assert result.fixed.decode() == source and not result.findings


def test_a_move_on_the_line_of_its_loop_is_the_binding_the_call_reads():
    """`for x in xs: x = x.to(self.device)`: the loop's target and the move share a line."""
    source = (
        "import torch\nfrom torch import nn\n\n\nclass T:\n    def __init__(self, model):\n        self.device = 'cpu'\n"
        "        self.model = model\n\n    def run(self, xs):\n        for x in xs: x = x.to(self.device)\n        return self.model(x)\n\n\n"
        "T(nn.Linear(2, 2)).run([torch.ones(2)])\n"
    )
    assert "        self.model = model.to(self.device)\n" in run_devfix(source, rules=[ModuleNotMoved]).fixed.decode()


TRAINER_FILE = TRAINER[:TRAINER.index("\n\n\n{built}")].format(kept="model", moves=MOVES) + "\n"
MAIN_FILE = """import torch
from torch import nn

{imports}
{built}
trainer = {construction}
trainer.step()
"""


@pytest.mark.parametrize(("imports", "built", "construction", "moved"), [
    ("from trainer import Net, Trainer", "model = Net()", "Trainer(model, [])", True),
    ("from trainer import Trainer", "", "Trainer(nn.Linear(3, 1), [])", True),
    ("import trainer as training", "model = training.Net()", "training.Trainer(model, [])", True),
    ("from trainer import Net, Trainer", "model = Net().to('cuda')", "Trainer(model, [])", False),  # moved before
    ("from trainer import Net, Trainer", "model = Net()\nmodel.cuda()", "Trainer(model, [])", False),  # moved in place
    ("from trainer import Net, Trainer", "model = torch.load('net.pt')", "Trainer(model, [])", False),  # not built here
    ("from trainer import Trainer", "", "Trainer(nn.ReLU(), [])", False),  # holds no state
    ("from trainer import Net, Trainer", "model = Net()\nother = Trainer(model.to('cuda'), [])", "Trainer(model, [])", False),
    ("from trainer import Trainer", "make = Trainer", "make(nn.Linear(3, 1), [])", False),  # used otherwise than called
])
def test_a_trainer_of_another_file_is_judged_by_the_constructions_of_the_files_beside_it(tmp_path, imports, built, construction, moved):
    """`class Trainer` in `trainer.py` keeps `self.model = model` and moves its batches; `main.py`
    builds `Trainer(Net(), loader)`: the model stays on the CPU unless a construction moves it."""
    from devfix.analysis.project import ProjectIndex
    from devfix.engine import process
    from devfix.fix_policy import FixPolicy

    (tmp_path / "main.py").write_text(MAIN_FILE.format(imports=imports, built=built, construction=construction))
    path = tmp_path / "trainer.py"
    path.write_text(TRAINER_FILE)
    result = process(TRAINER_FILE.encode(), str(path), [ModuleNotMoved], ProjectIndex(), FixPolicy(apply=True, unsafe=True))
    assert ("        self.model = model.to(self.device)\n" in result.fixed.decode()) is moved
    assert moved or result.fixed.decode() == TRAINER_FILE
