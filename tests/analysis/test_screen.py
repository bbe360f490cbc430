"""The ast screen may only skip a rule where the rule, run anyway, finds nothing.

Every fixture (before and after), program, seed and clean program is checked: for each rule the
screen rules out, the rule is run on the libcst tree regardless and must report no finding.
"""

from __future__ import annotations

import ast
from pathlib import Path

import libcst as cst
import pytest
from libcst.metadata import MetadataWrapper

from devfix.analysis.facts import FileFacts, analyse_file
from devfix.analysis.project import ProjectIndex
from devfix.analysis.torch_api import places_devices
from devfix.codemods import ALL_RULES
from devfix.codemods.base import FixPolicy
from devfix.engine import _run_rule
from devfix.suppressions import Suppressions
from tests.conftest import REPO

SOURCES = sorted(
    path
    for folder in ("fixtures", "tests/programs", "tests/clean_programs", "tests/seeds", "examples")
    for path in (REPO / folder).rglob("*.py")
)


def findings_of_screened_out_rules(path: Path) -> list[str]:
    source = path.read_text()
    facts = analyse_file(source, str(path))
    module = cst.parse_module(source)
    wrapper = MetadataWrapper(module, unsafe_skip_copy=True)
    found = []
    for rule in ALL_RULES:
        if rule.has_signals(facts) or not rule.may_apply(source):
            continue
        _, findings = _run_rule(rule, wrapper, str(path), FixPolicy(), Suppressions.from_source(source), ProjectIndex(), facts)
        found += [f"{finding.code} at {finding.start.line}: {finding.message}" for finding in findings]
    return found


def df004_findings_outside_meeting_scopes(path: Path, monkeypatch) -> list[str]:
    """DF004 collects only in the scopes where the screen says a factory may meet a tensor
    (`FileFacts.factory_meeting_lines`): run it over every scope, and list what it finds elsewhere."""
    source = path.read_text()
    facts = analyse_file(source, str(path))
    rule = next(rule for rule in ALL_RULES if rule.CODE == "DF004")
    meeting_lines = facts.factory_meeting_lines
    if not rule.may_apply(source, facts) or meeting_lines is None:
        return []
    with monkeypatch.context() as patched:
        patched.setattr(FileFacts, "factory_meeting_lines", property(lambda self: None))  # every scope
        wrapper = MetadataWrapper(cst.parse_module(source), unsafe_skip_copy=True)
        _, findings = _run_rule(rule, wrapper, str(path), FixPolicy(), Suppressions.from_source(source), ProjectIndex(), facts)
    functions = [node for node in ast.walk(facts.tree) if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))]

    def scope_line(line: int) -> int:  # the `def` line of the innermost function whose body holds `line`
        holding = [function for function in functions if function.body[0].lineno <= line <= function.end_lineno]
        return max(holding, key=lambda function: function.lineno).lineno if holding else 0

    return [f"DF004 at {finding.start.line}: {finding.message}" for finding in findings if scope_line(finding.start.line) not in meeting_lines]


@pytest.mark.parametrize("path", SOURCES, ids=lambda path: str(path.relative_to(REPO)))
def test_a_rule_the_screen_rules_out_finds_nothing(path, monkeypatch):
    assert findings_of_screened_out_rules(path) == []
    assert df004_findings_outside_meeting_scopes(path, monkeypatch) == []  # nor DF004 in a scope it rules out


def test_the_screen_rules_out_most_rules_on_library_code():
    source = (
        "import torch\nfrom torch import nn\n\n\n"
        "class Block(nn.Module):\n"
        "    def __init__(self, dim):\n"
        "        super().__init__()\n"
        "        self.dim = dim\n"
        "        self.proj = nn.Linear(dim, dim)\n"
        "        self.gamma = nn.Parameter(torch.ones(dim))\n\n"
        "    def forward(self, x):\n"
        "        return self.proj(x) * self.gamma\n"
    )
    facts = analyse_file(source, "block.py")
    assert [rule.CODE for rule in ALL_RULES if rule.may_apply(source, facts)] == []


def rules_that_may_apply(source: str) -> list[str]:
    facts = analyse_file(source, "model.py")
    return [rule.CODE for rule in ALL_RULES if rule.may_apply(source, facts)]


@pytest.mark.parametrize("body", [
    "dpr = [x.tolist() for x in torch.linspace(0, rate, sum(depths)).split(depths)]",
    "gamma = init_values * torch.ones(dim)",
    "scale = torch.ones(3, device=x.device) * x",
    "table = torch.arange(10)\n    print(table.sum())",
    "idx = torch.arange(4)\n    return x[idx]",  # CPU indices may index a tensor on any device
    "table = torch.arange(4)\n    return table[x]",  # nothing says that `x` is a tensor
    "x = x[depths]\n    x = torch.from_numpy(x)\n    return x",  # read before the factory binds it
    "out = {}\n    out['bias'] = torch.zeros(dim)\n    return out[x]",  # a store into a dict binds no name
    # a size read from a tensor is a number: `repeat(batch_size)` meets no tensor
    "batch_size = x.shape[0]\n    scale = torch.tensor(2.0).repeat(batch_size)\n    return scale, x.device",
    # a fresh tensor meets another fresh one; its move comes after (only a move in between makes it a reference)
    "grid = torch.zeros(3, 2)\n    grid[..., 1] = grid[..., 1] + torch.arange(3)\n    return grid.to(x.device)",
    # one name is never both the fresh tensor and what it meets (`labels is None`)
    "labels = torch.zeros(3)\n    if labels is None:\n        return x\n    return labels.cuda()",
])
def test_factories_that_meet_no_tensor_are_ruled_out_for_df004(body):
    source = f"import torch\n\n\ndef build(x, rate: float, depths: list, init_values: float, dim: int):\n    {body}\n"
    assert "DF004" not in rules_that_may_apply(source)


@pytest.mark.parametrize("body", [
    "mask = torch.ones(3)\n    return x * mask",
    "return torch.cat([x, torch.zeros(1)])",
    "table = torch.arange(4)\n    return table[x]",
    "noise = torch.randn(3)\n    return x.add(noise)",
])
def test_factories_that_may_meet_a_tensor_are_kept_for_df004(body):
    source = f"import torch\n\n\ndef step(x: torch.Tensor):\n    {body}\n"
    assert "DF004" in rules_that_may_apply(source)


def rule_findings(code: str, source: str) -> list[str]:
    """What one rule finds when run anyway, whatever the screen says."""
    facts = analyse_file(source, "model.py")
    wrapper = MetadataWrapper(cst.parse_module(source), unsafe_skip_copy=True)
    rule = next(rule for rule in ALL_RULES if rule.CODE == code)
    _, findings = _run_rule(rule, wrapper, "model.py", FixPolicy(), Suppressions.from_source(source), ProjectIndex(), facts)
    return [finding.message for finding in findings]


@pytest.mark.parametrize("body, expected", [
    # the tensor met is bound after the factory, from a fresh tensor: no device the rule can name there
    ("mask = torch.ones(n)\n    first = torch.repeat_interleave(mask[:1], 2)\n    return torch.cat([first, mask])", False),
    # bound after the factory, but computed from an argument: the rule names the argument's device
    ("mask = torch.ones(n)\n    first = torch.exp(x)\n    return torch.cat([first, mask])", True),
    # a parameter rebound after the factory is still the argument (here a list) where the factory runs:
    # the table moves where the tensor indexes it instead (`table.to(x.device)[x]`)
    ("table = torch.arange(n)\n    x = torch.tensor(x, device=other.device)\n    return table[x]", True),
    ("table = torch.arange(n)\n    return table[other]", True),
    # read somewhere as a numpy array: the value analysis vetoes the name as a reference
    ("x = np.stack(x)\n    x = torch.from_numpy(x).to(dtype=torch.float32)\n    mask = torch.from_numpy(np.ones(n))\n    return x * mask", False),
])
def test_df004_needs_a_tensor_whose_device_the_rule_can_name(body, expected):
    source = f"import numpy as np\nimport torch\n\n\ndef build(x, other: torch.Tensor, n: int):\n    {body}\n"
    assert ("DF004" in rules_that_may_apply(source)) is expected
    assert bool(rule_findings("DF004", source)) is expected  # the screen says what the rule finds


@pytest.mark.parametrize("helper, expected", [
    ("return torch.triu(torch.ones(n, n), diagonal=1) == 0", True),  # a CPU tensor meets `scores`
    ("return torch.triu(torch.ones(n, n, device=device), diagonal=1) == 0", False),  # placed by the helper
    ("return n ** -0.5", False),  # a number: the value analysis does not prove `mask` a tensor
    # `torch.reshape(t, sizes)` gives back its argument `t`: a tensor the caller gave, not a size
    ("b, f, d = n.size()\n    return torch.reshape(n, (b * f, d))", False),
])
def test_df004_follows_a_helper_of_the_file_that_returns_a_cpu_tensor(helper, expected):
    source = (
        f"import torch\n\n\ndef causal(n, device=None):\n    {helper}\n\n\n"
        "def attend(scores: torch.Tensor):\n    mask = causal(scores.size(-1))\n    return scores.masked_fill(mask == 0, 0.0)\n"
    )
    assert bool(rule_findings("DF004", source)) is expected
    assert "DF004" in rules_that_may_apply(source) or not expected


def test_df004_takes_no_helper_giving_back_numbers_for_a_cpu_tensor():
    """diffusers' `_compute_padding` gives back a list of ints: it meets the input in `F.pad`, and
    DF004 (which asks the helper's summary for tensors) finds nothing: nor may the screen."""
    source = (
        "import torch\nimport torch.nn.functional as F\n\n\ndef padding(kernel_size):\n    out = 2 * len(kernel_size) * [0]\n"
        "    return out\n\n\ndef blur(x: torch.Tensor, k):\n    pad = padding([k, k])\n    return F.pad(x, pad)\n"
    )
    assert "DF004" not in rules_that_may_apply(source)
    assert rule_findings("DF004", source) == []


@pytest.mark.parametrize("made, expected", [
    ("img = torch.from_numpy(np.load(path)).float()", True),  # made on the host: DF004 moves it where it is fed
    ("img = load(path)", False),  # what an unknown call returns: DF004 does not guess
    ("for img in images:\n    pass", False),  # a loop variable may be anywhere
])
def test_df004_needs_a_local_made_on_the_host_fed_to_a_moved_model(made, expected):
    source = f"import numpy as np\nimport torch\n\ndevice = torch.device(name)\nmodel = Net().to(device)\n{made}\nmodel(img)\n"
    assert ("DF004" in rules_that_may_apply(source)) is expected


@pytest.mark.parametrize("caller, expected", [
    ("net = Net().to(device)\nrun(net, 3)", True),  # every call passes a model the file moves
    ("run(self.ff, 3)", False),  # not a name DF004 can follow to its move
    ("net = Net().to(device)\nrun(net, 3)\nrun(Net(), 3)", False),  # one caller passes an unmoved model
    ("net = Net().to(device)\nrun(net, 3)\nhooks = [run]", False),  # the function escapes: callers unknown
])
def test_df004_needs_callers_that_pass_a_moved_model_for_a_parameter(caller, expected):
    source = (
        "import torch\n\n\ndef run(model, n):\n    rows = torch.ones(n, 4).numpy()\n    batch = torch.tensor(rows)\n"
        f"    return model(batch)\n\n\ndevice = torch.device(name)\n{caller}\n"
    )
    assert ("DF004" in rules_that_may_apply(source)) is expected


@pytest.mark.parametrize("caller, expected", [
    ("net = Net().to(device)\ntag(net, [1, 2])", True),  # the factory goes to the model's own device
    ("tag(Net(), [1, 2])", False),  # a model nobody moved: nothing to align with
])
def test_df004_aligns_a_factory_fed_to_a_parameter_that_callers_move(caller, expected):
    source = (
        "import torch\n\n\ndef tag(model, ids):\n    return model(torch.LongTensor(ids).unsqueeze(0))\n\n\n"
        f"device = torch.device(name)\n{caller}\n"
    )
    assert bool(rule_findings("DF004", source)) is expected
    assert "DF004" in rules_that_may_apply(source) or not expected


@pytest.mark.parametrize("source, expected", [
    ("import torch\nx = torch.zeros(3)\nif x.device.type == 'cuda':\n    pass\n", False),
    ("import torch\nx = torch.zeros(3).cuda(1)\n", False),
    ("import torch\nx = torch.zeros(3).cuda()\n", True),
    ("import torch\nx = torch.zeros(3).to('cuda:0')\n", True),
    ("import torch\nx = torch.zeros(3, device=torch.device('cuda'))\n", True),
    ("import torch\ndevice = 'cuda'\n", True),
    ("import torch\nmodel = Net().cuda()\nmodel = DistributedDataParallel(model)\n", False),
    # guarded by a test that asks about the GPU: in its branches, in a conditional's test
    ("import torch\nif torch.cuda.is_available():\n    x = torch.zeros(3).cuda()\n", False),
    ("import torch\nif not torch.cuda.is_available():\n    raise SystemExit\nelse:\n    q = torch.randn(2, device='cuda')\n", False),
    ("import torch\nx = torch.zeros(3).cuda() if use_gpu else torch.zeros(3)\n", False),
    ("import torch\nif verbose:\n    x = torch.zeros(3).cuda()\n", True),  # a test about something else
])
def test_df001_needs_a_hard_coded_single_gpu_placement(source, expected):
    assert ("DF001" in rules_that_may_apply(source)) is expected


@pytest.mark.parametrize("source, expected", [
    ("import torch\nmodel.load_state_dict(state)\nmodel.to(device)\n", False),
    # optimizer state loaded before a move is DF022's
    ("import torch\nmodel = Net()\noptimizer = torch.optim.SGD(model.parameters())\noptimizer.load_state_dict(state)\nmodel.to(device)\n", False),
    ("import torch\nm = AutoModel.from_pretrained('x', device_map='auto')\nm.to(device)\n", True),
    ("import torch\ntraced = torch.jit.trace(model, example)\n", True),
    # a dispatched model left where it is; another value moved
    ("import torch\nm = AutoModel.from_pretrained('x', device_map='auto')\nids = ids.to(m.device)\n", False),
    ("import torch\nm = AutoModel.from_pretrained('x', device_map='auto')\nm.to(torch.float16)\n", False),  # a cast
])
def test_df013_needs_a_trace_or_a_move_after_dispatch(source, expected):
    assert ("DF013" in rules_that_may_apply(source)) is expected


@pytest.mark.parametrize("source, expected", [
    ("import torch\nmodel = Net()\nmodel.to(device)\n", False),  # a Module's .to() works in place
    ("import torch\nx = torch.zeros(3)\nx.to(device)\n", True),
])
def test_df005_needs_a_proven_tensor_moved_as_a_statement(source, expected):
    assert ("DF005" in rules_that_may_apply(source)) is expected


@pytest.mark.parametrize("source, expected", [
    ("import numpy as np\nimport torch\nx = torch.zeros(3)\nprint(np.mean(x.numpy()))\n", False),
    ("import numpy as np\nimport torch\nx = torch.zeros(3).to(device)\nprint(np.mean(x.numpy()))\n", True),
    ("import torch\nx = torch.zeros(3).to(device)\nprint(x.detach().cpu().numpy())\n", False),  # already on the host
    ("import torch\nx = torch.zeros(3).to(device)\nprint(x[0].numpy())\n", True),
])
def test_df008_needs_a_file_that_places_something_on_a_device(source, expected):
    assert ("DF008" in rules_that_may_apply(source)) is expected


@pytest.mark.parametrize("assignment, expected", [
    ("self.mean = torch.zeros(3)", True),
    ("self.model = torch.nn.Linear(3, 3)", False),  # a Module moves in place
    ("self.model = build()", False),
])
def test_df005_needs_a_self_attribute_the_class_makes_with_torch(assignment, expected):
    source = f"import torch\n\n\nclass Stats:\n    def __init__(self):\n        {assignment}\n\n    def place(self, device):\n        self.{assignment.split()[0][5:]}.to(device)\n"
    assert ("DF005" in rules_that_may_apply(source)) is expected


@pytest.mark.parametrize("use, expected", [
    ("return self.betas[t]", True),
    ("return x - self.betas", True),
    ("return extract(self.betas, t)", True),  # a helper of the file
    ("return self.betas.shape", False),  # the table never meets anything
    ("return self.betas[1:]", False),  # sliced, not indexed with a value
    ("return 1.0 - self.betas", False),  # computes with constants only
    ("return gather(self.betas, t)", False),  # a function from elsewhere: DF012 only follows the file's own
    ("shift = np.log(2.0)\n        return shift + self.betas", False),  # a local never a tensor
    ("shift = torch.ones(5)\n        return shift + self.betas", True),  # a local that is one
    ("return SHIFT + self.betas", False),  # a global: the rule aligns only to the method's own names
    ("return (lambda: x * self.betas)()", True),  # a lambda's names are the method's
    ("def inner(s):\n            return s * self.betas\n        return inner(x)", True),  # a nested def's parameter
])
def test_df012_needs_a_plain_class_table_that_meets_something(use, expected):
    source = (
        "import numpy as np\nimport torch\nfrom helpers import SHIFT, gather\n\n\nclass Scheduler:\n    def __init__(self):\n"
        "        self.betas = torch.linspace(0, 1, 5)\n\n"
        f"    def get(self, x, t):\n        {use}\n\n\ndef extract(table, t):\n    return table[t]\n"
    )
    assert ("DF012" in rules_that_may_apply(source)) is expected


@pytest.mark.parametrize("source, expected", [
    # CPU values only: numpy is fine
    ("import numpy as np\nimport torch\nmodel = Net().to(device)\nx = torch.zeros(3)\nprint(np.mean(x))\n", False),
    # a value computed from a moved model's output
    ("import numpy as np\nimport torch\nmodel = Net().to(device)\ny = model(x)\nprint(np.mean(y))\n", True),
    # collected with append, then handed to numpy
    ("import numpy as np\nimport torch\nlosses = []\nfor b in data:\n    losses.append(b.to(device).sum())\nprint(np.mean(losses))\n", True),
    # extended with a device tensor's elements, then handed to numpy
    ("import numpy as np\nimport torch\npreds = []\nfor b in data:\n    preds.extend(b.to(device).argmax(1))\nprint(np.array(preds))\n", True),
    # a parameter's `.numpy()` in a file that places devices: the caller may pass a device tensor
    ("import torch\nmodel = Net().to(device)\n\n\ndef show(t):\n    return t.numpy()\n", True),
    # a parameter handed to numpy (not `.numpy()`): the rule does not follow parameters there
    ("import numpy as np\nimport torch\nmodel = Net().to(device)\n\n\ndef show(t):\n    return np.asarray(t)\n", False),
    # read before the move: the name still holds the CPU tensor there
    ("import numpy as np\nimport torch\nx = torch.zeros(3)\nprint(np.mean(x))\nx = x.to(device)\n", False),
    # a size read from a tensor's shape is a number, wherever the tensor is
    ("import numpy as np\nimport torch\nx = torch.zeros(3).to(device)\nb, *dims = x.shape\nprint(np.prod(dims))\n", False),
    # `len(...)` of a device tensor is a number: a host library's argument follows only calls of
    # parameters, of moved names or of locals bound to a call (a Module, maybe)
    ("import numpy as np\nimport torch\nx = torch.zeros(3).to(device)\nprint(np.arange(len(x)))\n", False),
    ("import numpy as np\nimport torch\nx = torch.zeros(3).to(device)\nnet = Net()\nprint(np.mean(net(x)))\n", True),
    # stored into an item of a numpy array made by shape: numpy converts it
    ("import numpy as np\nimport torch\nh = np.zeros(3)\nx = torch.zeros(3).to(device)\nh[0] = x.sum()\n", True),
    ("import numpy as np\nimport torch\nh = np.zeros(3)\nx = torch.zeros(3).to(device)\nh[0] = x.sum().cpu()\n", False),
    ("import numpy as np\nimport torch\nh = torch.zeros(3)\nx = torch.zeros(3).to(device)\nh[0] = x.sum()\nnp.save('h', 1)\n", False),
    # a factory is made where `device=` says, whatever bounds it is given (a parameter, in `.numpy()`'s loose reading)
    ("import torch\nmodel = Net().to(device)\n\n\ndef sigmas(n):\n    return torch.linspace(0, 1, n + 1).exp().numpy()\n", False),
    ("import torch\nmodel = Net().to(device)\n\n\ndef sigmas(n):\n    return torch.exp(n).numpy()\n", True),
    # what a tensor tells of itself is no tensor: `np.zeros(image[idx].shape)`
    ("import numpy as np\nimport torch\nx = torch.zeros(3).to(device)\nprint(np.zeros(x[0].shape), np.dtype(x.dtype))\n", False),
    # a comprehension's variable is what that comprehension iterates, not another's of the same name
    ("import numpy as np\nimport torch\ns = np.ones(3)\nt = np.array([np.log(v) for v in s])\nd = torch.from_numpy(s).to(device)\n"
     "u = [v * 2 for v in d]\n", False),
    ("import numpy as np\nimport torch\ns = np.ones(3)\nd = torch.from_numpy(s).to(device)\nt = np.array([np.log(v) for v in d])\n", True),
])
def test_df008_needs_a_value_that_may_be_on_a_device_to_reach_the_host(source, expected):
    assert ("DF008" in rules_that_may_apply(source)) is expected


MODULE_HEAD = "import torch\nfrom torch import nn\n\n\nclass Head(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.fc = nn.Linear(4, 4)\n\n"


@pytest.mark.parametrize("method, expected", [
    ("    def forward(self, x):\n        pos = torch.arange(4)\n        return self.fc(x + pos)\n", True),
    ("    def init_hidden(self, n):\n        return torch.zeros(n, 4)\n", True),
    ("    def forward(self, x):\n        out = self.fc(x)\n        return out * torch.ones(4)\n", True),
    ("    def forward(self, x):\n        self.register_buffer('pos', torch.arange(4))\n        return self.fc(x)\n", False),
    ("    def forward(self, x):\n        n = torch.arange(4).sum().item()\n        print(n)\n        return self.fc(x)\n", False),
    ("    def select(self, n):\n        return torch.arange(n).view(2, 2)\n", True),  # a method of an unnamed tensor
    # a method of a named tensor is followed to its factory where it meets a submodule (libcst
    # qualifies `index.view` as `select.<locals>.index.view`, which is no torch function) ...
    ("    def forward(self, x):\n        index = torch.arange(4)\n        return self.fc(x + index.view(1, 4))\n", True),
    # ... but not into what the method returns: callers may only index with it (CPU indices are allowed)
    ("    def select(self, n):\n        index = torch.arange(n)\n        return index.view(2, 2)\n", False),
    # a whole reduction is 0-dim: a CPU one may meet the module's CUDA output
    ("    def forward(self, x):\n        lengths = torch.ones(3)\n        return self.fc(x).sum() + lengths.sum()\n", False),
    # handed to a method of the class that passes that parameter to a submodule (by position or keyword)
    ("    def step(self, x, shift):\n        return self.fc(shift)\n\n    def forward(self, x):\n"
     "        shift = torch.zeros(1, 4)\n        return self.step(x, shift=shift)\n", True),
    ("    def step(self, x, shift):\n        return self.fc(shift)\n\n    def forward(self, x):\n"
     "        shift = torch.zeros(1, 4)\n        return self.step(x, shift)\n", True),
])
def test_df016_needs_a_method_factory_that_reaches_a_submodule_or_a_return(method, expected):
    assert ("DF016" in rules_that_may_apply(MODULE_HEAD + method)) is expected
    assert bool(rule_findings("DF016", MODULE_HEAD + method)) is expected  # the screen says what the rule finds


@pytest.mark.parametrize("after_loop, expected", [
    ("", True),  # the list stays plain: DF015 wraps it
    ("        self.body = nn.ModuleList(self.body)\n", False),  # wrapped later: stored twice, DF015 leaves it
])
def test_df015_needs_an_appended_list_stored_once(after_loop, expected):
    source = MODULE_HEAD.replace("        self.fc = nn.Linear(4, 4)\n", (
        "        self.body = []\n        for _ in range(3):\n            self.body.append(nn.Linear(4, 4))\n" + after_loop
    )) + "    def forward(self, x):\n        for block in self.body:\n            x = block(x)\n        return x\n"
    assert ("DF015" in rules_that_may_apply(source)) is expected
    assert bool(rule_findings("DF015", source)) is expected  # the screen says what the rule finds


def test_df016_df014_df015_skip_classes_proven_not_modules(tmp_path):
    (tmp_path / "base.py").write_text("class Pipeline:\n    pass\n")
    source = (
        "import torch\nfrom .base import Pipeline\n\n\nclass Generate(Pipeline):\n"
        "    def __init__(self):\n        self.mean = torch.zeros(3)\n        self.layers = [torch.nn.Linear(3, 3)]\n\n"
        "    def noise(self, n):\n        return torch.randn(n)\n"
    )
    path = tmp_path / "generate.py"
    facts = analyse_file(source, str(path))
    assert [code for code in ("DF014", "DF015", "DF016") if any(r.CODE == code and r.may_apply(source, facts) for r in ALL_RULES)] == []


@pytest.mark.parametrize("source, expected", [
    ("import torch\n\n\nclass Trainer:\n    def __init__(self, model, device):\n        self.model = model.to(device)\n", True),
    # moved in place by a method of its own: that method's later loops feed it on the device
    (("import torch\n\n\nclass Trainer:\n    def __init__(self, model):\n        self.model = model\n\n"
      "    def place(self, device):\n        self.model = self.model.to(device)\n"), True),
    # a copy of the attribute moved into another name in a method: nothing the object keeps moved
    (("import torch\n\n\nclass Trainer:\n    def __init__(self, model):\n        self.model = model\n\n"
      "    def place(self, device):\n        self.other = self.model.to(device)\n"), False),
    # moved in place by the code holding the object
    ("import torch\n\n\nclass Agent:\n    def __init__(self, q):\n        self.q = q\n\n\nagent = Agent(q)\nagent.q.to(device)\n", True),
    # a copy of the attribute moved: the object's model stays where it was
    ("import torch\n\n\nclass Agent:\n    def __init__(self, q):\n        self.q = q\n\n\nagent = Agent(q)\nq2 = agent.q.to(device)\n", False),
    # kept as given, and a construction gives a moved model
    ("import torch\n\n\nclass Evaluator:\n    def __init__(self, model):\n        self.model = model\n\n\nmodel = Net().to(device)\nEvaluator(model)\n", True),
    ("import torch\n\n\nclass Evaluator:\n    def __init__(self, model):\n        self.model = model\n\n\nmodel = Net()\nEvaluator(model)\n", False),
])
def test_df020_needs_a_model_attribute_moved_in_place(source, expected):
    assert ("DF020" in rules_that_may_apply(source)) is expected


@pytest.mark.parametrize("loop, expected", [
    ("for x, y in train_loader:\n    model(x)\n", False),  # a name proves nothing; nothing builds a DataLoader
    ("def make():\n    return DataLoader(ds)\ntrain_loader = make()\nfor x, y in train_loader:\n    model(x)\n", True),
    ("for x, y in enumerate(tqdm(batches)):\n    model(x)\n", False),
    ("batches = DataLoader(ds)\nfor x, y in batches:\n    model(x)\n", True),
    ("from torch.utils.data import DataLoader as DL\nbatches = DL(ds)\nfor x, y in batches:\n    model(x)\n", True),
    ("for x, y in zip(a, b):\n    model(x)\n", False),
    ("for i, (x, y) in enumerate(DataLoader(ds, batch_size=4)):\n    model(x)\n", True),  # built in place
])
def test_df002_df010_need_a_loop_over_what_may_be_a_dataloader(loop, expected):
    source = f"import torch\nfrom torch.utils.data import DataLoader\nmodel = Net().to(device)\n{loop}"
    assert {"DF002", "DF010"} <= set(rules_that_may_apply(source)) if expected else not {"DF002", "DF010"} & set(rules_that_may_apply(source))


@pytest.mark.parametrize("source, expected", [
    ("import torch\ninputs = tokenizer(text, return_tensors='pt')\nmodel = Net().to(torch.device(name))\nmodel(**inputs)\n", True),
    ("import torch\ninputs = tokenizer(text, return_tensors='pt')\nids = inputs.input_ids.to(torch.device(name))\n", False),
    ("import torch\n\n\ndef encode(text):\n    inputs = tokenizer(text, return_tensors='pt')\n    return model(**inputs)\n\n\n"
     "model = Net().to(torch.device(name))\n", True),  # a function may read the model the top level moves
    ("import torch\n\n\ndef encode(text):\n    inputs = tokenizer(text, return_tensors='pt')\n    model = Net()\n    return model(**inputs)\n\n\n"
     "model = Net().to(torch.device(name))\n", False),  # the function's own model is not the moved one
    ("import torch\ninputs = tokenizer(text, return_tensors='pt')\nmodel = Net().to(torch.device(name))\nout = model.generate(**inputs)\n", True),
    ("import torch\nenc = tokenizer(text, return_tensors='pt')\nmodel = Net().to(torch.device(name))\nout = model(enc['input_ids'])\n", True),
    ("import torch\nids = tokenizer(text, return_tensors='pt').input_ids\nmodel = Net().to(torch.device(name))\nout = model.generate(ids)\n", True),
    ("import torch\nenc = tokenizer(text, return_tensors='pt')\nmodel = Net().to(torch.device(name))\nout = model(enc[0])\n", False),  # no field
    ("import torch\nenc = tokenizer(text, return_tensors='pt')\nmodel = Net().to(torch.device(name))\nout = model(enc.word_ids)\n", False),
])
def test_df004_encoded_inputs_need_a_spread_encoding_or_its_fields(source, expected):
    assert ("DF004" in rules_that_may_apply(source)) is expected


def test_df004_reads_a_name_as_it_is_where_it_meets():
    """`emb` held a factory's tensor earlier, but `torch.cat` made a new one: no fresh tensor meets."""
    source = (
        "import torch\n\n\ndef embed(w: torch.Tensor, dim: int):\n"
        "    emb = torch.exp(torch.arange(dim) * -1.0)\n"
        "    emb = torch.cat([torch.sin(emb), torch.cos(emb)], dim=0)\n"
        "    return torch.nn.functional.pad(emb, (0, 1))\n"
    )
    assert "DF004" not in rules_that_may_apply(source)


# diffusers' sine-cosine helpers, written anew as an executed fixture (its program only calls them)
SINCOS_HELPERS = (REPO / "fixtures/DF004-constructor-device/class-token-beside-a-grid-embedding-helper/before.py").read_text()


def test_df004_a_helper_the_screen_may_take_for_a_cpu_maker_still_gives_a_reference():
    """diffusers' `get_2d_sincos_pos_embed`: the helper's numpy branch makes the screen take it for
    a maker of CPU tensors, but the rule knows its torch branch keeps the grid's device, so
    `pos_embed` is a reference the zeros meet. The screen once ruled the name out on that guess,
    and found the file only when some other function met a factory."""
    assert "DF004" in rules_that_may_apply(SINCOS_HELPERS)
    assert rule_findings("DF004", SINCOS_HELPERS) == ["`torch.zeros(...)` is created on the CPU but meets `pos_embed`, which may be on a GPU"]


@pytest.mark.parametrize("body, expected", [
    ("model = Net()\nout = model(x.to(device))\n", True),
    ("model = Net()\nmodel = wrap(model)\nout = model(x.to(device))\n", False),  # bound twice: DF003 leaves it
    ("for model in models:\n    out = model(x.to(device))\n", False),
    ("model = Net()\nout = forward(model, x.to(device))\n", False),  # never called itself
    # a global model called with device data by a function of the file
    ("model = Net()\n\n\ndef predict(x):\n    return model(x.to(device))\n", True),
])
def test_df003_needs_a_model_built_once_in_a_scope_and_called(body, expected):
    source = f"import torch\n\n\nclass Net(torch.nn.Module):\n    pass\n\n\n{body}"
    assert ("DF003" in rules_that_may_apply(source)) is expected


def library_rules(source: str) -> list[str]:
    facts = analyse_file(source, "pkg/module.py")
    return [rule.CODE for rule in ALL_RULES if rule.may_apply(source, facts)]


@pytest.mark.parametrize("source, expected", [
    # a library's load that feeds `load_state_dict`, directly or through a name
    ("import torch\n\n\ndef restore(model, path):\n    model.load_state_dict(torch.load(path))\n", True),
    ("import torch\n\n\ndef restore(model, path):\n    state = torch.load(path)\n    model.load_state_dict(state)\n", True),
    # a library's load of data, beside an unrelated `load_state_dict`: where it goes is the caller's choice
    ("import torch\n\n\ndef data(path):\n    return torch.load(path)\n\n\ndef copy(a, b):\n    a.load_state_dict(b.state_dict())\n", False),
    # already placed, or not a checkpoint load at all
    ("import torch\n\n\ndef restore(model, path):\n    model.load_state_dict(torch.load(path, map_location='cpu'))\n", False),
    ("import json\n\n\ndef restore(model, f):\n    model.load_state_dict(json.load(f))\n", False),
])
def test_df007_in_a_library_needs_a_load_into_a_state_dict(source, expected):
    assert ("DF007" in library_rules(source)) is expected


@pytest.mark.parametrize("source, expected", [
    ("import torch\nmask = torch.cuda.ByteTensor(values)\n", True),
    ("import torch\nmask = torch.ByteTensor(values, device=device)\n", True),
    ("import torch\nTensor = torch.cuda.FloatTensor if cuda else torch.FloatTensor\n", True),
    ("import torch\nfrom torch import nn\nalpha = nn.Parameter(torch.ones(3)).cuda()\n", True),
    # CPU-only legacy constructors, type checks and annotations are not device bugs
    ("import torch\nmask = torch.ByteTensor(values)\n", False),
    ("import torch\nok = isinstance(x, torch.cuda.FloatTensor)\n", False),
    ("import torch\nx = torch.Tensor(3)\n", False),
])
def test_df009_needs_a_cuda_only_constructor_or_a_device_given_to_a_cpu_one(source, expected):
    assert ("DF009" in rules_that_may_apply(source)) is expected


@pytest.mark.parametrize("call, expected", [
    ("F.cross_entropy(logits, y, weight=class_weights)", True),
    ("F.binary_cross_entropy_with_logits(logits, y, pos_weight=self.pos_weight)", True),
    ("F.cross_entropy(logits, y)", False),
    ("F.cross_entropy(logits, y, weight=torch.ones(3))", False),  # a fresh literal: DF004's
    ("nn.CrossEntropyLoss(weight=class_weights)(logits, y)", False),  # a module: DF003's
])
def test_df011_needs_a_functional_loss_given_a_named_weight(call, expected):
    source = f"import torch\nfrom torch import nn\nimport torch.nn.functional as F\nloss = {call}\n"
    assert ("DF011" in rules_that_may_apply(source)) is expected


@pytest.mark.parametrize("source, expected", [
    ("import copy\nmodel = Net()\nema = copy.deepcopy(model)\nmodel.to(device)\n", True),
    ("import copy\nema = copy.deepcopy(model)\nmodel = Net().to(device)\n", True),
    ("import copy\nmodel = Net()\nema = copy.deepcopy(model)\nx = x.to(device)\n", False),  # the model never moves
    ("import copy\nmodel = Net()\nema = copy.deepcopy(model)\nmodel.to(torch.float16)\n", True),  # the screen keeps casts
])
def test_df017_needs_a_copy_of_a_name_that_moves(source, expected):
    assert ("DF017" in rules_that_may_apply("import torch\n" + source)) is expected


@pytest.mark.parametrize("construction, expected", [
    ("nn.BatchNorm1d(16)(x)", True),
    ("Block(16)(x)", True),  # a Module class of the file
    ("nn.ReLU()(x)", False),  # no parameters
    ("nn.MSELoss()(x, x)", False),
    ("Helper(16)(x)", False),  # a plain class of the file
    ("make_layer(16)(x)", False),  # a function's result: not a construction devfix can resolve
])
def test_df018_needs_a_module_class_with_state_built_and_called_in_a_method(construction, expected):
    source = (
        "import torch\nfrom torch import nn\n\n\nclass Helper:\n    def __init__(self, n):\n        self.n = n\n\n"
        "    def __call__(self, x):\n        return x\n\n\n"
        "def make_layer(n):\n    return nn.Linear(n, n)\n\n\n"
        "class Block(nn.Module):\n    def __init__(self, n):\n        super().__init__()\n        self.fc = nn.Linear(n, n)\n\n\n"
        f"class Net(nn.Module):\n    def forward(self, x):\n        return {construction}\n"
    )
    assert ("DF018" in rules_that_may_apply(source)) is expected


@pytest.mark.parametrize("signature, expected", [
    ("batches: DataLoader", True),
    ("batches: torch.utils.data.DataLoader", True),
    ("batches: list", False),
    ("batches: 'List[int]'", False),
])
def test_df002_df010_need_an_annotation_that_names_a_dataloader(signature, expected):
    source = f"import torch\nfrom torch.utils.data import DataLoader\n\n\ndef run(model, {signature}):\n    for x in batches:\n        model(x)\n"
    found = {"DF002", "DF010"} & set(rules_that_may_apply(source))
    assert found == ({"DF002", "DF010"} if expected else set())


def test_df020_needs_a_move_not_a_copy_to_the_cpu():
    source = "import torch\n\n\nclass Scheduler:\n    def __init__(self, sigmas):\n        self.sigmas = sigmas.to('cpu')\n"
    assert "DF020" not in rules_that_may_apply(source)


@pytest.mark.parametrize("head, expected", [
    ("class Scheduler:", True),
    ("class Scheduler(object):", True),
    ("class Scheduler(nn.Module):", False),  # a Module's tables are buffers: the module rules' business
    ("class Scheduler(SomeBase):", False),  # a base devfix cannot resolve: DF012 does not guess
])
def test_df012_needs_a_class_proven_plain(head, expected):
    source = (
        f"import torch\nfrom torch import nn\nfrom elsewhere import SomeBase\n\n\n{head}\n    def __init__(self):\n"
        "        self.betas = torch.linspace(0, 1, 5)\n\n    def get(self, t):\n        return self.betas[t]\n"
    )
    assert ("DF012" in rules_that_may_apply(source)) is expected


def test_df012_leaves_a_table_the_class_places_itself():
    source = (
        "import torch\n\n\nclass Scheduler:\n    def __init__(self, device):\n"
        "        self.betas = torch.linspace(0, 1, 5, device=device)\n\n    def get(self, t):\n        return self.betas[t]\n"
    )
    assert "DF012" not in rules_that_may_apply(source)


@pytest.mark.parametrize("methods, expected", [
    ("    def forward(self, x):\n        return x * self.mask\n", True),
    ("    def forward(self, x):\n        return x\n", False),  # kept but never used: nothing to move
    ("    def reset(self, n):\n        self.mask = torch.ones(n)\n\n    def forward(self, x):\n        return x * self.mask\n",
     False),  # re-created in another method: a cache the rule leaves alone
])
def test_df014_needs_an_attribute_stored_once_and_used_by_another_method(methods, expected):
    source = (
        "import torch\nfrom torch import nn\n\n\nclass Net(nn.Module):\n    def __init__(self, n):\n"
        f"        super().__init__()\n        self.mask = torch.ones(n)\n\n{methods}"
    )
    assert ("DF014" in rules_that_may_apply(source)) is expected


@pytest.mark.parametrize("construction, expected", [
    ("Net()", True),
    ("nn.Linear(3, 3)", True),
    ("Helper()", False),  # a plain class of the file
    ("nn.ReLU()", False),  # no state to move
    ("make_model()", True),  # a function of the file that hands back a Module it built (`analysis.returned_modules`)
    ("make_helper()", False),  # one that hands back a plain object
])
def test_df003_needs_a_module_class_with_state_built_once_and_called(construction, expected):
    source = (
        "import torch\nfrom torch import nn\n\n\nclass Net(nn.Module):\n    pass\n\n\nclass Helper:\n    pass\n\n\n"
        "def make_model():\n    return Net()\n\n\ndef make_helper():\n    return Helper()\n\n\n"
        f"def main(x):\n    model = {construction}\n    return model(x.to('cuda:1'))\n"
    )
    assert ("DF003" in rules_that_may_apply(source)) is expected


@pytest.mark.parametrize("annotation, expected", [
    ("torch.Tensor", True),
    ("Tensor", True),
    ("float", False),  # `init_values * torch.ones(dim)`: a number scales the new tensor
    ("Optional[float]", False),
])
def test_df004_counts_a_parameter_as_a_tensor_only_when_annotated_as_one(annotation, expected):
    source = (
        "from typing import Optional\nimport torch\nfrom torch import Tensor\n\n\n"
        f"def layer_scale(init_values: {annotation}, dim: int):\n    return init_values * torch.ones(dim)\n"
    )
    assert ("DF004" in rules_that_may_apply(source)) is expected


@pytest.mark.parametrize("code, expected", [
    ("x = torch.arange(2, device=scores.device)\n", False),  # aligned with a value: placed nowhere
    ("y = w.to(logits.device, non_blocking=True)\n", False),
    ("z = torch.ones(2, device=self.device)\n", True),  # a stored device
    ("model.to(device)\n", True),
    ("q = torch.zeros(1, device=x.device)\nm.cuda()\n", True),
    ("args = parser.parse_args()\nmodel.to(args.device)\n", True),  # the device the user asked for
    ("opt = p.parse_known_args()[0]\nx = torch.zeros(1, device=opt.device)\n", True),
    ("parser.add_argument('--device', default='cuda')\nmain(parser.parse_args())\nmodel.to(args.device)\n", True),
    ("parser.add_argument('--devices', type=int)\nmodel.to(args.device)\n", False),
    ("floatvec = tensor1d.to(torch.float32)\n", False),  # a cast (LLMs-from-scratch, appendix A)
    ("ids = ids.to(dtype=torch.long)\nx = x.to( torch.bfloat16 )\n", False),
    ("x = x.to(torch.float16)\nmodel.to(device)\n", True),
])
def test_aligning_a_value_with_another_is_not_a_placement(code, expected):
    assert places_devices(code) is expected


def test_df004_in_a_program_needs_a_placement_here_or_in_a_local_module_it_imports(tmp_path):
    program = (
        "import torch\nfrom helpers import build\n\nmodel = build()\nscores = model(torch.randn(4, 3))\n"
        "offsets = torch.arange(2) * 0.5\nprint(scores + offsets)\n"
    )
    (tmp_path / "helpers.py").write_text("from torch import nn\n\n\ndef build():\n    return nn.Linear(3, 2)\n")
    path = str(tmp_path / "run.py")
    assert "DF004" not in [rule.CODE for rule in ALL_RULES if rule.may_apply(program, analyse_file(program, path))]
    (tmp_path / "helpers.py").write_text("from torch import nn\n\n\ndef build():\n    return nn.Linear(3, 2).cuda()\n")
    assert "DF004" in [rule.CODE for rule in ALL_RULES if rule.may_apply(program, analyse_file(program, path))]


@pytest.mark.parametrize("signature, stored, expected", [
    ("dim: int", "dim", False),  # a number, as its annotation says and nothing rebinds
    ("scale: torch.Tensor", "scale", True),
    ("table", "table", False),  # unannotated, unknown: only a proven tensor becomes a buffer
    ("w", "w * 2", False),  # no tensor evidence for `w` in __init__
    ("w", "w * 2\n        self.rows = w.size(0)", True),  # `w.size(0)`: tensor evidence for `w`
    ("w", "w * 2\n        self.both = torch.cat([w, w])", True),  # given to a torch op inside a list
    # hyper-parameters: `nn.Linear(dim, dim)` is no tensor evidence for `dim`, nor for what is computed from it
    ("dim, heads", "(dim // heads) ** -0.5\n        self.proj = nn.Linear(dim, dim)", False),
    ("", "torch.finfo(torch.float32).tiny", False),  # a number read from torch
])
def test_df014_reads_a_parameter_of_init_by_its_annotation(signature, stored, expected):
    source = (
        "import torch\nfrom torch import nn\n\n\nclass Net(nn.Module):\n"
        f"    def __init__(self{', ' if signature else ''}{signature}):\n        super().__init__()\n        self.kept = {stored}\n\n"
        "    def forward(self, x):\n        return x * self.kept\n"
    )
    assert ("DF014" in rules_that_may_apply(source)) is expected


def test_df003_needs_device_data_in_the_scope_that_builds_and_calls():
    source = (
        "import torch\nfrom torch import nn\n\n\nclass Net(nn.Module):\n    pass\n\n\n"
        "def predict(x):\n    model = Net()\n    return model(x)\n\n\n"
        "def place(y):\n    return y.to('cuda:1')\n"
    )
    assert "DF003" not in rules_that_may_apply(source)


@pytest.mark.parametrize("source, expected", [
    # a table of the top level, built by torch, handed to a function of the file (in a program that places its index)
    ("import torch\nbetas = torch.linspace(0, 1, 5)\n\n\ndef extract(a, t):\n    return a[t]\n\n\nt = torch.arange(2).cuda()\nout = extract(betas.sqrt(), t)\n", True),
    # the same program on the CPU from start to end: no index is on a device
    ("import torch\nbetas = torch.linspace(0, 1, 5)\n\n\ndef extract(a, t):\n    return a[t]\n\n\nt = torch.arange(2)\nout = extract(betas.sqrt(), t)\n", False),
    # placed where it is built: aligned already
    ("import torch\nbetas = torch.linspace(0, 1, 5, device=d)\n\n\ndef extract(a, t):\n    return a[t]\n\n\nout = extract(betas, t)\n", False),
    # bound twice: which one reaches the call?
    ("import torch\nbetas = torch.linspace(0, 1, 5)\nbetas = load()\n\n\ndef extract(a, t):\n    return a[t]\n\n\nout = extract(betas, t)\n", False),
])
def test_df012_top_level_tables_handed_to_a_helper(source, expected):
    assert ("DF012" in rules_that_may_apply(source)) is expected


@pytest.mark.parametrize("source, expected", [
    ("import torch\n\n\ndef build(n, device='cuda'):\n    return torch.zeros(n, device=device)\n\n\nbuild(3)\n", True),
    # a method's default: DF001 leaves defaults of methods alone
    ("import torch\n\n\nclass A:\n    def build(self, n, device='cpu'):\n        return torch.zeros(n, device=device)\n", False),
])
def test_df001_device_defaults_of_top_level_functions(source, expected):
    assert ("DF001" in rules_that_may_apply(source)) is expected


@pytest.mark.parametrize("source, expected", [
    ("import torch\nm = Net()\nopt = torch.optim.Adam(m.parameters())\nopt.load_state_dict(s)\nm.to(d)\n", True),
    # the standard order
    ("import torch\nm = Net()\nm.to(d)\nopt = torch.optim.Adam(m.parameters())\nopt.load_state_dict(s)\n", False),
    # an optimizer devfix cannot see built: its name says nothing
    ("import torch\nm = Net()\noptimizer = build(m)\noptimizer.load_state_dict(s)\nm.to(d)\n", False),
])
def test_df022_needs_a_torch_optimizer_loaded_before_a_move(source, expected):
    assert ("DF022" in rules_that_may_apply(source)) is expected


@pytest.mark.parametrize("source, expected", [
    ("import torch\nfrom torch.utils.data import DataLoader\nloader = DataLoader(ds)\nx, y = next(iter(loader))\nout = model(x)\n", True),
    ("import torch\nfrom torch.utils.data import DataLoader\nx, y = next(iter(DataLoader(ds)))\nout = model(x)\n", True),
    ("import torch\nx, y = next(iter(pairs))\nout = model(x)\n", False),  # not a loader
])
def test_df002_batches_taken_with_next_iter(source, expected):
    assert ("DF002" in rules_that_may_apply(source)) is expected


@pytest.mark.parametrize("fed, expected", [
    ("ids", True),
    ("ids[0]", True),  # an element of a helper's CPU tensor
    ("ids.to(device)", False),
])
def test_df004_a_helpers_cpu_tensor_fed_to_a_moved_model(fed, expected):
    source = (
        "import torch\n\n\ndef encode(words):\n    return torch.tensor([len(w) for w in words])\n\n\n"
        f"model = Net().to(device)\nids = encode(['a', 'b'])\nout = model({fed})\n"
    )
    assert ("DF004" in rules_that_may_apply(source)) is expected


@pytest.mark.parametrize("source, expected", [
    ("import torch\nfrom torch.utils.data import DataLoader\nloader = DataLoader(ds)\nfor (a,), (b,) in zip(pairs, loader):\n    out = model(b)\n", True),  # the second one is a loader
    ("import torch\nfor a, b in zip(pairs, others):\n    out = model(b)\n", False),
])
def test_df002_every_zipped_loader_counts(source, expected):
    assert ("DF002" in rules_that_may_apply(source)) is expected


@pytest.mark.parametrize("call, expected", [
    ("adapt(model, DataLoader(ds))", True),
    ("adapt(model, [x])", False),  # no DataLoader built in the file
])
def test_df002_a_parameter_its_callers_give_a_loader(call, expected):
    built = "batches = DataLoader(ds)\n" if expected else ""
    source = (
        "import torch\nfrom torch.utils.data import DataLoader\n\n\ndef adapt(model, source):\n"
        f"    for x in source:\n        model(x)\n\n\n{built}{call}\n"
    )
    assert ("DF002" in rules_that_may_apply(source)) is expected


@pytest.mark.parametrize("annotation, passed, expected", [
    ("", "DataLoader(data)", True),
    ("", "[data]", False),  # the caller beside it gives a list
    (": list", "DataLoader(data)", False),
])
def test_df010_a_parameter_of_a_function_only_other_files_call(tmp_path, annotation, passed, expected):
    """Never called in its file: a loader when the files beside it pass one (`analysis.importers`)."""
    source = f"import torch\n\n\ndef evaluate(model, source{annotation}):\n    for x in source:\n        model(x)\n"
    (tmp_path / "helpers.py").write_text(source)
    (tmp_path / "train.py").write_text(f"from torch.utils.data import DataLoader\nfrom helpers import evaluate\nevaluate(net, {passed})\n")
    facts = analyse_file(source, str(tmp_path / "helpers.py"))
    assert any(rule.CODE == "DF010" and rule.may_apply(source, facts) for rule in ALL_RULES) is expected


@pytest.mark.parametrize("value, expected", [
    ("next(self.parameters()).device", True),
    ("next(iter(self.parameters())).device", True),
    ("device", False),  # given to the constructor
])
def test_df023_needs_a_device_read_from_the_parameters_in_init(value, expected):
    source = (
        "import torch\nfrom torch import nn\n\n\nclass A(nn.Module):\n    def __init__(self, device=None):\n"
        f"        super().__init__()\n        self.fc = nn.Linear(2, 2)\n        self.device = {value}\n"
    )
    assert ("DF023" in rules_that_may_apply(source)) is expected


@pytest.mark.parametrize("body, expected", [
    ("torch.cuda.synchronize()", True),
    ("print(torch.cuda.get_device_name(0))", True),
    ("if torch.cuda.is_available():\n        torch.cuda.synchronize()", False),
    ("torch.cuda.empty_cache()", False),  # answers on any machine
])
def test_df024_needs_a_cuda_only_call_nothing_checks(body, expected):
    source = f"import torch\n\n\ndef run():\n    {body}\n"
    assert ("DF024" in rules_that_may_apply(source)) is expected


@pytest.mark.parametrize("main, expected", [
    ("", False),  # a library module: a call whose value is used may be meant for CUDA only (diffusers' offloading streams)
    ("\n\nif __name__ == '__main__':\n    run()\n", True),  # a program: reported without a fix
])
def test_df024_outside_a_program_needs_a_call_it_can_guard(main, expected):
    source = f"import torch\n\n\ndef run():\n    stream = torch.cuda.current_stream()\n    return stream\n{main}"
    assert ("DF024" in rules_that_may_apply(source)) is expected
    assert bool(rule_findings("DF024", source)) is expected


@pytest.mark.parametrize("source", [
    # a helper's CPU table added to a layer's output: the layer's input names the device
    "import torch\nfrom torch import nn\n\n\ndef table(n):\n    return torch.zeros(n, 4)\n\n\nclass Net(nn.Module):\n"
    "    def __init__(self):\n        super().__init__()\n        self.emb = nn.Embedding(10, 4)\n\n"
    "    def forward(self, ids):\n        return self.emb(ids) + table(ids.size(1))\n",
    # the statement that rebinds the indices reads the ones before it, found on the device
    "import torch\n\n\ndef extend(ids):\n    _, last = torch.where(ids == 7)\n    last = torch.cat(\n        (last, torch.tensor([0]))\n    )\n    return last\n",
])
def test_df004_screen_and_rule_agree_on_layer_outputs_and_multiline_rebinding(source):
    assert "DF004" in rules_that_may_apply(source)
    assert rule_findings("DF004", source)


@pytest.mark.parametrize("method, expected", [
    ("    def forward(self, x):\n        return self.emb(torch.arange(x.size(1)))\n", False),  # a Module's `self` is no tensor
    ("    def forward(self, x: torch.Tensor):\n        self = x\n        return self + torch.ones(3)\n", True),  # rebound
    ("    @staticmethod\n    def shift(self: torch.Tensor):\n        return self + torch.ones(3)\n", True),  # not a receiver
])
def test_df004_knows_a_modules_own_receiver_is_no_tensor_unless_rebound(method, expected):
    """The screen answers for `self` of a Module's method without the file's value analysis (the
    kind it would give: the class's), but not where the method binds the name again."""
    source = "import torch\nfrom torch import nn\n\n\nclass Head(nn.Module):\n" + method
    facts = analyse_file(source, "heads.py")
    assert facts.has_signal("factory-meets-tensor") is expected
    assert "values" not in facts.__dict__ or expected


def test_df004_follows_a_metric_of_another_file_that_compares_its_parameters(tmp_path):
    """`iou(probabilities, truth)` of `scoring.py` compares what it is given: a fresh `truth` may
    meet the prediction there. A function of another file that only stacks its argument does not."""
    (tmp_path / "scoring.py").write_text(
        "import torch\n\n\ndef iou(p, t):\n    return ((p > 0.5) & t).sum()\n\n\ndef stacked(a, b):\n    return torch.stack(a), len(b)\n")
    program = "import torch\nfrom scoring import {name}\n\nmodel = torch.nn.Linear(2, 2).to('cuda')\nout = model(x)\nprint({name}(out, torch.ones(2) > 0))\n"
    for name, expected in (("iou", True), ("stacked", False)):
        source = program.format(name=name)
        assert analyse_file(source, str(tmp_path / "run.py")).has_signal("factory-meets-tensor") is expected


@pytest.mark.parametrize("assignment, read, expected", [
    ("self.prior = Normal(torch.zeros(2), torch.ones(2))", "self.prior.log_prob(x)", True),
    ("self.prior = Normal(torch.zeros(2), torch.ones(2))", "x", False),  # never read by another method
    ("self.prior = nn.Linear(2, 2)", "self.prior(x)", False),  # no distribution
])
def test_df027_needs_a_distribution_that_init_stores_and_another_method_reads(assignment, read, expected):
    source = (
        "import torch\nfrom torch import nn\nfrom torch.distributions import Normal\n\n\n"
        f"class Model(nn.Module):\n    def __init__(self):\n        super().__init__()\n        {assignment}\n\n"
        f"    def forward(self, x):\n        return {read}\n"
    )
    assert ("DF027" in rules_that_may_apply(source)) is expected


@pytest.mark.parametrize("hands_it_on, expected", [
    ("    train(model, device, x)\n", True),  # the rule follows the model into `train`, which places its data
    ("    print(device, x)\n", False),  # nothing places anything where the model is called
])
def test_df003_starts_in_a_function_that_hands_its_model_to_one_that_places(hands_it_on, expected):
    source = (
        "import torch\nfrom torch import nn\n\n\nclass Net(nn.Module):\n    pass\n\n\n"
        "def train(model, device, x):\n    return model(x.to(device))\n\n\n"
        "def main(device, x):\n    model = Net()\n    model(x)\n" + hands_it_on
    )
    assert ("DF003" in rules_that_may_apply(source)) is expected


@pytest.mark.parametrize("program, expected", [
    ("model = Cell()\nprint(model(torch.ones(2, 4)))\n", True),
    ("model = Cell().to(DEVICE)\nprint(model(torch.ones(2, 4)))\n", False),  # placed: `.to(DEVICE)` in forward is right
    ("model = Cell()\nmodel.cuda()\nprint(model(torch.ones(2, 4)))\n", False),
    ("model = Cell()\ntrain(model)\n", False),  # handed on: whoever gets it may move it
])
def test_df028_needs_every_instance_kept_on_the_host(program, expected):
    source = (
        "import torch\nfrom torch import nn\n\nDEVICE = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n\n\n"
        "class Cell(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.lin = nn.Linear(4, 4)\n\n"
        "    def forward(self, x):\n        return self.lin(x) + torch.zeros(4).to(DEVICE)\n\n\n" + program
    )
    assert ("DF028" in rules_that_may_apply(source)) is expected


LISTED = "import torch\n\n\ndef make(x, y):\n    return [(x[i:i + 2], y[i:i + 2]) for i in range(0, len(x), 2)]\n\n\n"


@pytest.mark.parametrize("loop, expected", [
    ("for a, b in make(xs, ys):\n    print(a, b)\n", True),
    ("batches = make(xs, ys)\nfor a, b in batches:\n    print(a, b)\n", True),
    ("for a, b in [(xs, ys), (xs * 2, ys)]:\n    print(a, b)\n", True),
    ("for a in make(xs, ys):\n    print(a)\n", False),  # the rows are not unpacked: no batch names
    ("for a, b in [('conv', 'stem'), ('fc', 'head')]:\n    print(a, b)\n", False),  # a table of names
    ("for a, b in zip(xs, ys):\n    print(a, b)\n", False),
])
def test_df002_may_loop_over_a_list_of_batches_the_file_builds(loop, expected):
    assert ("DF002" in rules_that_may_apply(LISTED + loop)) is expected


@pytest.mark.parametrize("getitem, loader, expected", [
    ("return self.x[i].to(device)", "DataLoader(Points(), num_workers=2)", True),
    ("return self.x[i].to(device)", "DataLoader(Points(), num_workers=0)", False),  # no workers
    ("return self.x[i].to(device)", "DataLoader(Points(), num_workers=2, multiprocessing_context='spawn')", False),
    ("return self.x[i]", "DataLoader(Points(), num_workers=2)", False),  # nothing placed in the workers
])
def test_df029_needs_a_getitem_that_places_and_a_loader_with_workers(getitem, loader, expected):
    source = (
        "import torch\nfrom torch.utils.data import DataLoader, Dataset\n\ndevice = 'cuda'\n\n\n"
        f"class Points(Dataset):\n    def __getitem__(self, i):\n        {getitem}\n\n\nloader = {loader}\n"
    )
    assert ("DF029" in rules_that_may_apply(source)) is expected


@pytest.mark.parametrize("move, expected", [
    ("model.to(device)", True),
    ("model = model.cuda()", True),
    ("model.to(unet.dtype)", False),  # diffusers' ControlNet-XS: a cast, the model stays where it was
    ("model.to(torch.float16)", False),
])
def test_df026_needs_a_layer_given_after_a_move_to_a_device(move, expected):
    source = f"import torch\nfrom torch import nn\n\n\ndef build(model, unet, device):\n    {move}\n    model.fc = nn.Linear(4, 2)\n    return model\n"
    assert ("DF026" in rules_that_may_apply(source)) is expected
    assert bool(rule_findings("DF026", source)) is expected
