"""`analysis.gpu_options`: the one GPU a command-line option chooses, proven from the parser and
the file's uses, never from the option's name."""

from __future__ import annotations

import ast

import pytest

from devfix.analysis.gpu_options import gpu_option

SCRIPT = """import argparse
import torch
parser = argparse.ArgumentParser()
parser.add_argument({flags}, type=int, default={default})
args = parser.parse_args()
model = torch.nn.Linear(2, 2).cuda({use})
{more}
"""


def option(flags='"--gpu"', default="0", use="args.gpu", more=""):
    return gpu_option(ast.parse(SCRIPT.format(flags=flags, default=default, use=use, more=more)))


def test_an_integer_option_naming_the_gpu_is_proven():
    found = option()
    assert (found.code, found.parse_line, found.parse_function, found.enclosing, found.device_name_free) == (
        "args.gpu", 5, None, None, True)


@pytest.mark.parametrize(("flags", "use"), [('"-g", "--gpu-id"', "args.gpu_id"), ('"--which", dest="card"', "args.card")])
def test_the_attribute_is_the_options_destination(flags, use):
    assert option(flags=flags, use=use).code == use


@pytest.mark.parametrize(("default", "more"), [
    ("None", ""),  # pytorch/examples' ImageNet: None means every GPU
    ("-1", ""),
    ("0", "args.gpu = 1"),  # a distributed launcher's worker sets it per process
    ("0", "x = torch.zeros(2).cuda(args.other)"),  # a second option naming a GPU
    ("0", "args = parser.parse_args([])"),
    ("0", "setattr(args, 'gpu', 1)"),
])
def test_no_option_is_proven_where_a_fact_fails(default, more):
    assert option(default=default, more=more) is None


def test_an_option_the_file_never_names_a_gpu_with_is_none():
    assert option(use="") is None


def test_a_parse_in_main_and_a_bound_device_name_are_recorded():
    source = SCRIPT.format(flags='"--gpu"', default="0", use="args.gpu", more="def f(device):\n    pass\n")
    source = source.replace("args = parser.parse_args()", "def main():\n    args = parser.parse_args()\n    return args")
    found = gpu_option(ast.parse(source))
    assert (found.parse_function, found.device_name_free) == ("main", False)


def test_the_masked_text_keeps_other_multi_gpu_markers():
    text = "x.cuda(args.gpu)\ntorch.cuda.set_device(args.gpu)\ny.cuda(rank)\n"
    assert option().masked(text) == "x.cuda()\ntorch.cuda.set_device(0)\ny.cuda(rank)\n"
