"""Which tests of a test file run anything on an accelerator (`analysis.test_devices`): the
alignment rules (DF004, DF010, DF012, DF014, DF016) leave the others alone."""

from __future__ import annotations

import ast

import pytest

from devfix.analysis.test_devices import AcceleratedTests, places_on_an_accelerator
from devfix.codemods.df004_constructor_device import ConstructorDevice
from devfix.codemods.df010_helper_device import HelperDevice
from tests.conftest import run_devfix


@pytest.mark.parametrize(
    ("code", "places"),
    [
        ('x = torch.zeros(3, device="cpu")', False),
        ("x = y.to('cpu')", False),
        ('x = y.to(device="cpu")', False),
        ('d = torch.device("cpu")', False),
        ('trainer.accelerator = SimpleNamespace(device=torch.device("cpu"))', False),
        ('system = system.to(precision="double")', False),
        ("x = y.to(dtype=torch.half)", False),
        ('x = torch.zeros(3, device="cuda")', True),
        ("x = y.to(device)", True),
        ("x = y.to(dtype=torch.half, device=device)", True),
        ("x = y.cuda()", True),
    ],
)
def test_only_a_placement_off_the_host_counts(code, places):
    assert places_on_an_accelerator(code) is places


TESTS = '''import pytest
import torch


def ones_like(size, other):
    return torch.ones(size, dtype=other.dtype, device=other.device)


def _close(actual, rows):
    return torch.allclose(actual, torch.tensor(rows))


def test_ones_like_on_the_host():
    other = torch.tensor([1.0, 2.0], device="cpu")
    ones = ones_like((2, 2), other)
    assert torch.equal(ones, torch.tensor([[1.0, 1.0], [1.0, 1.0]]))
    assert _close(ones, [[1.0, 1.0], [1.0, 1.0]])


@pytest.mark.parametrize("device", ["cpu", "cuda"])
def test_ones_like_on_a_device(device):
    ones = ones_like(3, torch.arange(2.0, device=device))
    assert torch.equal(ones, torch.tensor([1.0, 1.0, 1.0]))
'''


def test_each_test_is_judged_by_what_it_places_and_a_helper_by_the_file():
    tree = ast.parse(TESTS)
    devices = AcceleratedTests(tree, tuple(TESTS.splitlines()))
    assert devices.runs_anywhere
    assert not devices.runs_on_a_device(16)  # test_ones_like_on_the_host
    assert devices.runs_on_a_device(21)  # the parametrized test, its decorator included
    assert devices.runs_on_a_device(10)  # `_close`: a test that runs on a device may call it


def test_what_the_tests_share_counts_for_every_test():
    shared = TESTS.replace("import torch\n", 'import torch\n\nDEVICE = torch.device("cuda")\n')
    tree = ast.parse(shared)
    assert AcceleratedTests(tree, tuple(shared.splitlines())).runs_on_a_device(16)


def test_an_expected_value_in_a_test_on_the_host_is_left_alone():
    result = run_devfix(TESTS, path="test_geometry.py", rules=[ConstructorDevice])
    fixed = result.fixed.decode()
    assert "torch.tensor([1.0, 1.0, 1.0], device=ones.device)" in fixed  # the test that runs on a device
    assert [finding.start.line for finding in result.applied] == [10, 23]  # and the helper it may call


def test_a_test_file_that_places_nothing_gets_no_alignment():
    host_only = TESTS.split("\n\n@pytest.mark")[0] + "\n"
    result = run_devfix(host_only, path="test_geometry.py", rules=[ConstructorDevice])
    assert not result.findings and result.fixed.decode() == host_only


EPOCH = '''import torch
from torch.utils.data import DataLoader, TensorDataset


def _epoch(model, dl):
    for (x,) in dl:
        model(x).sum().backward()


def test_one_epoch():
    model = torch.nn.Linear(3, 1){move}
    _epoch(model, DataLoader(TensorDataset(torch.randn(8, 3)), batch_size=4))
'''


def test_a_training_helper_of_tests_that_place_nothing_is_left_alone():
    source = EPOCH.format(move="")
    result = run_devfix(source, path="test_training.py", rules=[HelperDevice])
    assert not result.findings and result.fixed.decode() == source
    moved = run_devfix(EPOCH.format(move='.to("cuda")'), path="test_training.py", rules=[HelperDevice])
    assert "x = x.to(device)" in moved.fixed.decode()
