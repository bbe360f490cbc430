"""Which tests of a test file run anything on an accelerator?

A test that places nothing on a GPU (no `.cuda()`, no `.to(device)`, no `device=` but `"cpu"`), in
a file whose helpers, fixtures and `setUp` methods place nothing either, runs on the CPU wherever
it runs: every tensor it compares is a CPU tensor, and `device=output.device` added to its
expected values changes nothing (`torch.allclose(out, torch.tensor([1.0]))` in a unit test of a
library function). The rules that align a value with another one's device (DF004, DF010, DF012,
DF014, DF016) leave such tests alone, as they leave a program that places nothing
(`signals.RUNS_ON_A_DEVICE`).

The unit is a test function (`test_*`, at the top level or in a class); what every test shares
(the rest of the file: helpers, fixtures, `setUp`, constants) counts for all of them. A line outside
every test (a helper) runs on a device when anything in the file places something there. A
fixture of another file (`conftest.py`) that hands a test a GPU tensor is not seen: the test is
then left as it is, a missed alignment rather than a guessed one.
"""

from __future__ import annotations

import ast
import re

from devfix.analysis.torch_api import places_devices

# `device="cpu"`, `torch.device("cpu")`, `.to("cpu")`, `.to(device="cpu")`: placed on the host
CPU_PLACEMENT = re.compile(
    r"""(?:\bdevice\s*=\s*|torch\.device\(\s*|\.to\(\s*(?:device\s*=\s*)?)(['"])cpu\1"""
)


# `.to(dtype=torch.half)`, `.to(precision="double")` (a project's own `to`): keywords, none a device
KEYWORDS_BUT_DEVICE = re.compile(r"\.to\(\s*(?!device\b)\w+\s*=[^()]*\)")


CPU_DEVICE = re.compile(r"""torch\.device\(\s*(['"])cpu\1\s*\)""")  # `torch.device("cpu")`, as the string it names


def places_on_an_accelerator(code: str) -> bool:
    """Does `code` move or make anything on a device other than the CPU (`analysis.torch_api.places_devices`,
    with explicit CPU placements and casts by keyword left out)?"""
    code = CPU_PLACEMENT.sub("", CPU_DEVICE.sub('"cpu"', code))
    code = KEYWORDS_BUT_DEVICE.sub(lambda match: "" if "device" not in match.group(0) else match.group(0), code)
    return places_devices(code)


class AcceleratedTests:
    """Answers, line by line, whether the test holding the line may run on an accelerator."""

    def __init__(self, tree: ast.Module, lines: tuple[str, ...]) -> None:
        self._lines = lines
        self._tests = _test_spans(tree)
        test_lines = {line for first, last in self._tests for line in range(first, last + 1)}
        shared = "\n".join(text for number, text in enumerate(lines, 1) if number not in test_lines)
        self._shared_places = places_on_an_accelerator(shared)
        self._file_places = self._shared_places or places_on_an_accelerator("\n".join(lines))
        self._answers: dict[tuple[int, int], bool] = {}

    @property
    def runs_anywhere(self) -> bool:
        """Does anything in the file run on an accelerator?"""
        return self._file_places

    def runs_on_a_device(self, line: int) -> bool:
        """May the test holding `line` (or, outside every test, any test) run on an accelerator?"""
        if self._shared_places:
            return True
        for span in self._tests:
            first, last = span
            if first <= line <= last:
                if span not in self._answers:
                    self._answers[span] = places_on_an_accelerator("\n".join(self._lines[first - 1 : last]))
                return self._answers[span]
        return self._file_places


def _test_spans(tree: ast.Module) -> tuple[tuple[int, int], ...]:
    """(first line, last line) of the test functions at the top level and the test methods of
    top-level classes (found as pytest and unittest find them: by the `test` prefix), their
    decorators included (`@pytest.mark.parametrize("device", ...)`)."""
    spans = []
    for node in tree.body:
        members = node.body if isinstance(node, ast.ClassDef) else [node]
        for member in members:
            if isinstance(member, (ast.FunctionDef, ast.AsyncFunctionDef)) and member.name.startswith("test"):
                first = min([member.lineno, *(decorator.lineno for decorator in member.decorator_list)])
                spans.append((first, member.end_lineno or member.lineno))
    return tuple(spans)
