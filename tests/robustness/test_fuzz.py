"""Fuzzing: damaged fixtures and grammar-generated programs through check and fix (issue 13).

Whatever the input, devfix never raises, never reports an internal error, never exceeds its time
budget, and never produces code that does not parse. A fixed seed and a bounded count run in CI;
`DEVFIX_FUZZ_COUNT=5000 pytest tests/robustness/test_fuzz.py` runs longer on demand (and
`DEVFIX_FUZZ_SEED` picks other mutations).
"""

from __future__ import annotations

import ast
import os
import random
from pathlib import Path

import hypothesmith
import pytest
from hypothesis import HealthCheck, given, settings

from devfix.fix_policy import FixPolicy
from devfix.rule_registry import select_specs
from devfix.runner import Job, process_source

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
COUNT = int(os.environ.get("DEVFIX_FUZZ_COUNT", "400"))
SEED = int(os.environ.get("DEVFIX_FUZZ_SEED", "20261124"))
TIMEOUT = 60.0
CODES = tuple(spec.CODE for spec in select_specs())


def delete_line(lines: list[bytes], rng: random.Random) -> list[bytes]:
    del lines[rng.randrange(len(lines))]
    return lines


def duplicate_line(lines: list[bytes], rng: random.Random) -> list[bytes]:
    at = rng.randrange(len(lines))
    return [*lines[: at + 1], lines[at], *lines[at + 1 :]]


def reindent_line(lines: list[bytes], rng: random.Random) -> list[bytes]:
    at = rng.randrange(len(lines))
    lines[at] = b"    " + lines[at] if rng.random() < 0.5 else lines[at].removeprefix(b"    ")
    return lines


def swap_lines(lines: list[bytes], rng: random.Random) -> list[bytes]:
    first, second = rng.randrange(len(lines)), rng.randrange(len(lines))
    lines[first], lines[second] = lines[second], lines[first]
    return lines


LINE_MUTATIONS = (delete_line, duplicate_line, reindent_line, swap_lines)
INSERTIONS = (b"\0", b"\xef\xbb\xbf", b"\r", b"\xff", b"(", b"\\", b'"""', b"\t")


def mutate(source: bytes, rng: random.Random) -> bytes:
    """One to three damages: line edits, truncation at a random byte, or bytes inserted anywhere."""
    for _ in range(rng.randint(1, 3)):
        choice = rng.random()
        if choice < 0.5 and source:
            lines = source.splitlines(keepends=True)
            source = b"".join(rng.choice(LINE_MUTATIONS)(lines, rng)) if lines else source
        elif choice < 0.65:
            source = source[: rng.randrange(len(source) + 1)]
        else:
            at = rng.randrange(len(source) + 1)
            source = source[:at] + rng.choice(INSERTIONS) + source[at:]
    return source


def fixture_sources() -> list[tuple[str, bytes]]:
    return sorted((str(path.relative_to(FIXTURES)), path.read_bytes()) for path in FIXTURES.glob("*/*/before.py"))


def assert_survives(source: bytes, name: str) -> None:
    """Check, then fix with the unsafe fixes: an error message at most, and code that parses."""
    for policy in (FixPolicy(), FixPolicy(apply=True, unsafe=True)):
        job = Job(name, CODES, policy, 5 << 20, named=True, file_timeout=TIMEOUT)
        result = process_source(source, job)  # raising fails the test
        if result.error is not None:
            assert "internal error" not in result.error and "devfix produced code" not in result.error, result.error
            assert "file-timeout" not in result.error, result.error
            assert result.fixed == source
        if result.changed:
            ast.parse(result.fixed)  # a fix that does not parse would be written over the user's file


def test_the_fixtures_are_there():
    assert len(fixture_sources()) > 100


@pytest.mark.parametrize("batch", range(8))
def test_damaged_fixtures(batch):
    """`COUNT` mutants in all, in 8 batches (a failure names its seed and fixture)."""
    sources = fixture_sources()
    for index in range(batch, COUNT, 8):
        rng = random.Random(SEED * 1_000_003 + index)
        name, source = rng.choice(sources)
        mutant = mutate(source, rng)
        try:
            assert_survives(mutant, "fuzz.py")
        except BaseException as failure:
            raise AssertionError(f"mutant {index} of {name} (seed {SEED}): {mutant!r}") from failure


@settings(max_examples=int(os.environ.get("DEVFIX_FUZZ_COUNT", "60")), deadline=None, derandomize=True,
          suppress_health_check=list(HealthCheck))
@given(hypothesmith.from_grammar())
def test_grammar_generated_programs(program):
    """Programs from Python's grammar, with torch imported and a device call, so the rules run."""
    source = ("import torch\n" + program + "\nx = torch.zeros(2).cuda()\n").encode("utf-8", "surrogatepass")
    assert_survives(source, "generated.py")
