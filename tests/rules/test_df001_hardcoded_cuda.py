from __future__ import annotations

import pytest

from devfix.codemods import HardcodedCuda
from tests.conftest import run_devfix


def fix(source: str) -> str:
    return run_devfix(source, rules=[HardcodedCuda]).fixed.decode()


def test_map_location_cuda_becomes_the_device():
    assert 'torch.load("m.pt", map_location=device)' in fix('import torch\nsd = torch.load("m.pt", map_location="cuda")\n')


def test_map_location_cpu_is_left_alone():
    source = 'import torch\nsd = torch.load("m.pt", map_location="cpu")\n'
    assert fix(source) == source


def test_other_gpu_indices_mark_the_file_as_multi_gpu():
    source = 'import torch\na = torch.ones(1).cuda()\nb = torch.ones(1).to("cuda:1")\n'
    assert fix(source) == source


def test_to_with_dtype_keeps_dtype():
    assert "x.to(device, torch.float16)" in fix('import torch\nx = torch.ones(1)\nx = x.to("cuda", torch.float16)\n')


def test_inside_module_reports_without_fix():
    source = (
        "import torch\nfrom torch import nn\n\nclass M(nn.Module):\n    def __init__(self):\n"
        "        super().__init__()\n        self.w = torch.ones(3).cuda()\n"
    )
    result = run_devfix(source, rules=[HardcodedCuda])
    assert result.fixed.decode() == source
    assert [finding.fixable for finding in result.findings] == [False]
    assert "nn.Module" in result.findings[0].message


def test_device_name_taken_by_something_else_reports_without_fix():
    source = "import torch\nfrom mylib import device\nx = torch.ones(1).cuda()\n"
    result = run_devfix(source, rules=[HardcodedCuda])
    assert result.fixed.decode() == source
    assert result.findings and not result.findings[0].fixable


def test_a_device_name_proven_something_else_gets_a_preamble_of_its_own():
    """`device = cuda.Device(0)` (pycuda) is no torch device: never pass it to `.to()`, never shadow it."""
    fixed = fix("import torch\nimport pycuda.driver as cuda\ndevice = cuda.Device(0)\nx = torch.ones(1).cuda()\n")
    assert 'torch_device = torch.device("cuda" if torch.cuda.is_available() else "cpu")' in fixed
    assert "device = cuda.Device(0)" in fixed and "x = torch.ones(1).to(torch_device)" in fixed


def test_a_device_name_that_may_be_a_device_or_both_names_taken_report_without_fix():
    for source in (
        "import torch\nx = torch.ones(1).cuda()\ndevice = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n",  # defined after use
        "import torch\nimport pycuda.driver as cuda\ndevice = cuda.Device(0)\nfor torch_device in range(2):\n    pass\nx = torch.ones(1).cuda()\n",
        "import torch\ndevice = torch.accelerator.current_accelerator()\nx = torch.ones(1).cuda()\n",  # a torch device after all
        "import torch\ndevice = get_device()\nx = torch.ones(1).cuda()\n",  # a helper devfix cannot see into
    ):
        result = run_devfix(source, rules=[HardcodedCuda])
        assert result.fixed.decode() == source
        assert result.findings and not result.findings[0].fixable


def test_gpu_flag_guard_is_respected():
    # the `.cuda()` the flag guards stays; the flag, a constant True, asks for CUDA (see below)
    source = "import torch\nuse_gpu = True\nx = torch.ones(1)\nif use_gpu:\n    x = x.cuda()\n"
    assert fix(source) == source.replace("use_gpu = True", "use_gpu = torch.cuda.is_available()")
    flag_from_outside = "import sys\nimport torch\nuse_gpu = '--gpu' in sys.argv\nx = torch.ones(1)\nif use_gpu:\n    x = x.cuda()\n"
    assert fix(flag_from_outside) == flag_from_outside


def test_preamble_goes_after_a_late_torch_import():
    source = 'import sys\nsys.path.insert(0, ".")\nimport torch\nx = torch.ones(1).cuda()\n'
    assert fix(source).splitlines()[3:5] == ["", 'device = torch.device("cuda" if torch.cuda.is_available() else "cpu")']


def test_docstring_and_future_import_stay_first():
    source = '"""Doc."""\nfrom __future__ import annotations\nimport torch\nx = torch.ones(1).cuda()\n'
    lines = fix(source).splitlines()
    assert lines[:3] == ['"""Doc."""', "from __future__ import annotations", "import torch"]


def test_a_device_bound_below_serves_the_functions_above_when_the_top_level_calls_none_first():
    source = (
        "import torch\n\n\ndef batch():\n    return torch.ones(2).cuda()\n\n\n"
        "if __name__ == '__main__':\n    device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n    print(batch())\n"
    )
    assert "torch.ones(2).to(device)" in fix(source)


def test_a_device_bound_after_the_top_level_ran_a_function_is_not_used():
    source = (
        "import torch\n\n\ndef batch():\n    return torch.ones(2).cuda()\n\n\n"
        "first = batch()\ndevice = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"
    )
    result = run_devfix(source, rules=[HardcodedCuda])
    assert result.fixed.decode() == source
    assert [finding.fixable for finding in result.findings] == [False]


def test_the_preamble_goes_into_the_main_block_when_only_it_uses_the_device():
    source = "import torch\n\n\ndef f(device):\n    return torch.ones(1, device=device)\n\n\nif __name__ == '__main__':\n    x = torch.ones(2).cuda()\n"
    fixed = fix(source)
    assert "if __name__ == '__main__':\n    device = torch.device(" in fixed and "x = torch.ones(2).to(device)" in fixed


def test_the_preamble_stays_at_the_top_when_a_function_reads_the_global():
    source = "import torch\n\n\ndef g():\n    return torch.ones(1).cuda()\n\n\nif __name__ == '__main__':\n    x = torch.ones(2).cuda()\n"
    fixed = fix(source)
    assert fixed.startswith("import torch\n\ndevice = torch.device(") and "return torch.ones(1).to(device)" in fixed


def test_a_choice_under_a_device_type_test_is_deliberate():
    source = "import torch\n\n\ndef engine(device):\n    if device.type == 'cpu':\n        device = torch.device('cuda:0')\n    return device\n"
    assert fix(source) == source


def test_a_global_default_on_cuda_falls_back_to_the_cpu():
    # devfix's simulated CUDA does not run set_default_device("cuda"): these edits are held here
    device = fix('import torch\ntorch.set_default_device("cuda")\nx = torch.ones(2)\n')
    assert 'torch.set_default_device("cuda" if torch.cuda.is_available() else "cpu")\n' in device
    typed = fix("import torch\ntorch.set_default_tensor_type(torch.cuda.FloatTensor)\n")
    assert "torch.set_default_tensor_type(torch.cuda.FloatTensor if torch.cuda.is_available() else torch.FloatTensor)\n" in typed
    named = fix("import torch\ntorch.set_default_tensor_type('torch.cuda.FloatTensor')\n")
    assert "torch.set_default_tensor_type('torch.cuda.FloatTensor' if torch.cuda.is_available() else 'torch.FloatTensor')\n" in named


@pytest.mark.parametrize(("alias", "fixed"), [
    ("dtype = torch.cuda.FloatTensor", "dtype = torch.cuda.FloatTensor if torch.cuda.is_available() else torch.FloatTensor"),
    ("ltype = torch.cuda.LongTensor", "ltype = torch.cuda.LongTensor if torch.cuda.is_available() else torch.LongTensor"),
    # a CUDA test already chooses the type, or the type is the CPU one
    ("if torch.cuda.is_available():\n    dtype = torch.cuda.FloatTensor", None),
    ("dtype = torch.cuda.FloatTensor if torch.cuda.is_available() else torch.FloatTensor", None),
    ("dtype = torch.FloatTensor", None),
])
def test_an_alias_of_a_cuda_tensor_type_falls_back_to_the_cpu_type(alias, fixed):
    """CS231n-style `dtype = torch.cuda.FloatTensor`, then `x.type(dtype)`: every use of the alias
    keeps working when it names the CPU type where CUDA is missing."""
    source = f"import torch\n\n{alias}\nx = torch.ones(3).type(dtype)\n"
    result = fix(source)
    assert result == (source if fixed is None else source.replace(alias, fixed))


def test_a_guarded_or_cpu_global_default_is_left_alone():
    for source in (
        'import torch\nif torch.cuda.is_available():\n    torch.set_default_device("cuda")\n',
        'import torch\ntorch.set_default_device("cpu")\ntorch.set_default_tensor_type(torch.DoubleTensor)\n',
    ):
        assert fix(source) == source


def test_multi_gpu_markers_count_in_code_not_in_comments():
    from devfix.analysis.torch_api import places_on_several_gpus

    assert not places_on_several_gpus("device = 'cuda' # examples: 'cpu', 'cuda:0', 'cuda:1'\n")
    assert places_on_several_gpus("x = x.to('cuda:1')  # the second GPU\n")
    assert places_on_several_gpus("torch.distributed.init_process_group('nccl')\n")
    assert places_on_several_gpus("tag = '#1'; y = y.to('cuda:1')\n")  # a `#` inside a string is no comment


def test_a_blocks_default_cuda_device_chooses_at_run_time():
    fixed = fix('import torch\nwith torch.device("cuda"):\n    x = torch.ones(2)\n')
    assert 'with torch.device("cuda" if torch.cuda.is_available() else "cpu"):\n' in fixed


def test_a_guarded_or_other_gpus_block_is_left_alone():
    for source in (
        'import torch\nif torch.cuda.is_available():\n    with torch.device("cuda"):\n        x = torch.ones(2)\n',
        'import torch\nwith torch.device("cuda:1"):\n    x = torch.ones(2)\n',
        'import torch\nwith torch.device("cpu"):\n    x = torch.ones(2)\n',
    ):
        assert fix(source) == source


GET_DEVICE = '''import torch


def get_device(device="auto"):
    if device == "auto":
        device = "cuda"
    device = torch.device(device)
{check}    return device


model = torch.nn.Linear(2, 2).to(get_device())
'''
FALLBACK = '    if device.type == "cuda" and not torch.cuda.is_available():\n        return torch.device("cpu")\n'


def test_a_device_the_function_checks_for_availability_afterwards_is_left_alone():
    """stable-baselines3's `get_device`: "auto" means CUDA, and the function falls back itself."""
    source = GET_DEVICE.format(check=FALLBACK)
    assert fix(source) == source


def test_without_that_check_the_hard_coded_device_chooses_at_run_time():
    fixed = fix(GET_DEVICE.format(check=""))
    assert '        device = "cuda" if torch.cuda.is_available() else "cpu"\n' in fixed


SUMMARY = """import torch
import torch.nn as nn
from torchsummary import summary


class Net(nn.Module):
    def __init__(self, device="cpu"):
        super().__init__()
        self.fc = nn.Linear(2, 2, device=device)


{call}
"""


def test_a_device_string_given_to_another_librarys_function_is_reported_without_a_fix():
    """torchsummary's `summary` asserts its `device` is "cuda" or "cpu": a `torch.device` breaks it."""
    source = SUMMARY.format(call='summary(Net(), input_size=(2,), device="cuda")')
    result = run_devfix(source, rules=[HardcodedCuda])
    assert result.fixed.decode() == source
    assert [(finding.code, finding.fix_safety) for finding in result.findings] == [("DF001", None)]


def test_a_device_string_given_to_torch_or_the_files_own_classes_is_fixed():
    fixed = fix(SUMMARY.format(call='model = Net(device="cuda")\nx = torch.zeros(3, device="cuda")'))
    assert "model = Net(device=device)\nx = torch.zeros(3, device=device)" in fixed


@pytest.mark.parametrize(("helper", "fixed"), [
    ("def evaluate(model, device):\n    return model.to(device)\n", True),  # used as a device
    ("def evaluate(model, device):\n    if device == 'cuda':\n        model = model.half()\n    return model.to(device)\n", False),
    ("def evaluate(model, device):\n    return model.to(device) if device.startswith('cuda') else model\n", False),
])
def test_a_project_function_given_a_device_string_takes_the_device_only_where_it_uses_one(tmp_path, helper, fixed):
    """FastChat's `load_model(..., device="cuda")` compares `device == "cuda"`: a `torch.device`
    never equals it. The bundled example's `evaluate(model, loader, device="cuda")` moves with it."""
    (tmp_path / "helpers.py").write_text("import torch\n\n\n" + helper)
    main = tmp_path / "main.py"
    source = "import torch\n\nfrom helpers import evaluate\n\nmodel = evaluate(torch.nn.Linear(2, 2), device=\"cuda\")\n"
    main.write_text(source)
    result = run_devfix(source, path=str(main), rules=[HardcodedCuda])
    assert ("evaluate(torch.nn.Linear(2, 2), device=device)" in result.fixed.decode()) is fixed
    assert [finding.code for finding in result.findings + result.applied] == ["DF001"]


@pytest.mark.parametrize(("hook", "fixed"), [
    ("lambda storage, loc: storage.cuda()", "device"),
    ("lambda storage, loc: storage.cuda(0)", "device"),
    ("lambda s, l: s.cuda(non_blocking=True)", "device"),
    ("lambda storage, loc: storage.cuda(args.gpu)", None),  # another GPU named: multi-GPU code's own choice
    ("lambda storage, loc: storage", None),  # already the CPU
])
def test_a_map_location_hook_that_moves_storages_gives_way_to_the_device(hook, fixed):
    source = f"import torch\n\nstate = torch.load('net.pt', map_location={hook})\n"
    result = run_devfix(source, rules=[HardcodedCuda]).fixed.decode()
    if fixed is None:
        assert result == source
    else:
        assert result.endswith("state = torch.load('net.pt', map_location=device)\n")
        assert 'device = torch.device("cuda" if torch.cuda.is_available() else "cpu")' in result


GPU_FLAG = (
    "import torch\nfrom torch import nn\n\n{flag}\nmodel = nn.Linear(3, 1)\n"
    "if {test}:\n    model = model.cuda()\nx = torch.randn(2, 3)\nx = x.cuda() if {test} else x\nprint(model(x))\n"
)


@pytest.mark.parametrize("name", ["use_cuda", "gpu", "CUDA"])
def test_a_gpu_flag_hard_coded_to_true_is_set_where_cuda_is_available(name):
    source = GPU_FLAG.format(flag=f"{name} = True", test=name)
    assert fix(source) == source.replace(f"{name} = True", f"{name} = torch.cuda.is_available()")


@pytest.mark.parametrize("flag, test", [
    ("use_cuda = True\nuse_cuda = use_cuda and torch.cuda.is_available()", "use_cuda"),  # bound twice
    ("use_cuda = True", "use_cuda and torch.cuda.is_available()"),  # the test asks itself
    ("use_cuda = False", "use_cuda"),  # the CPU path runs anyway
    ("use_cuda = True\n\n\ndef train(use_cuda=False):\n    return use_cuda", "use_cuda"),  # a parameter too
    ("use_cuda = True\nfor use_cuda in (True, False):\n    pass", "use_cuda"),  # a loop rebinds it
    ("use_cuda = True\nnames = ['cuda:1']", "use_cuda"),  # several GPUs on purpose
])
def test_a_flag_that_is_not_proven_a_constant_true_is_left_alone(flag, test):
    source = GPU_FLAG.format(flag=flag, test=test)
    assert fix(source) == source


def test_a_true_flag_that_guards_no_cuda_code_is_left_alone():
    source = "import torch\n\nverbose = True\nx = torch.ones(2)\nif verbose:\n    print(x.cpu())\n"
    assert fix(source) == source


@pytest.mark.parametrize("branch, flagged", [
    ("    print('cuda')\n", False),  # a message, not a device
    ("    device = 'cuda'\n", True),
    ("    x = torch.zeros(2, device='cuda')\n", True),
])
def test_a_true_flag_guards_cuda_only_where_the_literal_stands_for_a_device(branch, flagged):
    source = f"import torch\n\nverbose = True\nif verbose:\n{branch}"
    assert (fix(source) != source) is flagged


LIBRARY_HELPER = "import torch\n\n\ndef pad_mask(seq, pad=0):\n    n = seq.size(0)\n{body}"


def test_a_library_helper_places_what_it_makes_where_the_tensor_parameter_it_meets_is():
    for body, fixed_line in (
        ("    mask = torch.ones(n, seq.size(1)).cuda()\n    return mask * (seq != pad).float()\n",
         "    mask = torch.ones(n, seq.size(1)).to(seq.device)\n"),
        ("    lengths = torch.zeros(n, dtype=torch.long).cuda()\n    lengths += (seq != pad).sum(dim=1)\n    return lengths\n",
         "    lengths = torch.zeros(n, dtype=torch.long).to(seq.device)\n"),
        ("    return torch.ones(n, seq.size(1), device='cuda') * seq\n",
         "    return torch.ones(n, seq.size(1), device=seq.device) * seq\n"),
    ):
        assert fixed_line in run_devfix(LIBRARY_HELPER.format(body=body), path="utils.py", rules=[HardcodedCuda]).fixed.decode()


def test_a_library_helper_without_a_proven_tensor_parameter_it_meets_is_only_reported():
    for body in (
        "    return torch.ones(n).cuda()\n",  # meets nothing here: its callers may rely on the GPU
        "    seq = seq.cpu()\n    return torch.ones(n).cuda() * seq\n",  # rebound: not the value where the tensor is made
        "    return torch.ones(n).cuda() * pad\n",  # `pad` may be a number
    ):
        source = LIBRARY_HELPER.format(body=body)
        result = run_devfix(source, path="utils.py", rules=[HardcodedCuda])
        assert result.fixed.decode() == source and [finding.fixable for finding in result.findings] == [False]


ARRAY_BACKEND = """import array_api_compat.numpy as xp
{torch_import}
import parallelproj

if "numpy" in xp.__name__:
    dev = "cpu"
elif "torch" in xp.__name__:
    dev = "cuda"

positions = xp.linspace(-4, 4, 3, device=dev)
"""


@pytest.mark.parametrize("torch_import, fixed", [("", False), ("import torch", True), ("from torch import nn", True)])
def test_a_device_string_of_a_file_that_does_not_import_torch_is_only_reported(torch_import, fixed):
    """parallelproj's examples pick `dev` for the array backend the user chooses: making the
    numpy-only script import torch would break it where torch is not installed."""
    source = ARRAY_BACKEND.format(torch_import=torch_import)
    result = run_devfix(source, rules=[HardcodedCuda])
    assert ('dev = "cuda" if torch.cuda.is_available() else "cpu"' in result.fixed.decode()) is fixed
    if not fixed:
        assert result.fixed.decode() == source
        assert [finding.fixable for finding in result.findings] == [False]


PIPELINE = """{head}from transformers import pipeline

classifier = pipeline("sentiment-analysis", model="distilbert-base-uncased", device={device})
print(classifier(["I love this"]))
"""


@pytest.mark.parametrize("head, device, expected", [
    ("import torch\n", "0", "device=0 if torch.cuda.is_available() else -1)"),
    ("", "0", "device=0 if torch.cuda.is_available() else -1)"),  # `import torch` is added
    ("import torch\n", '"cuda"', "device=device)"),  # a pipeline takes a torch.device too
    ("import torch\n", "-1", None),  # the CPU
    ("import torch\n", "1", None),  # a second GPU: chosen on purpose
    ("import torch\n", "0 if torch.cuda.is_available() else -1", None),
])
def test_a_pipeline_on_the_first_gpu_runs_on_the_cpu_without_one(head, device, expected):
    """transformers' `pipeline(task, device=0)` puts the model on cuda:0 and fails without CUDA;
    `-1` is its CPU."""
    source = PIPELINE.format(head=head, device=device)
    result = fix(source)
    if expected is None:
        assert result == source
    else:
        assert expected in result and "import torch\n" in result


STATIC_PENALTY = """import torch
from torch import nn


class Penalized(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Linear(3, 2)

    @staticmethod
    def penalty(logits):
        scale = torch.ones({size}).cuda()
        return (logits.view(-1, {size}) * scale).sum()

    def forward(self, x):
        return self.penalty(self.net(x))
"""


def test_a_static_method_of_a_module_never_reads_self():
    """DomainBed's `@staticmethod _irm_penalty(logits, y)`: `next(self.parameters())` there would
    be a NameError; the parameter the tensor meets says where."""
    fixed = run_devfix(STATIC_PENALTY.format(size="2"), rules=[HardcodedCuda]).fixed.decode()
    assert "scale = torch.ones(2).to(logits.device)" in fixed and "self.parameters()" not in fixed


def test_a_static_method_without_a_tensor_parameter_to_follow_is_only_reported():
    source = STATIC_PENALTY.format(size="2").replace("(logits.view(-1, 2) * scale).sum()", "scale * 2")
    result = run_devfix(source, rules=[HardcodedCuda])
    assert result.fixed.decode() == source and [finding.fixable for finding in result.findings] == [False]


PLAIN_MODEL = """import torch


class Base:
    def __init__(self, gpu_ids):
        self.device = torch.device("cuda:{}".format(gpu_ids[0])) if gpu_ids else torch.device("cpu")


class Model(Base):
    def __init__(self, gpu_ids):
{init}

    def set_input(self, x):
        self.x = x.to(self.device)


if __name__ == "__main__":
    Model([0])
"""


@pytest.mark.parametrize("init, expected", [
    # uORF's models: `self.device` follows the user's `--gpu_ids`, which a global CUDA device would not
    ("        Base.__init__(self, gpu_ids)\n        self.loss = torch.nn.MSELoss().cuda()", "torch.nn.MSELoss().to(self.device)"),
    ("        self.device = torch.device('cpu')\n        self.loss = torch.nn.MSELoss().cuda()", "torch.nn.MSELoss().to(self.device)"),
    # not bound yet where the loss is built: the program's device
    ("        self.loss = torch.nn.MSELoss().cuda()\n        Base.__init__(self, gpu_ids)", "torch.nn.MSELoss().to(device)"),
])
def test_a_plain_class_that_moves_its_values_to_self_device_places_there(init, expected):
    assert expected in fix(PLAIN_MODEL.replace("{init}", init))


SUBCLASSED = """import numpy as np
import torch
from torch import nn


class ERM(nn.Module):
    def __init__(self):
        super().__init__()
        {layer}

    def forward(self, x):
        return x


class RSC(ERM):
    def __init__(self, drop):
        {init}
        self.drop = drop

    def update(self, grads):
        percentiles = torch.Tensor(np.percentile(grads.cpu(), self.drop, axis=1))
        return grads.lt(percentiles.unsqueeze(1).cuda())
"""


@pytest.mark.parametrize("layer, init, fixed", [
    ("self.classifier = nn.Linear(4, 2)", "super().__init__()", True),  # DomainBed's RSC(ERM)
    ("self.scale = 2", "super().__init__()", False),  # no parameter anywhere
    ("self.classifier = nn.Linear(4, 2)", "nn.Module.__init__(self)", False),  # the base's __init__ is not run
])
def test_a_subclass_takes_its_device_from_the_layers_its_base_builds(layer, init, fixed):
    source = SUBCLASSED.format(layer=layer, init=init)
    result = fix(source)
    assert ("percentiles.unsqueeze(1).to(next(self.parameters()).device)" in result) is fixed
    assert fixed or result == source


OWN_CUDA_METHOD = """import torch


class TensorSpec:
    def __init__(self, shape, device="cpu"):
        self.shape = shape
        self.device = torch.device(device)

    def to(self, dest):
        return TensorSpec(self.shape, dest)

    def zero(self):
        return torch.zeros(self.shape, device=self.device)

    def {method}(self, device=None):
        if device is None:
            return self.to("cuda")
        return self.to(f"cuda:{{device}}")
"""


@pytest.mark.parametrize("method, reported", [("cuda", False), ("gpu_copy", True)])
def test_an_object_moving_itself_to_cuda_keeps_its_cuda(method, reported):
    """torchrl's `TensorSpec.cuda(device=None)`: `return self.to("cuda")` is the method's contract
    (no finding); in any method, `self.to(device)` (None there) or `self.to(self.device)` would
    move nothing: reported without a fix."""
    source = OWN_CUDA_METHOD.format(method=method)
    result = run_devfix(source, path="specs.py", rules=[HardcodedCuda])
    assert result.fixed.decode() == source
    assert [(finding.code, finding.fix_safety) for finding in result.findings] == ([("DF001", None)] if reported else [])


PARAMETER_DEFAULTING_TO_NONE = """import torch
import torch.nn as nn


def predict(model, x, device=None):
    model = model.cuda()
    return model(x.cuda())


if __name__ == "__main__":
    print(predict(nn.Linear(2, 2), torch.ones(1, 2)).sum().item())
"""


def test_a_device_parameter_defaulting_to_none_is_no_device_to_reuse():
    """`def predict(model, x, device=None)` called without a device: `.to(device)` would move
    nothing, and a module-level `device` would be shadowed by the parameter there."""
    result = run_devfix(PARAMETER_DEFAULTING_TO_NONE, path="predict.py", rules=[HardcodedCuda])
    assert result.fixed.decode() == PARAMETER_DEFAULTING_TO_NONE
    assert [finding.code for finding in result.findings] == ["DF001", "DF001"]


OPTION_SCRIPT = """import argparse

import torch

parser = argparse.ArgumentParser()
parser.add_argument("--gpu", type=int, default={default})


def build():
    return torch.nn.Linear(4, 1).cuda(args.gpu)


{parse}
x = torch.randn(2, 4).cuda(args.gpu, non_blocking=True)
print(build()(x))
"""
CHOSEN = 'device = torch.device(f"cuda:{args.gpu}" if torch.cuda.is_available() else "cpu")'


def test_the_gpu_an_option_chooses_becomes_a_device_bound_after_the_parse():
    source = OPTION_SCRIPT.format(default="0", parse="args = parser.parse_args()")
    fixed = run_devfix(source, path="train.py", rules=[HardcodedCuda]).fixed.decode()
    assert f"args = parser.parse_args()\n{CHOSEN}\nx = torch.randn(2, 4).to(device, non_blocking=True)" in fixed
    assert "return torch.nn.Linear(4, 1).to(device)" in fixed
    assert fixed.count("device = ") == 1


def test_in_a_main_block_the_functions_above_it_read_the_device_it_binds():
    parse = 'if __name__ == "__main__":\n    args = parser.parse_args()\n    y = torch.zeros(1).cuda(args.gpu)'
    fixed = run_devfix(OPTION_SCRIPT.format(default="0", parse=parse), path="train.py", rules=[HardcodedCuda]).fixed.decode()
    assert f"    args = parser.parse_args()\n    {CHOSEN}\n    y = torch.zeros(1).to(device)" in fixed
    assert "return torch.nn.Linear(4, 1).to(device)" in fixed
    assert "x = torch.randn(2, 4).cuda(args.gpu, non_blocking=True)" in fixed  # after the block: no device yet


def test_a_parse_in_main_serves_only_main():
    parse = "def main():\n    args = parser.parse_args()\n    return torch.zeros(1).cuda(args.gpu)"
    result = run_devfix(OPTION_SCRIPT.format(default="0", parse=parse), path="train.py", rules=[HardcodedCuda])
    fixed = result.fixed.decode()
    assert f"    args = parser.parse_args()\n    {CHOSEN}\n    return torch.zeros(1).to(device)" in fixed
    assert "return torch.nn.Linear(4, 1).cuda(args.gpu)" in fixed
    assert any("no device variable can be added here" in finding.message for finding in result.findings)


@pytest.mark.parametrize("default", ["None", "-1"])
def test_an_option_that_may_mean_several_gpus_is_left_alone(default):
    source = OPTION_SCRIPT.format(default=default, parse="args = parser.parse_args()")
    result = run_devfix(source, path="train.py", rules=[HardcodedCuda])
    assert result.fixed.decode() == source and not result.findings


def test_a_device_name_bound_elsewhere_leaves_the_option_reported():
    source = OPTION_SCRIPT.format(default="0", parse="args = parser.parse_args()\ndevice = 'cpu'")
    result = run_devfix(source, path="train.py", rules=[HardcodedCuda])
    assert ".cuda(args.gpu)" in result.fixed.decode() and CHOSEN not in result.fixed.decode()
    assert result.findings


def test_an_option_gpu_in_an_f_string_device_falls_back_to_the_cpu():
    source = OPTION_SCRIPT.format(default="0", parse='args = parser.parse_args()\ndev = torch.device(f"cuda:{args.gpu}")')
    fixed = run_devfix(source, path="train.py", rules=[HardcodedCuda]).fixed.decode()
    assert 'dev = torch.device(f"cuda:{args.gpu}" if torch.cuda.is_available() else "cpu")' in fixed


def test_an_option_in_a_distributed_script_is_left_alone():
    source = OPTION_SCRIPT.format(default="0", parse="args = parser.parse_args()\ntorch.distributed.init_process_group('nccl')")
    assert run_devfix(source, path="train.py", rules=[HardcodedCuda]).fixed.decode() == source


@pytest.mark.parametrize("spelled", ['"cuda:{}".format(args.gpu)', "'cuda:%d' % args.gpu", '"cuda:" + str(args.gpu)'])
def test_every_spelling_of_the_option_gpu_as_a_string_falls_back(spelled):
    source = OPTION_SCRIPT.format(default="0", parse=f"args = parser.parse_args()\ndev = torch.device({spelled})")
    fixed = run_devfix(source, path="train.py", rules=[HardcodedCuda]).fixed.decode()
    quote = spelled[0]
    assert f"dev = torch.device({spelled} if torch.cuda.is_available() else {quote}cpu{quote})" in fixed


GIVEN_THE_OPTIONS = '''import argparse

import torch


def train(x, args):
    """One step."""
    return x.cuda(args.gpu, non_blocking=True) * 2


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--gpu", type=int, default=0)
    args = parser.parse_args()
    print(train(torch.ones(2), args))


if __name__ == "__main__":
    main()
'''


def test_a_function_given_the_options_binds_the_device_first_thing():
    fixed = run_devfix(GIVEN_THE_OPTIONS, path="train.py", rules=[HardcodedCuda]).fixed.decode()
    assert f'    """One step."""\n    {CHOSEN}\n    return x.to(device, non_blocking=True) * 2' in fixed
    assert fixed.count("device = ") == 1  # main reads no device: nothing bound after its parse


def test_an_option_gpu_in_a_class_at_the_top_level_is_only_reported():
    source = OPTION_SCRIPT.format(default="0", parse="args = parser.parse_args()\nclass Box:\n    x = torch.zeros(1).cuda(args.gpu)")
    result = run_devfix(source, path="train.py", rules=[HardcodedCuda])
    assert "    x = torch.zeros(1).cuda(args.gpu)" in result.fixed.decode()
    assert any("no device variable can be added here" in finding.message for finding in result.findings)
