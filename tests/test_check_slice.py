"""A check that analyses only the statements that can hold findings (devfix.check_slice) finds
exactly what the check of the whole file finds."""

from __future__ import annotations

from pathlib import Path

import pytest

from devfix import check_slice as slicing
from devfix import engine
from devfix.analysis.project import ProjectIndex
from devfix.codemods import ALL_RULES
from devfix.engine import process

ROOT = Path(__file__).resolve().parents[1]
SOURCES = sorted(
    [*(ROOT / "fixtures").rglob("*.py"), *(ROOT / "tests" / "programs").rglob("*.py"),
     *(ROOT / "tests" / "clean_programs").rglob("*.py"), *(ROOT / "examples").glob("*.py")]
)
SHARDS = 4  # the loops over every source run as this many tests, which run side by side under xdist
# unrelated code, so that the statements that matter are a small part of the file (as in a library)
PADDING = "".join(f"\n\ndef unrelated_{index}(values):\n    return [value + {index} for value in values]\n" for index in range(40))


def keys(result) -> list[tuple]:
    return sorted((finding.code, finding.start, finding.end, finding.message) for finding in result.findings)


def whole_file_check(monkeypatch, source: bytes, path: str, rules=ALL_RULES):
    with monkeypatch.context() as patch:
        patch.setattr(engine, "_slice_for", lambda facts, rules: None)
        return process(source, path, rules, ProjectIndex())


def sliced_and_whole(monkeypatch, text: str, path: Path, rules) -> tuple | None:
    """Both checks' findings, or None when the check would not slice this text."""
    source = text.encode()
    facts = engine.screen(source, str(path), ProjectIndex())
    if facts is None or engine._slice_for(facts, rules) is None:
        return None
    sliced = process(source, str(path), rules, ProjectIndex())
    whole = whole_file_check(monkeypatch, source, str(path), rules)
    return (keys(sliced), sliced.error), (keys(whole), whole.error)


@pytest.mark.parametrize("shard", range(SHARDS))
def test_each_rules_seeds_hold_every_finding_of_its_own(monkeypatch, shard):
    """Each rule that says where its findings are, alone, on every fixture and program, sliced
    however little the slice saves, against its findings in one whole-file check of every rule (a
    check applies nothing: each rule's findings are its own, whichever others run beside it)."""
    monkeypatch.setattr(slicing, "MAX_SHARE_OF_FILE", 1.0)
    sliced_rules = [rule for rule in ALL_RULES if rule.SPEC.findings_in is not None]
    compared, differences = 0, []
    for path in SOURCES[shard::SHARDS]:
        source = path.read_bytes()
        facts = engine.screen(source, str(path), ProjectIndex())
        if facts is None:
            continue
        whole = None
        for rule in sliced_rules:
            if engine._slice_for(facts, [rule]) is None:
                continue
            whole = whole or whole_file_check(monkeypatch, source, str(path))
            sliced = process(source, str(path), [rule], ProjectIndex())
            own = [key for key in keys(whole) if key[0] == rule.CODE]
            compared += 1
            if (keys(sliced), sliced.error) != (own, whole.error):
                differences.append((rule.CODE, str(path.relative_to(ROOT)), keys(sliced), own))
    assert differences == []
    assert compared >= 60 // SHARDS


@pytest.mark.parametrize("shard", range(SHARDS))
def test_the_sliced_check_of_all_rules_finds_what_the_whole_file_check_finds(monkeypatch, shard):
    """Every rule, as a check runs them: the slice is taken only where every rule that may apply
    says where its findings are, and where it saves half the file (here: with unrelated code
    appended, as in a library module)."""
    compared, differences = 0, []
    for path in SOURCES[shard::SHARDS]:
        both = sliced_and_whole(monkeypatch, path.read_text(encoding="utf-8") + PADDING, path, ALL_RULES)
        if both is not None:
            compared += 1
            if both[0] != both[1]:
                differences.append((str(path.relative_to(ROOT)), both))
    assert differences == []
    assert compared >= 20 // SHARDS


# a model library in timm's style: a configuration table built by calling a function of the file at
# the top level, classes whose attributes share their names with tensor methods (`self.size`, `x.size()`)
MODEL_LIBRARY = '''"""Models."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


def _cfg(url="", **kwargs):
    return {"url": url, "num_classes": 1000, **kwargs}


default_cfgs = {"tiny": _cfg(url="tiny.pth"), "base": _cfg(url="base.pth")}


def to_windows(x, size):
    batch, tokens, channels = x.shape
    return x.reshape(batch, tokens // size, size, channels)


class Unroll(nn.Module):
    def __init__(self, size):
        super().__init__()
        self.size = size
        self.view = (size, size)

    def forward(self, x):
        return to_windows(x, self.size).flatten(1, 2)


class SelfAttention(nn.Module):
    def __init__(self, dim, heads=2):
        super().__init__()
        self.heads = heads
        self.scale = (dim // heads) ** -0.5
        self.qkv = nn.Linear(dim, dim * 3)
        self.proj = nn.Linear(dim, dim)

    def forward(self, x):
        batch, tokens, channels = x.shape
        q, k, v = self.qkv(x).reshape(batch, tokens, 3, self.heads, -1).permute(2, 0, 3, 1, 4).unbind(0)
        weights = (q * self.scale) @ k.transpose(-2, -1)
        return self.proj((weights.softmax(dim=-1) @ v).transpose(1, 2).reshape(batch, tokens, channels))


class Stage(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.attn = SelfAttention(dim)
        self.unroll = Unroll(2)

    def forward(self, x):
        x = x + self.attn(self.norm(x))
        return F.layer_norm(x, x.shape[-1:]) * math.sqrt(x.size(-1))


def create_stage(name, **kwargs):
    return Stage(kwargs.get("dim", 8)), default_cfgs[name]
'''


@pytest.mark.parametrize("shard", range(SHARDS))
def test_the_sliced_check_finds_what_the_whole_file_check_finds_below_a_model_library(monkeypatch, shard):
    """Every fixture and program below a library of unrelated models, as one file: the slice keeps
    what the rules read (a `device` bound below functions that the top level calls before it cannot
    be used by them) and drops the models."""
    compared, differences = 0, []
    for path in SOURCES[shard::SHARDS]:
        both = sliced_and_whole(monkeypatch, MODEL_LIBRARY + "\n\n" + path.read_text(encoding="utf-8"), path, ALL_RULES)
        if both is not None:
            compared += 1
            if both[0] != both[1]:
                differences.append((str(path.relative_to(ROOT)), both))
    assert differences == []
    assert compared >= 30 // SHARDS


def kept_lines(part_text: str, text: str) -> set[int]:
    """The lines a slice keeps as they are (dropped ones are blank or a placeholder string)."""
    return {number for number, (kept, original) in enumerate(zip(part_text.splitlines(), text.splitlines()), 1)
            if kept == original and kept.strip()}


def value_facts(values, lines: set[int]) -> tuple:
    return tuple(
        {position: fact for position, fact in facts.items() if position[0] in lines}
        for facts in (values.reads, values.read_names, values.attribute_reads)
    ) + (sorted(position for position in values.scalar_tensors if position[0] in lines),)


@pytest.mark.parametrize("above, below", [("", PADDING), (MODEL_LIBRARY + "\n\n", "")], ids=["padded", "below-a-model-library"])
def test_the_value_analysis_of_a_slice_knows_what_the_whole_files_knows_of_the_kept_lines(above, below):
    """A sliced check lets the value analysis read the slice alone (`FileFacts.read_values_in`):
    every kind it gives a name read in a kept statement must be the whole file's."""
    compared, differences = 0, []
    for path in SOURCES:
        text = above + path.read_text(encoding="utf-8") + below
        whole = engine.screen(text.encode(), str(path), ProjectIndex())
        if whole is None or (part := engine._slice_for(whole, ALL_RULES)) is None or not part.values_complete:
            continue
        sliced = engine.screen(text.encode(), str(path), ProjectIndex())
        sliced.read_values_in(part.text)
        lines = kept_lines(part.text, text)
        compared += 1
        if value_facts(sliced.values, lines) != value_facts(whole.values, lines):
            differences.append(str(path.relative_to(ROOT)))
    assert differences == []
    assert compared >= 30


SHARED_METHOD_NAME = MODEL_LIBRARY + '''

class Encoder(nn.Module):
    def forward(self, x):
        return self.encode([x.size(0), x.size(1)])

    def encode(self, sizes):
        return sum(sizes)


class Head(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.scale = torch.ones(dim)

    def forward(self, x):
        return self.encode(torch.zeros(3)) * self.scale

    def encode(self, t):
        return t + 1
'''


def test_the_value_analysis_reads_the_whole_file_when_another_class_calls_a_kept_method_by_name():
    """`analysis.values` gives `encode`'s parameter the kinds every `.encode(...)` call passes,
    `Encoder`'s own call (a list) too: read alone, the slice would take Head's `t` for a tensor."""
    text = SHARED_METHOD_NAME
    whole = engine.screen(text.encode(), "models.py", ProjectIndex())
    part = engine._slice_for(whole, ALL_RULES)
    assert part is not None and "class Encoder" not in part.text and "class Head" in part.text
    assert part.values_complete is False
    sliced = engine.screen(text.encode(), "models.py", ProjectIndex())
    sliced.read_values_in(part.text)
    lines = kept_lines(part.text, text)
    assert value_facts(sliced.values, lines) != value_facts(whole.values, lines)  # why the slice is refused
    without_encoder = text.replace("        return self.encode([x.size(0), x.size(1)])", "        return x")
    assert engine._slice_for(engine.screen(without_encoder.encode(), "models.py", ProjectIndex()), ALL_RULES).values_complete


POSITIONS = '''

class PositionalHead(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.emb = nn.Embedding(64, dim)
        self.scale = torch.ones(dim)

    def forward(self, x):
        positions = torch.arange(x.size(1))
        return (x + self.emb(positions)) * self.scale
'''


def test_a_class_wide_finding_is_checked_without_the_unrelated_classes():
    """DF014 and DF016 say which classes can hold their findings: the models that only share
    attribute names with them (`x.size(1)`, `self.size`) or call `torch` are left out."""
    text = MODEL_LIBRARY + POSITIONS
    facts = engine.screen(text.encode(), "models.py", ProjectIndex())
    part = engine._slice_for(facts, ALL_RULES)
    assert part is not None
    assert "class PositionalHead(nn.Module):" in part.text
    assert "class Unroll" not in part.text and "class SelfAttention" not in part.text and "class Stage" not in part.text
    result = process(text.encode(), "models.py", ALL_RULES, ProjectIndex())
    assert [(finding.code, finding.start.line) for finding in result.findings] == [
        ("DF014", text.splitlines().index("        self.scale = torch.ones(dim)") + 1),
        ("DF016", text.splitlines().index("        positions = torch.arange(x.size(1))") + 1),
    ]


LIBRARY = '''"""A model library: one helper at the end has the bugs."""
import math

import numpy as np
import torch
from torch import nn

TABLE = {"small": 1, "large": 2}


class Block(nn.Module):
    def __init__(self, width):
        super().__init__()
        self.proj = nn.Linear(width, width)

    def forward(self, x):
        return self.proj(x) * math.sqrt(TABLE["small"])


def features(model, x):
    out = model(x.cuda())
    return out.numpy()
'''


def test_a_slice_keeps_the_lines_of_what_it_keeps_and_blanks_the_rest():
    facts = engine.screen(LIBRARY.encode(), "models.py", ProjectIndex())
    part = slicing.check_slice(facts, ["hardcoded_cuda", "tensor_to_numpy"])
    assert part is not None
    kept, original = part.text.splitlines(), LIBRARY.splitlines()
    assert len(kept) == len(original)
    assert [line for line in kept if line.strip()] == [  # `import numpy` names numpy: it is a seed of DF008's
        '"""A model library: one helper at the end has the bugs."""', "import numpy as np", "import torch", "from torch import nn",
        '"""', '"""', "def features(model, x):", "    out = model(x.cuda())", "    return out.numpy()",
    ]
    assert kept[original.index("def features(model, x):")] == "def features(model, x):"
    assert part.holds(original.index("    return out.numpy()") + 1) and not part.holds(original.index("class Block(nn.Module):") + 1)
    result = process(LIBRARY.encode(), "models.py", ALL_RULES, ProjectIndex())
    assert [finding.code for finding in result.findings] == ["DF001", "DF008"]


def test_a_rule_that_may_find_anything_anywhere_gets_the_whole_file():
    facts = engine.screen(LIBRARY.encode(), "models.py", ProjectIndex())
    assert slicing.check_slice(facts, ["hardcoded_cuda", None]) is None
    assert slicing.check_slice(facts, []) is None


DOCUMENTED_PIPELINE = '''import torch


class Pipeline:
    def fuse(self, scale):
        """Fuse the adapters.

        Example:
            pipe = Pipeline.from_pretrained("tiny").to("cuda")
            pipe.fuse(0.7)
        """
        return scale * 2


def dequantize(weight):
    """Dequantize on the GPU
    (cuda only)."""
    return weight.cuda()
'''


def test_a_word_spelled_only_inside_a_docstring_seeds_nothing():
    """diffusers' classes show `.to("cuda")` in the usage examples of their docstrings: a rule reads
    only code, so such a class is no seed of DF001's; a function with a real `.cuda()` is (its
    docstring's first and last lines may hold code, and count)."""
    facts = engine.screen(DOCUMENTED_PIPELINE.encode(), "pipeline.py", ProjectIndex())
    part = slicing.check_slice(facts, ["hardcoded_cuda"])
    assert part is not None
    assert "class Pipeline:" not in part.text and "    return weight.cuda()" in part.text
    result = process(DOCUMENTED_PIPELINE.encode(), "pipeline.py", ALL_RULES, ProjectIndex())
    assert [(finding.code, finding.start.line) for finding in result.findings] == [
        ("DF001", DOCUMENTED_PIPELINE.splitlines().index("    return weight.cuda()") + 1)]


PROGRAM_WITH_A_SETUP_FUNCTION = '''import numpy as np
import torch
from torch import nn

model = nn.Linear(3, 1)
inputs = torch.ones(2, 3)


def setup():
    model.cuda()
    inputs.data = inputs.data.cuda()
''' + PADDING + '''

def report():
    print(np.mean(model(inputs).detach().numpy()))


if __name__ == "__main__":
    setup()
    report()
'''


@pytest.mark.parametrize("text", [PROGRAM_WITH_A_SETUP_FUNCTION, LIBRARY + PADDING])
def test_statements_that_change_an_object_the_findings_read_come_along(monkeypatch, text):
    """`setup()` moves the module-level model in place: `report()`'s `.numpy()` then meets a GPU
    tensor. The slice must keep `setup` although `report` never names it."""
    facts = engine.screen(text.encode(), "train.py", ProjectIndex())
    part = slicing.check_slice(facts, ["hardcoded_cuda", "tensor_to_numpy"])
    if "def setup" in text:
        assert part is None or "    model.cuda()" in part.text
    assert keys(process(text.encode(), "train.py", ALL_RULES, ProjectIndex())) == keys(whole_file_check(monkeypatch, text.encode(), "train.py"))
