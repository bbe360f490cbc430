"""DF008's refusals that a fixture cannot show (the program would need another array library, or
fails on a GPU before and after)."""

from __future__ import annotations

import pytest

from devfix.codemods import TensorToNumpy
from tests.conftest import run_devfix

HELPER = "def to_array(weights):\n    return weights.numpy()\n\n\nmodel = torch.nn.Linear(2, 2).to(torch.device('cuda'))\n"


def test_a_parameters_numpy_in_a_torch_file_gets_host_methods():
    result = run_devfix("import torch\n\n\n" + HELPER, rules=[TensorToNumpy])
    assert "weights.detach().cpu().numpy()" in result.fixed.decode()


@pytest.mark.parametrize(("receiver", "fixed"), [
    ("weights.data", "weights.data.cpu().numpy()"),
    ("weights[0]", "weights[0].detach().cpu().numpy()"),
    ("weights._dataset[:]", None),
    ("weights.interaction", None),
])
def test_only_a_parameters_own_values_are_taken_for_its_tensors(receiver, fixed):
    """recbole's trainer: `dataloader._dataset[:]` is an `Interaction`, which has a `.numpy()` and no
    `.detach()`: what an object parameter holds is no tensor argument of the helper."""
    source = "import torch\n\n\n" + HELPER.replace("weights.numpy()", f"{receiver}.numpy()")
    result = run_devfix(source, rules=[TensorToNumpy])
    if fixed is None:
        assert result.fixed.decode() == source and not result.findings
    else:
        assert fixed in result.fixed.decode()


def test_a_parameters_numpy_is_left_alone_where_tensorflow_arrays_may_be_meant():
    source = "import tensorflow as tf\nimport torch\n\n\n" + HELPER
    result = run_devfix(source, rules=[TensorToNumpy])
    assert result.fixed.decode() == source and not result.findings


def test_a_parameters_numpy_is_left_alone_in_a_test_file():
    """A test's helpers are given what fixtures and parametrizations make, which devfix does not see
    (ignite's `_test(y_pred, y, batch_size, device="cpu")` is given `torch.rand(...)`)."""
    source = "import torch\n\n\n" + HELPER
    result = run_devfix(source, path="test_weights.py", rules=[TensorToNumpy])
    assert result.fixed.decode() == source and not result.findings


COLLECTED = """import numpy as np
import torch
import torch.nn as nn

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")


def summary(values):
    return float(np.asarray(values).mean())


model = nn.Linear(3, 2).to(device)
preds = []
for _ in range(3):
    preds.append(model(torch.randn(4, 3).to(device)).argmax(1))
print(len(preds))
{use}
"""


def collected(use: str) -> str:
    return run_devfix(COLLECTED.format(use=use), rules=[TensorToNumpy]).fixed.decode()


def test_a_list_only_handed_to_numpy_collects_host_copies():
    assert "preds.append(model(torch.randn(4, 3).to(device)).argmax(1).detach().cpu())" in collected("print(summary(preds))")


LAYER_FEATURES = """import numpy as np
import torch
from torch import nn


def features(model, batches, device):
    feats = []
    for xb in batches:
        feats.append(model[0]({given}))
    return np.vstack(feats)


device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
model = nn.Sequential(nn.Linear(3, 4), nn.ReLU()).to(device)
print(features(model, [torch.randn(2, 3)], device).shape)
"""


@pytest.mark.parametrize(("given", "copied"), [("xb.to(device)", True), ("xb", False)])
def test_what_a_layer_of_a_given_sequential_makes_of_device_inputs_is_collected_on_the_host(given, copied):
    """`model[0](xb.to(device))`: a layer of the model follows its input as the model does."""
    result = run_devfix(LAYER_FEATURES.format(given=given), rules=[TensorToNumpy]).fixed.decode()
    assert (f"feats.append(model[0]({given}).detach().cpu())" in result) is copied


def test_a_list_the_scope_also_reads_on_the_device_keeps_its_tensors():
    """`torch.cat(preds) == labels` needs them where they are: bringing them over as they are
    collected would only move the crash there."""
    use = "labels = torch.zeros(12, dtype=torch.long).to(device)\nprint((torch.cat(preds) == labels).sum(), summary(preds))"
    assert collected(use) == COLLECTED.format(use=use)


@pytest.mark.parametrize(("use", "moved"), [
    ("preds = np.concatenate(preds)\nprint((preds == 0).mean())", True),
    ("with torch.no_grad():\n    preds = np.concatenate(preds)\nprint((preds == 0).mean())", True),
    ("if len(preds) > 1:\n    preds = np.concatenate(preds)\nprint((preds == 0).mean())", False),
    ("stacked = np.concatenate(preds)\nprint((preds == 0).mean())", False),
])
def test_a_list_rebound_to_the_array_numpy_made_of_it_is_read_as_that_array_after(use, moved):
    """`preds = np.concatenate(preds)`, run once: what the scope reads of `preds` after it is the
    host array; rebound under a condition, or not rebound, a later read may be the list itself."""
    fixed = collected(use)
    assert ("argmax(1).detach().cpu())" in fixed) is moved
    assert moved or fixed == COLLECTED.format(use=use)


RETURNED = """import numpy as np
import torch
from sklearn.metrics import f1_score

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")


def collect(model, xs):
    y_pred, probs = [], []
    for x in xs:
        logits = model(x.to(device))
        y_pred.extend(logits.argmax(1))
        probs += list(logits.softmax(1)[:, 1])
    {inner}return y_pred, probs


model = torch.nn.Linear(3, 2).to(device)
y_pred, probs = collect(model, [torch.randn(4, 3)])
{outer}print(f1_score([0, 1, 0, 1], y_pred), np.mean(probs))
"""


@pytest.mark.parametrize(("inner", "outer", "moved"), [
    ("", "", True),
    # the caller, or the function, also reads `y_pred` as tensors (`probs` is still numpy's alone)
    ("", "print(torch.stack(y_pred).sum())\n", False),
    ("print(torch.stack(y_pred).sum())\n    ", "", False),
])
def test_lists_a_function_returns_to_numpy_collect_host_copies(inner, outer, moved):
    """`y_pred, probs = collect(model, xs)` … `f1_score(y_true, y_pred)`, `np.mean(probs)`: the
    function extends its lists with device tensors (`.extend(t)`, `+= list(t)`); each is brought
    over as it is collected, unless a reader needs the tensors where they are."""
    fixed = run_devfix(RETURNED.format(inner=inner, outer=outer), rules=[TensorToNumpy]).fixed.decode()
    assert ("y_pred.extend(logits.argmax(1).detach().cpu())" in fixed) is moved
    assert ("y_pred.extend(logits.argmax(1))\n" in fixed) is not moved
    assert "probs += list(logits.softmax(1)[:, 1].detach().cpu())" in fixed


EXTENDED_BY_RETURNS = """import matplotlib.pyplot as plt
import torch

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")


def train(model, xs):
    losses = []
    for x in xs:
        loss = model(x.to(device)).pow(2).mean()
        losses.append(loss.detach())
    return losses


model = torch.nn.Linear(3, 1).to(device)
history = []
for epoch in range(2):
    history += train(model, [torch.randn(4, 3)])
{other}plt.plot(history)
"""


@pytest.mark.parametrize(("other", "moved"), [
    ("", True),
    ("print(torch.stack(history).mean())\n", False),  # the caller also reads them as tensors
])
def test_a_list_extended_with_what_a_function_returns_to_matplotlib_collects_host_copies(other, moved):
    """`history += train(model, xs)` … `plt.plot(history)`: the items are what `train` appends."""
    fixed = run_devfix(EXTENDED_BY_RETURNS.format(other=other), rules=[TensorToNumpy]).fixed.decode()
    assert ("losses.append(loss.detach().cpu())" in fixed) is moved


def test_a_helper_whose_parameter_has_the_lists_name_reads_its_own_value():
    source = COLLECTED.replace("def summary(values):\n    return float(np.asarray(values).mean())",
                               "def summary(preds):\n    return float(np.asarray(preds).mean())")
    fixed = run_devfix(source.format(use="print(summary(preds))"), rules=[TensorToNumpy]).fixed.decode()
    assert "preds.append(model(torch.randn(4, 3).to(device)).argmax(1).detach().cpu())" in fixed


def test_a_function_that_reads_the_global_list_on_the_device_keeps_its_tensors():
    use = "print(summary(preds))\n\n\ndef agree(labels):\n    return torch.cat(preds) == labels\n"
    assert collected(use) == COLLECTED.format(use=use)


STORED = """import numpy as np
import torch

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
weights = torch.nn.Linear(3, 1).to(device)
{array}
for i in range(3):
    out = weights(torch.randn(1, 3).to(device))
    history[i] = {value}
"""


def stored(array: str, value: str = "out") -> str:
    return run_devfix(STORED.format(array=array, value=value), rules=[TensorToNumpy]).fixed.decode()


def test_an_item_stored_into_a_numpy_array_made_by_shape_is_brought_to_the_host():
    assert "history[i] = out.detach().cpu()\n" in stored("history = np.full((3, 1), 0.0)")
    assert "history[i] = out.data.cpu()\n" in stored("history = np.zeros((3, 1), dtype=np.float32)", "out.data")


@pytest.mark.parametrize(("frame", "fixed_store"), [
    ("history = pd.DataFrame({'step': range(3)})", "history[i] = out.detach().cpu()"),  # a column store converts through numpy
    ("history = pd.read_csv('runs.csv')", "history[i] = out.detach().cpu()"),
    ("history = pd.DataFrame({'step': range(3)})\nhistory = {}", None),  # a dict by the time it is stored into
    ("history = make_table()", None),  # nothing proves a DataFrame
])
def test_a_column_stored_into_a_dataframe_the_scope_made_is_brought_to_the_host(frame, fixed_store):
    source = STORED.replace("import numpy as np\n", "import numpy as np\nimport pandas as pd\n").format(array=frame, value="out")
    result = run_devfix(source, rules=[TensorToNumpy]).fixed.decode()
    assert result == source if fixed_store is None else f"    {fixed_store}\n" in result


@pytest.mark.parametrize("array, value", [
    ("history = np.full((3,), None, object)", "out"),  # an object array keeps the tensor itself
    ("history = np.empty(3, dtype='object')", "out"),
    ("history = np.array([None, None, None])", "out"),  # not made by shape: numpy chose object dtype
    ("history = np.zeros(3)\nhistory = [0.0] * 3", "out"),  # a list by the time it is stored into
    ("history = np.zeros(3)", "out.item()"),  # a number
    ("history = np.zeros(3)", "out.detach().cpu()"),  # already on the host
    ("history = torch.zeros(3, 1)", "out"),  # a tensor: no numpy conversion
])
def test_stores_that_convert_nothing_on_a_gpu_are_left_alone(array, value):
    source = STORED.format(array=array, value=value)
    assert stored(array, value) == source



PLOTTING_HELPER = """import matplotlib.pyplot as plt
import numpy as np
import torch

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")


def show(ax, image):
    ax.imshow(image[0])


fig, ax = plt.subplots()
out = torch.rand(2, 4, 4).to(device)
{calls}
"""


def test_a_helper_every_caller_gives_device_values_brings_them_over_where_it_plots():
    result = run_devfix(PLOTTING_HELPER.format(calls="show(ax, out)\nshow(ax, out * 2)"), rules=[TensorToNumpy])
    assert "    ax.imshow(image[0].detach().cpu())\n" in result.fixed.decode()


@pytest.mark.parametrize(
    "calls",
    [
        "show(ax, out)\nshow(ax, np.zeros((2, 4, 4)))",  # also given an array, which has no `.detach()`
        "show(ax, out)\nhandlers = [show]",  # handed on: callers unknown
        "show(object(), out)",  # the receiver is no Axes
        "show(ax, out.cpu())",
    ],
)
def test_a_helper_whose_callers_are_not_all_known_to_give_device_values_is_left_alone(calls: str):
    source = PLOTTING_HELPER.format(calls=calls)
    result = run_devfix(source, rules=[TensorToNumpy])
    assert result.fixed.decode() == source and not result.findings


@pytest.mark.parametrize("value", ["out.shape", "out.shape[1:]", "out.dtype"])
def test_what_describes_a_device_tensor_is_handed_over_as_it_is(value: str):
    source = f"import numpy as np\nimport torch\n\nout = torch.rand(2, 3).to('cuda')\nones = np.ones({value})\n"
    result = run_devfix(source, rules=[TensorToNumpy])
    assert result.fixed.decode() == source and not result.findings


@pytest.mark.parametrize("rebinding", ["image = image.cpu()", "image = load(image)", "image = image + offset"])
def test_a_helper_that_rebinds_its_parameter_to_other_values_is_left_alone(rebinding: str):
    source = PLOTTING_HELPER.replace("def show(ax, image):\n", f"def show(ax, image):\n    {rebinding}\n").format(calls="show(ax, out)")
    result = run_devfix(source, rules=[TensorToNumpy])
    assert result.fixed.decode() == source and not result.findings


KEPT_MODEL = """import numpy as np
import torch

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")


class Evaluator:
    def __init__(self, model):
        self.model = model

    def scores(self, images):
        return np.asarray(self.model(images))


moved = torch.nn.Linear(2, 2).to(device)
{constructions}
"""


def test_outputs_of_a_model_every_construction_gives_moved_are_brought_over():
    result = run_devfix(KEPT_MODEL.format(constructions="Evaluator(moved).scores(x)"), rules=[TensorToNumpy])
    assert "np.asarray(self.model(images).detach().cpu())" in result.fixed.decode()


def test_outputs_of_a_model_some_construction_gives_unmoved_are_left_alone():
    source = KEPT_MODEL.format(constructions="Evaluator(moved).scores(x)\nEvaluator(torch.nn.Linear(2, 2)).scores(y)")
    result = run_devfix(source, rules=[TensorToNumpy])
    assert result.fixed.decode() == source and not result.findings


def test_results_of_a_device_method_are_brought_over_in_every_method_that_hands_them_to_numpy():
    source = KEPT_MODEL.replace(
        "    def scores(self, images):\n        return np.asarray(self.model(images))\n",
        "    def first(self, images):\n        return np.asarray(self.model(images))\n\n"
        "    def scores(self, images):\n        return self.model(images)\n\n"
        "    def report(self, images):\n        return float(np.mean(np.asarray(self.scores(images))))\n",
    ).format(constructions="evaluator = Evaluator(moved)\nevaluator.first(x)\nevaluator.report(x)")
    result = run_devfix(source, rules=[TensorToNumpy])
    assert "np.asarray(self.scores(images).detach().cpu())" in result.fixed.decode()


def test_dict_displays_are_columns_only_for_pandas():
    # `np.array({...})` makes an object array of the dict itself: nothing is converted
    source = (
        "import numpy as np\nimport pandas as pd\nimport torch\n\ndevice = torch.device('cuda')\n"
        "out = torch.ones(3).to(device)\nkept = np.array({'out': out})\nframe = pd.DataFrame({'out': out, 'n': 3})\n"
    )
    fixed = run_devfix(source, rules=[TensorToNumpy]).fixed.decode()
    assert "kept = np.array({'out': out})\n" in fixed
    assert "frame = pd.DataFrame({'out': out.detach().cpu(), 'n': 3})\n" in fixed


METRICS = "import numpy as np\n\n\ndef accuracy(output, target):\n    pred = output.argmax(1)\n    return float(np.mean(pred.numpy() == target.numpy()))\n{extra}"
TRAIN = (
    "import torch\nfrom metrics import accuracy\n\n"
    "device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"
    "model = torch.nn.Linear(4, 3).to(device)\nx, y = torch.randn(8, 4), torch.randint(0, 3, (8,))\n"
    "out = model(x.to(device))\nprint(accuracy({given}, y))\n"
)


def _metrics_fixed(tmp_path, given: str, extra: str = "") -> str:
    from devfix.analysis.project import ProjectIndex
    from devfix.engine import process
    from devfix.fix_policy import FixPolicy

    (tmp_path / "train.py").write_text(TRAIN.format(given=given))
    metrics = tmp_path / "metrics.py"
    source = METRICS.format(extra=extra)
    metrics.write_text(source)
    result = process(source.encode(), str(metrics), [TensorToNumpy], ProjectIndex(), FixPolicy(apply=True, unsafe=True))
    return result.fixed.decode()


def test_a_helper_every_caller_in_another_file_gives_a_model_output_brings_it_to_the_host(tmp_path):
    fixed = _metrics_fixed(tmp_path, "out")
    assert "np.mean(pred.detach().cpu().numpy() == target.numpy())" in fixed  # `y` stays on the CPU there


@pytest.mark.parametrize("given, extra", [
    ("out.cpu()", ""),  # the caller brings it back itself
    ("out.argmax(1).numpy()", ""),  # an array: `.cpu()` would break it
    ("out", "\n\nprint(accuracy(np.ones((2, 3)), np.zeros(2)))\n"),  # the file's own call gives arrays
])
def test_a_helper_whose_callers_may_give_host_values_is_left_alone(tmp_path, given, extra):
    fixed = _metrics_fixed(tmp_path, given, extra)
    assert fixed == METRICS.format(extra=extra)


BRANCHES = """import numpy as np
import torch

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
train_on_gpu = torch.cuda.is_available()
model = torch.nn.Linear(3, 2).to(device)
output = model(torch.randn(4, 3).to(device))
_, preds_tensor = torch.max(output, 1)
preds = {conversion}
"""


@pytest.mark.parametrize(("conversion", "fixed"), [
    # Udacity's notebooks: the code already picks the conversion by where the tensor is
    ("np.squeeze(preds_tensor.numpy()) if not train_on_gpu else np.squeeze(preds_tensor.cpu().numpy())", None),
    ("preds_tensor.cpu().numpy() if train_on_gpu else preds_tensor.numpy()", None),
    # the other branch brings another value over: this one still needs it
    ("preds_tensor.numpy() if not train_on_gpu else output.cpu().numpy()",
     "preds_tensor.detach().cpu().numpy() if not train_on_gpu else output.cpu().numpy()"),
])
def test_a_branch_whose_other_branch_brings_the_value_over_is_left_alone(conversion, fixed):
    source = BRANCHES.format(conversion=conversion)
    result = run_devfix(source, rules=[TensorToNumpy])
    assert result.fixed.decode() == (source if fixed is None else BRANCHES.format(conversion=fixed))


HOSTED = """import numpy as np
import torch

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
model = torch.nn.Linear(4, 4).to(device)


def adjacency(n):
    return torch.from_numpy(np.ones((n, n))).float()


def show(n):
    out = model(torch.randn(2, 4).to(device))
    {line}
"""


@pytest.mark.parametrize("line", [
    "return out.to(torch.device('cpu')).detach().numpy()",  # already on the host
    "return out.detach().to(torch.device('cpu')).reshape(-1).numpy()",
    "return adjacency(n).numpy()",  # a function of the file that makes its tensor on the host
    "a = adjacency(n)\n    return a.numpy()",
])
def test_a_value_proven_on_the_host_gets_no_host_copy(line):
    source = HOSTED.format(line=line)
    result = run_devfix(source, rules=[TensorToNumpy])
    assert not result.findings and result.fixed.decode() == source


def test_a_device_output_still_gets_its_host_copy():
    fixed = run_devfix(HOSTED.format(line="return out.numpy()"), rules=[TensorToNumpy]).fixed.decode()
    assert "return out.detach().cpu().numpy()" in fixed


PIPELINE = """import torch


class FeatureExtraction:
    def __init__(self, framework):
        self.framework = framework

    def postprocess(self, outputs):
        if self.framework == "pt":
            return outputs.tolist()
        {branch}
            return outputs.numpy().tolist()


model = torch.nn.Linear(2, 2).to(torch.device("cuda"))
"""


def test_a_branch_for_another_frameworks_arrays_keeps_its_numpy_call():
    """transformers' pipelines: under `elif self.framework == "tf":` the outputs are TensorFlow's,
    which have `.numpy()` but no `.detach()`."""
    source = PIPELINE.format(branch='elif self.framework == "tf":')
    result = run_devfix(source, rules=[TensorToNumpy])
    assert result.fixed.decode() == source and not result.findings


def test_a_branch_for_torch_still_brings_the_tensor_over():
    fixed = run_devfix(PIPELINE.format(branch='elif self.framework == "pt-gpu":'), rules=[TensorToNumpy]).fixed.decode()
    assert "return outputs.detach().cpu().numpy().tolist()" in fixed


@pytest.mark.parametrize(("use", "fixed"), [
    ("print(summary(preds), sum(p.item() for p in preds))", True),  # each item read as a value the same on the host
    ("print(summary(preds), [float(p) for p in preds])", True),
    ("print(summary(preds), sum(p.sum() for p in preds))", False),  # a tensor sum: on the device
    ("print(summary(preds), [p.item() for p in preds if p.sum() > 0])", False),  # the condition reads the tensor too
])
def test_a_comprehension_reading_each_item_only_as_a_host_value_is_no_device_read(use, fixed):
    assert ("preds.append(model(torch.randn(4, 3).to(device)).argmax(1).detach().cpu())" in collected(use)) is fixed


PLOTTED = """import matplotlib.pyplot as plt
import torch
import torch.nn as nn

device = torch.device("cuda")
{model}
with torch.no_grad():
    samples = G(torch.randn(4, 8, device=device))
fig, axes = plt.subplots(1, 4)
for {loop}:
    ax.imshow(img)
"""


@pytest.mark.parametrize(("model", "loop", "fixed"), [
    ("G = nn.Sequential(nn.Linear(8, 64), nn.Tanh()).to(device)", "ax, img in zip(axes, samples)", True),
    ("G = nn.Sequential(nn.Linear(8, 64), nn.Tanh()).to(device)", "i, img in enumerate(samples)", True),
    ("G = nn.Linear(8, 64).to(device)", "ax, img in zip(axes, samples)", True),
    # an LSTM gives a tuple, a Module of unknown code may give a dict: the loop's items may be no tensors
    ("G = nn.Sequential(nn.LSTM(8, 64)).to(device)", "ax, img in zip(axes, samples)", False),
    ("G = make_generator().to(device)", "ax, img in zip(axes, samples)", False),
    # the name is bound again in a function: which `G` a call reads is not one thing
    ("G = nn.Linear(8, 64).to(device)\n\n\ndef other(G):\n    return G\n\n", "ax, img in zip(axes, samples)", False),
])
def test_the_rows_of_a_tensor_a_layer_gives_are_brought_to_the_host_for_matplotlib(model, loop, fixed):
    source = PLOTTED.format(model=model, loop=loop)
    if "enumerate" in loop:
        source = source.replace("    ax.imshow(img)", "    axes[i].imshow(img)")
    result = run_devfix(source, rules=[TensorToNumpy]).fixed.decode()
    assert ("imshow(img.detach().cpu())" in result) is fixed


IMSHOW = (
    "import matplotlib.pyplot as plt\nimport torch\nfrom torch import nn\n\n"
    "device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"
    "model = nn.Conv2d(3, 3, 1).to(device)\n\n\ndef imshow(img):\n    img = img / 2 + 0.5\n    plt.imshow(img.numpy()[0])\n\n\n"
    "images = torch.rand(2, 3, 4, 4)\n{calls}images = images.to(device)\nout = model(images)\n"
)


@pytest.mark.parametrize("calls, fixed", [
    ("imshow(images[0])\n", False),  # the loader's CPU batch, before the move
    ("imshow(torch.cat(list(images), dim=2))\nimshow(images[1])\n", False),
    ("imshow(model(images.to(device))[0].detach())\n", True),  # a moved model's output
    ("imshow(images[0])\nimshow(model(images.to(device))[0].detach())\n", True),  # one caller is enough
])
def test_a_helper_parameter_brought_to_the_host_only_where_a_caller_may_give_a_device_value(calls, fixed):
    source = IMSHOW.format(calls=calls)
    result = run_devfix(source, rules=[TensorToNumpy]).fixed.decode()
    assert ("plt.imshow(img.detach().cpu().numpy()[0])" in result) is fixed
    assert fixed or result == source


METRICS_HELPERS = '''import numpy as np


def accuracy(logits, labels):
    preds = logits.argmax(1)
    return (preds == labels).float().mean()


def accuracy_value(logits, labels):
    return (logits.argmax(1) == labels).float().mean().item()


def summarize(history):
    return float(np.array(history).mean())
'''

EPOCH_OF_A_MOVED_MODEL = '''import torch
import torch.nn as nn

from metrics import {helper}, summarize


def run_epoch(model, batches, device):
    accs = []
    for x, y in batches:
        x, y = x.to(device), y.to(device)
        accs.append({helper}(model(x), y))
    return summarize(accs)


if __name__ == "__main__":
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model = nn.Linear(3, 2).to(device)
    print(run_epoch(model, [(torch.randn(4, 3), torch.randint(0, 2, (4,)))], device))
'''


def test_a_project_helper_computing_a_tensor_from_device_outputs_is_brought_to_the_host_as_appended(tmp_path):
    (tmp_path / "metrics.py").write_text(METRICS_HELPERS)
    train = tmp_path / "train.py"
    train.write_text(EPOCH_OF_A_MOVED_MODEL.format(helper="accuracy"))
    result = run_devfix(train.read_text(), str(train), rules=[TensorToNumpy])
    assert "accs.append(accuracy(model(x), y).detach().cpu())" in result.fixed.decode()


def test_a_project_helper_that_returns_a_number_is_left_alone(tmp_path):
    (tmp_path / "metrics.py").write_text(METRICS_HELPERS)
    train = tmp_path / "train.py"
    train.write_text(EPOCH_OF_A_MOVED_MODEL.format(helper="accuracy_value"))
    result = run_devfix(train.read_text(), str(train), rules=[TensorToNumpy], fix=False)
    assert not result.findings and result.fixed == result.source


def test_a_helper_of_the_file_computing_a_tensor_from_device_outputs_counts_too():
    source = METRICS_HELPERS + EPOCH_OF_A_MOVED_MODEL.format(helper="accuracy").replace("from metrics import accuracy, summarize\n", "")
    result = run_devfix(source, rules=[TensorToNumpy])
    assert "accs.append(accuracy(model(x), y).detach().cpu())" in result.fixed.decode()


def test_an_average_meter_read_through_a_property_collects_host_copies():
    source = '''import numpy as np
import torch
import torch.nn as nn


class AverageMeter:
    def __init__(self):
        self.values = []

    def update(self, val):
        self.values.append(val)

    @property
    def avg(self):
        return float(np.mean(self.values))


device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
model = nn.Linear(4, 1).to(device)
meter = AverageMeter()
x, y = torch.randn(5, 4).to(device), torch.randn(5, 1).to(device)
meter.update(nn.functional.mse_loss(model(x), y))
print(meter.avg)
'''
    result = run_devfix(source, rules=[TensorToNumpy])
    assert "self.values.append(val.detach().cpu())" in result.fixed.decode()


def test_the_output_of_a_moved_object_of_a_library_devfix_cannot_read_is_left_alone():
    source = '''import numpy as np
import torch
import torch.nn as nn
from diffusers import StableDiffusionPipeline


class Net(nn.Module):
    def forward(self, x):
        return x * 2


device = "cuda" if torch.cuda.is_available() else "cpu"
pipeline = StableDiffusionPipeline.from_pretrained("tiny").to(device)
images = pipeline(prompt="a squirrel", output_type="np", return_dict=False)[0]
assert np.allclose(images, images)
net = Net().to(device)
y = net(torch.ones(2, device=device))
print(np.allclose(y, y))
'''
    result = run_devfix(source, rules=[TensorToNumpy])
    fixed = result.fixed.decode()
    assert "np.allclose(images, images)" in fixed  # a pipeline asked for numpy arrays gives arrays
    assert "np.allclose(y.detach().cpu(), y.detach().cpu())" in fixed  # a Module of the file gives tensors
    reported = run_devfix(source, rules=[TensorToNumpy], fix=False)
    assert not [finding for finding in reported.findings if "images" in finding.message]


TITLED = """import matplotlib.pyplot as plt
import torch

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
model = torch.nn.Linear(4, 3).to(device)
_, pred = torch.max(model(torch.ones(2, 4, device=device)), dim=1)
plt.title({title})
"""


@pytest.mark.parametrize("title, fixed", [
    ("'Pred %d' % pred[0]", False),  # TRAttack's `plt.title('Origianl with Pred %d' % pred1)`: a string
    ("'Pred ' + 'label %d' % pred[0]", False),
    ("pred % 2", True),  # a remainder: still the tensor
])
def test_a_string_formatted_with_a_device_value_is_a_string(title, fixed):
    source = TITLED.format(title=title)
    result = run_devfix(source, rules=[TensorToNumpy])
    assert (result.fixed.decode() != source) is fixed


VAE_MODULES = """import torch
from torch import nn


class Decoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.out = nn.Linear(4, 2)

    def forward(self, z, y):
        scores = self.out(z)
        loss = nn.functional.cross_entropy(scores, y)
        acc = (scores.argmax(1) == y).float().mean()
        if y.numel() > 0:
            assm_acc = acc
        else:
            assm_acc = 1
        return loss, acc, assm_acc


class VAE(nn.Module):
    def __init__(self):
        super().__init__()
        self.mean = nn.Linear(3, 4)
        self.decoder = Decoder()

    def forward(self, x, y):
        z = self.mean(x)
        kl_div = z.pow(2).mean()
        loss, wacc, sacc = self.decoder(z, y)
        return loss + kl_div, kl_div.item(), wacc, sacc
"""

VAE_TRAINING = """import numpy as np
import torch
from modules import {imported}

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
model = VAE().to(device)
x, y = torch.randn(8, 3, device=device), torch.randint(0, 2, (8,), device=device)
loss, kl_div, wacc, sacc = model(x, y)
meters = np.array([kl_div, loss.item(), wacc * 100, sacc * 100])
"""


@pytest.mark.parametrize("imported", ["VAE", "*"])
def test_items_a_models_forward_may_return_as_numbers_get_no_tensor_methods(tmp_path, imported):
    """hgraph2graph's `HierVAE.forward` returns `kl_div.item()`, and its decoder's `assm_acc` is
    `1` on one path: `.detach()` on them raises AttributeError. The accuracy is a device tensor.
    Its scripts import the model with `from hgraph import *`."""
    (tmp_path / "modules.py").write_text(VAE_MODULES)
    train = tmp_path / "train.py"
    source = VAE_TRAINING.format(imported=imported)
    train.write_text(source)
    fixed = run_devfix(source, str(train), rules=[TensorToNumpy]).fixed.decode()
    assert "meters = np.array([kl_div, loss.item(), (wacc * 100).detach().cpu(), sacc * 100])" in fixed


FORWARD_CALLED = """import numpy as np
import torch


def extract(model, batches, gpu):
    for batch in batches:
        input = torch.from_numpy(batch)
        if gpu:
            input = input.cuda()
        logit = {call}(input)
        while np.isnan(logit.data.max()):
            logit = {call}(input)
        print(logit.shape)
"""


@pytest.mark.parametrize("call", ["model", "model.forward"])
def test_a_models_forward_called_directly_follows_its_input(call):
    """NetDissect-Lite's `logit = model.forward(input_var)`, then `np.isnan(logit.data.max())`:
    `forward` called by hand returns what the call of the model would."""
    fixed = run_devfix(FORWARD_CALLED.format(call=call), rules=[TensorToNumpy]).fixed.decode()
    assert "while np.isnan(logit.data.max().cpu()):" in fixed


NARROWED_TO_NUMBERS = """from numbers import Number
from typing import Any

import numpy as np
import torch


def to_torch(x: Any, device="cpu"):
    if isinstance(x, np.ndarray):
        x = torch.from_numpy(x).to(device)
        return x
    if isinstance(x, torch.Tensor):
        return x.to(device)
    if isinstance(x, {types}):
        return to_torch(np.asanyarray(x), device)
    return x
"""


@pytest.mark.parametrize("types, narrowed", [("np.number | np.bool_ | Number", True), ("(np.number, Number)", True), ("object", False)])
def test_a_value_an_isinstance_test_proves_a_number_gets_no_host_copy(types, narrowed):
    """tianshou's `to_torch`: under `isinstance(x, np.number | np.bool_ | Number)` `x` is no tensor,
    whatever the branch above moved; `x.detach().cpu()` would raise AttributeError."""
    source = NARROWED_TO_NUMBERS.format(types=types)
    fixed = run_devfix(source, rules=[TensorToNumpy]).fixed.decode()
    assert ("np.asanyarray(x.detach().cpu())" in fixed) is not narrowed


@pytest.mark.parametrize(("item", "copied"), [
    ("l.detach()", "l.detach().cpu()"),
    ("l", "l.detach().cpu()"),
    ("l.item()", None),  # a Python number: the same on the host
])
def test_a_comprehension_over_a_list_of_device_tensors_handed_to_numpy_brings_each_item_over(item, copied):
    """`np.mean([l.detach() for l in losses])`, `losses` filled with device losses: each item is
    brought to the host where the comprehension makes it; the list keeps its tensors."""
    source = (
        "import numpy as np\nimport torch\n\n\ndef train(model, xs, ys, device):\n    losses = []\n"
        "    for _ in range(3):\n        loss = torch.nn.functional.mse_loss(model(xs.to(device)), ys.to(device))\n"
        "        losses.append(loss)\n"
        f"    return np.mean([{item} for l in losses])\n"
    )
    result = run_devfix(source, rules=[TensorToNumpy]).fixed.decode()
    assert "losses.append(loss)\n" in result
    if copied is None:
        assert result == source
    else:
        assert f"np.mean([{copied} for l in losses])" in result


@pytest.mark.parametrize(("branch", "copied"), [("else", False), ("if True", True)])
def test_a_binding_in_an_if_body_does_not_reach_the_else_branch(branch, copied):
    """shap's `_topk_lm`: the torch branch binds `outputs` from a model fed moved inputs, the
    TensorFlow branch binds it again from a TF model; the TF branch's `outputs.logits.numpy()` is a
    TF tensor's. After the `if` (no `else`), the moved model's output may reach the read."""
    source = (
        "import torch\n\n\ndef logits_of(model, inputs, device, framework):\n"
        "    if framework == 'pt':\n        inputs = inputs.to(device)\n        outputs = model(**inputs)\n"
        "        logits = outputs.logits.detach().cpu().numpy()\n"
        f"    {branch}:\n"
        "        outputs = model(inputs)\n        logits = outputs.logits.numpy()\n    return logits\n"
    )
    result = run_devfix(source, rules=[TensorToNumpy]).fixed.decode()
    assert ("outputs.logits.detach().cpu().numpy()\n    return" in result) is copied


@pytest.mark.parametrize(("method", "copied"), [("itertracks(yield_label=True)", False), ("softmax(-1)", True)])
def test_only_a_tensor_method_of_a_device_value_gives_a_device_tensor(method, copied):
    """whisperx's diarizer: `self.model` (a moved pipeline) returns an object whose
    `speaker_diarization.itertracks(...)` yields segments; only a `torch.Tensor` method of a device
    value is known to give a tensor there."""
    source = (
        "import pandas as pd\nimport torch\n\n\nclass Diarizer:\n    def __init__(self, pipeline, device):\n"
        "        self.model = pipeline.to(device)\n\n    def __call__(self, audio):\n"
        "        output = self.model(audio)\n        diarization = output.speaker_diarization\n"
        f"        return pd.DataFrame(diarization.{method})\n"
    )
    result = run_devfix(source, rules=[TensorToNumpy]).fixed.decode()
    assert (f"pd.DataFrame(diarization.{method}.detach().cpu())" in result) is copied


@pytest.mark.parametrize(("test", "copied"), [('hasattr(array, "numpy")', False), ("isinstance(array, torch.Tensor)", True)])
def test_a_parameter_only_asked_for_the_method_may_be_another_librarys_tensor(test, copied):
    """tensordict's `_convert_to_tensor`: `elif hasattr(array, "numpy"): array = array.numpy()` takes
    a TensorFlow tensor too (its comment says so), which has no `.detach()`."""
    source = (
        "import numpy as np\nimport torch\n\n\ndef convert(array, device):\n"
        "    if isinstance(array, (list, tuple)):\n        array = np.asarray(array)\n"
        f"    elif {test}:\n        array = array.numpy()\n"
        "    return torch.as_tensor(array, device=device)\n"
    )
    result = run_devfix(source, rules=[TensorToNumpy]).fixed.decode()
    assert ("array = array.detach().cpu().numpy()" in result) is copied


@pytest.mark.parametrize(("test", "copied"), [('self.framework == "pt" and outputs.dtype == torch.float16', False), ("outputs.dtype == torch.float16", True)])
def test_the_else_of_a_torch_framework_test_may_hold_another_librarys_tensor(test, copied):
    """transformers' image-classification pipeline: the `else` of `if self.framework == "pt" and
    <half precision>:` runs for TensorFlow's outputs too, which have `.numpy()` but no `.detach()`."""
    source = (
        "import torch\n\n\nclass Pipeline:\n    def __init__(self, model, framework):\n"
        "        self.model, self.framework = model.to('cuda'), framework\n\n"
        "    def postprocess(self, model_outputs):\n        outputs = model_outputs['logits'][0]\n"
        f"        if {test}:\n            outputs = outputs.to(torch.float32).numpy()\n"
        "        else:\n            outputs = outputs.numpy()\n        return outputs\n"
    )
    result = run_devfix(source, rules=[TensorToNumpy]).fixed.decode()
    assert ("            outputs = outputs.detach().cpu().numpy()" in result) is copied


@pytest.mark.parametrize(("plotted", "copied"), [('metrics["nrmse"][0]', False), ("x_hat[0]", True)])
def test_an_item_read_by_key_from_a_mapping_unpacked_beside_the_output_may_hold_no_tensor(plotted, copied):
    """deepinv's PET demo: `x, metrics = osem(y, physics, compute_metrics=True)` of a moved
    optimizer Module; `metrics["nrmse"][0]` is a list of floats logged per iteration."""
    source = (
        "import matplotlib.pyplot as plt\nimport torch\nimport torch.nn as nn\n\n"
        "device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\nosem = nn.Identity().to(device)\n"
        "x_hat, metrics = osem(torch.ones(3).to(device))\n"
        f"plt.plot({plotted})\n"
    )
    result = run_devfix(source, rules=[TensorToNumpy]).fixed.decode()
    assert (f"plt.plot({plotted}.detach().cpu())" in result) is copied


RECONSTRUCTIONS = """import matplotlib.pyplot as plt
import torch
import torch.nn as nn


def show(model, x):
    fig, axes = plt.subplots(1, 4)
    recon = model(x)
    for {loop}:
        {plot}


device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
ae = nn.Linear(16, 16).to(device)
show(ae, torch.ones(4, 16, device=device))
"""


@pytest.mark.parametrize(("loop", "plot", "copied"), [
    ("ax, img in zip(axes, recon.view(-1, 4, 4))", "ax.imshow(img)", True),
    ("i, img in enumerate(recon.view(-1, 4, 4))", "axes[i].imshow(img)", True),
    ("ax, img in zip(axes, recon)", "ax.imshow(img)", False),  # what the model returns may be a tuple of anything
])
def test_rows_of_a_moved_models_output_iterated_into_axes_go_to_the_host(loop, plot, copied):
    """A plotting function given a moved model: the rows of `recon.view(-1, 4, 4)` are CUDA tensors."""
    result = run_devfix(RECONSTRUCTIONS.format(loop=loop, plot=plot), rules=[TensorToNumpy]).fixed.decode()
    assert ("imshow(img.detach().cpu())" in result) is copied


DICT_OF_LISTS = """import torch
model = torch.nn.Linear(4, 3).to(torch.device("cuda"))
results = {"logits": [], "labels": []}
for i in range(3):
    results["logits"].append(model(torch.randn(2, 4).to("cuda")))
CHANGE
logits = torch.cat(results["logits"])
print(logits.numpy())
"""


@pytest.mark.parametrize(("change", "copied"), [
    ("pass", True),
    ("results['logits'] = [torch.zeros(2, 3)]", False),
    ("results['logits'].insert(0, torch.zeros(2, 3))", False),
    ("fill(results['logits'])", False),
    ("log(results)", False),
    ("results = {'logits': [torch.zeros(2, 3)]}", False),
])
def test_a_list_a_dict_display_keeps_joins_device_tensors_only_while_nothing_else_fills_it(change, copied):
    """`torch.cat(results["logits"])` of a dict display's empty list that only device values were
    appended to is on the device; one whose item is stored, changed in place or handed to a call,
    or a dict rebound, may hold host tensors."""
    result = run_devfix(DICT_OF_LISTS.replace("CHANGE", change), rules=[TensorToNumpy])
    assert ("logits.detach().cpu().numpy()" in result.fixed.decode()) is copied


FLUENT_FIT = """import numpy as np
import torch


class Classifier:
    def __init__(self):
        self.net = torch.nn.Linear(3, 2).to(torch.device("cuda"))

    def fit(self, X):
        {fit_returns}

    def predict(self, X):
        return self.net(X).argmax(1)


clf = Classifier().fit(1)
print(np.asarray(clf.predict(torch.zeros(2, 3))))
"""


@pytest.mark.parametrize(("fit_returns", "copied"), [("return self", True), ("return None", False), ("return Classifier()", False)])
def test_an_object_a_fluent_fit_gives_back_is_an_instance_of_its_class(fit_returns, copied):
    """`clf = Classifier().fit(X)`: a `fit` whose every return is `self` gives back the instance, so
    `clf.predict(X)` is the class's method returning device values."""
    fixed = run_devfix(FLUENT_FIT.format(fit_returns=fit_returns), rules=[TensorToNumpy]).fixed.decode()
    assert ("clf.predict(torch.zeros(2, 3)).detach().cpu()" in fixed) is copied


HOOKED = """import torch


class Cam:
    def __init__(self, model, layer):
        self.model = model.to(torch.device("cuda"))
        self.grads = None
        layer.register_full_backward_hook({hook})

    def keep(self, module, grad_input, grad_output):
        self.grads = {kept}

    def __call__(self, x):
        return self.grads.numpy()
"""


@pytest.mark.parametrize(("hook", "kept", "copied"), [
    ("self.keep", "grad_output[0].detach()", True),
    ("self.keep", "grad_output[0]", True),
    ("print", "grad_output[0].detach()", False),  # not the class's hook
    ("self.keep", "torch.zeros(3)", False),  # not what the hook is handed
])
def test_what_a_hook_of_the_class_keeps_may_be_on_a_device(hook, kept, copied):
    """Grad-CAM's `self.gradients = grad_output[0].detach()` in a method registered as a backward
    hook: a layer's gradients, where the layer's model is."""
    fixed = run_devfix(HOOKED.format(hook=hook, kept=kept), rules=[TensorToNumpy]).fixed.decode()
    assert ("self.grads.detach().cpu().numpy()" in fixed) is copied


ROWS = """import numpy as np
import torch
import torch.nn as nn

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
model = nn.Linear(3, 2).to(device)
pairs = []
for step in range(4):
    out = model(torch.randn(1, 3).to(device))
    pairs.append({row})
table = np.array(pairs)
"""


@pytest.mark.parametrize(("row", "fixed"), [
    ("[out[0, 0], out[0, 1]]", "[out[0, 0].detach().cpu(), out[0, 1].detach().cpu()]"),
    ("(step, out.sum())", "(step, out.sum().detach().cpu())"),
    ("[out[0, 0].item(), out[0, 1].item()]", None),  # numbers already
    ("[step, 2 * step]", None),  # no tensor in the row
])
def test_rows_of_device_values_collected_for_numpy_are_brought_to_the_host_item_by_item(row, fixed):
    """SO-Net's visualizer, PINA's tracker: `pairs.append([a, b])` of device values, then
    `np.array(pairs)`: numpy converts each item of each row, and fails on a GPU tensor."""
    result = run_devfix(ROWS.format(row=row), rules=[TensorToNumpy])
    assert f"    pairs.append({fixed or row})\n" in result.fixed.decode()


INLINE = """import numpy as np
import torch
import torch.nn as nn

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
model = nn.Linear(3, 3).to(device)
criterion = nn.L1Loss()
out = model(torch.rand(2, 3).to(device))
target = torch.rand(2, 3)
total = np.sum({comprehension})
"""


@pytest.mark.parametrize(("comprehension", "fixed"), [
    ("[criterion(out[j], target[j].to(device)) for j in range(2)]", "[criterion(out[j], target[j].to(device)).detach().cpu() for j in range(2)]"),
    ("[(out[j] - target[j].to(device)).abs().mean() for j in range(2)]", "[(out[j] - target[j].to(device)).abs().mean().detach().cpu() for j in range(2)]"),
    ("[criterion(out[j], target[j].to(device)).item() for j in range(2)]", None),  # numbers
    ("[target[j].mean() for j in range(2)]", None),  # on the host
])
def test_device_items_of_a_comprehension_handed_to_numpy_are_brought_to_the_host(comprehension, fixed):
    """`np.sum([criterion(restored[j], target) for j in ...])`: numpy converts every item, so an item
    surely on a device gets `.detach().cpu()` where the comprehension makes it."""
    source = INLINE.format(comprehension=comprehension)
    assert run_devfix(source, rules=[TensorToNumpy]).fixed.decode().endswith(f"total = np.sum({fixed or comprehension})\n")


ELEMENTS = """import numpy as np
import torch

device = torch.device("cuda")
decoder = torch.nn.Linear(4, 9).to(device)
samples = decoder(torch.randn(6, 4).to(device))
host_rows = torch.randn(6, 9)
row = samples[0]
images = {comprehension}
"""


@pytest.mark.parametrize(("comprehension", "fixed"), [
    ("[img.numpy() for img in samples]", "[img.detach().cpu().numpy() for img in samples]"),
    ("[img.numpy() for img in samples if img.sum() > 0]", "[img.detach().cpu().numpy() for img in samples if img.sum() > 0]"),
    ("(img.numpy() for img in samples)", "(img.detach().cpu().numpy() for img in samples)"),
    ("[img.numpy() for img in samples.cpu()]", None),  # rows of a host copy
    ("[row.numpy() for row in host_rows]", None),  # the comprehension's `row`, not the device row above
    ("[[row.numpy() for row in host_rows] for row in samples]", None),  # the inner one binds `row` again
])
def test_a_comprehensions_element_is_where_the_value_it_iterates_is(comprehension, fixed):
    """`[img.numpy() for img in samples]`: each element read in the comprehension is a row of
    `samples`, in the comprehension's own scope (an outer `row` is another value)."""
    source = ELEMENTS.format(comprehension=comprehension)
    assert run_devfix(source, rules=[TensorToNumpy]).fixed.decode().endswith(f"images = {fixed or comprehension}\n")
