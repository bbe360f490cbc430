"""Jupyter notebooks: code cells analysed as one program, findings by cell, fixes written into the
changed cells only, every other byte of the file kept (issue 12). Executed cases live in fixtures/
(`before.ipynb`, `after.ipynb`) and run with the others."""

from __future__ import annotations

import json

import pytest

from devfix.notebooks import Notebook, NotebookError
from tests.cli_runner import invoke_devfix


def notebook(*sources: str, indent: int = 1, ensure_ascii: bool = False, as_strings: bool = False) -> str:
    cells = []
    for number, source in enumerate(sources):
        if source.startswith("md:"):
            cells.append({"cell_type": "markdown", "metadata": {}, "source": source[3:]})
            continue
        lines = source if as_strings else source.splitlines(keepends=True)
        cells.append({"cell_type": "code", "execution_count": number, "metadata": {"tags": ["é"]},
                      "outputs": [{"output_type": "stream", "name": "stdout", "text": ["ok ✓\n"]}], "source": lines})
    document = {"cells": cells, "metadata": {"kernelspec": {"name": "python3"}}, "nbformat": 4, "nbformat_minor": 5}
    return json.dumps(document, indent=indent, ensure_ascii=ensure_ascii) + "\n"


BUGGY = notebook(
    "md:# A title",
    "%matplotlib inline\nimport torch",
    "model = torch.nn.Linear(2, 2).cuda()\n!nvidia-smi",
    "%%bash\necho x.cuda()",
    "print(model(torch.ones(1, 2).cuda()))",
)


@pytest.fixture
def project(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "nb.ipynb").write_text(BUGGY)
    return tmp_path


def outside_sources(text: str) -> dict:
    document = json.loads(text)
    for cell in document["cells"]:
        cell.pop("source")
    return document


def test_findings_are_reported_by_cell(project):
    result = invoke_devfix(["check", "."])
    assert result.exit_code == 1
    assert result.stdout.splitlines() == [
        "nb.ipynb:cell 3:1:9: DF001 `.cuda()` hard-codes the GPU: the program fails without one [*]",
        "nb.ipynb:cell 5:1:13: DF001 `.cuda()` hard-codes the GPU: the program fails without one [*]",
    ]
    records = json.loads(invoke_devfix(["check", "--output-format", "json", "nb.ipynb"]).stdout)
    assert [(record["cell"], record["location"]["row"]) for record in records] == [(3, 1), (5, 1)]


def test_fix_rewrites_only_the_changed_cells_and_keeps_every_other_byte(project):
    assert invoke_devfix(["fix", "nb.ipynb"]).exit_code == 0
    fixed = (project / "nb.ipynb").read_text()
    assert outside_sources(fixed) == outside_sources(BUGGY)
    cells = json.loads(fixed)["cells"]
    assert "".join(cells[1]["source"]).endswith('device = torch.device("cuda" if torch.cuda.is_available() else "cpu")')
    assert cells[1]["source"][0] == "%matplotlib inline\n"
    assert cells[2]["source"] == ["model = torch.nn.Linear(2, 2).to(device)\n", "!nvidia-smi"]
    assert cells[3]["source"] == ["%%bash\n", "echo x.cuda()"]  # a cell magic: not Python, never edited
    assert "".join(cells[4]["source"]) == "print(model(torch.ones(1, 2).to(device)))"
    unchanged_prefix = BUGGY[: BUGGY.index('"source": [\n    "%matplotlib')]
    assert fixed.startswith(unchanged_prefix) and fixed.endswith("\n") and "ok ✓" in fixed
    assert invoke_devfix(["check", "nb.ipynb"]).exit_code == 0


@pytest.mark.parametrize("style", [{"indent": 2}, {"ensure_ascii": True}, {"as_strings": True}])
def test_the_notebook_keeps_its_own_json_style(tmp_path, monkeypatch, style):
    monkeypatch.chdir(tmp_path)
    original = notebook("import torch\nx = torch.ones(2).cuda()  # é", **style)
    (tmp_path / "nb.ipynb").write_text(original)
    assert invoke_devfix(["fix", "nb.ipynb"]).exit_code == 0
    fixed = (tmp_path / "nb.ipynb").read_text()
    reference = json.loads(original)
    reference["cells"][0]["source"] = json.loads(fixed)["cells"][0]["source"]
    expected = json.dumps(reference, indent=style.get("indent", 1), ensure_ascii=style.get("ensure_ascii", False)) + "\n"
    assert fixed == expected
    assert "to(device)" in "".join(json.loads(fixed)["cells"][0]["source"])


def test_a_device_from_an_earlier_cell_is_in_scope_in_a_later_one(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "nb.ipynb").write_text(notebook(
        'import torch\ndevice = torch.device("cuda" if torch.cuda.is_available() else "cpu")',
        "x = torch.ones(2).cuda()",
    ))
    diff = invoke_devfix(["diff", "nb.ipynb"]).stdout
    assert diff.startswith("--- ./nb.ipynb:cell 2\n+++ ./nb.ipynb:cell 2\n")
    assert "+x = torch.ones(2).to(device)" in diff and "cell 1" not in diff


def test_cells_written_with_windows_line_endings_keep_them(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    original = notebook(
        'import torch as t\r\ndevice = t.device("cuda" if t.cuda.is_available() else "cpu")\r\n',
        "# storage shared\r\na = t.arange(0, 6).float()\r\nb = a.view(2, 3)",
        "d = t.rand(10).cuda(0)\r\nprint(d.is_leaf)",
    )
    (tmp_path / "nb.ipynb").write_text(original)
    assert "cell 2" not in invoke_devfix(["diff", "nb.ipynb"]).stdout  # pytorch-book: every cell looked changed
    assert invoke_devfix(["fix", "nb.ipynb"]).exit_code == 0
    cells = json.loads((tmp_path / "nb.ipynb").read_text())["cells"]
    assert cells[:2] == json.loads(original)["cells"][:2]
    assert cells[2]["source"] == ["d = t.rand(10).to(device)\r\n", "print(d.is_leaf)"]


def test_modulo_at_the_start_of_a_continued_line_is_python_not_a_magic():
    program = Notebook(notebook('message = ("%d items"\n           % 3)\n%time x = 1')).program
    assert '           % 3)\n' in program and "%time" not in program


@pytest.mark.parametrize(("content", "message"), [("{not json", "not valid JSON"), ('{"cells": 3}', "not a Jupyter notebook")])
def test_a_broken_notebook_is_an_error_and_left_alone(tmp_path, monkeypatch, content, message):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "nb.ipynb").write_text(content)
    result = invoke_devfix(["fix", "nb.ipynb"])
    assert result.exit_code == 2 and message in result.stderr
    assert (tmp_path / "nb.ipynb").read_text() == content
    with pytest.raises(NotebookError):
        Notebook(content)


def test_a_syntax_error_is_placed_in_its_cell(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "nb.ipynb").write_text(notebook("import torch", "x = torch.ones(2).cuda()\ndef f(:\n    pass"))
    result = invoke_devfix(["check", "nb.ipynb"])
    assert result.exit_code == 2
    assert "nb.ipynb:cell 2:" in result.stderr and "syntax error" in result.stderr


def test_add_ignore_comments_the_lines_in_their_cells_and_keeps_the_rest_of_the_notebook(project):
    result = invoke_devfix(["check", "--add-ignore", "nb.ipynb"])
    assert result.exit_code == 0, result.stderr
    assert "Added 2 `# devfix: ignore` comments in 1 file." in result.stderr
    text = (project / "nb.ipynb").read_text()
    cells = [cell for cell in json.loads(text)["cells"] if cell["cell_type"] == "code"]
    assert "".join(cells[1]["source"]) == "model = torch.nn.Linear(2, 2).cuda()  # devfix: ignore[DF001]\n!nvidia-smi"
    assert "".join(cells[3]["source"]) == "print(model(torch.ones(1, 2).cuda()))  # devfix: ignore[DF001]"
    assert "".join(cells[0]["source"]) == "%matplotlib inline\nimport torch"  # IPython lines stay as they were
    assert "".join(cells[2]["source"]) == "%%bash\necho x.cuda()"
    assert outside_sources(text) == outside_sources(BUGGY)
    assert invoke_devfix(["check", "nb.ipynb"]).exit_code == 0


def test_add_ignore_reports_a_notebook_line_that_cannot_take_a_comment_by_its_cell(project):
    source = notebook("import torch", 'x = torch.zeros(2).cuda(); s = """a\nb"""')
    (project / "nb.ipynb").write_text(source)
    result = invoke_devfix(["check", "--add-ignore", "nb.ipynb"])
    assert result.exit_code == 2
    assert "nb.ipynb:cell 2:1: the line ends inside a string" in result.stderr
    assert (project / "nb.ipynb").read_text() == source


def test_guards_of_calls_in_consecutive_cells_stay_in_their_cells(tmp_path, monkeypatch):
    """Dive-into-DL's GPU chapter: `torch.cuda.current_device()` and `torch.cuda.get_device_name(0)`
    in two cells. One `if` around both moved the second cell's code into the first and left the
    second as it was (run twice, once unguarded)."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "nb.ipynb").write_text(notebook("import torch", "torch.cuda.current_device()", "torch.cuda.get_device_name(0)"))
    assert invoke_devfix(["fix", "nb.ipynb"]).exit_code == 0
    sources = ["".join(cell["source"]) for cell in json.loads((tmp_path / "nb.ipynb").read_text())["cells"]]
    assert sources == [
        "import torch",
        "if torch.cuda.is_available():\n    torch.cuda.current_device()",
        "if torch.cuda.is_available():\n    torch.cuda.get_device_name(0)",
    ]


def test_a_fixed_program_that_moved_a_cell_marker_keeps_no_cells():
    """The engine's last check before it writes a notebook back: an edit that indents (or drops) a
    cell's marker would move code from one cell into another."""
    document = Notebook(notebook("import torch", "a = 1", "b = 2"))
    assert document.keeps_its_cells(document.program)
    indented = document.program.replace("# devfix: cell 3", "    # devfix: cell 3")
    assert not document.keeps_its_cells(indented)
    assert not document.keeps_its_cells(document.program.replace("# devfix: cell 2\n", ""))


def test_a_statement_that_starts_a_cell_is_not_removed(tmp_path, monkeypatch):
    """DF022 moves the model where it is built and removes the later move; a cell that holds only
    that move keeps it (a no-op now) rather than losing its marker and every fix of the notebook."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "nb.ipynb").write_text(notebook(
        "import torch\ndevice = torch.device('cuda' if torch.cuda.is_available() else 'cpu')",
        "model = torch.nn.Linear(3, 2)\noptimizer = torch.optim.Adam(model.parameters())\n"
        "optimizer.load_state_dict(optimizer.state_dict())",
        "model.to(device)",
    ))
    result = invoke_devfix(["fix", "--unsafe-fixes", "nb.ipynb"])
    assert result.exit_code == 0, result.output
    sources = ["".join(cell["source"]) for cell in json.loads((tmp_path / "nb.ipynb").read_text())["cells"]]
    assert sources[1].startswith("model = torch.nn.Linear(3, 2).to(device)\n") and sources[2] == "model.to(device)"
