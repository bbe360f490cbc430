"""nn.Module classes are recognised through bases and imports across files."""

from __future__ import annotations

import pytest

from devfix.analysis.importers import passes_a_device_value, passes_a_loader
from devfix.analysis.kinds import Kind
from devfix.analysis.project import ProjectIndex


def test_local_and_imported_bases(tmp_path):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("from .layers import Block\n")
    (tmp_path / "pkg" / "layers.py").write_text("import torch.nn as nn\nclass Base(nn.Module): pass\nclass Block(Base): pass\nclass Plain: pass\n")
    (tmp_path / "train.py").write_text("from pkg import Block\n")
    index = ProjectIndex()
    train = str(tmp_path / "train.py")
    assert index.is_module_class(train, "pkg.Block") is True
    assert index.is_module_class(train, "pkg.layers.Plain") is False
    assert index.is_module_class(train, "pkg.layers.Missing") is None
    assert index.is_module_class(train, "torch.nn.Linear") is True
    assert index.is_module_class(train, "torch.nn.Parameter") is False


def test_classes_of_builtin_bases_are_not_modules(tmp_path):
    (tmp_path / "schedule.py").write_text("class Schedule(object): pass\nclass Failure(Exception): pass\n")
    index = ProjectIndex()
    path = str(tmp_path / "schedule.py")
    assert index.is_module_class(path, "Schedule") is False
    assert index.is_module_class(path, "Failure") is False
    assert index.is_module_class(path, "builtins.object") is False


def test_classes_of_standard_library_bases_are_not_modules(tmp_path):
    source = "import ast\nfrom types import ModuleType\nclass Visitor(ast.NodeVisitor): pass\nclass Lazy(ModuleType): pass\n"
    (tmp_path / "utils.py").write_text(source)
    index = ProjectIndex()
    path = str(tmp_path / "utils.py")
    assert index.is_module_class(path, "Visitor") is False
    assert index.is_module_class(path, "Lazy") is False
    assert index.is_module_class(path, "thirdparty.Base") is None  # not a file of the project: unknown


def test_a_project_module_named_like_the_standard_library_is_read(tmp_path):
    (tmp_path / "types.py").write_text("from torch import nn\nclass Layer(nn.Module): pass\n")
    (tmp_path / "net.py").write_text("from types import Layer\nclass Net(Layer): pass\n")
    assert ProjectIndex().is_module_class(str(tmp_path / "net.py"), "Net") is True


def test_relative_import_and_unsaved_source(tmp_path):
    (tmp_path / "pkg").mkdir()
    model = tmp_path / "pkg" / "model.py"
    index = ProjectIndex({str(model): "from torch import nn\nclass Net(nn.Module): pass\n"})
    (tmp_path / "pkg" / "run.py").write_text("")
    assert index.is_module_class(str(tmp_path / "pkg" / "run.py"), ".model.Net") is True


def test_a_relative_import_of_a_missing_module_places_nothing(tmp_path):
    """`from ._helpers import scale` in a script copied out of its package: the module is not
    there, so it places nothing (it used to crash the check, asking the file system's root for
    the module named ``)."""
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "ops.py").write_text("import torch\ndef scale(x):\n    return x.cuda()\n")
    script = str(tmp_path / "pkg" / "prog.py")
    index = ProjectIndex()
    assert index.imported_module_places_devices(script, "._helpers.scale") is False
    assert index.imported_module_places_devices(script, "..missing") is False
    assert index.imported_module_places_devices(script, ".ops.scale") is True


def test_cycles_do_not_loop(tmp_path):
    (tmp_path / "a.py").write_text("from b import B\nclass A(B): pass\n")
    (tmp_path / "b.py").write_text("from a import A\nclass B(A): pass\n")
    assert ProjectIndex().is_module_class(str(tmp_path / "a.py"), "A") is None


HELPER = "def evaluate(model, loader):\n    return [model(x) for x in loader]\n"


def _calls(tmp_path, script: str):
    (tmp_path / "helpers.py").write_text(HELPER)
    (tmp_path / "train.py").write_text(script)
    return ProjectIndex().foreign_calls(str(tmp_path / "helpers.py"), "evaluate")


def test_foreign_calls_of_a_helper_come_from_the_files_that_import_it(tmp_path):
    script = "from helpers import evaluate\nimport helpers\nevaluate(m, a)\nhelpers.evaluate(m, loader=b)\nother.evaluate(m, c)\n"
    calls = _calls(tmp_path, script)
    assert [(call.line, call.keywords) for call in calls] == [(3, frozenset()), (4, frozenset({"loader"}))]  # not other.evaluate


def test_a_helper_handed_on_has_unknown_callers(tmp_path):
    assert _calls(tmp_path, "from helpers import evaluate\nrun(evaluate)\n") is None


def test_a_function_of_the_same_name_elsewhere_is_not_a_call(tmp_path):
    assert _calls(tmp_path, "from other import evaluate\nevaluate(m, a)\n") == []


@pytest.mark.parametrize("script, expected", [
    ("loader = DataLoader(data)\nevaluate(m, loader)\n", True),
    ("evaluate(m, DataLoader(data))\n", True),
    ("evaluate(m, loader=DataLoader(data))\n", True),
    ("loader = DataLoader(data)\nloader = [data]\nevaluate(m, loader)\n", False),  # rebound to a list
    ("loader = DataLoader(data)\nfor loader in loaders:\n    evaluate(m, loader)\n", False),
    ("def run(loader):\n    evaluate(m, loader)\n", False),  # a parameter: who knows
    ("evaluate(m, [data])\n", False),
    ("evaluate(m, *args)\n", False),
])
def test_what_a_foreign_call_passes(tmp_path, script, expected):
    header = "from torch.utils.data import DataLoader\nfrom helpers import evaluate\n"
    calls = _calls(tmp_path, header + script)
    assert len(calls) == 1
    assert passes_a_loader(calls[0], 1, "loader") is expected


def test_what_a_function_of_another_file_returns(tmp_path):
    (tmp_path / "splits.py").write_text(
        "import torch\nfrom torch.utils.data import DataLoader, TensorDataset\n\n\n"
        "def make_loaders():\n    data = TensorDataset(torch.ones(4, 2))\n    return DataLoader(data), DataLoader(data)\n\n\n"
        "def table():\n    return torch.zeros(3)\n"
    )
    (tmp_path / "train.py").write_text("from splits import make_loaders, table\n")
    index, train = ProjectIndex(), str(tmp_path / "train.py")
    assert index.imported_kind(train, "splits.make_loaders") is Kind.TENSOR_LOADERS
    assert index.imported_kind(train, "splits.table") is Kind.UNKNOWN  # only loaders are asked for
    assert index.imported_kind(train, "splits.missing") is Kind.UNKNOWN
    assert index.imported_kind(train, "torch.randn") is Kind.UNKNOWN  # not a file of the project


def test_a_name_bound_by_an_imported_function_is_summarised_by_its_qualified_name(tmp_path):
    calls = _calls(tmp_path, "from helpers import evaluate\nfrom splits import make_loaders\ntrain, test = make_loaders()\nevaluate(m, test)\n")
    assert dict(calls[0].bound_by) == {1: "splits.make_loaders"}



@pytest.mark.parametrize("script, expected", [
    ("model = Net().to(device)\nlogits = model(x)\nevaluate(logits, y)\n", True),  # a moved model's output
    ("model = Net().to(device)\nevaluate(model(x).argmax(1), y)\n", True),  # a tensor method of one
    ("model = Net()\nmodel.to(device)\nfor x, y in loader:\n    out = model(x)[0]\n    evaluate(out, y)\n", True),
    ("evaluate(x.to(device), y)\n", True),
    ("x, y = x.to(device), y.to(device)\nevaluate(x, y)\n", True),  # an item of a tuple display
    ("x = x.to(device)\nx = x.float()\nevaluate(x, y)\n", True),  # each binding read before its own line
    ("model = Net().to(device)\nevaluate(model(x).cpu(), y)\n", False),  # brought back
    ("model = Net().to(device)\nevaluate(model(x).argmax(1).tolist(), y)\n", False),
    ("evaluate(x.to('cpu'), y)\n", False),
    ("model = Net()\nevaluate(model(x), y)\n", False),  # never moved
    ("model = Net().to(device)\nlogits = model(x)\nlogits = logits.numpy()\nevaluate(logits, y)\n", False),
    ("model = Net().to(device)\nfor x in data:\n    evaluate(out, y)\n    out = model(x)\n", False),  # bound after the call
    ("x, y = batch\nevaluate(x, y)\n", False),
])
def test_which_arguments_of_a_foreign_call_may_be_on_a_device(tmp_path, script, expected):
    calls = _calls(tmp_path, "from helpers import evaluate\n" + script)
    assert len(calls) == 1
    assert passes_a_device_value(calls[0], 0, "model") is expected
    assert passes_a_device_value(calls[0], 1, "loader") is ("y.to(device)" in script)


def test_a_binding_after_the_call_counts_only_in_a_loop_around_it(tmp_path):
    script = "from helpers import evaluate\nmodel = Net().to(device)\nfor x in data:\n    out = model(x)\n    evaluate(out, 1)\nout = model(z).cpu()\n"
    [call] = _calls(tmp_path, script)
    assert passes_a_device_value(call, 0, "model")  # the later binding is outside the loop


def test_a_function_of_another_file_that_gives_back_a_module_it_left_unplaced(tmp_path):
    (tmp_path / "blocks.py").write_text("import torch.nn as nn\n\n\nclass Block(nn.Module):\n    pass\n")
    (tmp_path / "models.py").write_text(
        "import torch.nn as nn\nfrom blocks import Block\n\n\nclass Net(nn.Module):\n    pass\n\n\nclass Plain:\n    pass\n\n\n"
        "def build(name):\n    if name == 'net':\n        return Net()\n    raise ValueError(name)\n\n\n"
        "def build_block():\n    block = Block()\n    block.extra = nn.Linear(2, 2)\n    return block\n\n\n"
        "def build_placed(device):\n    return Net().to(device)\n\n\n"
        "def build_plain():\n    return Plain()\n\n\n"
        "def build_layer():\n    return nn.Linear(2, 2)\n"
    )
    (tmp_path / "train.py").write_text("from models import build, build_block, build_placed, build_plain, build_layer\n")
    index, train = ProjectIndex(), str(tmp_path / "train.py")
    assert index.imported_returns_built_module(train, "models.build") is True
    assert index.imported_returns_built_module(train, "models.build_block") is True  # a class the file imports
    assert index.imported_returns_built_module(train, "models.build_layer") is True  # a torch layer
    assert index.imported_returns_built_module(train, "models.build_placed") is False  # it places the model
    assert index.imported_returns_built_module(train, "models.build_plain") is False  # no Module
    assert index.imported_returns_built_module(train, "models.missing") is False
    assert index.imported_returns_built_module(train, "torchvision.models.resnet18") is False  # not a file of the project
