"""DF022: the move joins the construction when nothing in between depends on where the model is."""

from __future__ import annotations

from devfix.codemods import OptimizerStateOrder
from tests.conftest import run_devfix

HEAD = "import torch\nfrom torch import nn\n"


def fix(source: str):
    return run_devfix(HEAD + source, rules=[OptimizerStateOrder])


def test_the_move_goes_to_the_construction():
    result = fix(
        "model = nn.Linear(2, 2)\noptimizer = torch.optim.Adagrad(model.parameters())\n"
        "optimizer.load_state_dict(state)\nmodel.to('cuda')\n"
    )
    assert result.fixed.decode() == HEAD + (
        "model = nn.Linear(2, 2).to('cuda')\noptimizer = torch.optim.Adagrad(model.parameters())\n"
        "optimizer.load_state_dict(state)\n"
    )


def test_standard_order_is_not_reported():
    result = fix(
        "model = nn.Linear(2, 2)\nmodel.to('cuda')\n"
        "optimizer = torch.optim.Adam(model.parameters())\noptimizer.load_state_dict(state)\n"
    )
    assert not result.findings and result.fixed == result.source


def test_an_optimizer_that_is_not_torch_optim_is_not_judged_by_its_name():
    result = fix("model = nn.Linear(2, 2)\noptimizer = build(model)\noptimizer.load_state_dict(state)\nmodel.to('cuda')\n")
    assert not result.findings


def test_device_chosen_after_the_construction_is_reported_without_a_fix():
    result = fix(
        "model = nn.Linear(2, 2)\noptimizer = torch.optim.Adam(model.parameters())\noptimizer.load_state_dict(state)\n"
        "device = torch.device('cuda')\nmodel.to(device)\n"
    )
    (finding,) = result.findings
    assert not finding.fixable and result.fixed == result.source


def test_a_forward_pass_after_the_construction_sends_the_move_before_the_load_instead():
    # the warm-up pass keeps running on the CPU; the Module moves in place before its state loads
    result = fix(
        "model = nn.Linear(2, 2)\nwith torch.no_grad():\n    warm = model(torch.zeros(1, 2))\n"
        "optimizer = torch.optim.Adam(model.parameters())\noptimizer.load_state_dict(state)\nmodel.to('cuda')\n"
    )
    assert result.fixed.decode() == HEAD + (
        "model = nn.Linear(2, 2)\nwith torch.no_grad():\n    warm = model(torch.zeros(1, 2))\n"
        "optimizer = torch.optim.Adam(model.parameters())\nmodel.to('cuda')\noptimizer.load_state_dict(state)\n"
    )


def test_a_model_and_optimizer_a_helper_builds_move_before_the_load():
    helper = "def build():\n    net = nn.Linear(2, 2)\n    opt = torch.optim.Adam(net.parameters())\n    return net, opt\n\n\n"
    result = fix(
        helper + "model, optimizer = build()\nmodel.load_state_dict(ckpt['model'])\n"
        "optimizer.load_state_dict(ckpt['optim'])\nmodel.to('cuda')\nprint(model(torch.zeros(1, 2)))\n"
    )
    assert result.fixed.decode() == HEAD + helper + (
        "model, optimizer = build()\nmodel.load_state_dict(ckpt['model'])\nmodel.to('cuda')\n"
        "optimizer.load_state_dict(ckpt['optim'])\nprint(model(torch.zeros(1, 2)))\n"
    )
    # the model run between the load and the move: the order stays, reported
    ran = fix(helper + "model, optimizer = build()\noptimizer.load_state_dict(ckpt['optim'])\nprint(model(x))\nmodel.to('cuda')\n")
    assert [finding.fixable for finding in ran.findings] == [False] and ran.fixed == ran.source


def test_the_latest_construction_takes_the_move_when_the_name_was_bound_before():
    result = fix(
        "model = nn.Linear(2, 2)\nmodel = nn.Linear(2, 3)\noptimizer = torch.optim.Adam(model.parameters())\n"
        "optimizer.load_state_dict(state)\nmodel = model.to('cuda')\n"
    )
    assert "model = nn.Linear(2, 2)\nmodel = nn.Linear(2, 3).to('cuda')\n" in result.fixed.decode()
    assert "model = model.to('cuda')" not in result.fixed.decode()


def test_a_model_rebound_from_other_code_is_reported_without_a_fix():
    result = fix(
        "model = nn.Linear(2, 2)\nmodel = wrap(model)\noptimizer = torch.optim.Adam(model.parameters())\n"
        "optimizer.load_state_dict(state)\nmodel = model.to('cuda')\n"
    )
    assert [finding.fixable for finding in result.findings] == [False]


def test_state_loaded_for_an_earlier_model_of_the_same_name_is_no_finding():
    result = fix(
        "model = nn.Linear(2, 2)\noptimizer = torch.optim.Adam(model.parameters())\n"
        "optimizer.load_state_dict(state)\nmodel = nn.Linear(2, 3)\nmodel.to('cuda')\n"
    )
    assert not result.findings and result.fixed == result.source


def test_a_model_moved_before_the_load_is_only_moved_again():
    result = fix(
        "model = nn.Linear(2, 2)\nmodel.to('cuda')\noptimizer = torch.optim.Adam(model.parameters())\n"
        "optimizer.load_state_dict(state)\nmodel.to('cuda')\n"
    )
    assert not result.findings and result.fixed == result.source


def test_a_model_built_moved_is_only_moved_again():
    result = fix(
        "model = nn.Linear(2, 2).to('cuda')\noptimizer = torch.optim.Adam(model.parameters())\n"
        "optimizer.load_state_dict(state)\nmodel = model.to('cuda')\n"
    )
    assert not result.findings and result.fixed == result.source


def test_an_adagrad_built_before_the_move_is_state_made_before_it():
    result = fix("model = nn.Linear(2, 2)\noptimizer = torch.optim.Adagrad(model.parameters())\nmodel.to('cuda')\n")
    assert "model = nn.Linear(2, 2).to('cuda')\n" in result.fixed.decode()
    lazy = fix("model = nn.Linear(2, 2)\noptimizer = torch.optim.Adam(model.parameters())\nmodel.to('cuda')\n")
    assert not lazy.findings and lazy.fixed == lazy.source


RESUMED = "model = {built}\noptimizer = torch.optim.Adam(model.parameters())\noptimizer.load_state_dict(state)\nmodel.to('cuda')\n"


def test_a_model_from_a_helper_that_builds_it_on_the_host_is_moved_where_it_is_made():
    helper = "def make(n):\n    return nn.Linear(n, 2)\n\n\n"
    result = fix(helper + RESUMED.format(built="make(2)"))
    assert result.fixed.decode().startswith(HEAD + helper + "model = make(2).to('cuda')\n")
    assert "\nmodel.to('cuda')\n" not in result.fixed.decode()


def test_a_model_from_a_callable_it_cannot_see_build_a_host_module_is_reported_without_a_fix():
    for source in [
        "def make(n):\n    return nn.Linear(n, 2).to('cuda')\n\n\n" + RESUMED.format(built="make(2)"),  # placed by the helper
        "make = lambda n: nn.Linear(n, 2)\n" + RESUMED.format(built="make(2)"),  # not a function of the file
        RESUMED.format(built="load_model()"),
    ]:
        result = fix(source)
        assert not result.applied and result.fixed == result.source


EMA = (
    "import copy\n\n\nclass EMA:\n    def __init__(self, model, decay=0.9):\n        self.decay = decay\n"
    "        self.shadow = {copy}\n\n    def update(self, model):\n{update}\n\n\n"
)
CLONED = "{name: p.detach().clone() for name, p in model.named_parameters()}"
BLENDED = "        for name, p in model.named_parameters():\n            self.shadow[name].mul_(self.decay).add_(p, alpha=0.1)"
BUILT_THEN_MOVED = "model = nn.Linear(2, 2)\nema = {call}\nmodel.to('cuda')\n"


def test_a_class_that_copies_the_parameters_it_is_given_sees_the_model_moved_first():
    for call in ["EMA(model)", "EMA(model, 0.5)", "EMA(decay=0.5, model=model)"]:
        source = EMA.format(copy=CLONED, update=BLENDED) + BUILT_THEN_MOVED.format(call=call)
        result = fix(source)
        moved_first = source.replace(BUILT_THEN_MOVED.format(call=call), f"model = nn.Linear(2, 2).to('cuda')\nema = {call}\n")
        assert result.fixed.decode() == HEAD + moved_first, call
    deep = EMA.format(copy="copy.deepcopy(model)", update=(
        "        for e, p in zip(self.shadow.parameters(), model.parameters()):\n            e.mul_(self.decay).add_(p, alpha=0.1)"))
    assert "model = nn.Linear(2, 2).to('cuda')\n" in fix(deep + BUILT_THEN_MOVED.format(call="EMA(model)")).fixed.decode()


def test_copies_kept_where_the_class_wants_them_or_never_blended_are_left_alone():
    cases = [
        EMA.format(copy=CLONED.replace(".clone()", ".clone().cpu()"), update=BLENDED),  # kept on the host on purpose
        EMA.format(copy=CLONED, update=BLENDED.replace("add_(p,", "add_(p.to(self.shadow[name].device),")),  # moves itself
        EMA.format(copy=CLONED, update="        torch.save(self.shadow, 'ema.pt')"),  # never meets the parameters
        EMA.format(copy="{}", update=BLENDED),  # copies nothing when built
        EMA.format(copy=CLONED, update=BLENDED).replace("class EMA:", "class EMA(Base):"),  # a base may do anything
    ]
    for ema in cases:
        source = ema + BUILT_THEN_MOVED.format(call="EMA(model)")
        result = fix(source)
        assert not result.findings and result.fixed.decode() == HEAD + source, ema
    moved_first = EMA.format(copy=CLONED, update=BLENDED) + "model = nn.Linear(2, 2)\nmodel.to('cuda')\nema = EMA(model)\n"
    assert not fix(moved_first).findings
    other_model = EMA.format(copy=CLONED, update=BLENDED) + "model = nn.Linear(2, 2)\nema = EMA(teacher)\nmodel.to('cuda')\n"
    assert not fix(other_model).findings
    used_between = EMA.format(copy=CLONED, update=BLENDED) + "model = nn.Linear(2, 2)\nema = EMA(model)\nprint(model(x))\nmodel.to('cuda')\n"
    result = fix(used_between)
    assert [finding.fixable for finding in result.findings] == [False] and result.fixed.decode() == HEAD + used_between


REGISTERING_EMA = (
    "class EMA:\n    def __init__(self, model, decay):\n        self.model = model\n        self.decay = decay\n"
    "        self.shadow = {}\n\n    def register(self):\n        for name, param in self.model.named_parameters():\n"
    "            if param.requires_grad:\n                self.shadow[name] = param.data.clone()\n\n"
    "    def update(self):\n        for name, param in self.model.named_parameters():\n"
    "            self.shadow[name] = (1.0 - self.decay) * param.data + self.decay * self.shadow[name]\n\n\n"
)


def test_an_ema_that_copies_the_parameters_when_registered_sees_the_model_moved_first():
    # the common EMA snippet: `ema = EMA(model, 0.999)`, `ema.register()`, then `model.to(device)`
    late = REGISTERING_EMA + "model = nn.Linear(2, 2)\nema = EMA(model, 0.9)\nema.register()\nmodel.to('cuda')\n"
    assert fix(late).fixed.decode() == HEAD + late.replace(
        "model = nn.Linear(2, 2)\n", "model = nn.Linear(2, 2).to('cuda')\n").replace("model.to('cuda')\n", "")
    # registered after the move: the copies are made on the device
    registered_after = REGISTERING_EMA + "model = nn.Linear(2, 2)\nema = EMA(model, 0.9)\nmodel.to('cuda')\nema.register()\n"
    assert not fix(registered_after).findings
    # a `register` that takes what it copies is another method
    given = late.replace("def register(self):", "def register(self, other):").replace("ema.register()", "ema.register(model)")
    assert not fix(given).findings


RESUME = (
    "device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"
    "model = nn.Linear(2, 2)\noptimizer = torch.optim.Adam(model.parameters())\n"
    "if resume:\n    checkpoint = torch.load(path)\n    model.load_state_dict(checkpoint['model'])\n{extra}"
    "    optimizer.load_state_dict(checkpoint['optimizer'])\nmodel.to(device)\n"
)


def test_a_load_under_a_resume_flag_still_runs_before_the_move():
    fixed = fix(RESUME.format(extra="")).fixed.decode()
    assert "model = nn.Linear(2, 2).to(device)\n" in fixed and "\nmodel.to(device)\n" not in fixed


def test_a_model_run_under_the_resume_flag_before_the_move_is_reported_without_a_fix():
    result = fix(RESUME.format(extra="    print(evaluate(model))\n"))
    assert result.fixed == result.source
    assert [finding.code for finding in result.findings] == ["DF022"] and not result.findings[0].fixable
