"""DF007: where a program's `torch.load` puts what it loads."""

from __future__ import annotations

import pytest

from devfix.codemods import LoadMapLocation
from tests.conftest import run_devfix

PROGRAM = 'device = torch.device("cuda" if torch.cuda.is_available() else "cpu")\nx = torch.ones(3).to(device)\n'


def fixed(source: str) -> str:
    return run_devfix(source, rules=[LoadMapLocation]).fixed.decode()


@pytest.mark.parametrize("head, load, alias", [
    ("import torch\n", "torch.load", "torch"),
    ("import torch as t\nimport torch\n", "t.load", "t"),
    # AdvSemiSeg: `model_zoo` is bound to torch.utils.model_zoo, which has no `cuda`
    ("import torch\nfrom torch.utils import model_zoo\n", "model_zoo.load_url", "torch"),
])
def test_a_load_the_program_does_not_place_keeps_its_placement_where_a_gpu_is(head, load, alias):
    source = head + PROGRAM + f'weights = {load}("w.pt")\ncopy_into(model, weights)\n'
    assert f'{load}("w.pt", map_location=None if {alias}.cuda.is_available() else "cpu")\n' in fixed(source)


def test_the_name_the_load_is_called_through_is_used_and_no_import_added():
    source = "import torch.utils.data\nimport torch.nn.functional as F\n" + PROGRAM + 'ckpt = torch.load("c.pt")\nrestore(ckpt)\n'
    result = fixed(source)  # sgrvinod's eval.py: `import torch.utils.data` binds `torch`
    assert 'torch.load("c.pt", map_location=None if torch.cuda.is_available() else "cpu")' in result
    assert "\nimport torch\n" not in result


def test_a_loaded_tensor_that_meets_device_values_goes_to_the_device():
    assert 'mean = torch.load("m.pt", map_location=device)\n' in fixed("import torch\n" + PROGRAM + 'mean = torch.load("m.pt")\nprint(x - mean)\n')


def test_features_moved_when_asked_after_a_tuple_unpacking_load_on_the_cpu():
    source = "import torch\n" + PROGRAM + (
        'if cached:\n    feats = torch.load("f.pt")\nelse:\n    feats, labels = extract()\n'
        "if use_cuda:\n    feats = feats.cuda()\n"
    )
    assert 'feats = torch.load("f.pt", map_location="cpu")\n' in fixed(source)


def test_a_clone_through_a_buffer_this_scope_saved_is_left_alone():
    source = '''import io

import torch
import torch.nn as nn

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")


def clone_module(module):
    with io.BytesIO() as buffer:
        torch.save(module, buffer)
        buffer.seek(0)
        copy = torch.load(buffer, weights_only=False)
    return copy


model = nn.InstanceNorm1d(4, track_running_stats=True).to(device)
twin = clone_module(model)
loaded = torch.load("elsewhere.pt")
print(twin, loaded)
'''
    result = run_devfix(source, rules=[LoadMapLocation], fix=False)
    assert [finding.start.line for finding in result.findings] == [19]  # only the file on disk


@pytest.mark.parametrize(("program", "after"), [
    # the script moves the loaded module next: it is loaded on the CPU and placed by the code
    (PROGRAM + 'net = torch.jit.load("traced.pt")\nnet.to(device)\nprint(net(x))\n', 'torch.jit.load("traced.pt", map_location="cpu")'),
    # a script that places nothing runs on the CPU: a module traced on a GPU must come there too
    ('net = torch.jit.load("traced.pt")\nnet.eval()\nprint(net(torch.rand(1, 3)))\n', 'torch.jit.load("traced.pt", map_location="cpu")'),
    # already told where to go, by keyword or by position
    (PROGRAM + 'net = torch.jit.load("traced.pt", map_location=device)\nprint(net(x))\n', None),
    (PROGRAM + 'net = torch.jit.load("traced.pt", device)\nprint(net(x))\n', None),
])
def test_a_torchscript_module_traced_on_a_gpu_is_loaded_where_the_program_runs_it(program, after):
    """`torch.jit.load` restores a module traced on a GPU to that GPU, and a CPU-only machine fails
    to load it, as with `torch.load`: the same placement decisions apply."""
    source = "import torch\n" + program
    result = fixed(source)
    assert result == source if after is None else f"net = {after}\n" in result
