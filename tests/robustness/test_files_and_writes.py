"""Files that are not what they seem, and writes the system refuses (issue 13): one `error:` line
naming the file, the file as it was, no temporary file left, the other files still fixed."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest

from devfix.writing import WriteRefused, write_atomically
from tests.cli_runner import invoke_devfix

BUGGY = "import torch\nmodel = torch.nn.Linear(2, 2).cuda()\n"


@pytest.fixture
def project(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "good.py").write_text(BUGGY)
    return tmp_path


def errors(result) -> list[str]:
    return [line for line in result.stderr.splitlines() if line.startswith("error:")]


def test_a_fifo_named_py_is_skipped_not_read(project):
    os.mkfifo(project / "pipe.py")
    result = invoke_devfix(["fix", "-j", "1", "."])
    assert result.exit_code == 2
    assert errors(result) == ["error: pipe.py: not a regular file (a FIFO, socket or device); skipped"]
    assert "to(device)" in (project / "good.py").read_text()


@pytest.mark.parametrize("code", [errno.ENOSPC, errno.EPERM])
def test_a_write_the_system_refuses_costs_one_line_and_the_rest_is_written(project, monkeypatch, code):
    (project / "stuck.py").write_text(BUGGY)
    real_replace = os.replace

    def replace(source, target):
        if str(target).endswith("stuck.py"):
            raise OSError(code, os.strerror(code))
        return real_replace(source, target)

    monkeypatch.setattr(os, "replace", replace)
    result = invoke_devfix(["fix", "-j", "1", "--no-cache", "."])
    assert result.exit_code == 2
    assert errors(result) == [f"error: stuck.py: cannot write: {os.strerror(code)}; left untouched"]
    assert (project / "stuck.py").read_text() == BUGGY
    assert "to(device)" in (project / "good.py").read_text()
    assert sorted(path.name for path in project.iterdir() if path.name.endswith(".tmp")) == []


def test_a_file_with_two_hard_links_is_fixed_under_both_names(project):
    os.link(project / "good.py", project / "other_name.py")
    assert invoke_devfix(["fix", "good.py"]).exit_code == 0
    assert (project / "other_name.py").read_text() == (project / "good.py").read_text()
    assert "to(device)" in (project / "other_name.py").read_text()
    assert os.stat(project / "good.py").st_nlink == 2


def test_a_failed_write_through_hard_links_keeps_the_fixed_text(tmp_path, monkeypatch):
    target = tmp_path / "a.py"
    target.write_bytes(b"old\n")
    os.link(target, tmp_path / "b.py")
    import devfix.writing

    def failing(path, new):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(devfix.writing, "_write_through_links", failing)
    with pytest.raises(WriteRefused, match="the fixed text is in") as refusal:
        write_atomically(target, b"old\n", b"new\n")
    kept = str(refusal.value).rsplit(" ", 1)[1]
    assert Path(kept).read_bytes() == b"new\n"


def test_a_utf16_file_is_not_passed_as_clean(project):
    (project / "wide.py").write_bytes(BUGGY.encode("utf-16"))
    result = invoke_devfix(["check", "."])
    assert result.exit_code == 2
    assert [line.split(":", 2)[1].strip() for line in errors(result)] == ["wide.py"]
