"""DF011 writes `.to()` only on a weight the value analysis proves a tensor: a weight that may be
`None` (a flag's choice, a helper's default) is reported without a fix."""

from __future__ import annotations

from devfix.codemods import LossWeightDevice
from tests.conftest import run_devfix

HEAD = (
    "import sys\nimport torch\nimport torch.nn.functional as F\nfrom torch import nn\n\n"
    "device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"
    "model = nn.Linear(5, 3).to(device)\n"
    "x, y = torch.randn(8, 5).to(device), torch.randint(0, 3, (8,)).to(device)\n"
    "out = model(x)\n"
)


def test_a_weight_that_may_be_none_is_reported_without_a_fix():
    source = HEAD + (
        "w = torch.tensor([1.0, 2.0, 3.0]) if '--balanced' in sys.argv else None\n"
        "print(F.cross_entropy(out, y, weight=w))\n"
    )
    result = run_devfix(source, rules=[LossWeightDevice])
    assert result.fixed.decode() == source
    assert [(finding.code, finding.fix_safety) for finding in result.findings] == [("DF011", None)]


def test_a_helpers_weight_defaulting_to_none_is_reported_without_a_fix():
    source = HEAD + (
        "def loss_fn(logits, target, weight=None):\n"
        "    return F.cross_entropy(logits, target, weight=weight)\n\n\n"
        "print(loss_fn(out, y))\n"
        "print(loss_fn(out, y, weight=torch.tensor([1.0, 2.0, 3.0])))\n"
    )
    result = run_devfix(source, rules=[LossWeightDevice])
    assert result.fixed.decode() == source
    assert [finding.code for finding in result.findings] == ["DF011"]


def test_a_helpers_weight_every_call_gives_a_tensor_is_moved():
    source = HEAD + (
        "def loss_fn(logits, target, weight=None):\n"
        "    return F.cross_entropy(logits, target, weight=weight)\n\n\n"
        "w = torch.tensor([1.0, 2.0, 3.0])\n"
        "print(loss_fn(out, y, weight=w))\n"
    )
    fixed = run_devfix(source, rules=[LossWeightDevice]).fixed.decode()
    assert "weight=weight.to(logits.device))\n" in fixed


def test_a_class_constant_tensor_is_moved_and_one_stored_again_is_not():
    body = (
        "class Config:\n    weights = torch.tensor([0.3, 0.3, 0.4])\n\n\n"
        "print(F.cross_entropy(out, y, weight=Config.weights))\n"
    )
    assert "weight=Config.weights.to(" in run_devfix(HEAD + body, rules=[LossWeightDevice]).fixed.decode()
    stored = HEAD + body.replace("\n\n\nprint", "\n\n\nif '--plain' in sys.argv:\n    Config.weights = None\nprint")
    assert run_devfix(stored, rules=[LossWeightDevice]).fixed.decode() == stored


WEIGHTED_NET = (
    "class Net(nn.Module):\n"
    "    def __init__(self):\n"
    "        super().__init__()\n"
    "        self.fc = nn.Linear(5, 3)\n"
    "        self.class_weights = torch.tensor([1.0, 2.0, 0.5])\n\n"
    "    def forward(self, x):\n"
    "        return self.fc(x)\n\n\n"
    "net = Net().to(device)\n"
)


def test_a_weight_for_a_called_input_follows_a_target_placed_on_the_device():
    """`weight.to(net(x).device)` would run the model twice: the target, on the input's device
    for the loss to run at all, gives it."""
    source = HEAD + WEIGHTED_NET + "print(F.cross_entropy(net(x), y, weight=net.class_weights))\n"
    fixed = run_devfix(source, rules=[LossWeightDevice]).fixed.decode()
    assert "F.cross_entropy(net(x), y, weight=net.class_weights.to(y.device))" in fixed


def test_a_weight_for_a_called_input_and_a_host_target_is_left_alone():
    source = HEAD + WEIGHTED_NET + "labels = torch.randint(0, 3, (8,))\nprint(F.cross_entropy(net(x), labels, weight=net.class_weights))\n"
    result = run_devfix(source, rules=[LossWeightDevice])
    assert result.fixed.decode() == source and not result.findings


def test_a_weight_the_objects_init_moved_is_left_alone():
    """`self.weights = (...).to(device)`, the class's one store: already on the device."""
    source = HEAD + (
        "class Trainer:\n"
        "    def __init__(self, model, counts):\n"
        "        self.model = model.to(device)\n"
        "        self.weights = (counts.sum() / counts).to(device)\n\n"
        "    def loss(self, x, y):\n"
        "        logits = self.model(x)\n"
        "        return F.cross_entropy(logits, y, weight=self.weights)\n\n\n"
        "print(Trainer(model, torch.tensor([1.0, 2.0, 3.0])).loss(x, y))\n"
    )
    result = run_devfix(source, rules=[LossWeightDevice])
    assert result.fixed.decode() == source and not result.findings
    again = source.replace("        return F.cross_entropy", "        self.weights = self.weights.cpu()\n        return F.cross_entropy")
    assert [finding.code for finding in run_devfix(again, rules=[LossWeightDevice]).findings] == ["DF011"]


def test_a_modules_registered_weight_is_not_judged_by_a_target_made_where_the_input_is():
    """timm's BinaryCrossEntropy: `self.pos_weight` is a buffer, the target is made with
    `device=x.device`; both follow the Module and its input."""
    source = HEAD + (
        "class BCE(nn.Module):\n"
        "    def __init__(self, pos_weight):\n"
        "        super().__init__()\n"
        "        self.register_buffer('pos_weight', pos_weight)\n\n"
        "    def forward(self, x, target):\n"
        "        target = torch.full(x.shape, 0.1, device=x.device).scatter_(1, target.view(-1, 1), 0.9)\n"
        "        return F.binary_cross_entropy_with_logits(x, target, pos_weight=self.pos_weight)\n\n\n"
        "print(BCE(torch.ones(3)).to(device)(out, y))\n"
    )
    result = run_devfix(source, rules=[LossWeightDevice])
    assert result.fixed.decode() == source and not result.findings
