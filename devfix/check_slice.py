"""A check of only the statements that can hold a finding, and of everything they depend on.

libcst's parse, metadata and tree passes cost about 0.5 ms a line, so a long file with one finding
took 0.6 s to check although the finding's function is a few lines long. When every rule that may
apply says where its findings can be (`RuleSpec.findings_in`, `analysis.finding_seeds`), the check
analyses the top-level statements that can hold them, closed under what the rules can follow:

- torch's imports and the file's other setup statements (`if cuda: model.cuda()`, `main()`), but
  for plain assignments and other imports that no kept statement reads;
- the definitions a kept statement reads by name (the rules find a class by the name its
  constructor is called by; what they know of `obj.attr` by the attribute's name alone comes from
  the whole file's `ast` facts, such as the methods that return host copies), and the statements
  that may change in place an object it reads (`xs.append(t)`, `model.cuda()`; for a module such
  as `torch`, only a setter: `torch.set_default_device(...)`);
- the statements that read a kept definition (its callers: where a parameter's value comes from),
  or a name a statement that may hold a finding binds (a rule follows `ckpt = torch.load(...)` to
  its uses), and those that call a method of a kept class by name (`ev.evaluate(x)`, but not
  `self.evaluate(x)`, which is the caller's own class's); and, in turn, their readers
  (`ev = Evaluator()` kept as a reader of the class brings the functions that call `ev`).

Each run of other statements becomes blank lines, or one string spanning their lines, so every kept
statement keeps its line and column: the `ast` facts of the whole file, the suppression comments
and the findings' positions stay those of the file. The result is the whole file's, by
construction, as long as the seeds are a superset; the test suite checks it on every fixture
(`tests/test_check_slice.py`). A slice that would keep more than nine tenths of the file is
not worth it: None, and the whole file is analysed. (The rules' passes cost more than in
proportion to the lines: diffusers' `embeddings.py`, 76 % kept, checks in 1.8 s instead of 2.5 s;
its schedulers and shap-e's renderer, 80-90 % kept, in 15-25 % less.)
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from devfix.analysis.chunks import LINE, Chunk, chunks_of

if TYPE_CHECKING:
    from devfix.analysis.facts import FileFacts
    from devfix.analysis.finding_seeds import Seeds

MAX_SHARE_OF_FILE = 0.9
ALWAYS_IMPORTED = frozenset({"torch", "__future__"})
PLACEHOLDER_MIN_LINES = 3


@dataclass(frozen=True)
class CheckSlice:
    text: str  # the file with the statements not needed blanked out, line for line
    finding_lines: tuple[tuple[int, int], ...]  # (first, last) lines of the chunks that may hold findings
    # the value analysis may read the slice alone: no statement left out names a method of a kept
    # class (`self.encode(...)` in another class: the analysis joins every `.encode(...)` call's arguments)
    values_complete: bool = False

    def holds(self, line: int) -> bool:
        return any(first <= line <= last for first, last in self.finding_lines)


def check_slice(facts: FileFacts, seeds_of: Sequence[str | None]) -> CheckSlice | None:
    """The slice a check of rules with these `findings_in` functions needs, or None when a rule
    can find anything anywhere, or when the slice would not save much."""
    if not seeds_of or None in seeds_of:
        return None
    lines = LINE.findall(facts.text)
    chunks = chunks_of(facts.tree.body, lines, 0, len(lines), at_end=True)
    if chunks is None:
        return None
    module = importlib.import_module("devfix.analysis.finding_seeds")
    findings: set[int] = set()
    reads: set[int] = set()
    for name in dict.fromkeys(seeds_of):
        seeds: Seeds | None = getattr(module, name)(chunks, facts)
        if seeds is None:
            return None
        findings |= seeds.findings
        reads |= seeds.reads
    kept = _closure(chunks, findings, reads)
    if sum(chunks[index].lines for index in kept) > MAX_SHARE_OF_FILE * len(lines):
        return None
    parts: list[str] = []
    dropped = 0  # lines of the dropped chunks since the last kept one: one placeholder for them all
    for index, chunk in enumerate(chunks):
        if index in kept:
            parts += [_placeholder(dropped), chunk.text]
            dropped = 0
        else:
            dropped += chunk.lines
    parts.append(_placeholder(dropped))
    return CheckSlice(
        "".join(parts), tuple((chunks[index].start, chunks[index].end) for index in sorted(findings)), _values_complete(chunks, kept),
    )


def _values_complete(chunks: list[Chunk], kept: set[int]) -> bool:
    """Whether the kept chunks hold everything the value analysis reads to know the kinds of their
    names: the closure keeps the definitions they read and the calls of their functions and
    classes, but not the statements naming one of their classes' methods through `self` in an
    unrelated class (`analysis.values` infers a method's parameter kinds from every call of a
    method of that name)."""
    methods = frozenset().union(*(chunks[index].methods for index in kept)) - {"forward"}
    return not any(chunk.attributes & methods for index, chunk in enumerate(chunks) if index not in kept)


def _closure(chunks: list[Chunk], findings: set[int], reads: set[int]) -> set[int]:
    """The chunks that may hold findings, those the rules read by name (`reads`), the setup
    statements, and every chunk linked to a kept one (see the module's docstring), to a fixed
    point. The readers of what a chunk binds come along for the chunks with findings, the
    definitions, and the readers themselves (`ev = Evaluator()` read by the functions that call
    `ev`); not for a setup statement kept for its own sake, nor for what a rule reads by name
    (`device = ...`): their names are read everywhere."""
    binders, readers = _index(chunks, lambda chunk: chunk.binds), _index(chunks, lambda chunk: chunk.loads)
    callers_of_methods = _index(chunks, lambda chunk: chunk.foreign_attributes)
    changers, setters = _index(chunks, lambda chunk: chunk.changes), _index(chunks, lambda chunk: chunk.settings)
    modules = _modules(chunks)
    kept = findings | reads | {index for index, chunk in enumerate(chunks) if chunk.simple and not _kept_if_read(chunk)}
    followed = findings | {index for index in kept if not chunks[index].simple}
    pending = list(kept)
    while pending:
        index = pending.pop()
        chunk = chunks[index]
        changed = chunk.loads & binders.keys()  # objects of the module that others may change: `model.cuda()` elsewhere
        definitions = _linked(binders, chunk.loads) | _linked(changers, changed - modules) | _linked(setters, changed & modules)
        callers = _linked(readers, chunk.binds) | _linked(callers_of_methods, chunk.methods) if index in followed else set()
        for other in definitions | callers:
            follow = other in callers or not chunks[other].simple
            if other in kept and (not follow or other in followed):
                continue
            kept.add(other)
            if follow:
                followed.add(other)
            pending.append(other)
    return kept


def _kept_if_read(chunk: Chunk) -> bool:
    """A plain assignment (`default_cfgs = {...}`), or an import of anything but torch: what no
    kept statement reads cannot change what the rules conclude (torch's own imports name the
    package in fixes; a star import may bind any name)."""
    if chunk.assignment:
        return True
    return chunk.imported is not None and not chunk.imported & ALWAYS_IMPORTED and "*" not in chunk.binds


def _modules(chunks: list[Chunk]) -> frozenset[str]:
    """Names only imports bind (`torch`, `F`): calling one of their functions changes nothing the
    rules read (`torch.zeros(3)`), but for a setter (`torch.set_default_device("cuda")`)."""
    imported = {name for chunk in chunks if chunk.imported is not None for name in chunk.binds}
    return frozenset(imported - {name for chunk in chunks if chunk.imported is None for name in chunk.binds})


def _index(chunks: list[Chunk], names: Callable[[Chunk], frozenset[str]]) -> dict[str, set[int]]:
    found: dict[str, set[int]] = {}
    for index, chunk in enumerate(chunks):
        for name in names(chunk):
            found.setdefault(name, set()).add(index)
    return found


def _linked(index: dict[str, set[int]], names: frozenset[str]) -> set[int]:
    linked: set[int] = set()
    for name in names:
        linked |= index.get(name, set())
    return linked


def _placeholder(lines: int) -> str:
    """`lines` lines that analyse as nothing: blank lines, or one string spanning them (many blank
    lines cost libcst's metadata more than one string)."""
    if lines < PLACEHOLDER_MIN_LINES:
        return "\n" * lines
    return '"""' + "\n" * (lines - 1) + '"""\n'
