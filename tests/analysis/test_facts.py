"""The value analysis: what a file is, which framework places its values, the kind of each name."""

from __future__ import annotations

import pytest

from devfix.analysis.facts import FileRole, analyse_file
from devfix.analysis.kinds import Kind
from tests.conftest import run_devfix


def kinds_read(source: str, name: str) -> list[Kind]:
    """The kind of every read of `name`, in source order."""
    facts = analyse_file(source, "snippet.py")
    reads = facts.values.reads
    return [reads[position] for position in sorted(reads) if facts.values.read_names[position] == name]


@pytest.mark.parametrize(
    ("source", "role"),
    [
        ("import torch\n\n\ndef f(x):\n    return x.cuda()\n", FileRole.LIBRARY),
        ("import torch\nLOG = print\n__all__ = ['f']\n", FileRole.LIBRARY),
        # logging configured at import, as opacus' utils do, then only definitions
        ("import logging\nimport torch\n\nlogging.basicConfig(level=logging.INFO)\nlogger = logging.getLogger(__name__)\n"
         "logger.setLevel(logging.INFO)\n\n\ndef clone(m):\n    return m\n", FileRole.LIBRARY),
        ("import torch\n\nif __name__ == '__main__':\n    print(torch.ones(1))\n", FileRole.PROGRAM),
        # a library module that runs its own doctests when run (torchsurv's kaplan_meier.py)
        ("import sys\nimport torch\n\nif __name__ == '__main__':\n    import doctest\n\n    results = doctest.testmod()\n"
         "    if results.failed:\n        print('Some doctests failed.')\n        sys.exit(1)\n", FileRole.LIBRARY),
        ("import torch\n\nif __name__ == '__main__':\n    import doctest\n    doctest.testmod()\n    main()\n", FileRole.PROGRAM),
        ("import torch\nmodel = torch.nn.Linear(2, 2).cuda()\n", FileRole.PROGRAM),
        ("import torch\nsd = torch.load('m.pt')\n", FileRole.PROGRAM),
        ("import torch\nfor i in range(3):\n    print(i)\n", FileRole.PROGRAM),
        # a package loading its own extension through its private API (torchaudio's CUDA CTC decoder)
        ("import torch\nimport torchaudio\n\ntorchaudio._extension._load_lib('prefixctc')\ncuctc = torch.ops.prefixctc\n", FileRole.LIBRARY),
        ("import torch\nimport train\n\ntrain.main()\n", FileRole.PROGRAM),
        ("import pytest\nimport torch\n\n\ndef test_ones():\n    assert torch.ones(1).cuda()\n", FileRole.TEST),
    ],
)
def test_what_a_file_is(source, role):
    assert analyse_file(source, "module.py").role is role


def test_test_files_and_package_inits_by_name():
    assert analyse_file("x = main()\n", "tests/test_train.py").role is FileRole.TEST
    assert analyse_file("import torch\n", "pkg/__init__.py").role is FileRole.LIBRARY


@pytest.mark.parametrize(
    ("imports", "framework"),
    [
        ("from accelerate import Accelerator", "accelerate"),
        ("import lightning as L", "lightning"),
        ("import torch_xla.core.xla_model as xm", "torch_xla"),
        ("from torch.distributed import rpc\nimport torch.distributed.rpc", "torch.distributed.rpc"),
        ("import torch", None),
        # called by its full name (pytorch-handbook's DDP chapter): DDP places the replica on its rank's GPU
        ("import torch\nmodel = torch.nn.parallel.DistributedDataParallel(model, device_ids=[rank])",
         "torch.nn.parallel.DistributedDataParallel"),
        ("import torch\ntorch.distributed.init_process_group(backend='nccl')", "torch.distributed"),
        ("import torch\nmodel = torch.nn.parallel.data_parallel(model, x)", None),
    ],
)
def test_frameworks_that_own_placement(imports, framework):
    assert analyse_file(imports + "\n", "train.py").framework == framework


def test_kinds_follow_assignments_and_rebinding():
    source = (
        "import numpy as np\nimport torch\n\n\n"
        "def f(lengths):\n"
        "    decode = lengths.tolist()\n"
        "    acc = []\n"
        "    arr = np.zeros(3)\n"
        "    t = torch.zeros(3)\n"
        "    t = t + 1\n"
        "    n = t.item()\n"
        "    return decode, acc, arr, t, n, lengths\n"
    )
    assert kinds_read(source, "decode") == [Kind.LIST]
    assert kinds_read(source, "acc") == [Kind.LIST]
    assert kinds_read(source, "arr") == [Kind.NDARRAY]
    assert kinds_read(source, "t") == [Kind.TENSOR, Kind.TENSOR, Kind.TENSOR]
    assert kinds_read(source, "n") == [Kind.SCALAR]
    assert kinds_read(source, "lengths") == [Kind.UNKNOWN, Kind.UNKNOWN]


def test_branches_join_and_loops_reach_a_fixed_point():
    source = (
        "import torch\n\n\n"
        "def f(flag, xs):\n"
        "    y = torch.ones(2) if flag else [1, 2]\n"
        "    z = torch.ones(2)\n"
        "    for x in xs:\n"
        "        print(z)\n"
        "        z = [x]\n"
        "    return y, z\n"
    )
    assert kinds_read(source, "y") == [Kind.UNKNOWN]
    assert kinds_read(source, "z") == [Kind.UNKNOWN, Kind.UNKNOWN]


def test_isinstance_narrows_a_name():
    source = (
        "import torch\n\n\n"
        "def f(image):\n"
        "    if not isinstance(image, torch.Tensor):\n"
        "        image = torch.from_numpy(image)\n"
        "    return image\n"
    )
    assert kinds_read(source, "image") == [Kind.UNKNOWN, Kind.OBJECT, Kind.TENSOR]  # a tensor on both paths


def test_helpers_return_kinds_and_dataclasses_are_objects():
    source = (
        "from dataclasses import dataclass\nimport torch\n\n\n"
        "@dataclass\nclass Args:\n    dim: int = 3\n\n\n"
        "def step(x):\n    return x.sum().item()\n\n\n"
        "def main():\n    loss = step(torch.ones(2))\n    args = Args()\n    return loss, args\n"
    )
    assert kinds_read(source, "loss") == [Kind.SCALAR]
    assert kinds_read(source, "args") == [Kind.OBJECT]


def test_module_constants_are_numbers():
    source = "import math\nimport torch\n\n\ndef f(pi):\n    c = 2.0 / torch.pi\n    d = math.tau * 2\n    return c, d, pi\n"
    assert kinds_read(source, "c") == [Kind.SCALAR]
    assert kinds_read(source, "d") == [Kind.SCALAR]


def test_annotations_give_kinds():
    source = "import torch\n\n\ndef f(x: torch.Tensor, n: int, names: list[str]):\n    return x, n, names\n"
    assert kinds_read(source, "x") == [Kind.TENSOR]
    assert kinds_read(source, "n") == [Kind.SCALAR]
    assert kinds_read(source, "names") == [Kind.LIST]


def test_non_ascii_columns_are_read_like_libcst():
    source = "import torch\n\n\ndef f():\n    t = torch.ones(1)\n    s = 'é'; print(t)\n"
    facts = analyse_file(source, "x.py")
    assert facts.kind_at(6, 19) is Kind.TENSOR  # character column of `t` in `print(t)`


def test_no_preamble_in_a_library_module():
    library = "import torch\n\n\ndef to_gpu(model):\n    return model.cuda()\n"
    result = run_devfix(library, "layers.py")
    assert result.fixed == result.source
    assert [(finding.code, finding.fixable) for finding in result.findings] == [("DF001", False)]
    assert b"device = torch.device" in run_devfix(library + "\nprint(to_gpu(torch.nn.Linear(1, 1)))\n", "train.py").fixed


def test_no_moves_where_a_framework_places_values():
    source = (
        "import torch\nimport lightning as L\nfrom torch.utils.data import DataLoader\n\n"
        "fabric = L.Fabric()\nmodel = torch.nn.Linear(2, 2)\nmodel = fabric.setup(model)\n"
        "loader = fabric.setup_dataloaders(DataLoader([]))\n"
        "device = fabric.device\nfor x, y in loader:\n    model(x).sum().backward()\n"
    )
    result = run_devfix(source, "train.py")
    assert result.fixed == result.source


def test_load_map_location_only_in_programs():
    library = "import torch\n\n\ndef read_metadata(path):\n    return torch.load(path)\n"
    assert run_devfix(library, "strategy.py").findings == ()


def test_a_state_dict_loads_on_the_cpu_in_a_library_but_not_in_a_test():
    source = "import torch\n\n\ndef restore(model, path):\n    model.load_state_dict(torch.load(path))\n"
    assert 'map_location="cpu"' in run_devfix(source, "checkpoints.py").fixed.decode()
    test = "import pytest\nimport torch\n\n\ndef test_restore(model, path):\n    model.load_state_dict(torch.load(path))\n"
    assert run_devfix(test, "test_checkpoints.py").findings == ()


def test_a_fix_that_writes_torch_adds_the_import():
    fixed = run_devfix("from torch import nn\n\ndevice = 'cuda'\nmodel = nn.Linear(2, 2).to(device)\n", "train.py").fixed.decode()
    assert fixed.startswith("from torch import nn\nimport torch\n")
    assert "device = 'cuda' if torch.cuda.is_available() else 'cpu'" in fixed  # in the literal's own quotes
    compile(fixed, "train.py", "exec")


def test_a_dotted_device_expression_is_written_as_an_expression():
    source = (
        "import argparse\nimport torch\nfrom torch import nn\n\nparser = argparse.ArgumentParser()\n"
        "parser.add_argument('--device', default='cpu')\nargs = parser.parse_args([])\n"
        "model = nn.Linear(2, 2)\nx = torch.ones(1, 2).to(args.device)\nprint(model(x))\n"
    )
    assert "model = nn.Linear(2, 2).to(args.device)\n" in run_devfix(source, "train.py").fixed.decode()


def test_parameters_take_the_kind_every_call_of_the_file_passes():
    source = (
        "import torch\n\n\n"
        "def mask(batch, p):\n    return batch, p\n\n\n"
        "def callback(values):\n    return values\n\n\n"
        "x = torch.ones(2)\nmask(x, 0.5)\nmask(x * 2, 0.1)\ncallback([1])\nhandlers = [callback]\n"
    )
    assert kinds_read(source, "batch") == [Kind.TENSOR]
    assert kinds_read(source, "p") == [Kind.SCALAR]
    assert kinds_read(source, "values") == [Kind.UNKNOWN]  # also used as a value: any caller may pass anything


def test_method_parameters_take_the_kind_every_fitting_call_passes():
    source = (
        "import torch\n\n\n"
        "class Trainer:\n"
        "    def step(self, x, y):\n        return x, y\n\n"
        "    def blend(self, start, end=1.0):\n        return start, end\n\n"
        "    def hook(self, value):\n        return value\n\n"
        "    def forward(self, batch):\n        return batch\n\n\n"
        "trainer = Trainer()\noptimizer = torch.optim.SGD([], lr=0.1)\n"
        "trainer.step(torch.ones(2), torch.zeros(2))\noptimizer.step()\n"  # step() cannot be Trainer.step
        "trainer.blend(0.5)\nother.blend(torch.ones(1), 2.0)\n"  # another object's blend joins in
        "trainer.hook(torch.ones(1))\ncallbacks = [trainer.hook]\n"  # also used as a value
        "trainer.forward(torch.ones(1))\n"
    )
    assert kinds_read(source, "x") == [Kind.TENSOR]
    assert kinds_read(source, "y") == [Kind.TENSOR]
    assert kinds_read(source, "start") == [Kind.UNKNOWN]
    assert kinds_read(source, "value") == [Kind.UNKNOWN]
    assert kinds_read(source, "batch") == [Kind.UNKNOWN]  # a Module is called, not its forward


def test_constructor_parameters_and_the_attributes_they_fill_take_the_kinds_the_class_is_built_with():
    source = (
        "import torch\nfrom torch.utils.data import DataLoader, TensorDataset\n\n\n"
        "class Trainer:\n"
        "    def __init__(self, loader, rows, steps):\n"
        "        self.loader = loader\n"
        "        steps = list(range(steps))\n"
        "        self.steps = steps\n"
        "        self.rows = rows\n\n"
        "    def run(self):\n"
        "        return self.loader, self.steps, self.rows\n\n\n"
        "class Base:\n"
        "    def __init__(self, loader):\n"
        "        self.loader = loader\n\n"
        "    def run(self):\n"
        "        return self.loader\n\n\n"
        "class Child(Base):\n"
        "    pass\n\n\n"
        "data = TensorDataset(torch.ones(4, 2))\n"
        "Trainer(DataLoader(data), [1, 2], 3)\n"
        "Trainer(DataLoader(data), torch.ones(2), 3)\n"
        "Base(DataLoader(data))\n"
    )
    facts = analyse_file(source, "snippet.py")
    lines = source.splitlines()

    def attribute(line_text: str, column_text: str) -> Kind:
        line = next(number for number, text in enumerate(lines, 1) if text.strip() == line_text)
        return facts.attribute_kind_at(line, lines[line - 1].index(column_text))

    assert kinds_read(source, "loader")[0] is Kind.TENSOR_LOADER  # what every call passes
    assert attribute("return self.loader, self.steps, self.rows", "self.loader") is Kind.TENSOR_LOADER
    assert attribute("return self.loader, self.steps, self.rows", "self.steps") is Kind.UNKNOWN  # rebound: not the 3 passed
    assert attribute("return self.loader, self.steps, self.rows", "self.rows") is Kind.UNKNOWN  # a list and a tensor
    assert attribute("return self.loader", "self.loader") is Kind.UNKNOWN  # a class derived from: no inference


def test_dataset_items_are_tensors_where_the_dataset_says_so():
    source = (
        "import torch\nfrom torch.utils.data import TensorDataset\nfrom torchvision import datasets, transforms\n\n"
        "pairs = TensorDataset(torch.ones(4, 2), torch.zeros(4))\n"
        "images = datasets.MNIST('data', transform=transforms.Compose([transforms.ToTensor()]))\n"
        "raw = datasets.MNIST('data')\n"
        "a, b = pairs[0]\nc = pairs[1][1]\nd, label = images[0]\ne = images[0][1]\nf = raw[0][0]\n"
        "for g, h in pairs:\n    print(g, h)\n"
        "print(a, b, c, d, label, e, f)\n"
    )
    for name in ("a", "b", "c", "d", "g", "h"):
        assert kinds_read(source, name) == [Kind.TENSOR], name
    for name in ("label", "e", "f"):  # a target may be a plain int; without ToTensor, a PIL image
        assert kinds_read(source, name) == [Kind.UNKNOWN], name


def test_parameter_kinds_flow_through_a_chain_of_calls():
    source = (
        "import torch\n\n\n"
        "def extract(table, t):\n    return table[t]\n\n\n"
        "class Scheduler:\n"
        "    def add_noise(self, x, t):\n        return extract(x, t)\n\n\n"
        "scheduler = Scheduler()\nscheduler.add_noise(torch.ones(3), torch.zeros(3).long())\n"
    )
    assert kinds_read(source, "table") == [Kind.TENSOR]  # known only once add_noise's x is
    assert kinds_read(source, "t") == [Kind.TENSOR, Kind.TENSOR]


def test_batches_of_a_default_loader_over_tensors_are_tensors():
    source = (
        "import torch\nfrom torch.utils.data import DataLoader, TensorDataset\n\n"
        "pairs = TensorDataset(torch.ones(4, 2), torch.zeros(4))\n"
        "for x, y in DataLoader(pairs, batch_size=2):\n    print(x, y)\n"
        "for (a,) in DataLoader(TensorDataset(torch.ones(4)), batch_size=2):\n    print(a)\n"
        "for b, c in DataLoader(pairs, batch_size=2, collate_fn=merge):\n    print(b, c)\n"
    )
    for name in ("x", "y", "a"):
        assert kinds_read(source, name) == [Kind.TENSOR], name
    for name in ("b", "c"):  # a custom collate may return anything
        assert kinds_read(source, name) == [Kind.UNKNOWN], name


def test_a_tuple_of_loaders_unpacks_into_loaders():
    source = (
        "import torch\nfrom torch.utils.data import DataLoader, TensorDataset\n\n\n"
        "def make(data):\n    return DataLoader(TensorDataset(data)), DataLoader(TensorDataset(data))\n\n\n"
        "def mixed(data):\n    return DataLoader(TensorDataset(data)), [data]\n\n\n"
        "train, val = make(torch.ones(4, 2))\nfirst, second = mixed(torch.ones(4, 2))\nprint(train, val, first, second)\n"
    )
    assert kinds_read(source, "train") == kinds_read(source, "val") == [Kind.TENSOR_LOADER]
    assert kinds_read(source, "first") == kinds_read(source, "second") == [Kind.UNKNOWN]


def test_lists_of_tensor_tuples_are_batches_and_their_rows_unpack_into_tensors():
    source = (
        "import torch\n\n\n"
        "def make_batches(x, y, n):\n    return [(x[i:i + n], y[i:i + n]) for i in range(0, len(x), n)]\n\n\n"
        "def named(x):\n    return [(str(i), x[i]) for i in range(len(x))]\n\n\n"
        "x, y = torch.ones(8, 2), torch.zeros(8)\nbatches = make_batches(x, y, 4)\npairs = [(x, y), (x, y)]\n"
        "rows = named(x)\nprint(batches, pairs, rows)\nfor a, b in batches:\n    print(a, b)\n"
    )
    assert kinds_read(source, "batches") == [Kind.BATCH_LIST] * 2
    assert kinds_read(source, "pairs") == [Kind.BATCH_LIST]
    assert kinds_read(source, "rows") == [Kind.LIST]  # a string in each row
    assert kinds_read(source, "a") == kinds_read(source, "b") == [Kind.TENSOR]


def test_a_method_under_no_grad_takes_the_kinds_of_its_calls():
    source = (
        "import torch\nfrom torch.utils.data import DataLoader, TensorDataset\n\n\n"
        "class Trainer:\n"
        "    @torch.no_grad()\n    def evaluate(self, loader):\n        return loader\n\n"
        "    @property\n    def other(self, loader):\n        return loader\n\n\n"
        "Trainer().evaluate(DataLoader(TensorDataset(torch.ones(2))))\nTrainer().other(DataLoader(TensorDataset(torch.ones(2))))\n"
    )
    assert kinds_read(source, "loader") == [Kind.TENSOR_LOADER, Kind.UNKNOWN]


def test_a_static_methods_parameters_take_the_kinds_of_its_calls_all_of_them_given():
    """DiT's `timestep_embedding(t, dim)`, called as `self.timestep_embedding(t, 16)`: no `self`
    to skip, so `t` takes the first argument's kind; a class method is left unknown."""
    source = (
        "import torch\n\n\n"
        "class Embedder:\n"
        "    @staticmethod\n    def timestep_embedding(t, dim):\n        return t, dim\n\n"
        "    @classmethod\n    def build(cls, size):\n        return size\n\n"
        "    def embed(self, steps):\n        return self.timestep_embedding(steps, 16)\n\n\n"
        "Embedder().embed(torch.arange(3))\nEmbedder.build(torch.ones(1))\n"
    )
    assert kinds_read(source, "t") == [Kind.TENSOR]
    assert kinds_read(source, "dim") == [Kind.SCALAR]
    assert kinds_read(source, "size") == [Kind.UNKNOWN]


def test_an_image_transform_called_gives_a_tensor():
    source = (
        "import torchvision.transforms as T\n\n"
        "transform = T.Compose([T.Resize(8), T.ToTensor()])\n"
        "img = transform(image).unsqueeze(0)\nprint(img)\n"
    )
    assert kinds_read(source, "img") == [Kind.TENSOR]


def test_a_class_constant_has_the_kind_of_its_one_value():
    source = (
        "import torch\n\n\nclass Config:\n    weights = torch.tensor([0.3, 0.7])\n    name = 'run'\n\n\n"
        "w = Config.weights\nn = Config.name\nprint(w, n)\n"
    )
    assert (kinds_read(source, "w"), kinds_read(source, "n")) == ([Kind.TENSOR], [Kind.STR])
    stored = source.replace("w = Config.weights", "Config.weights = None\nw = Config.weights")
    assert kinds_read(stored, "w") == [Kind.UNKNOWN]  # stored again elsewhere: not one value


def test_the_output_of_a_layer_or_a_module_of_the_file_has_the_kind_its_forward_returns():
    source = (
        "import torch\nfrom torch import nn\n\n\nclass Pos(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
        "        self.register_buffer('pe', torch.zeros(1, 8, 4))\n\n    def forward(self, x):\n        return x + self.pe\n\n\n"
        "class Pair(nn.Module):\n    def forward(self, x):\n        return x, x\n\n\n"
        "class Net(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
        "        self.emb = nn.Embedding(10, 4)\n        self.pos = Pos()\n        self.pair = Pair()\n\n"
        "    def forward(self, ids):\n        e = self.emb(ids)\n        h = self.pos(e)\n        p = self.pair(e)\n        return h, p\n\n\n"
        "net = Net()\nprint(net(torch.zeros(2, 8, dtype=torch.long)))\n"
    )
    assert (kinds_read(source, "e"), kinds_read(source, "h"), kinds_read(source, "p")) == (
        [Kind.TENSOR, Kind.TENSOR], [Kind.TENSOR], [Kind.TUPLE],
    )
