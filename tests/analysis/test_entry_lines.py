"""From which top-level lines each top-level function runs (`analysis.entry_lines`)."""

from __future__ import annotations

import ast

from devfix.analysis.entry_lines import first_top_level_binding, only_setup_between, top_level_entry_lines

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


ROUTES = """import torch
from flask import Flask

app = Flask(__name__)


@app.route("/")
def route():
    return str(classify([1, 2]))


@torch.no_grad()
def classify(tokens):
    return model(torch.tensor(tokens))


if __name__ == "__main__":
    if torch.cuda.is_available():
        model = Net(8)
    else:
        model = Net(4)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model = model.to(device)
    app.run()
"""


def test_a_decorated_function_nothing_here_calls_is_a_callback_and_so_are_its_callees() -> None:
    lines = top_level_entry_lines(ast.parse(ROUTES))
    assert lines["route"] is None and lines["classify"] is None  # `classify` is decorated too, but called here


def test_only_set_up_code_runs_between_the_models_binding_and_its_move() -> None:
    tree = ast.parse(ROUTES)
    first = first_top_level_binding(tree, "model")
    assert first == 19  # in the `__main__` block, not in `classify`
    setup = lambda call: ast.unparse(call.func).startswith(("torch.", "Net", "model."))  # noqa: E731
    assert only_setup_between(tree, first, 23, setup)
    assert not only_setup_between(tree, first, 25, setup)  # `app.run()` could run the route
