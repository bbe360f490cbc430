"""`analysis.expected_errors`: blocks that check an error is raised, where no rule aligns devices."""

from __future__ import annotations

import ast

import pytest

from devfix.analysis.expected_errors import expected_error_blocks
from devfix.analysis.imports import ImportTable
from devfix.codemods import ConstructorDevice
from tests.conftest import run_devfix


@pytest.mark.parametrize(("header", "opening", "expected"), [
    ("import pytest", "with pytest.raises(RuntimeError):", True),
    ("from pytest import raises", "with raises(RuntimeError, match='device'):", True),
    ("import numpy as np", "with np.testing.assert_raises(RuntimeError):", True),
    ("import unittest", "with self.assertRaises(RuntimeError):", True),
    ("import unittest", "with self.assertRaisesRegex(RuntimeError, 'same device'):", True),
    ("import torch", "with torch.no_grad():", False),
    ("import contextlib", "with contextlib.suppress(RuntimeError):", False),  # not a check that it fails
])
def test_a_with_block_that_checks_an_error_is_raised(header, opening, expected):
    source = f"{header}\n\n\ndef check(self, model, x):\n    {opening}\n        model(x)\n    return x\n"
    tree = ast.parse(source)
    assert expected_error_blocks(tree, ImportTable.of(tree)) == (((5, 6),) if expected else ())


MISMATCH = """import pytest
import torch

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")


def test_a_cpu_input_is_refused():
    model = torch.nn.Linear(3, 2).to(device)
{body}
"""


def test_no_rule_aligns_the_devices_a_test_expects_to_mismatch():
    source = MISMATCH.format(body="    with pytest.raises(RuntimeError):\n        x = torch.randn(2, 3)\n        model(x)\n")
    result = run_devfix(source, path="test_model.py", rules=[ConstructorDevice])
    assert not result.findings and not result.applied and result.fixed.decode() == source


def test_the_same_mismatch_outside_such_a_block_is_aligned():
    source = MISMATCH.format(body="    x = torch.randn(2, 3)\n    model(x)\n")
    result = run_devfix(source, path="test_model.py", rules=[ConstructorDevice])
    assert "torch.randn(2, 3, device=device)" in result.fixed.decode()
