"""DF029's refusals and reports that a fixture cannot show (a report-only finding fails on a GPU
before and after; a refusal leaves correct code as it is)."""

from __future__ import annotations

import pytest

from devfix.codemods import LoaderWorkerDevice
from tests.conftest import run_devfix

DATASET = """import torch
from torch.utils.data import DataLoader, Dataset

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")


class Points(Dataset):
    def __init__(self):
        self.x = torch.randn(12, 3)
        self.y = torch.randint(0, 2, (12,))

    def __len__(self):
        return 12

    def __getitem__(self, i):
{getitem}

"""
MOVED = "        return self.x[i].to(device), self.y[i].to(device)"
MAIN = """dataset = Points()
loader = DataLoader(dataset, batch_size=4, num_workers=2)
model = torch.nn.Linear(3, 2).to(device)
for x, y in loader:
    print(model(x).argmax(1) == y)
"""


def check(main: str = MAIN, getitem: str = MOVED):
    return run_devfix(DATASET.format(getitem=getitem) + main, path="train.py", rules=[LoaderWorkerDevice])


def test_the_items_stay_on_the_cpu_and_the_loop_moves_each_batch():
    result = check()
    fixed = result.fixed.decode()
    assert "        return self.x[i], self.y[i]\n" in fixed
    assert "for x, y in loader:\n    x, y = x.to(device), y.to(device)\n    print(" in fixed
    assert [finding.code for finding in result.applied] == ["DF029"]


def test_a_loop_that_moves_the_batch_itself_gets_no_second_move():
    main = MAIN.replace("    print(", "    x, y = x.to(device), y.to(device)\n    print(")
    fixed = check(main).fixed.decode()
    assert "        return self.x[i], self.y[i]\n" in fixed
    assert fixed.count("x, y = x.to(device), y.to(device)") == 1


@pytest.mark.parametrize("main", [
    MAIN.replace("num_workers=2", "num_workers=0"),  # read in the main process: a GPU-resident dataset is fine
    MAIN.replace(", num_workers=2", ""),
    MAIN.replace("num_workers=2", "num_workers=2, multiprocessing_context=\"spawn\""),
])
def test_loaders_without_forked_workers_are_left_alone(main):
    result = check(main)
    assert not result.findings and result.fixed.decode() == DATASET.format(getitem=MOVED) + main


@pytest.mark.parametrize("main, getitem", [
    (MAIN, "        x = self.x[i]\n        if torch.cuda.is_available():\n            x = x.cuda()\n        return x, self.y[i]"),
    (MAIN, "        return self.x[i] + torch.zeros(3, device=device), self.y[i]"),  # a placement the return does not make
    (MAIN, "        x = self.x[i].to(device)\n        return x * 2, self.y[i]"),  # the method computes with the move
    (MAIN.replace("num_workers=2", "num_workers=2, collate_fn=lambda rows: rows"), MOVED),  # may regroup the items
    (MAIN + "print(dataset[0])\n", MOVED),  # an item read in the main process would leave the device
    (MAIN.replace("for x, y in loader:", "for batch in loader:\n    x, y = batch"), MOVED),  # not unpacked in the loop
    (MAIN + "total = sum(model(x).sum() for x, _ in loader)\n", MOVED),  # a comprehension, not a loop
    (MAIN + "\n\ndef evaluate(device, batches):\n    for x, y in batches:\n        print(x.to(device))\n\n\nevaluate(\"cpu\", loader)\n",
     MOVED),  # a loop whose scope names another `device`
    (MAIN + "\n\ndef count(batches):\n    for x, y in batches:\n        print(x)\n\n\ncount(loader)\ncount([(1, 2)])\n",
     MOVED),  # a function also given batches of something else
])
def test_a_placement_or_a_reader_it_cannot_follow_is_reported_without_a_fix(main, getitem):
    source = DATASET.format(getitem=getitem) + main
    result = run_devfix(source, path="train.py", rules=[LoaderWorkerDevice])
    assert [finding.code for finding in result.findings] == ["DF029"]
    assert not result.applied and result.fixed.decode() == source


def test_a_loader_handed_to_a_function_is_followed_into_its_loops():
    main = MAIN + "\n\ndef epoch(net, batches):\n    for step, (x, y) in enumerate(batches):\n        print(net(x), y)\n\n\nepoch(model, loader)\n"
    fixed = check(main).fixed.decode()
    assert "for step, (x, y) in enumerate(batches):\n        x, y = x.to(device), y.to(device)\n" in fixed
    assert "for x, y in loader:\n    x, y = x.to(device), y.to(device)\n" in fixed


def test_a_class_named_otherwise_than_built_keeps_its_moves():
    main = MAIN + "print(isinstance(dataset, Points))\n"
    source = DATASET.format(getitem=MOVED) + main
    result = run_devfix(source, path="train.py", rules=[LoaderWorkerDevice])
    assert [finding.code for finding in result.findings] == ["DF029"]
    assert not result.applied and result.fixed.decode() == source


COLLATE = """import torch
from torch.utils.data import DataLoader

device = "cuda"


def stack(rows):
    return torch.stack([x for x, _ in rows]).to(device), torch.tensor([y for _, y in rows]).to(device)


rows = [(torch.randn(3), i % 2) for i in range(8)]
loader = DataLoader(rows, batch_size=4, collate_fn=stack, num_workers=2)
for x, y in loader:
    print(x.sum(), y)
"""


def test_a_collate_function_hands_back_host_batches_that_the_loop_moves():
    result = run_devfix(COLLATE, path="train.py", rules=[LoaderWorkerDevice])
    fixed = result.fixed.decode()
    assert "    return torch.stack([x for x, _ in rows]), torch.tensor([y for _, y in rows])\n" in fixed
    assert "for x, y in loader:\n    x, y = x.to(device), y.to(device)\n" in fixed


@pytest.mark.parametrize("source", [
    COLLATE + "print(stack(rows))\n",  # called in the main process too
    COLLATE.replace("num_workers=2)", "num_workers=2)\nother = DataLoader(rows, collate_fn=stack)\nprint(next(iter(other)))"),
])
def test_a_collate_function_used_otherwise_keeps_its_moves(source):
    result = run_devfix(source, path="train.py", rules=[LoaderWorkerDevice])
    assert [finding.code for finding in result.findings] == ["DF029"]
    assert not result.applied and result.fixed.decode() == source


def test_a_collate_function_over_items_placed_by_getitem_keeps_its_moves():
    main = "def stack(rows):\n    return torch.stack([x for x, _ in rows]).to(device), torch.stack([y for _, y in rows])\n\n\n" + \
        MAIN.replace("num_workers=2", "num_workers=2, collate_fn=stack")
    source = DATASET.format(getitem=MOVED) + main
    result = run_devfix(source, path="train.py", rules=[LoaderWorkerDevice])
    assert [finding.code for finding in result.findings] == ["DF029", "DF029"]
    assert not result.applied and result.fixed.decode() == source


def test_a_loop_inside_a_function_whose_enclosing_function_names_another_device_keeps_the_moves():
    main = MAIN.replace("for x, y in loader:\n    print(model(x).argmax(1) == y)\n", "") + (
        "\n\ndef evaluate(device):\n    def run():\n        for x, y in loader:\n            print(x.to(device), y)\n\n    run()\n\n\nevaluate(\"cpu\")\n"
    )
    source = DATASET.format(getitem=MOVED) + main
    result = run_devfix(source, path="train.py", rules=[LoaderWorkerDevice])
    assert [finding.code for finding in result.findings] == ["DF029"]
    assert not result.applied and result.fixed.decode() == source


@pytest.mark.parametrize("call, fixed", [
    ("train(model, device, loader)", True),  # the module's own device, by the same name
    ("train(model, torch.device(\"cpu\"), loader)", False),
])
def test_a_train_function_given_the_module_device_as_a_parameter(call, fixed):
    main = MAIN.replace("for x, y in loader:\n    print(model(x).argmax(1) == y)\n", "") + (
        f"\n\ndef train(net, device, batches):\n    for x, y in batches:\n        print(net(x.to(device)), y)\n\n\n{call}\n"
    )
    source = DATASET.format(getitem=MOVED) + main
    result = run_devfix(source, path="train.py", rules=[LoaderWorkerDevice])
    assert [finding.code for finding in (*result.applied, *result.findings)] == ["DF029"]
    assert ("    for x, y in batches:\n        x, y = x.to(device), y.to(device)\n" in result.fixed.decode()) is fixed


RESIDENT = DATASET.replace("torch.randn(12, 3)", "torch.randn(12, 3).to(device)")
PLAIN_GETITEM = "        return self.x[i], self.y[i]"


def test_a_dataset_kept_on_the_device_is_read_in_the_main_process():
    result = run_devfix(RESIDENT.format(getitem=PLAIN_GETITEM) + MAIN, path="train.py", rules=[LoaderWorkerDevice])
    assert "loader = DataLoader(dataset, batch_size=4, num_workers=0)\n" in result.fixed.decode()


@pytest.mark.parametrize("option", ["persistent_workers=True", "prefetch_factor=4", "worker_init_fn=print", "pin_memory=True", "timeout=5"])
def test_a_loader_with_options_for_its_workers_keeps_them(option):
    source = RESIDENT.format(getitem=PLAIN_GETITEM) + MAIN.replace("num_workers=2", f"num_workers=2, {option}")
    result = run_devfix(source, path="train.py", rules=[LoaderWorkerDevice])
    assert [finding.code for finding in result.findings] == ["DF029"]
    assert not result.applied and result.fixed.decode() == source


KEPT_DEVICE = DATASET.replace("    def __init__(self):\n", "    def __init__(self, device):\n        self.device = device\n")
MOVED_TO_KEPT = "        return self.x[i].to(self.device), self.y[i].to(self.device)"


@pytest.mark.parametrize("given, moved", [
    ("Points(device)", "device"),
    ("Points(device=device)", "device"),
    ("Points(\"cuda\")", "\"cuda\""),
    ("Points(args.device)", "args.device"),  # an attribute of a module-level name
])
def test_a_device_the_dataset_keeps_from_its_constructor_is_the_loops_device(given, moved):
    main = "args = type(\"Args\", (), {\"device\": device})\n" + MAIN.replace("Points()", given)
    result = run_devfix(KEPT_DEVICE.format(getitem=MOVED_TO_KEPT) + main, path="train.py", rules=[LoaderWorkerDevice])
    fixed = result.fixed.decode()
    assert "        return self.x[i], self.y[i]\n" in fixed
    assert f"for x, y in loader:\n    x, y = x.to({moved}), y.to({moved})\n" in fixed


@pytest.mark.parametrize("dataset, main", [
    (KEPT_DEVICE, MAIN.replace("Points()", "Points(device)") + "other = DataLoader(Points(\"cpu\"), num_workers=2)\nprint(len(other))\n"),
    (KEPT_DEVICE, "def main(device):\n" + "".join(f"    {line}\n" for line in MAIN.replace("Points()", "Points(device)").splitlines())
     + "\n\nmain(device)\n"),  # the function's own `device`
    (KEPT_DEVICE.replace("        self.device = device\n", "        device = torch.device(device)\n        self.device = device\n"),
     MAIN.replace("Points()", "Points(device)")),  # not the parameter as given
    (KEPT_DEVICE.replace("        self.device = device\n", "        self.device = device\n        self.device = \"cpu\"\n"),
     MAIN.replace("Points()", "Points(device)")),  # rebound
    (KEPT_DEVICE.replace("    def __init__(self, device):\n", "    def __init__(self, device):\n        device = device\n"),
     MAIN.replace("Points()", "Points(device)")),
])
def test_a_kept_device_the_constructions_do_not_name_alike_keeps_the_moves(dataset, main):
    source = dataset.format(getitem=MOVED_TO_KEPT) + main
    result = run_devfix(source, path="train.py", rules=[LoaderWorkerDevice])
    assert [finding.code for finding in result.findings] == ["DF029"]
    assert not result.applied and result.fixed.decode() == source


POINTS_DATASET = '''import torch
from torch.utils.data import Dataset

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")


class Points(Dataset):
    def __init__(self, n=16):
        self.x = torch.randn(n, 3)

    def __len__(self):
        return len(self.x)

    def __getitem__(self, i):
        return self.x[i].to({target})
'''

TRAIN_OVER_POINTS = '''import torch
from torch.utils.data import DataLoader

from dataset import Points, device

model = torch.nn.Linear(3, 1).to(device)
loader = DataLoader(Points(), batch_size=4, num_workers=2{options})
for x in loader:
    print(model(x).sum())
'''


def _train_result(tmp_path, target: str, options: str = "", fix: bool = True):
    (tmp_path / "dataset.py").write_text(POINTS_DATASET.format(target=target))
    train = tmp_path / "train.py"
    train.write_text(TRAIN_OVER_POINTS.format(options=options))
    return run_devfix(train.read_text(), str(train), rules=[LoaderWorkerDevice], fix=fix)


def test_a_dataset_of_another_file_moving_its_items_to_the_gpu_is_read_without_workers(tmp_path):
    result = _train_result(tmp_path, "device")
    assert "DataLoader(Points(), batch_size=4, num_workers=0)" in result.fixed.decode()
    assert _train_result(tmp_path, '"cuda"').fixed != _train_result(tmp_path, '"cuda"').source


def test_a_dataset_of_another_file_that_keeps_its_items_on_the_cpu_is_left_alone(tmp_path):
    for target in ('"cpu"', "torch.float16"):
        result = _train_result(tmp_path, target, fix=False)
        assert not result.findings and result.fixed == result.source, target


def test_loaders_given_options_that_need_workers_are_reported_without_a_fix(tmp_path):
    result = _train_result(tmp_path, "device", options=", persistent_workers=True", fix=False)
    assert [finding.code for finding in result.findings] == ["DF029"] and not result.findings[0].fixable
    assert result.fixed == result.source
