"""Input that must cost one `error:` line naming the file, never the run, the other files' fixes,
or the process (issue 13)."""

from __future__ import annotations

import subprocess
import sys

import pytest

BUGGY = "import torch\nmodel = torch.nn.Linear(2, 2).cuda()\n"


def devfix(*args: str, cwd) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "devfix", *args], cwd=cwd, capture_output=True, text=True, timeout=120, check=False)


@pytest.mark.parametrize(
    ("source", "message"),
    [
        ("import torch\nx = " + "(" * 2000 + "1" + ")" * 2000 + "\n", "too many nested parentheses"),
        ("import torch\nx = " + "+".join(["a"] * 8000) + "\n", "nested too deeply for Python's parser"),
        ("import torch\nx = 1\0\n", "null bytes"),
    ],
    ids=["2000-parentheses", "8000-term-sum", "nul-byte"],
)
@pytest.mark.parametrize("jobs", ["1", "2"])
def test_input_that_python_rejects_never_reaches_libcst(tmp_path, source, message, jobs):
    """libcst's native parser segfaults on such nesting: Python's parser decides first (issue 13)."""
    (tmp_path / "deep.py").write_text(source)
    (tmp_path / "good.py").write_text(BUGGY)
    completed = devfix("fix", "--no-cache", "-j", jobs, "deep.py", "good.py", cwd=tmp_path)
    assert completed.returncode == 2, completed.stderr
    errors = [line for line in completed.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and errors[0].startswith("error: deep.py") and message in errors[0]
    assert "Traceback" not in completed.stderr
    assert (tmp_path / "deep.py").read_text() == source
    assert "to(device)" in (tmp_path / "good.py").read_text()


@pytest.mark.parametrize("text", ["[/x]", "[bold]DF001", "DF0[1]"])
def test_user_text_is_never_read_as_markup(tmp_path, text):
    (tmp_path / "good.py").write_text(BUGGY)
    completed = devfix("check", "--select", text, "good.py", cwd=tmp_path)
    assert completed.returncode == 2
    assert completed.stderr.startswith("error: ") and text.upper() in completed.stderr.upper()
    assert "Traceback" not in completed.stderr
