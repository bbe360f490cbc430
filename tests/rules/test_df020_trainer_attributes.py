"""DF020 on a plain class whose model the code holding the object moves (`agent.q.to(device)`):
what a fixture cannot show in one program."""

from __future__ import annotations

import pytest

from devfix.codemods import TrainerAttributes
from tests.conftest import run_devfix

AGENT = """import torch
import torch.nn as nn


class Agent:
    def __init__(self):
        self.device = torch.device("cpu")
        self.q = nn.Linear(4, 2)

    def act(self, state):
        return self.q(state).argmax()


device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
{use}
"""


def fixed(use: str) -> str:
    return run_devfix(AGENT.format(use=use), rules=[TrainerAttributes]).fixed.decode()


def test_the_input_goes_where_the_moved_model_is_not_to_the_stored_device():
    result = fixed("agent = Agent()\nagent.q.to(device)\nprint(agent.act(torch.zeros(4)))")
    assert "        state = state.to(next(self.q.parameters()).device)\n" in result
    assert "self.device)" not in result


def test_an_object_whose_model_nobody_moves_needs_nothing():
    use = "agent = Agent()\nprint(agent.act(torch.zeros(4)))"
    assert fixed(use) == AGENT.format(use=use)


def test_calls_on_the_moved_object_that_place_their_inputs_need_nothing():
    use = "agent = Agent()\nagent.q.to(device)\nprint(agent.act(torch.zeros(4).to(device)))\nidle = Agent()\nprint(idle.act(torch.zeros(4)))"
    assert fixed(use) == AGENT.format(use=use)


TRAINER = """import torch
import torch.nn.functional as F


class Trainer:
    def __init__(self, model, device):
        {before}
        self.device = device
        self.model = model.to(device)
        {after}

    def step(self, x, y):
        {step}
"""


def trainer(before: str = "pass", after: str = "pass", step: str = "return F.cross_entropy(self.model(x), y, weight=self.w)"):
    source = TRAINER.format(before=before, after=after, step=step)
    return source, run_devfix(source, rules=[TrainerAttributes])


def test_a_kept_loss_weight_is_made_on_the_model_device():
    _, result = trainer(after="self.w = torch.tensor([1.0, 3.0])",
                        step="logits = self.model(x)\n        return F.cross_entropy(logits.float(), y, weight=self.w)")
    assert "self.w = torch.tensor([1.0, 3.0], device=self.device)\n" in result.fixed.decode()


def test_kept_weights_placed_or_not_weighting_the_model_output_are_left_alone():
    cases = [
        trainer(before="self.w = torch.tensor([1.0, 3.0])"),  # built before the device is known: reported only
        trainer(after="self.w = torch.tensor([1.0, 3.0], device=device)"),  # placed
        trainer(after="self.w = torch.tensor([1.0, 3.0])\n        self.w = self.w.to(device)"),  # moved
        trainer(after="self.w = torch.tensor([1.0, 3.0])", step="return F.cross_entropy(x, y, weight=self.w)"),  # not the model's output
    ]
    for source, result in cases:
        assert "self.w = torch.tensor([1.0, 3.0]" in source
        weight_lines = [line for line in source.splitlines() if line.strip().startswith("self.w =")]
        assert all(line in result.fixed.decode().splitlines() for line in weight_lines)


def test_an_update_method_of_an_attribute_that_is_no_metric_is_no_call():
    # a meter of the file's own with `update(loss)`: a plain object with nothing to move
    source = (
        "import torch\nfrom torch import nn\n\n\nclass Meter(nn.Module):\n    def update(self, value):\n        self.last = value\n\n\n"
        "class Trainer:\n    def __init__(self, model, device):\n        self.device = device\n        self.model = model.to(device)\n"
        "        self.meter = Meter()\n\n    def step(self, x):\n        out = self.model(x.to(self.device))\n        self.meter.update(out.detach())\n"
    )
    result = run_devfix(source, rules=[TrainerAttributes])
    assert result.fixed.decode() == source


def test_an_image_a_kept_torchvision_transform_makes_moves_to_a_model_moved_in_a_chain():
    source = (
        "import torch\nimport torchvision.transforms as T\nfrom PIL import Image\nfrom torch import nn\n\n\n"
        "class Predictor:\n    def __init__(self, model):\n"
        "        self.device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"
        "        self.model = model.to(self.device).eval()\n"
        "        self.transform = T.Compose([T.Resize((8, 8)), T.ToTensor()])\n\n"
        "    def predict(self, path):\n        x = self.transform(Image.open(path).convert('RGB')).unsqueeze(0)\n"
        "        return self.model(x).argmax(1).item()\n\n\n"
        "print(Predictor(nn.Sequential(nn.Conv2d(3, 2, 3), nn.Flatten())).predict('cat.png'))\n"
    )
    fixed = run_devfix(source, rules=[TrainerAttributes]).fixed.decode()
    assert "        return self.model(x.to(self.device)).argmax(1).item()\n" in fixed


TRAINER_FILE = (
    "import torch\n\n\nclass Trainer:\n    def __init__(self, model, loader):\n"
    "        self.device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"
    "        self.model = model.to(self.device)\n        self.loader = loader\n\n"
    "    def epoch(self):\n        for x, y in self.loader:\n            loss = (self.model(x) - y).pow(2).mean()\n"
)
MOVED_BATCH = "            x, y = x.to(self.device), y.to(self.device)\n"


@pytest.mark.parametrize(("main", "moved"), [
    # what `main.py` hands the trainer is a loader of tensor batches: the loop's batches move
    ("loader = DataLoader(TensorDataset(torch.randn(8, 2), torch.randn(8, 1)))\nTrainer(nn.Linear(2, 1), loader).epoch()\n", True),
    ("Trainer(nn.Linear(2, 1), loader=DataLoader(TensorDataset(torch.randn(8, 2), torch.randn(8, 1)))).epoch()\n", True),
    # a loader over a dataset devfix does not know (its items may be strings): left alone
    ("loader = DataLoader(make_dataset())\nTrainer(nn.Linear(2, 1), loader).epoch()\n", False),
    # one construction gives a list of strings
    ("Trainer(nn.Linear(2, 1), DataLoader(TensorDataset(torch.randn(8, 2), torch.randn(8, 1)))).epoch()\n"
     "Trainer(nn.Linear(2, 1), ['a', 'b']).epoch()\n", False),
    # the class handed on, not only called: who constructs it with what is unknown
    ("make = Trainer\nmake(nn.Linear(2, 1), DataLoader(TensorDataset(torch.randn(8, 2), torch.randn(8, 1)))).epoch()\n", False),
])
def test_a_trainer_class_looping_over_the_loader_another_file_constructs_it_with(tmp_path, main, moved):
    (tmp_path / "main.py").write_text(
        "import torch\nfrom torch import nn\nfrom torch.utils.data import DataLoader, TensorDataset\n\n"
        "from data import make_dataset\nfrom trainer import Trainer\n\n" + main
    )
    result = run_devfix(TRAINER_FILE, path=str(tmp_path / "trainer.py"), rules=[TrainerAttributes])
    loop = "        for x, y in self.loader:\n"
    assert result.fixed.decode() == (TRAINER_FILE.replace(loop, loop + MOVED_BATCH) if moved else TRAINER_FILE)


GIVEN_TRAINER_FILE = TRAINER_FILE.replace(
    "        self.device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"
    "        self.model = model.to(self.device)\n", "        self.model = model\n",
)
GIVEN_MOVED_BATCH = "            x, y = x.to(next(self.model.parameters()).device), y.to(next(self.model.parameters()).device)\n"
LOADER = "DataLoader(TensorDataset(torch.randn(8, 2), torch.randn(8, 1)))"


@pytest.mark.parametrize(("main", "moved"), [
    # every construction beside it gives a model moved before the call
    (f"model = nn.Linear(2, 1).to(device)\nTrainer(model, {LOADER}).epoch()\n", True),
    (f"model = nn.Linear(2, 1)\nmodel.to(device)\nTrainer(loader={LOADER}, model=model).epoch()\n", True),
    # a model left on the CPU, or one construction of two given one
    (f"model = nn.Linear(2, 1)\nTrainer(model, {LOADER}).epoch()\n", False),
    (f"model = nn.Linear(2, 1).to(device)\nTrainer(model, {LOADER}).epoch()\nTrainer(nn.Linear(2, 1), {LOADER}).epoch()\n", False),
])
def test_a_trainer_kept_the_model_another_file_moved_moves_its_batches_where_the_model_is(tmp_path, main, moved):
    """`Trainer(model, loader)` in `main.py` after `model.to(device)`; `trainer.py` keeps `self.model
    = model` and feeds it the loader's batches: they move to the model's own device."""
    (tmp_path / "main.py").write_text(
        "import torch\nfrom torch import nn\nfrom torch.utils.data import DataLoader, TensorDataset\n\n"
        "from trainer import Trainer\n\ndevice = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n" + main
    )
    result = run_devfix(GIVEN_TRAINER_FILE, path=str(tmp_path / "trainer.py"), rules=[TrainerAttributes])
    loop = "        for x, y in self.loader:\n"
    assert result.fixed.decode() == (GIVEN_TRAINER_FILE.replace(loop, loop + GIVEN_MOVED_BATCH) if moved else GIVEN_TRAINER_FILE)


EPOCH_TRAINER_FILE = (
    "import torch\n\n\nclass Trainer:\n    def __init__(self, model, criterion):\n"
    "        self.model = model\n        self.criterion = criterion\n\n"
    "    def train_epoch(self, loader):\n        for x, y in loader:\n"
    "            loss = self.criterion(self.model(x), y)\n"
)
EPOCH_MAIN = (
    "model = nn.Linear(2, 3).to(device)\ntrainer = Trainer(model, {criterion})\n"
    "for epoch in range(2):\n    trainer.train_epoch({loader})\n"
)


@pytest.mark.parametrize(("criterion", "loader", "moved"), [
    # the calls beside it give a loader of tensor batches, the constructions a torch.nn loss
    ("nn.CrossEntropyLoss()", LOADER, GIVEN_MOVED_BATCH),
    ("nn.CrossEntropyLoss()", "loader", GIVEN_MOVED_BATCH),
    # a loss devfix cannot prove to be one: only the model's input moves
    ("make_loss()", LOADER, "            x = x.to(next(self.model.parameters()).device)\n"),
    # a loader over a dataset devfix does not know (its items may be strings): left alone
    ("nn.CrossEntropyLoss()", "DataLoader(make_dataset())", None),
])
def test_a_trainer_method_looping_over_a_loader_another_file_gives_it_moves_its_batches(tmp_path, criterion, loader, moved):
    """`trainer.train_epoch(loader)` in `main.py`, the trainer constructed there with a moved model:
    the method's parameter is what those calls give, a DataLoader of tensor batches."""
    (tmp_path / "main.py").write_text(
        "import torch\nfrom torch import nn\nfrom torch.utils.data import DataLoader, TensorDataset\n\n"
        "from data import make_dataset, make_loss\nfrom trainer import Trainer\n\n"
        "device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"
        f"loader = {LOADER}\n" + EPOCH_MAIN.format(criterion=criterion, loader=loader)
    )
    result = run_devfix(EPOCH_TRAINER_FILE, path=str(tmp_path / "trainer.py"), rules=[TrainerAttributes])
    loop = "        for x, y in loader:\n"
    assert result.fixed.decode() == (EPOCH_TRAINER_FILE.replace(loop, loop + moved) if moved else EPOCH_TRAINER_FILE)


FITTING = (
    "import torch\nfrom torch import nn\nfrom torch.utils.data import DataLoader, TensorDataset\n\n\n"
    "class Trainer:\n    def __init__(self, model, loader, device):\n        self.model = model\n"
    "        self.loader = loader\n        self.device = device\n\n"
    "    def evaluate(self):\n        for x, y in self.loader:\n            print(self.model(x))\n\n"
    "    def fit(self):\n{before}        self.model.to(self.device)\n        for x, y in self.loader:\n"
    "            loss = (self.model(x) - y).pow(2).mean()\n\n\n"
    "loader = DataLoader(TensorDataset(torch.randn(8, 2), torch.randn(8, 1)))\n"
    "Trainer(nn.Linear(2, 1), loader, torch.device('cuda')).fit()\n"
)
FIT_LOOP = "        for x, y in self.loader:\n            loss"


@pytest.mark.parametrize("before", [
    "",
    "        for x, y in self.loader:\n            print(self.model(x))\n",  # a loop before the move feeds the model where it was
])
def test_a_model_a_method_moves_itself_is_fed_on_the_device_after_the_move(before):
    source = FITTING.format(before=before)
    fixed = run_devfix(source, rules=[TrainerAttributes]).fixed.decode()
    assert fixed == source.replace(FIT_LOOP, FIT_LOOP.replace("\n", "\n            x, y = x.to(self.device), y.to(self.device)\n", 1))
    # `evaluate` may run before `fit`: its loop is left alone, as is the loop before the move
    assert fixed.count("x.to(self.device)") == 1


@pytest.mark.parametrize("change", [
    ("        self.model.to(self.device)\n", "        if self.device.type == 'cuda':\n            self.model.to(self.device)\n"),  # maybe moved
    ("    def evaluate(self):\n", "    def reset(self):\n        self.model = nn.Linear(2, 1)\n\n    def evaluate(self):\n"),  # another model
])
def test_a_model_a_method_may_not_move_or_may_replace_is_left_alone(change):
    source = FITTING.format(before="").replace(*change)
    assert run_devfix(source, rules=[TrainerAttributes]).fixed.decode() == source


SAMPLING_AGENT = (
    "import numpy as np\nimport torch\nimport torch.nn as nn\n\n"
    "device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n\n\n"
    "class Agent:\n    def __init__(self, memory):\n        self.memory = memory\n"
    "        self.q = nn.Linear(4, 2).to(device)\n        self.v = nn.Linear(4, 1).to(device)\n\n"
    "    def value(self, state):\n        return self.v(state)\n\n"
    "    def update(self):\n        batch = self.memory.sample()\n        q = self.q(batch)\n        return q.sum() + self.value(batch).sum()\n"
    "{act}"
)
HOST_ACT = (
    "\n    def act(self, obs):\n        rows = torch.from_numpy(obs).float()\n        q = self.q(rows)\n"
    "        return q.sum() + self.value(rows).sum()\n"
)


@pytest.mark.parametrize("act, moved", [("", False), (HOST_ACT, True)])
def test_a_method_given_what_its_caller_feeds_the_model_itself_is_left_as_the_caller(act, moved):
    # `update` feeds `batch` (of an object devfix cannot see into) to the model as it is: where it
    # is, `value`'s `state` is; `act`'s rows are made on the host and moved only where fed
    result = run_devfix(SAMPLING_AGENT.format(act=act), rules=[TrainerAttributes]).fixed.decode()
    assert ("state = state.to(" in result) is moved


FED_MOVED = """import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset


def accuracy(out, y):
    return (out.argmax(1) == y).float().mean()


class TorchTrainer:
    def __init__(self, model, criterion, device):
        self.model = model
        self.criterion = criterion
        self.device = device

    def train(self, loader):
        for data, labels in loader:
            out = self.model({fed})
            loss = self.criterion(out, labels)
            loss.backward()


device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
model = nn.Linear(4, 2).to(device)
loader = DataLoader(TensorDataset(torch.randn(8, 4), torch.randint(0, 2, (8,))), batch_size=4)
TorchTrainer(model, {criterion}, device).train(loader)
"""
LABELS_MOVED = "            labels = labels.to(self.device)\n"


def test_batches_beside_one_the_loop_feeds_the_model_moved_go_where_it_went():
    source = FED_MOVED.format(fed="data.to(self.device)", criterion="nn.CrossEntropyLoss()")
    assert LABELS_MOVED in run_devfix(source, rules=[TrainerAttributes]).fixed.decode()


def test_batches_fed_raw_to_a_model_the_construction_gives_moved_go_to_its_device():
    """`TorchTrainer(model, ...)` of `model = nn.Linear(4, 2).to(device)`: the model is on that device
    when `train` runs, and the labels meet its output in the torch.nn loss the construction gives."""
    source = FED_MOVED.format(fed="data", criterion="nn.CrossEntropyLoss()")
    device = "next(self.model.parameters()).device"
    assert f"            data, labels = data.to({device}), labels.to({device})\n" in run_devfix(source, rules=[TrainerAttributes]).fixed.decode()


@pytest.mark.parametrize("fed, criterion", [
    ("data.to(self.device)", "accuracy"),  # a function of the file may take anything: labels not proven a tensor
    ("data.to(self.device)", "nn.CrossEntropyLoss() if torch.cuda.is_available() else accuracy"),
    ("data.to(torch.device('cpu'))", "nn.CrossEntropyLoss()"),  # a device only the call names
])
def test_batches_are_left_alone_without_a_moved_feed_or_a_torch_loss(fed, criterion):
    source = FED_MOVED.format(fed=fed, criterion=criterion)
    assert run_devfix(source, rules=[TrainerAttributes]).fixed.decode() == source


RANKER = """import torch
import torch.nn as nn
{model_import}

class Ranker:
    def __init__(self):
        self.model = None
        self.device = None

    def load(self, device):
        self.device = device
        self.model = Scorer(4)
        self.model.to(device)

    def scores(self, fp, solvents):
        solvents = solvents.unsqueeze(0).to(self.device)
        fp = fp.view(1, -1).unsqueeze(0)
        return self.model(fp, solvents).softmax(-1)
"""

SCORER = """class Scorer(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.make_layers(n)

    def make_layers(self, n):
        layers = [nn.Linear(n, 8), nn.ReLU()]
        self.fp_layer = nn.Sequential(*layers)
        self.solvent_layer = nn.Linear(n, 8)

    def forward(self, fp, solvents):
        return self.fp_layer(fp) + self.solvent_layer(solvents)
"""


def test_an_argument_given_beside_ones_the_method_moves_goes_to_their_device():
    source = RANKER.format(model_import="\n\n" + SCORER + "\n")
    fixed = run_devfix(source, path="ranker.py", rules=[TrainerAttributes]).fixed.decode()
    assert "    def scores(self, fp, solvents):\n        fp = fp.to(self.device)\n" in fixed
    host_lengths = source.replace(  # `fp` now holds lengths, which stay on the CPU
        "self.fp_layer(fp) + self.solvent_layer(solvents)",
        "torch.nn.utils.rnn.pack_padded_sequence(self.solvent_layer(solvents), fp, batch_first=True)")
    assert "fp = fp.to(self.device)" not in run_devfix(host_lengths, path="ranker.py", rules=[TrainerAttributes]).fixed.decode()


def test_the_model_class_may_come_through_a_package_that_imports_it_from_a_module(tmp_path):
    from devfix.analysis.project import ProjectIndex
    from devfix.engine import process
    from devfix.fix_policy import FixPolicy

    (tmp_path / "models").mkdir()
    (tmp_path / "models" / "__init__.py").write_text("from .scorer import Scorer\n")
    (tmp_path / "models" / "scorer.py").write_text("import torch.nn as nn\n\n\n" + SCORER)
    source = RANKER.format(model_import="from models import Scorer\n")
    main = tmp_path / "ranker.py"
    main.write_text(source)
    result = process(source.encode(), str(main), [TrainerAttributes], ProjectIndex(), FixPolicy(apply=True, unsafe=True))
    assert "fp = fp.to(self.device)" in result.fixed.decode()


WORKER = """import torch
from transformers import AutoModelForSequenceClassification


class Inference:
    def __init__(self):
        self.device = torch.device("cuda") if torch.cuda.is_available() else torch.device("cpu")
        self.model = AutoModelForSequenceClassification.from_pretrained("distilbert-base-uncased")
        self.model.eval()
{move}
    def forward(self, data):
        tensors = [torch.tensor(token) for token in data]
        with torch.no_grad():
            return self.model(torch.nn.utils.rnn.pad_sequence(tensors, batch_first=True))[0]
"""


@pytest.mark.parametrize("move, moved", [("        self.model.to(self.device)\n", True), ("", False)])
def test_a_pretrained_model_the_class_moves_gets_its_padded_batch_there(move, moved):
    # mosec's distil_bert_server_pytorch example before its 92f4548
    fixed = run_devfix(WORKER.format(move=move), path="server.py", rules=[TrainerAttributes]).fixed.decode()
    assert ("pad_sequence(tensors, batch_first=True).to(self.device)" in fixed) is moved


FOLDER = """import torch
import torch.nn as nn


class Folder(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Linear(4, 8)

    def forward(self, batch):
        return self.embed({read}).sum()


class Trainer:
    def __init__(self, device):
        self.model = Folder()
        self.model = self.model.to(device)

    def training_loop(self, batch):
        loss = self.model(batch)
        loss.backward()
"""


@pytest.mark.parametrize("read, moved", [('batch["positions"]', False), ("batch", True)])
def test_a_batch_the_models_forward_reads_by_key_is_a_dict_and_gets_no_move(read, moved):
    # nanofold's Trainer before its 88fded7: `batch.to(...)` on a dict of tensors raises AttributeError
    fixed = run_devfix(FOLDER.format(read=read), path="trainer.py", rules=[TrainerAttributes]).fixed.decode()
    assert ("batch = batch.to(" in fixed) is moved


PLACED_WEIGHT_TRAINER = """import torch
import torch.nn as nn


class Trainer:
    def __init__(self, model, device):
        self.device = device
        self.model = model.to(self.device)
        self.criterion = nn.CrossEntropyLoss(weight={weight})

    def step(self, x, y):
        x, y = x.to(self.device), y.to(self.device)
        return self.criterion(self.model(x), y)


device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
trainer = Trainer(nn.Linear(4, 3), device)
print(trainer.step(torch.randn(8, 4), torch.randint(0, 3, (8,))))
"""


@pytest.mark.parametrize("weight, moved", [
    ("torch.tensor([1.0, 2.0, 1.0]).to(device)", False),  # built on the device: nothing to move
    ("torch.tensor([1.0, 2.0, 1.0], device=device)", False),
    ("torch.tensor([1.0, 2.0, 1.0])", True),
])
def test_a_loss_whose_weight_is_built_on_the_device_is_not_moved_again(weight, moved):
    source = PLACED_WEIGHT_TRAINER.format(weight=weight)
    fixed = run_devfix(source, rules=[TrainerAttributes]).fixed.decode()
    assert (".to(self.device)\n" in fixed.split("self.criterion = ")[1].split("\n")[0] + "\n") is moved


HANDED_ON_BY_A_METHOD = """import numpy as np
import torch
import torch.nn as nn


class Agent:
    def __init__(self, device):
        self.device = device
        self.q_net = nn.Linear(4, 2).to(device)

    def eval(self, obs: np.ndarray) -> int:
        obs = torch.as_tensor(obs).float().to(self.device)
        return self.max_action(obs)

    def act(self, obs: torch.Tensor) -> int:
        if np.random.rand() < 0.1:
            return 0
        return self.max_action(obs)

    def max_action(self, obs: torch.Tensor) -> int:
        return int(self.q_net(obs).argmax().item())

    def run(self, observations):
        return [self.act({given}) for o in observations]
"""


@pytest.mark.parametrize("given, moved", [("torch.as_tensor(o).float().to(self.device)", False), ("torch.as_tensor(o).float()", True)])
def test_a_parameter_a_method_hands_on_from_callers_that_move_it_is_placed(given, moved):
    """morl-baselines' Envelope: `act(obs, w)` hands its parameters on to `self.max_action(obs, w)`,
    and every call of `act` (and `eval`) passes them moved: `max_action` needs no move."""
    source = HANDED_ON_BY_A_METHOD.format(given=given)
    fixed = run_devfix(source, rules=[TrainerAttributes]).fixed.decode()
    assert ("obs = obs.to(self.device)" in fixed) is moved


LABELS_MEETING_THE_OUTPUT_IN_A_LOSS = """import torch
import torch.nn as nn
import torch.nn.functional as F


class Scorer:
    def __init__(self):
        self.device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
        self.model = nn.Linear(4, 3).to(self.device)
        self.loss_fct = nn.CrossEntropyLoss()

    def score(self, rows, labels):
        x = torch.tensor(rows, dtype=torch.float32)
        label = torch.tensor(labels)
        logits = self.model(x.to(self.device))
        return {loss}.item()
"""


@pytest.mark.parametrize("loss", ["self.loss_fct(logits, label)", "F.cross_entropy(logits, label)", "self.loss_fct(logits.view(-1, 3), label.view(-1))"])
def test_labels_made_in_a_method_that_meet_the_output_in_a_loss_are_made_on_its_device(loss):
    """A plain scorer class: `label = torch.tensor(labels)` meets `self.model`'s output only in the
    loss (an attribute, or `F.cross_entropy`), not in arithmetic: it is created on the model's device."""
    fixed = run_devfix(LABELS_MEETING_THE_OUTPUT_IN_A_LOSS.format(loss=loss), rules=[TrainerAttributes]).fixed.decode()
    assert "label = torch.tensor(labels, device=self.device)" in fixed


POLICY_GRADIENT = """import torch
import torch.nn as nn


class Agent:
    def __init__(self):
        self.device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
        self.policy = nn.Linear(4, 2).to(self.device)

    def update(self, states, actions, returns):
        states = torch.tensor(states, dtype=torch.float32, device=self.device)
        actions = torch.tensor(actions)
        returns = torch.tensor(returns, dtype=torch.float32)
        logp = {logp}
        return -(logp * returns).mean()
"""


@pytest.mark.parametrize("logp", [
    "torch.log_softmax(self.policy(states), -1).gather(1, actions.unsqueeze(1)).squeeze(1)",
    "self.policy(states).log_softmax(-1).gather(1, actions.unsqueeze(1)).squeeze(1)",
])
def test_tensors_made_in_a_method_that_meet_a_torch_function_of_the_output_are_made_on_its_device(logp):
    """A policy-gradient agent: `actions` indexes the output's `.gather` (through `.unsqueeze(1)`),
    `returns` multiplies `torch.log_softmax` of it; each is made on the policy's device."""
    fixed = run_devfix(POLICY_GRADIENT.format(logp=logp), rules=[TrainerAttributes]).fixed.decode()
    assert "actions = torch.tensor(actions, device=self.device)" in fixed
    assert "returns = torch.tensor(returns, dtype=torch.float32, device=self.device)" in fixed


@pytest.mark.parametrize(("signature", "moved"), [("img, weight", True), ("img, weight=0.5", False), ("img, weight=None", False)])
def test_an_argument_with_a_default_is_not_moved_at_the_top_of_the_method(signature, moved):
    """gfpgan's `enhance(self, img, ..., weight=0.5)` hands `weight` to the moved model as a
    keyword: where a caller leaves it out, a `weight.to(self.device)` would meet the float."""
    source = (
        "import torch\nimport torch.nn as nn\n\n\nclass Restorer:\n    def __init__(self, device):\n"
        "        self.device = device\n        self.net = nn.Linear(4, 4).to(device)\n\n"
        f"    def enhance(self, {signature}):\n"
        "        face = torch.from_numpy(img).unsqueeze(0).to(self.device)\n        return self.net(face, weight=weight)\n"
    )
    result = run_devfix(source, rules=[TrainerAttributes]).fixed.decode()
    assert ("weight = weight.to(self.device)" in result) is moved


REBOUND_STATES = """import numpy as np
import torch
import torch.nn as nn


class Agent:
    def __init__(self):
        self.device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
        self.q = nn.Linear(4, 2).to(self.device)

    def learn(self, batch, fresh):
        states = np.array(batch)
{rebinding}
        return self.q(states).sum().item()
"""


@pytest.mark.parametrize(("rebinding", "made_there"), [
    ("        states = torch.tensor(states, dtype=torch.float32)", True),
    # the array may still reach the model when `fresh` is false: `device=` on the factory is no proof
    ("        if fresh:\n            states = torch.tensor(states, dtype=torch.float32)", False),
])
def test_a_factory_rebinding_a_local_before_it_is_fed_is_made_on_the_model_s_device(rebinding, made_there):
    """A DQN agent's `states = np.array(batch)`, then `states = torch.tensor(states)` fed to
    `self.q`: the factory is the value the model gets (the binding before it cannot reach the call)."""
    fixed = run_devfix(REBOUND_STATES.format(rebinding=rebinding), rules=[TrainerAttributes]).fixed.decode()
    assert ("torch.tensor(states, dtype=torch.float32, device=self.device)" in fixed) is made_there


LABELLING_TRAINER = """import torch
import torch.nn as nn


class GANTrainer:
    def __init__(self, D, device):
        self.device = device
        self.D = D.to(device)
        self.bce = nn.BCEWithLogitsLoss()

    def _labels(self, n, value):
        return torch.full((n, 1), value)

    def step(self, real):
        loss = self.bce(self.D(real), self._labels(real.size(0), 1.0))
        {other}return loss
"""


@pytest.mark.parametrize(("other", "fixed_line"), [
    ("", "        return torch.full((n, 1), value, device=self.device)\n"),
    # the method also serves code on the host: its result moves where it meets the output instead
    ("print(self._labels(2, 0.0).sum())\n        ", "self._labels(real.size(0), 1.0).to(self.device))"),
])
def test_a_method_s_host_tensor_meeting_the_model_s_output_in_a_loss(other, fixed_line):
    """`self.bce(self.D(real), self._labels(n, 1.0))` where `_labels` returns `torch.full(...)`."""
    fixed = run_devfix(LABELLING_TRAINER.format(other=other), rules=[TrainerAttributes]).fixed.decode()
    assert fixed_line in fixed
    assert fixed.count("self.device") == 3  # one edit for the labels (and `real` moved at the top of `step`)


EVALUATOR = """import numpy as np
import torch
import torch.nn as nn


class Evaluator:
    def __init__(self, model):
        self.model = model

    def predict(self, X):
        return self.model(torch.from_numpy(X).float()).argmax(1).cpu().numpy()


device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
model = nn.Linear(3, 2){placement}
print(Evaluator(model).predict(np.ones((2, 3))))
"""


@pytest.mark.parametrize(("placement", "moved"), [
    (".to(device)", True),
    ("", False),  # every construction gives a model on the CPU: consistent
    (".to(device)\nmodel = model.cpu()", False),  # brought back before the construction
])
def test_a_model_every_construction_gives_moved_is_fed_on_its_device(placement, moved):
    """`Evaluator(model)` of `model = Net().to(device)`, kept as `self.model = model`: what a method
    makes on the host and feeds it moves to the model's own device."""
    fixed = run_devfix(EVALUATOR.format(placement=placement), rules=[TrainerAttributes]).fixed.decode()
    assert ("torch.from_numpy(X).float().to(next(self.model.parameters()).device)" in fixed) is moved


KEYED_BATCHES = """import torch
import torch.nn as nn
from torch.utils.data import DataLoader


class Trainer:
    def __init__(self, model, dataset, device):
        self.device = device
        self.model = model.to(device)
        self.loader = DataLoader(dataset, batch_size=4)
        self.loss_fn = nn.CrossEntropyLoss()

    def epoch(self):
        for batch in self.loader:
            out = self.model({fed})
            loss = self.loss_fn(out, batch["label"])
"""
DICT_MOVE = "            batch = {key: value.to(self.device) if torch.is_tensor(value) else value for key, value in batch.items()}\n"


@pytest.mark.parametrize(("fed", "moved"), [
    ('batch["x"]', True),
    ("batch", False),  # the whole batch fed: what it is, nothing proves
    ('batch.x', False),  # not a mapping's item
])
def test_a_dict_batch_of_a_loader_the_class_builds_moves_value_by_value(fed, moved):
    """`self.loader = DataLoader(dataset)` of a dataset the class is given: a loader, of batches
    nothing proves tensors; read only by string keys they are a mapping, whose tensor values move."""
    fixed = run_devfix(KEYED_BATCHES.format(fed=fed), rules=[TrainerAttributes]).fixed.decode()
    assert (DICT_MOVE in fixed) is moved


KEPT_IN_ONE_TUPLE = """import torch
import torch.nn as nn

device = "cuda" if torch.cuda.is_available() else "cpu"


class Trainer:
    def __init__(self, G, D):
        {kept}
        self.bce = nn.BCEWithLogitsLoss()

    def step(self, real):
        fake = self.G(torch.randn(real.size(0), 4))
        return self.bce(self.D(fake), torch.ones(real.size(0), 1))
"""


@pytest.mark.parametrize(("kept", "noise", "labels"), [
    ("self.G, self.D = G.to(device), D.to(device)", True, True),
    ("self.G, self.D = G, D.to(device)", False, True),  # the generator stays where it was given
    ("self.G, self.D = [G.cuda(), D.cuda()]", True, True),
    ("self.G, self.D = G, D", False, False),
    ("self.G, self.D = (G, D).to(device)", False, False),  # no display: nothing known of either item
])
def test_models_kept_by_one_tuple_assignment_are_moved_item_by_item(kept, noise, labels):
    """`self.G, self.D = G.to(device), D.to(device)`: each attribute holds its own item."""
    fixed = run_devfix(KEPT_IN_ONE_TUPLE.format(kept=kept), rules=[TrainerAttributes]).fixed.decode()
    assert ("torch.randn(real.size(0), 4, device=next(self.G.parameters()).device)" in fixed) is noise
    assert ("torch.ones(real.size(0), 1, device=next(self.D.parameters()).device)" in fixed) is labels


CALLED_AS_A_FUNCTION = """import torch
import torch.nn as nn


class Explainer:
    def __init__(self, model):
        self.model = model.to(torch.device("cuda"))

    def __call__(self, x):
        return self.model(x).argmax(1)


explain = Explainer(nn.Linear(4, 2))
print(explain({given}))
"""


@pytest.mark.parametrize("given, moved", [("torch.randn(3, 4).to('cuda')", False), ("torch.randn(3, 4)", True)])
def test_a_call_of_the_instance_itself_is_a_caller_of_its_dunder_call(given, moved):
    """A Grad-CAM object called as `cam(img, 1)`: `img` already moved by every such call needs no
    move at the top of `__call__`."""
    fixed = run_devfix(CALLED_AS_A_FUNCTION.format(given=given), rules=[TrainerAttributes]).fixed.decode()
    assert ("x = x.to(next(self.model.parameters()).device)" in fixed) is moved


PARTLY_PLACED = (
    "import torch\nfrom torch import nn\nfrom torch.utils.data import DataLoader, TensorDataset\n\n\n"
    "class Evaluator:\n    def __init__(self, model, device):\n        self.model = model\n        self.device = device\n\n"
    "    def evaluate(self, loader):\n        correct = 0\n        for inputs, targets in loader:\n"
    "{placed}            preds = self.model(inputs).argmax(1)\n            correct += (preds == targets).sum().item()\n"
    "        return correct\n\n\n"
    "device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\nmodel = nn.Linear(4, 2).to(device)\n"
    "print(Evaluator(model, device).evaluate(DataLoader(TensorDataset(torch.randn(8, 4), torch.randint(0, 2, (8,))))))\n"
)


@pytest.mark.parametrize(("placed", "moved"), [
    ("            inputs = inputs.to(self.device)\n", "            targets = targets.to(self.device)\n"),
    # a placement the rule cannot name at the top of the loop, or the host: left as it is
    ("            inputs = inputs.to(torch.device('cuda'))\n", None),
    ("            dev = self.device\n            inputs = inputs.to(dev)\n", None),
])
def test_a_loop_that_places_some_batches_of_a_given_model_places_the_others_there(placed, moved):
    """`Evaluator(model, device)` of a moved model whose loop moves `inputs` itself: `targets`, which
    meets the model's output, goes where the loop put `inputs`."""
    source = PARTLY_PLACED.format(placed=placed)
    loop = "        for inputs, targets in loader:\n"
    expected = source.replace(loop, loop + moved) if moved else source
    assert run_devfix(source, rules=[TrainerAttributes]).fixed.decode() == expected


BUILT_BY_FIT = (
    "import torch\nfrom torch import nn\n\n\n"
    "class Classifier:\n    def __init__(self):\n        self.device = 'cuda' if torch.cuda.is_available() else 'cpu'\n        self.net_ = None\n\n"
    "    def fit(self, X, y):\n        self.net_ = nn.Linear(X.shape[1], 2){move}\n        return self\n\n"
    "    def predict(self, X):\n        with torch.no_grad():\n"
    "            return self.net_(torch.tensor(X, dtype=torch.float32)).argmax(1)\n{more}\n\n"
    "clf = Classifier().fit([[0.0, 1.0]], [1])\nprint(clf.predict([[1.0, 0.0]]))\n"
)


@pytest.mark.parametrize(("move", "more", "placed"), [
    (".to(self.device)", "", True),
    (".to(self.device)\n        self.net_ = None" , "", False),  # bound again: `self.net_(...)` could not run
    ("", "", False),  # built on the host: the input is where it must be
    (".to(self.device)", "\n    def load(self, path):\n        self.net_ = torch.load(path, weights_only=False)\n", False),  # bound twice
    (".to(self.device)", "\n    def to_host(self):\n        self.net_.cpu()\n", False),  # brought back
])
def test_a_network_a_method_builds_and_moves_once_takes_what_other_methods_feed_it(move, more, placed):
    """A sklearn-style `fit` builds `self.net_` on `self.device`; `predict`, which can only run after
    it, feeds it a tensor made on the host: made on `self.device`."""
    result = run_devfix(BUILT_BY_FIT.format(move=move, more=more), rules=[TrainerAttributes]).fixed.decode()
    assert ("torch.tensor(X, dtype=torch.float32, device=self.device)" in result) is placed
