"""The result cache: a second run of an unchanged tree analyses nothing again, and every change
that could change a result (the file, a module it imports, a module that appears, the settings)
makes the file be analysed again."""

from __future__ import annotations

import json

import pytest

import devfix.engine
from tests.cli_runner import invoke_devfix

NET = (
    "import torch\n\n\nclass Net(torch.nn.Module):\n    def __init__(self):\n        super().__init__()\n"
    "        self.fc = torch.nn.Linear(2, 2)\n\n    def forward(self, x):\n        return self.fc(x)\n"
)
PLAIN_NET = "class Net:\n    def __call__(self, x):\n        return x\n"
TRAIN = (
    "import torch\nfrom net import Net\n\n"
    'device = torch.device("cuda" if torch.cuda.is_available() else "cpu")\n'
    "model = Net()\nx = torch.ones(1, 2).to(device)\nprint(model(x))\n"
)


@pytest.fixture
def project(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "net.py").write_text(NET)
    (tmp_path / "train.py").write_text(TRAIN)
    return tmp_path


class AnalysedLog:
    """The files the engine analysed, one line each in a file: the analysis runs in worker
    processes, forked with the patched engine, so a list in this process would stay empty."""

    def __init__(self, path) -> None:
        self.path = path
        self.clear()

    def clear(self) -> None:
        self.path.write_text("")

    def __iter__(self):
        return iter(self.path.read_text().splitlines())

    def __eq__(self, other) -> bool:
        return list(self) == other


@pytest.fixture
def analysed(monkeypatch, tmp_path_factory):
    log = AnalysedLog(tmp_path_factory.mktemp("log") / "analysed.txt")
    real = devfix.engine.process

    def counting(source, path, *args, **kwargs):
        with log.path.open("a") as file:
            file.write(path + "\n")
        return real(source, path, *args, **kwargs)

    monkeypatch.setattr(devfix.engine, "process", counting)
    return log


def check(*args: str):
    return invoke_devfix(["check", "-j", "1", "--output-format", "json", *args])


def codes(result) -> list[str]:
    return [record["code"] for record in json.loads(result.stdout)]


def test_a_second_run_of_an_unchanged_tree_analyses_nothing(project, analysed):
    first = check(".")
    assert codes(first) == ["DF003"] and sorted(analysed) == ["net.py", "train.py"]
    analysed.clear()
    second = check(".")
    assert second.stdout == first.stdout and second.exit_code == first.exit_code == 1
    assert analysed == []
    assert (project / ".devfix_cache" / "CACHEDIR.TAG").is_file()
    assert (project / ".devfix_cache" / ".gitignore").read_text().splitlines()[-1] == "*"


def test_a_changed_file_is_analysed_again(project, analysed):
    check("train.py")
    (project / "train.py").write_text(TRAIN.replace("model = Net()", "model = Net().to(device)"))
    analysed.clear()
    assert codes(check("train.py")) == [] and analysed == ["train.py"]


def test_a_change_in_an_imported_module_reaches_its_importers(project, analysed):
    assert codes(check("train.py")) == ["DF003"]
    (project / "net.py").write_text(PLAIN_NET)
    analysed.clear()
    assert codes(check("train.py")) == [] and analysed == ["train.py"]


def test_a_module_that_appears_where_none_was_found_reaches_its_importers(tmp_path, monkeypatch, analysed):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "train.py").write_text(TRAIN)
    assert codes(check("train.py")) == []  # `Net` unknown: devfix does not guess
    (tmp_path / "net.py").write_text(NET)
    analysed.clear()
    assert codes(check("train.py")) == ["DF003"] and analysed == ["train.py"]


HELPERS = (
    "import torch\n\n\ndef evaluate(model, batches):\n    hits = 0\n    for x, y in batches:\n"
    "        hits += (model(x).argmax(1) == y).sum().item()\n    return hits\n"
)
SCRIPT = (
    "import torch\nfrom torch.utils.data import DataLoader, TensorDataset\nfrom helpers import evaluate\n\n"
    'device = torch.device("cuda" if torch.cuda.is_available() else "cpu")\n'
    "model = torch.nn.Linear(2, 2).to(device)\n"
    "print(evaluate(model, {loader}))\n"
)


def test_a_caller_in_a_new_file_reaches_the_helper(tmp_path, monkeypatch, analysed):
    """The batches of `evaluate`'s loader are moved because its only caller passes a DataLoader;
    a new file that calls it with something else changes that."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "helpers.py").write_text(HELPERS)
    (tmp_path / "train.py").write_text(SCRIPT.format(loader="DataLoader(TensorDataset(torch.ones(4, 2), torch.zeros(4)))"))
    assert codes(check("helpers.py")) == ["DF010"]
    (tmp_path / "other.py").write_text(SCRIPT.format(loader="[(1, 2)]"))
    analysed.clear()
    assert codes(check("helpers.py")) == [] and analysed == ["helpers.py"]


def test_other_settings_are_other_entries(project, analysed):
    check("train.py")
    analysed.clear()
    assert codes(check("--ignore", "DF003", "train.py")) == [] and analysed == ["train.py"]


def test_an_edited_devfix_is_another_devfix(project, analysed, monkeypatch):
    """A checkout or an editable install whose rules changed must not reuse the old results."""
    import devfix.cache

    check("train.py")
    analysed.clear()
    monkeypatch.setattr(devfix.cache, "devfix_build", lambda: "a devfix edited since")
    check("train.py")
    assert analysed == ["train.py"]


def test_no_cache_neither_reads_nor_writes(project, analysed):
    check("--no-cache", "train.py")
    check("--no-cache", "train.py")
    assert analysed == ["train.py", "train.py"]
    assert not (project / ".devfix_cache").exists()


def test_a_damaged_entry_is_computed_again(project, analysed):
    check("train.py")
    for entry in (project / ".devfix_cache").rglob("results.json"):
        entry.write_text("{not json")
    analysed.clear()
    assert codes(check("train.py")) == ["DF003"] and analysed == ["train.py"]


def test_fix_from_a_cached_diff_writes_the_same_bytes(project):
    diffed = invoke_devfix(["diff", "-j", "1", "train.py"])
    assert diffed.exit_code == 1
    assert invoke_devfix(["fix", "-j", "1", "train.py"]).exit_code == 0
    assert "model = Net().to(device)" in (project / "train.py").read_text()
    assert invoke_devfix(["check", "-j", "1", "train.py"]).exit_code == 0
