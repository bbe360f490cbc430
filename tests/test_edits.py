"""codemods.edits: an argument added to a call keeps the call's own layout; containers move item by item."""

from __future__ import annotations

import libcst as cst
import pytest

from devfix.codemods.edits import add_device_property, add_keyword, items_moved_to


@pytest.mark.parametrize("source, expected", [
    ("f(a)", 'f(a, map_location="cpu")'),
    ("f()", 'f(map_location="cpu")'),
    ("f(a,)", 'f(a, map_location="cpu",)'),
    # DINO's video_generation.py: the line break before `)` stays before `)`, no space ends a line
    ('f(\n    url="u" + url\n)', 'f(\n    url="u" + url, map_location="cpu"\n)'),
    ("f(a, b\n  )", 'f(a, b, map_location="cpu"\n  )'),
])
def test_add_keyword_keeps_the_calls_layout(source, expected):
    call = cst.parse_expression(source)
    assert cst.Module([]).code_for_node(add_keyword(call, "map_location", '"cpu"')) == expected


@pytest.mark.parametrize("device, kind, expected", [
    ("device", "tuple", "tuple(value.to(device) for value in state)"),
    ("device", "dict", "{key: value.to(device) for key, value in state.items()}"),
    # the loop's names never hide a name the device is read from
    ("value.device", "tuple", "tuple(tensor.to(value.device) for tensor in state)"),
    ("key[0].device", "dict", "{field: value.to(key[0].device) for field, value in state.items()}"),
])
def test_items_moved_to_reads_the_device_it_was_given(device, kind, expected):
    moved = items_moved_to(cst.Name("state"), device, kind)
    assert cst.Module([]).code_for_node(moved) == expected


def test_add_keyword_gives_a_keyword_already_there_its_new_value():
    call = cst.parse_expression("torch.zeros(3, device=None, dtype=torch.long)")
    assert cst.Module([]).code_for_node(add_keyword(call, "device", "x.device")) == "torch.zeros(3, device=x.device, dtype=torch.long)"


@pytest.mark.parametrize("between", ["\n", "        \n"])
def test_a_property_added_after_init_is_set_off_by_blank_lines(between):
    """tokenlearner-pytorch's `__init__` ends with a line of spaces, which libcst keeps in its body:
    the method after it had no blank line of its own, and the property sat right against it."""
    source = f"class M:\n    def __init__(self):\n        self.a = 1\n{between}    def forward(self, x):\n        return x\n"
    module = cst.parse_module(source)
    fixed = module.with_changes(body=[add_device_property(module.body[0])]).code
    assert "        return next(self.parameters()).device\n\n    def forward(self, x):\n" in fixed
    assert "\n\n    @property\n" in fixed
