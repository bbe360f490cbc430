"""Quick diagnostics (devfix.incremental): the chunking they rest on, when they equal the full
analysis, and how little they re-analyse."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from devfix import incremental
from devfix.analysis.project import ProjectIndex
from devfix.codemods import ALL_RULES
from devfix.codemods.base import FixPolicy
from devfix.engine import process
from devfix.findings import Finding
from devfix.incremental import LINE, QuickDiagnostics, split_chunks

ROOT = Path(__file__).resolve().parents[1]
PROGRAMS = sorted((ROOT / "tests" / "programs").rglob("*.py")) + sorted((ROOT / "examples").glob("*.py"))
PADDING = "".join(f"\n\ndef unrelated_{index}(values):\n    return [value + {index} for value in values]\n" for index in range(40))


def full(text: str) -> list[Finding]:
    return list(process(text.encode(), "train.py", ALL_RULES, ProjectIndex({str(Path("train.py").resolve()): text}), FixPolicy()).findings)


def part_of(whole: str):
    """The server's analysis of a slice: the whole text says what the file is (a program or not)."""
    return lambda part: list(process(part.encode(), "train.py", ALL_RULES, ProjectIndex({str(Path("train.py").resolve()): whole}),
                                     FixPolicy(), whole).findings)


def keys(findings) -> list[tuple]:
    return sorted((finding.code, finding.start, finding.end, finding.message) for finding in findings)


def remembered(text: str) -> QuickDiagnostics:
    quick = QuickDiagnostics()
    quick.remember(text, full(text))
    return quick


def test_chunks_cover_every_line_once():
    text = "import torch  # c\nimport os; import sys\n\n\n@decorator\ndef f():\n    pass\n# trailing\n"
    chunks = split_chunks(text)
    assert [(chunk.start, chunk.end) for chunk in chunks] == [(1, 1), (2, 2), (3, 7), (8, 8)]
    assert "".join(chunk.text for chunk in chunks) == text
    assert [chunk.simple for chunk in chunks] == [True, True, False, False]
    assert chunks[2].binds == {"f"} and "decorator" in chunks[2].loads


def test_a_byte_order_mark_is_not_a_syntax_error():
    text = "\ufeffimport torch\n" + PADDING + "\n\ndef score(model, x, device):\n    return model(x.to(device)).argmax(1)\n"
    edited = text.replace("argmax(1)", "argmax(1).numpy()")
    assert [finding.code for finding in remembered(text).quick(edited, part_of(edited))] == [finding.code for finding in full(edited)] == ["DF008"]


def test_a_file_that_does_not_parse_has_no_chunks():
    assert split_chunks("def f(:\n    pass\n") is None
    assert not QuickDiagnostics().parses("x = (\n")


def test_splitting_again_after_an_edit_equals_splitting_from_scratch():
    """Only the chunks around an edit are parsed again; random edits (syntax errors, merged
    statements, stray `else:`, unclosed strings) must give what a full split gives."""
    pieces = ["", "\n", "x = 1\n", "    y = 2\n", "# c\n", "def f():\n", "    return 3\n", "else:\n", "(", '"""', "@d\n", "\\\n"]
    generator = random.Random(7)
    checked = 0
    for path in PROGRAMS:
        text = path.read_text()
        lines = LINE.findall(text)
        before = split_chunks(text)
        for _ in range(15):
            edited = list(lines)
            start = generator.randrange(len(edited) + 1)
            end = min(len(edited), start + generator.choice([0, 0, 1, 2]))
            edited[start:end] = [generator.choice(pieces) for _ in range(generator.choice([0, 1, 1, 2]))]
            new_text = "".join(edited)
            assert split_chunks(new_text, (lines, before)) == split_chunks(new_text), (path, start, end)
            checked += 1
    assert checked >= 200


@pytest.mark.parametrize("path", PROGRAMS, ids=lambda path: str(path.relative_to(ROOT)))
def test_quick_equals_full_after_an_edit_inside_a_statement(path, monkeypatch):
    """An edit that changes a statement's text (a comment on its last line) but not its meaning:
    the quick answer must be exactly the full analysis."""
    monkeypatch.setattr(incremental, "MAX_SHARE_OF_FILE", 1.0)  # these programs are short
    text = path.read_text()
    quick = remembered(text)
    lines = LINE.findall(text)
    for chunk in split_chunks(text):
        if chunk.simple or not chunk.text.strip():
            continue
        edited = list(lines)
        edited[chunk.end - 1] = edited[chunk.end - 1].rstrip("\r\n") + "  # edited\n"
        new_text = "".join(edited)
        assert keys(quick.quick(new_text, part_of(new_text))) == keys(full(new_text)), (path, chunk.start)


FIXTURE_BEFORES = sorted((ROOT / "fixtures").glob("*/*/before.py"))


def test_every_fixture_is_an_edit_to_follow():
    assert len(FIXTURE_BEFORES) > 80


@pytest.mark.parametrize("before", FIXTURE_BEFORES, ids=lambda path: f"{path.parent.parent.name}/{path.parent.name}")
def test_quick_follows_a_fix_being_typed(monkeypatch, before):
    """Every fixture's before → after is an edit a user makes; the quick answer after it equals
    the full analysis."""
    monkeypatch.setattr(incremental, "MAX_SHARE_OF_FILE", 1.0)
    after = before.with_name("after.py").read_text()
    quick = remembered(before.read_text())
    assert keys(quick.quick(after, part_of(after))) == keys(full(after))


def test_only_the_changed_function_is_analysed_again():
    text = "import torch\nfrom torch import nn\n" + PADDING + "\n\ndef score(model, x):\n    return model(x).argmax(1).numpy()\n"
    quick = remembered(text)
    slices: list[str] = []

    def analyse(source: str) -> list[Finding]:
        slices.append(source)
        return full(source)

    edited = text.replace("argmax(1)", "argmax(dim=1)")
    findings = quick.quick(edited, analyse)
    assert keys(findings) == keys(full(edited))
    (analysed,) = slices
    assert "def score" in analysed and "import torch" in analysed and "unrelated_" not in analysed
    assert keys(quick.quick(edited, analyse)) == keys(findings) and len(slices) == 1  # remembered provisionally


def test_definitions_a_changed_chunk_uses_come_along():
    text = (
        "import torch\nfrom torch import nn\n\n\nclass Net(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
        "        self.scale = torch.ones(3)\n" + PADDING + "\n\ndef main():\n    net = Net()\n    return net\n"
    )
    quick = remembered(text)
    slices: list[str] = []
    quick.quick(text.replace("return net\n", "return net  # ready\n"), lambda source: slices.append(source) or full(source))
    assert "class Net" in slices[0] and "unrelated_" not in slices[0]


def test_readers_of_a_changed_name_are_analysed_again():
    """Removing `.cuda()` from `model = ...` changes what devfix says about the loop that uses it."""
    text = (
        "import torch\nfrom torch import nn\nfrom torch.utils.data import DataLoader\n\n"
        "model = nn.Linear(2, 2).cuda()\nloader = DataLoader([torch.ones(2)])\n"
        "for x in loader:\n    y = model(x)\n" + PADDING
    )
    edited = text.replace("nn.Linear(2, 2).cuda()", "nn.Linear(2, 2)")
    assert keys(full(text)) != keys(full(edited))
    assert keys(remembered(text).quick(edited, part_of(edited))) == keys(full(edited))


def test_no_quick_answer_without_a_full_analysis_or_for_a_rewrite():
    text = "import torch\n" + PADDING
    assert QuickDiagnostics().quick(text, full) is None
    quick = remembered(text)
    assert quick.quick(text.replace("value +", "value -"), full) is None  # every function changed: analyse the whole file
    assert quick.quick(text + "x = (\n", full) is None


def test_a_slice_the_engine_cannot_analyse_gives_no_quick_answer():
    text = "import torch\n" + PADDING
    quick = remembered(text)

    def unavailable(source: str) -> list[Finding]:
        raise QuickDiagnostics.Unavailable

    assert quick.quick(text.replace("unrelated_3(values)", "unrelated_3(values, extra)"), unavailable) is None
