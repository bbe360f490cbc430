"""`analysis.call_sites.instance_calls`, `arguments_for` and `CallIndex.method_arguments_for`: the calls of a
function, of a class's instances and methods, only when they are all known."""

from __future__ import annotations

import libcst as cst

from devfix.analysis.call_sites import CallIndex, arguments_for, instance_calls

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


def test_calls_through_the_parameter_of_a_function_of_the_file_the_instance_is_handed_to():
    """`run_epoch(model, loader)`: the function's calls of the parameter are the instance's calls."""
    function = "def run_epoch(m, loader):\n    for ids, lengths in loader:\n        m.train()\n        m(ids, lengths.to(device))\n\n\n"
    assert calls_of(function + "model = Encoder()\nrun_epoch(model, data)\nmodel(ids, lengths)\n") == [
        ("model(ids, lengths)", None), ("m.train()", "train"), ("m(ids, lengths.to(device))", None)]
    assert calls_of(function + "model = Encoder()\nrun_epoch(loader=data, m=model)\n") == [
        ("m.train()", "train"), ("m(ids, lengths.to(device))", None)]
    handing_on = "def run_epoch(m, loader):\n    evaluate(m)\n\n\n"
    rebinding = "def run_epoch(m, loader):\n    m = wrap(m)\n    m(ids, lengths)\n\n\n"
    for other in (handing_on, rebinding, function + "def run_epoch(m):\n    pass\n\n\n"):
        assert calls_of(other + "model = Encoder()\nrun_epoch(model, data)\n") is None, other


METER = (
    "class Meter:\n    def update(self, value):\n        self.values.append(value)\n\n"
    "    @property\n    def avg(self):\n        return sum(self.values)\n\n"
    "    @property\n    def last(self):\n        return self.values[-1]\n\n"
    "    @last.setter\n    def last(self, value):\n        self.values[-1] = value\n\n\n"
)


def test_reading_a_read_only_property_hands_the_instance_nowhere():
    module = cst.parse_module(METER + "meter = Meter()\nmeter.update(loss)\nprint(meter.avg)\n")
    assert [method for _, method in instance_calls(module, module.body[0])] == ["update"]
    for other in ("print(meter.last)\n", "callback = meter.update\n", "print(meter.values)\n"):
        module = cst.parse_module(METER + "meter = Meter()\nmeter.update(loss)\n" + other)
        assert instance_calls(module, module.body[0]) is None, other  # a property with a setter, a method, data


REPORTER = "class Reporter:\n    def draw(self, ax, codes):\n        ax.plot(codes)\n\n    def report(self, ax, out):\n        self.draw(ax, out)\n\n\n"


def given_codes(source: str) -> list[str] | None:
    module = cst.parse_module(REPORTER + source)
    draw = module.body[0].body.body[0]
    found = CallIndex(module).method_arguments_for(module.body[0], draw, "codes")
    return None if found is None else [cst.Module([]).code_for_node(value) for _, value in found]


def test_a_methods_arguments_at_its_self_calls_and_its_instances_calls():
    assert given_codes("reporter = Reporter()\nreporter.draw(ax, codes=z)\n") == ["out", "z"]
    assert given_codes("") == ["out"]


def test_a_method_called_otherwise_gives_no_answer():
    assert given_codes("reporter = Reporter()\nrun(reporter)\nreporter.draw(ax, z)\n") is None  # an instance handed on
    assert given_codes("other.draw(ax, z)\n") is None  # some object's `draw`, maybe this class's
    assert given_codes("class Sub(Reporter):\n    pass\n") is None  # a subclass may call it with anything
    assert given_codes("reporter = Reporter()\nreporter.draw(ax, *rest)\n") is None


def test_an_attribute_or_keyword_of_the_functions_name_is_no_use_of_it():
    module = cst.parse_module(
        "def train(model, loader):\n    model.train()\n    return fit(model, train=True)\n\n\ntrain(net, data)\n"
    )
    assert [cst.Module([]).code_for_node(value) for _, value in arguments_for(module, module.body[0], "loader")] == ["data"]
    handed = cst.parse_module("def train(model, loader):\n    return model\n\n\ntrain(net, data)\nrun(train)\n")
    assert arguments_for(handed, handed.body[0], "loader") is None  # handed to other code: callers unknown
