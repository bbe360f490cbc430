from __future__ import annotations

import pytest

from devfix.codemods import LoaderToDevice
from tests.conftest import run_devfix

HEADER = (
    "import torch\nfrom torch import nn\nfrom torch.utils.data import DataLoader\n"
    'device = torch.device("cpu")\nmodel = nn.Linear(2, 2).to(device)\nloader = DataLoader([])\n'
)


def run(body: str):
    return run_devfix(HEADER + body, rules=[LoaderToDevice])


def test_elements_taken_by_position_move_where_they_meet_the_model():
    result = run("for batch in loader:\n    out = model(batch[0])\n    loss = (out - batch[1]).abs().sum()\n    print(batch[2])\n")
    fixed = result.fixed.decode()
    assert "out = model(batch[0].to(device))" in fixed and "(out - batch[1].to(device))" in fixed
    assert "print(batch[2])" in fixed  # never meets the model: may be anything


def test_batch_indexed_by_a_variable_or_unpacked_into_the_model_is_reported_without_fix():
    for body in ("for batch in loader:\n    model(batch[k])\n", "for batch in loader:\n    model(*batch)\n"):
        result = run(body)
        assert result.fixed == result.source
        assert result.findings and not result.findings[0].fixable


def test_one_line_loop_body_is_reported_without_fix():
    result = run("for x in loader: model(x)\n")
    assert result.fixed == result.source
    assert result.findings and not result.findings[0].fixable


def test_iterables_not_tied_to_a_dataloader_are_ignored():
    result = run("batches = [torch.ones(2)]\nfor x in batches:\n    model(x)\n")
    assert result.fixed == result.source and not result.findings


def test_batch_only_handed_to_unknown_code_is_left_alone():
    result = run("for x, names in loader:\n    out = model(x.to(device))\n    save(out, names)\n")
    assert result.fixed == result.source


def test_moves_to_the_device_expression_the_model_used():
    source = (
        "import torch\nfrom torch.utils.data import DataLoader\n\n"
        "def train(args, net, data):\n    net.to(args.device)\n"
        "    for x in DataLoader(data):\n        net(x)\n"
        "    loader = DataLoader(data)\n    for x in loader:\n        net(x)\n"
    )
    fixed = run_devfix(source, rules=[LoaderToDevice]).fixed.decode()
    assert "        x = x.to(args.device)\n        net(x)" in fixed
    assert fixed.count("x.to(args.device)") == 2  # `for x in DataLoader(data)` written in place counts too


def test_tqdm_wrapper_is_unwrapped():
    fixed = run("from tqdm import tqdm\nfor x, y in tqdm(loader, desc='train'):\n    model(x)\n").fixed.decode()
    assert "    x = x.to(device)\n    model(x)" in fixed


def test_keyword_unpacked_batch_is_a_dict_of_fields():
    fixed = run("for batch in loader:\n    model(**batch)\n").fixed.decode()
    assert "batch = {key: value.to(device) if torch.is_tensor(value) else value for key, value in batch.items()}" in fixed


def test_star_unpacked_batch_is_reported_without_fix():
    result = run("for batch in loader:\n    model(*batch)\n")
    assert result.fixed == result.source
    assert result.findings and not result.findings[0].fixable


def test_batch_unpacked_in_the_body_moves_after_the_unpacking():
    fixed = run("for batch in loader:\n    x, y = batch\n    model(x)\n").fixed.decode()
    assert "    x, y = batch\n    x = x.to(device)\n    model(x)\n" in fixed


def test_elements_assigned_by_position_move_after_the_assignments():
    result = run("for batch in loader:\n    x, y = batch[0], batch[1]\n    names = batch[2]\n    loss = (model(x) - y).sum()\n    print(names)\n")
    fixed = result.fixed.decode()
    assert "    names = batch[2]\n    x, y = x.to(device), y.to(device)\n    loss" in fixed  # `names` never meets the model


COLLECTED = (
    "outs, ys = [], []\nfor x, y in loader:\n    x = x.to(device)\n    outs.append(model(x))\n    ys.append(y)\n"
    "{after}"
)


def test_labels_collected_then_met_by_the_joined_outputs_move_in_the_loop():
    fixed = run(COLLECTED.format(after="out = torch.cat(outs)\ny_all = torch.cat(ys)\nprint((out.argmax(1) == y_all).sum())\n")).fixed.decode()
    assert "    ys.append(y)" in fixed and "    y = y.to(device)\n" in fixed


def test_collections_that_may_hold_host_values_or_meet_nothing_stay():
    for after in (
        "out = torch.cat(outs)\ny_all = torch.cat(ys)\nprint(y_all.sum())\n",  # the labels meet nothing
        "out = torch.cat(outs).cpu()\ny_all = torch.cat(ys)\nprint((out.argmax(1) == y_all).sum())\n",  # brought back
        "outs.append(torch.zeros(2, 2))\nout = torch.cat(outs)\ny_all = torch.cat(ys)\nprint((out.argmax(1) == y_all).sum())\n",
        "trim(outs)\nout = torch.cat(outs)\ny_all = torch.cat(ys)\nprint((out.argmax(1) == y_all).sum())\n",  # handed on
    ):
        fixed = run(COLLECTED.format(after=after)).fixed.decode()
        assert "y = y.to(device)" not in fixed, after


BUILT = (
    "import torch\nfrom torch import nn\nfrom torch.utils.data import DataLoader\n\n\n{builder}\n\n"
    'def main():\n    device = torch.device("cuda")\n    model = {call}\n    loader = DataLoader([])\n'
    "    for x, y in loader:\n        loss = nn.functional.cross_entropy(model(x), y)\n"
)


def test_model_given_back_moved_by_a_function_of_the_file_gets_its_batches_moved():
    for builder, call in (
        ("def build(device):\n    model = nn.Linear(2, 2)\n    model.to(device)\n    return model", "build(device)"),
        ("def build(n, device):\n    return nn.Linear(n, 2).to(device)", "build(2, device=device)"),
    ):
        fixed = run_devfix(BUILT.format(builder=builder, call=call), rules=[LoaderToDevice]).fixed.decode()
        assert "        x, y = x.to(device), y.to(device)\n" in fixed, builder


def test_model_of_a_function_that_may_not_move_it_is_left_alone():
    for builder, call in (
        ("def build(device, gpu):\n    model = nn.Linear(2, 2)\n    if gpu:\n        model.to(device)\n    return model", "build(device, False)"),
        ("def build(device):\n    return nn.Linear(2, 2).to('cpu')", "build(device)"),
        ("def build(device='cpu'):\n    return nn.Linear(2, 2).to(device)", "build()"),  # the device is the default
    ):
        result = run_devfix(BUILT.format(builder=builder, call=call), rules=[LoaderToDevice])
        assert result.fixed == result.source and not result.findings, builder


GLOBAL_MODEL = (
    "import torch\nfrom torch import nn\nfrom torch.utils.data import DataLoader\n\n"
    'device = torch.device("cuda")\nloader = DataLoader([])\nmodel = nn.Linear(2, 1)\ncriterion = nn.MSELoss()\n\n\n'
    "def validate():\n    for x, y in loader:\n        print(criterion(model(x), y))\n\n\n{calls}"
)


def test_function_run_after_the_top_level_moved_its_model_moves_the_batches():
    fixed = run_devfix(GLOBAL_MODEL.format(calls="model.to(device)\nvalidate()\n"), rules=[LoaderToDevice]).fixed.decode()
    assert "        x, y = x.to(device), y.to(device)\n" in fixed  # `y` meets the output in the top level's loss


def test_function_run_before_the_top_level_moves_its_model_is_left_alone():
    source = GLOBAL_MODEL.format(calls="validate()\nmodel.to(device)\n")
    result = run_devfix(source, rules=[LoaderToDevice])
    assert result.fixed == result.source and not result.findings


def test_batch_rebound_by_a_move_of_its_elements_before_unpacking_is_left_alone():
    for move in ("tuple(t.to(device) for t in batch)", "[t.to(device) for t in batch]", "list(map(lambda t: t.to(device), batch))"):
        result = run(f"for batch in loader:\n    batch = {move}\n    x, y = batch\n    print((model(x) - y).sum())\n")
        assert result.fixed == result.source and not result.findings, move


def test_batch_unpacked_after_an_unrelated_statement_still_moves():
    fixed = run("for batch in loader:\n    step = 1\n    x, y = batch\n    print((model(x) - y).sum())\n").fixed.decode()
    assert "    x, y = batch\n    x, y = x.to(device), y.to(device)\n" in fixed


def test_labels_met_by_a_loss_built_where_it_is_called_move():
    fixed = run("for x, y in loader:\n    loss = nn.CrossEntropyLoss()(model(x), y)\n").fixed.decode()
    assert "    x, y = x.to(device), y.to(device)\n" in fixed


def test_batches_of_a_tensor_dataset_of_device_tensors_arrive_placed():
    for data, moved in (("torch.ones(4, 2).to(device), torch.ones(4).to(device)", False), ("torch.ones(4, 2).to(device), torch.ones(4)", True)):
        source = HEADER + f"from torch.utils.data import TensorDataset\ndata = TensorDataset({data})\n" \
            "for x, y in DataLoader(data):\n    print((model(x) - y).sum())\n"
        result = run_devfix(source, rules=[LoaderToDevice])
        assert (result.fixed != result.source) is moved, data


def test_batch_rebound_without_a_move_before_unpacking_still_moves():
    fixed = run("for batch in loader:\n    batch = [t.float() for t in batch]\n    x, y = batch\n    print((model(x) - y).sum())\n").fixed.decode()
    assert "    x, y = batch\n    x, y = x.to(device), y.to(device)\n" in fixed


def test_an_element_left_behind_beside_one_moved_where_it_is_taken_moves():
    fixed = run("for data in loader:\n    x, y = data[0].to(device), data[1]\n    print((model(x).argmax(1) == y).sum())\n").fixed.decode()
    assert "    x, y = data[0].to(device), data[1]\n    y = y.to(device)\n" in fixed


MNIST_SCRIPT = (
    "import torch\nimport torch.nn.functional as F\nfrom torch import nn\nfrom torchvision import datasets, transforms\n\n\n"
    "def train(model, device, train_loader, optimizer):\n    for batch_idx, (data, target) in enumerate(train_loader):\n"
    "        optimizer.zero_grad()\n        loss = F.nll_loss(model(data), target)\n        loss.backward()\n        optimizer.step()\n\n\n"
    "def main():\n    device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"
    "    transform = transforms.Compose([{transforms}])\n"
    "    dataset = datasets.MNIST('../data', train=True, download=True, transform=transform)\n"
    "    train_loader = torch.utils.data.DataLoader(dataset, batch_size=64)\n"
    "    model = nn.Sequential(nn.Flatten(), nn.Linear(784, 10), nn.LogSoftmax(dim=1)).to(device)\n"
    "    train(model, device, train_loader, torch.optim.SGD(model.parameters(), lr=0.1))\n"
)


def test_batches_of_a_torchvision_dataset_whose_transform_a_name_holds_are_moved():
    source = MNIST_SCRIPT.format(transforms="transforms.ToTensor(), transforms.Normalize((0.1307,), (0.3081,))")
    result = run_devfix(source, rules=[LoaderToDevice])
    assert "        data, target = data.to(device), target.to(device)\n        optimizer.zero_grad()" in result.fixed.decode()


def test_batches_of_a_transform_without_to_tensor_are_not_proven_tensors():
    source = MNIST_SCRIPT.format(transforms="transforms.Resize(28)")  # PIL images: a move would raise AttributeError
    result = run_devfix(source, rules=[LoaderToDevice])
    assert result.fixed == result.source


def test_batch_rebound_only_in_another_shape_moves_at_the_top_of_the_body():
    result = run("for images, labels in loader:\n    images = images.reshape(-1, 2).float()\n    labels = labels.to(device)\n"
                 "    loss = (model(images) - labels).abs().sum()\n")
    assert "for images, labels in loader:\n    images = images.to(device)\n    images = images.reshape(-1, 2).float()" in result.fixed.decode()


def test_batch_rebound_on_the_host_is_not_moved_before_it():
    # a move at the top of the body would break `.numpy()`: the rebound value is not the batch
    result = run("for images, labels in loader:\n    images = torch.from_numpy(images.numpy()[::-1].copy())\n"
                 "    loss = (model(images) - labels.to(device)).abs().sum()\n")
    assert "images = images.to(device)" not in result.fixed.decode()


NOTEBOOK = (
    "import torch\nimport torch.nn as nn\nfrom torch.utils.data import DataLoader, TensorDataset\n\n"
    "loader = DataLoader(TensorDataset(torch.randn(8, 4), torch.randint(0, 2, (8,))))\n"
    "{probe}"
    "device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\nmodel = nn.Linear(4, 2)\nmodel = model.to(device)\n"
    "for x, y in loader:\n    x = x.to(device)\n    y = y.to(device)\n    loss = nn.functional.cross_entropy(model(x), y)\n"
)


def test_a_loop_that_runs_before_the_model_is_built_and_moved_is_left_alone():
    # a notebook's probe cell: a fresh CPU model tried on one batch, above the cell that moves the real one
    probe = "model = nn.Linear(4, 2)\nfor x, y in loader:\n    out = model(x)\n    print(out.shape)\n    break\n\n"
    result = run_devfix(NOTEBOOK.format(probe=probe), rules=[LoaderToDevice])
    assert not result.findings and result.fixed.decode() == NOTEBOOK.format(probe=probe)


PACKING_MODEL = '''import torch
import torch.nn as nn


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(10, 4)
        self.rnn = nn.GRU(4, 4, batch_first=True)

    def forward(self, tokens, lengths):
        packed = nn.utils.rnn.pack_padded_sequence(self.embed(tokens), lengths, batch_first=True, enforce_sorted=False)
        return self.rnn(packed)[1][-1]


class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = Encoder()
        self.head = nn.Linear(4, 2)

    def forward(self, tokens, lengths):
        return self.head(self.encoder(tokens, lengths))
'''

TRAIN_WITH_IMPORTED_MODEL = '''import torch
from torch.utils.data import DataLoader

from {module} import Classifier


def run_epoch(model, loader, device):
    for tokens, lengths, labels in loader:
        logits = model(tokens, lengths)
        loss = torch.nn.functional.cross_entropy(logits, labels)


if __name__ == "__main__":
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model = Classifier().to(device)
    run_epoch(model, DataLoader([]), device)
'''


def test_lengths_a_model_of_another_file_only_packs_through_its_encoder_stay_on_the_cpu(tmp_path):
    (tmp_path / "model.py").write_text(PACKING_MODEL)
    train = tmp_path / "train.py"
    train.write_text(TRAIN_WITH_IMPORTED_MODEL.format(module="model"))
    result = run_devfix(train.read_text(), str(train), rules=[LoaderToDevice])
    assert "tokens, labels = tokens.to(device), labels.to(device)" in result.fixed.decode()
    assert "lengths.to(" not in result.fixed.decode()


def test_lengths_of_a_model_devfix_cannot_read_still_move(tmp_path):
    train = tmp_path / "train.py"
    train.write_text(TRAIN_WITH_IMPORTED_MODEL.format(module="model"))  # no model.py beside it
    result = run_devfix(train.read_text(), str(train), rules=[LoaderToDevice])
    assert "tokens, lengths, labels = tokens.to(device), lengths.to(device), labels.to(device)" in result.fixed.decode()


def test_lengths_the_file_s_model_hands_to_its_packing_encoder_stay_on_the_cpu():
    source = PACKING_MODEL + TRAIN_WITH_IMPORTED_MODEL.format(module="model").replace("from model import Classifier\n", "")
    result = run_devfix(source, rules=[LoaderToDevice])
    assert "tokens, labels = tokens.to(device), labels.to(device)" in result.fixed.decode()
    assert "lengths.to(" not in result.fixed.decode()


RESIDENT_DATASET = """import torch
from torch.utils.data import Dataset


class Pairs(Dataset):
    def __init__(self, x, y, device):
        self.x = torch.tensor(x){placement}
        self.y = torch.tensor(y){placement}

    def __len__(self):
        return len(self.x)

    def __getitem__(self, idx):
        return self.x[idx], self.y[idx]
"""

RESIDENT_TRAINING = """import torch
from torch.utils.data import DataLoader
from pairs import Pairs

device = "cuda" if torch.cuda.is_available() else "cpu"
net = torch.nn.Linear(2, 2).to(device)
data = Pairs([[1.0, 2.0]] * 4, [[0.0, 1.0]] * 4, device=device)
train_loader = DataLoader(data, batch_size=2)
for data, target in train_loader:
    loss = torch.nn.functional.l1_loss(net(data), target)
"""


@pytest.mark.parametrize("placement, moved", [(".to(device)", False), ("", True)])
def test_batches_of_a_dataset_of_another_file_that_keeps_its_tensors_on_the_device(tmp_path, placement, moved):
    """instafilter's `ColorizedDataset` (`self.x = torch.tensor(f0).to(device)`, in `dataset.py`):
    its batches arrive on the device; the loop's `data` is the name the dataset was bound to."""
    (tmp_path / "pairs.py").write_text(RESIDENT_DATASET.format(placement=placement))
    train = tmp_path / "train.py"
    train.write_text(RESIDENT_TRAINING)
    fixed = run_devfix(RESIDENT_TRAINING, str(train), rules=[LoaderToDevice]).fixed.decode()
    assert ("data, target = data.to(device), target.to(device)" in fixed) is moved


@pytest.mark.parametrize(("moves", "fixed"), [("images = images.to(device)\n        ", True), ("", False)])
def test_a_batch_list_given_by_the_caller_whose_loop_moves_part_of_the_batch_moves_the_rest(moves, fixed):
    """`for images, labels in batches:` of a list of tensor batches a caller gives, the loop moving
    `images` itself: the caller did not place them, so `labels` is on the CPU too. A loop that moves
    nothing may be given batches the caller placed: left alone."""
    source = (
        "import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n\n\n"
        "def train_epoch(model, batches, device):\n    for images, labels in batches:\n"
        f"        {moves}loss = F.cross_entropy(model(images), labels)\n        loss.backward()\n\n\n"
        "device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"
        "model = nn.Linear(4, 3).to(device)\n"
        "batches = [(torch.randn(8, 4), torch.randint(0, 3, (8,))) for _ in range(3)]\ntrain_epoch(model, batches, device)\n"
    )
    result = run_devfix(source, rules=[LoaderToDevice])
    assert ("labels = labels.to(device)" in result.fixed.decode()) is fixed


@pytest.mark.parametrize("take", ['batch.pop("labels")', 'batch["labels"]'])
def test_an_item_taken_by_key_before_the_rest_of_the_batch_is_moved_moves_too(take):
    """`labels = batch.pop("labels")` (or `batch["labels"]`), then the rest moved and fed to the
    model: the labels stayed on the CPU and meet the model's output in the loss."""
    result = run(
        f"for batch in loader:\n    labels = {take}\n    batch = {{k: v.to(device) for k, v in batch.items()}}\n"
        "    out = model(**batch)\n    loss = torch.nn.functional.cross_entropy(out, labels)\n"
    )
    assert f"    labels = {take}\n    labels = labels.to(device)\n    batch = {{k: v.to(device)" in result.fixed.decode()


def test_an_item_taken_by_key_while_the_rest_of_the_batch_is_fed_raw_moves_with_it():
    result = run(
        'for batch in loader:\n    labels = batch.pop("labels")\n    out = model(**batch)\n'
        "    loss = torch.nn.functional.cross_entropy(out, labels)\n"
    )
    fixed = result.fixed.decode()
    assert 'labels = batch.pop("labels")\n    labels = labels.to(device)\n    batch = {key: value.to(device) if torch.is_tensor(value)' in fixed


TEXT_ITEMS = """import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset


class Reviews(Dataset):
    def __init__(self, texts, scores):
        self.texts, self.scores = texts, scores

    def __len__(self):
        return len(self.texts)

    def __getitem__(self, i):
        return {"text": str(self.texts[i]), "score": self.scores[i]}


device = torch.device("cpu")
model = nn.Linear(2, 2).to(device)
for batch in DataLoader(Reviews(["a", "b"], [1.0, 2.0])):
    texts = batch["text"]
    out = model(texts)
"""


def test_an_item_the_dataset_gives_as_strings_stays_when_taken_by_key():
    """`{"text": str(...)}`: `default_collate` gives the texts back as a tuple of strings."""
    result = run_devfix(TEXT_ITEMS, rules=[LoaderToDevice])
    assert result.fixed == result.source
    assert "texts.to(" not in result.fixed.decode()
