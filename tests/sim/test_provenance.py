"""The simulator remembers where the user's code made or moved each tensor, so a device error can
name its operands' origins; and the record never changes what the program saves."""

from __future__ import annotations

import io
import runpy

import pytest
import torch

from devfix.run_rounds import describe_meeting, operand_facts
from devfix.run_script import user_frames
from devfix.sim import simulated_cuda
from devfix.sim.provenance import meeting_of

PROGRAM = """\
import torch
device = torch.device("cuda")
model = torch.nn.Linear(3, 2).to(device)
mask = torch.ones(2)
x = torch.randn(4, 3).to(device)
logits = model(x)
print(logits + mask)
"""
NUMPY = """\
import torch
y = torch.zeros(3).cuda() * 2
y.numpy()
"""


def raised(tmp_path, source: str) -> BaseException:
    script = tmp_path / "train.py"
    script.write_text(source)
    with pytest.raises((RuntimeError, TypeError)) as caught, simulated_cuda():
        runpy.run_path(str(script), run_name="__main__")
    return caught.value


def test_a_mismatch_names_where_each_operand_was_made_or_moved(tmp_path):
    error = raised(tmp_path, PROGRAM)
    assert str(error).startswith("Expected all tensors to be on the same device")  # CUDA's own message
    meeting = meeting_of(error)
    origins = {(operand.device, operand.origin.line, operand.origin.event) for operand in meeting.operands}
    assert origins == {("cuda:0", 5, "moved to cuda:0 by .to()"), ("cpu", 4, "created on cpu by torch.ones")}
    assert meeting.site.line == 7
    text = describe_meeting(operand_facts(error), user_frames(error))
    assert "`logits` (cuda:0: moved to cuda:0 by .to() at " in text  # computed from `x`: its origin
    assert "`mask` (cpu: created on cpu by torch.ones at " in text and text.endswith("train.py:7")


def test_numpy_of_a_cuda_tensor_names_its_origin(tmp_path):
    error = raised(tmp_path, NUMPY)
    (operand,) = meeting_of(error).operands
    assert (operand.device, operand.origin.line, operand.origin.event) == ("cuda:0", 2, "moved to cuda:0 by .cuda()")


def test_a_module_move_is_the_origin_of_its_parameters(tmp_path):
    script = tmp_path / "m.py"
    script.write_text("import torch\nmodel = torch.nn.Linear(2, 2)\nmodel.cuda()\nout = model(torch.ones(2))\n")
    with pytest.raises(RuntimeError) as caught, simulated_cuda():
        runpy.run_path(str(script), run_name="__main__")
    events = {(operand.device, operand.origin.event if operand.origin else None) for operand in meeting_of(caught.value).operands}
    assert ("cuda:0", "moved to cuda:0 with its module") in events
    assert ("cpu", "created on cpu by torch.ones") in events


def test_a_batch_from_a_data_loader_comes_from_the_loop(tmp_path):
    source = (
        "import torch\nfrom torch.utils.data import DataLoader\n"
        "model = torch.nn.Linear(2, 2).cuda()\n"
        "for x in DataLoader(torch.ones(4, 2), batch_size=2):\n"
        "    model(x)\n"
    )
    (cpu,) = [operand for operand in meeting_of(raised(tmp_path, source)).operands if operand.device == "cpu"]
    assert (cpu.origin.line, cpu.origin.event) == (4, "created on cpu by torch.stack")


def test_what_torch_save_writes_is_unchanged_by_the_record():
    with simulated_cuda():
        tensor = torch.ones(3) + 1  # has an origin only when made in the user's code: give it one
        tensor.__dict__["_devfix_origin"] = object()
        buffer = io.BytesIO()
        torch.save({"weights": tensor}, buffer)
    assert tensor.__dict__.get("_devfix_origin") is not None  # still there for the error message
    buffer.seek(0)
    loaded = torch.load(buffer, weights_only=True)  # no devfix class inside the file
    assert torch.equal(loaded["weights"], torch.full((3,), 2.0))


JOINED = """\
import torch
rewards = [torch.tensor([1.0]), torch.tensor([2.0])]
batch = torch.cat(rewards)
print(torch.ones(2).cuda() + batch)
"""


def test_a_join_of_tensors_the_program_made_comes_from_where_they_were_made(tmp_path):
    error = raised(tmp_path, JOINED)
    origins = {(operand.device, operand.origin.line, operand.origin.event) for operand in meeting_of(error).operands}
    assert ("cpu", 2, "created on cpu by torch.tensor") in origins
