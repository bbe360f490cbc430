"""From which top-level lines each top-level function runs (`analysis.entry_lines`)."""

from __future__ import annotations

import ast

from devfix.analysis.entry_lines import top_level_entry_lines

MODULE = '''import torch


def act(state):
    return state


def step():
    return act(1)


def callback(x):
    return x


def used_by_a_method():
    return 0


def never_called():
    return 0


class Agent:
    def run(self):
        return used_by_a_method()


for episode in range(3):
    step()
act(2)
values = list(map(callback, [1, 2]))
'''


def test_lines_of_direct_and_indirect_top_level_calls() -> None:
    lines = top_level_entry_lines(ast.parse(MODULE))
    assert lines["act"] == [30, 31]  # through `step()` in the loop, and directly
    assert lines["step"] == [30]
    assert lines["never_called"] == []


def test_functions_run_some_other_way_have_no_known_order() -> None:
    lines = top_level_entry_lines(ast.parse(MODULE))
    assert lines["callback"] is None  # handed to `map`
    assert lines["used_by_a_method"] is None  # a method runs it, at some time
