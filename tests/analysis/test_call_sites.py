"""`analysis.call_sites.instance_calls`: the calls of a class's instances, only when they are all known."""

from __future__ import annotations

import libcst as cst

from devfix.analysis.call_sites import instance_calls

CLASS = "class Encoder:\n    def forward(self, ids, lengths):\n        return ids\n\n\n"


def calls_of(source: str) -> list[tuple[str, str | None]] | None:
    module = cst.parse_module(CLASS + source)
    found = instance_calls(module, module.body[0])
    return None if found is None else [(cst.Module([]).code_for_node(call), method) for call, method in found]


def test_calls_of_names_bound_only_to_constructions_and_their_moves():
    source = "model = Encoder()\nmodel = model.to(device)\nmodel.eval()\nout = model(ids, lengths)\n"
    assert calls_of(source) == [("model.to(device)", "to"), ("model.eval()", "eval"), ("model(ids, lengths)", None)]
    inside = "def main():\n    enc = Encoder().to(device)\n    return enc(ids, lengths)\n"
    assert calls_of(inside) == [("enc(ids, lengths)", None)]


def test_unknown_callers_give_no_answer():
    assert calls_of("model = Encoder()\nout = model(ids, lengths)\nrun(model)\n") is None  # handed to other code
    assert calls_of("model = Encoder()\nout = model(ids, lengths)\nother = [Encoder()]\n") is None  # built elsewhere too
    assert calls_of("model = Encoder()\nmodel = wrap(model)\nout = model(ids, lengths)\n") is None  # rebound from other code
    assert calls_of("factory = Encoder\n") is None  # the class itself is handed around
    assert calls_of("model = Encoder()\n") is None  # never called
