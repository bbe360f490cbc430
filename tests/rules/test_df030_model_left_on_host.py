"""DF030: a helper leaves the caller's model on the host; the caller's next step feeds it device values."""

from __future__ import annotations

import pytest

from devfix.codemods import ModelLeftOnHost
from tests.conftest import run_devfix

PROGRAM = """import torch
from torch import nn

device = "cuda" if torch.cuda.is_available() else "cpu"
X_train = torch.randn(8, 2).to(device)


def plot(model, X):
{helper}


model = nn.Linear(2, 1){move}
{before}plot(model, X_train)
{after}
"""
HELPER = '    model.to("cpu")\n    X = X.to("cpu")\n    return model(X).sum().item()'
USE = "print(model(X_train).sum())"


def program(helper=HELPER, move=".to(device)", before="", after=USE):
    return PROGRAM.format(helper=helper, move=move, before=before, after=after)


def fix(source: str):
    return run_devfix(source, rules=[ModelLeftOnHost])


@pytest.mark.parametrize(("source", "moved_back"), [
    (program(), "model.to(device)"),
    (program(helper='    model.cpu()\n    return 0'), "model.to(device)"),
    (program(helper='    model.to(torch.device("cpu"))'), "model.to(device)"),
    (program(move=".cuda()"), "model.cuda()"),
    (program(move='.to("cuda")'), 'model.to("cuda")'),
    (program(after="for step in range(2):\n    loss = model(X_train).sum()"), "model.to(device)"),
    (program(after="def train():\n    return model(X_train).sum()\n\n\ntrain()"), "model.to(device)"),
    (program(after="def train(net):\n    return net(X_train).sum()\n\n\ntrain(model)"), "model.to(device)"),
    (program(after="def train(steps, net=None):\n    return net(X_train).sum() * steps\n\n\ntrain(2, net=model)"), "model.to(device)"),
])
def test_a_model_a_helper_leaves_on_the_host_goes_back_before_its_device_inputs(source, moved_back):
    fixed = fix(source).fixed.decode()
    assert f"plot(model, X_train)\n{moved_back}\n" in fixed


@pytest.mark.parametrize("source", [
    program(helper='    model.to("cpu")\n    return model'),  # handed back: the caller may rebind it
    program(helper='    if X is not None:\n        model.to("cpu")'),  # only in a branch
    program(helper='    model.to("cpu")\n    print(model(X))\n    model.to(device)'),  # moved back by the helper
    program(helper='    model.to(X.device)'),  # not the host
    program(after="print(model(X_train.cpu()).sum())"),  # used with host values
    program(after="model.to(device)\n" + USE),  # moved back by the caller
    program(after=""),  # not used again
    program(move=""),  # never on a device
    program(before="model = nn.Linear(2, 1)\n"),  # rebound, unmoved
    program(after="def train(model):\n    model.to(device)\n    return model(X_train).sum()\n\n\ntrain(model)"),  # moved there
    program(after="def train(model):\n    return model(X_train.cpu()).sum()\n\n\ntrain(model)"),  # fed host values there
    program(after="def train(x, net=None):\n    return net(x).sum()\n\n\ntrain(X_train, net=model)"),  # fed its parameter
    program(after="def train(net):\n    return net(X_train).sum()\n\n\ntrain(model.float())"),  # a method's result
])
def test_a_model_not_proven_on_the_host_and_then_fed_device_values_is_left_alone(source):
    result = fix(source)
    assert result.fixed == result.source and not result.findings


def test_a_model_handed_to_the_helper_twice_goes_back_once_after_the_second_call():
    fixed = fix(program(after="plot(model, X_train)\n" + USE)).fixed.decode()
    assert "plot(model, X_train)\nplot(model, X_train)\nmodel.to(device)\nprint(" in fixed


def test_a_device_rebound_between_the_move_and_the_call_is_reported_without_a_fix():
    source = program(before='device = "cpu"\n')
    result = fix(source)
    assert result.fixed == result.source
    assert [finding.fixable for finding in result.findings] == [False]


def test_a_helper_of_another_file_is_read_there(tmp_path):
    from devfix.analysis.project import ProjectIndex
    from devfix.engine import process
    from devfix.fix_policy import FixPolicy

    (tmp_path / "helper_functions.py").write_text("def plot(model, X):\n" + HELPER + "\n")
    source = program().replace("\n\ndef plot(model, X):\n" + HELPER + "\n\n", "\nfrom helper_functions import plot\n")
    main = tmp_path / "main.py"
    main.write_text(source)
    result = process(source.encode(), str(main), [ModelLeftOnHost], ProjectIndex(), FixPolicy(apply=True, unsafe=True))
    assert "plot(model, X_train)\nmodel.to(device)\n" in result.fixed.decode()


LOOP = """import torch
from torch import nn

device = torch.device("cuda")
x = torch.randn(8, 2).to(device)
model = nn.Linear(2, 1).to(device)
for epoch in range(3):
{start}    loss = model(x).sum()
    if epoch % 2 == 0:
        {save}
{after}"""


def loop(start="", save='torch.save(model.cpu().state_dict(), "best.pt")', after=""):
    return LOOP.format(start=start, save=save, after=after)


@pytest.mark.parametrize(("source", "moved_back"), [
    (loop(), '        torch.save(model.cpu().state_dict(), "best.pt")\n        model.to(device)\n'),
    (loop(save='weights = model.to("cpu").state_dict()'), '        weights = model.to("cpu").state_dict()\n        model.to(device)\n'),
    (loop(save="model_cpu = model.cpu()"), "        model_cpu = model.cpu()\n        model.to(device)\n"),
])
def test_a_model_brought_to_the_host_inside_a_statement_goes_back_when_the_loop_feeds_it_again(source, moved_back):
    """`torch.save(model.cpu().state_dict(), path)` in an epoch loop: `.cpu()` moves the model itself,
    and the next epoch feeds it the batches on the device."""
    assert moved_back in fix(source).fixed.decode()


@pytest.mark.parametrize("source", [
    loop(start="    model.to(device)\n"),  # each epoch moves it first
    loop(save="model.cpu()"),  # a statement of its own: meant
    loop(save='torch.save(model.state_dict(), "best.pt")'),
    loop(save="y = x.cpu().numpy()"),  # a tensor's copy
    loop().replace("for epoch in range(3):\n    loss = model(x).sum()\n    if", "for epoch in range(3):\n    if", 1),  # no device use
    loop(start="    model.to(device)\n", after="torch.save(model.cpu().state_dict(), 'last.pt')\n"),  # after the loop: nothing follows
    loop(save='torch.save(model.cpu().state_dict(), "best.pt")\n        break'),  # early stop: the loop ends there
    loop(save="model.cuda() if torch.cuda.is_available() else model.cpu()"),  # `.cpu()` only without a GPU
    loop(save="saved = use_cpu and model.cpu()"),  # only when asked
    loop(save="weights = [model.cpu() for _ in range(1)]"),
    loop(save='torch.save(model.cpu().state_dict(), "best.pt")\n        raise SystemExit'),
])
def test_a_host_copy_the_scope_meant_or_that_nothing_feeds_after_is_left_alone(source):
    result = fix(source)
    assert result.fixed == result.source and not result.findings


def test_a_save_helper_that_moves_the_model_inside_its_statement_leaves_it_on_the_host():
    """`def save_model(model, path): torch.save(model.cpu().state_dict(), path)` called each epoch."""
    helper = "\n\ndef save_model(model, path):\n    torch.save(model.cpu().state_dict(), path)\n\n"
    source = loop(save='save_model(model, "best.pt")').replace("\nmodel = nn.Linear", helper + "\nmodel = nn.Linear", 1)
    assert '        save_model(model, "best.pt")\n        model.to(device)\n' in fix(source).fixed.decode()
