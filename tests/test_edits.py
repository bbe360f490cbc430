"""codemods.edits: an argument added to a call keeps the call's own layout."""

from __future__ import annotations

import libcst as cst
import pytest

from devfix.codemods.edits import add_keyword


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
