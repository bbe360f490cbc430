"""The edits `devfix run --fix` makes from a run alone: one change at the line the run named, and
none at all when that line holds more than one candidate or the device name is taken."""

from __future__ import annotations

from devfix import provenance_fixes

PREAMBLE = 'device = torch.device("cuda" if torch.cuda.is_available() else "cpu")\n'


def test_numpy_gets_its_cpu_copy():
    assert provenance_fixes.numpy_on_host("import torch\nprint(y.numpy())\n", "main.py", 2) == "import torch\nprint(y.cpu().numpy())\n"


def test_two_conversions_on_the_line_are_left_alone():
    assert provenance_fixes.numpy_on_host("import torch\nprint(a.numpy(), b.numpy())\n", "main.py", 2) is None


def test_the_factory_gets_the_device_and_the_module_its_preamble():
    fixed = provenance_fixes.factory_on_device("import torch\n\nmask = torch.ones(2)\n", "main.py", 3, "ones")
    assert fixed == "import torch\n\n" + PREAMBLE + "\nmask = torch.ones(2, device=device)\n"


def test_an_existing_device_preamble_is_reused():
    text = "import torch\n" + PREAMBLE + "mask = torch.ones(2)\n"
    assert provenance_fixes.factory_on_device(text, "main.py", 3, "ones") == "import torch\n" + PREAMBLE + "mask = torch.ones(2, device=device)\n"


def test_a_device_name_used_for_something_else_stops_the_edit():
    text = "import torch\ndevice = pick()\nmask = torch.ones(2)\n"
    assert provenance_fixes.factory_on_device(text, "main.py", 3, "ones") is None


def test_the_loop_variable_is_moved_first_in_the_body():
    text = "import torch\nfor x, y in loader:\n    out = model(x)\n"
    fixed = provenance_fixes.loop_variable_on_device(text, "main.py", 2, "x")
    assert fixed.endswith("for x, y in loader:\n    x = x.to(device)\n    out = model(x)\n")


def test_the_module_is_moved_where_it_is_built_only_when_bound_once():
    assert provenance_fixes.module_on_device("import torch\nmodel = Net(3)\nmodel(x)\n", "main.py", "model").endswith("model = Net(3).to(device)\nmodel(x)\n")
    assert provenance_fixes.module_on_device("import torch\nmodel = Net(3)\nmodel = Other()\n", "main.py", "model") is None


def test_every_cuda_call_on_the_line_becomes_portable():
    fixed = provenance_fixes.cuda_call_portable("import torch\nx, y = a.cuda(), b.cuda()\n", "main.py", 2)
    assert fixed.endswith("x, y = a.to(device), b.to(device)\n")


LIBRARY = "import torch\n\n\ndef scores(logits):\n    ranks = torch.arange(logits.shape[-1])\n    return ranks[logits.argmax(-1)]\n"


def test_a_library_module_gets_no_module_level_device():
    assert provenance_fixes.factory_on_device(LIBRARY, "ops.py", 5, "arange") is None


def test_a_parameter_that_held_a_device_tensor_names_the_device():
    fixed = provenance_fixes.factory_on_device(LIBRARY, "ops.py", 5, "arange", "logits.device")
    assert fixed == LIBRARY.replace("torch.arange(logits.shape[-1])", "torch.arange(logits.shape[-1], device=logits.device)")


def test_an_attribute_named_device_leaves_the_name_free():
    text = "import torch\nx = y.to(next(model.parameters()).device)\nz = w.cuda()\n"
    assert provenance_fixes.cuda_call_portable(text, "main.py", 3).endswith("z = w.to(device)\n")


def test_a_draw_from_a_cpu_generator_is_moved_after_the_call():
    text = "import torch\n" + PREAMBLE + "noise = torch.randn(4, generator=g)\n"
    fixed = provenance_fixes.factory_on_device(text, "main.py", 3, "randn")
    assert fixed == "import torch\n" + PREAMBLE + "noise = torch.randn(4, generator=g).to(device)\n"
