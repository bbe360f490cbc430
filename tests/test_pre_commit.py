"""The hooks of `.pre-commit-hooks.yaml`, run by pre-commit itself on a temporary repository (it
installs devfix from this checkout into its own environment, as a user's pre-commit would)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest

from tests.conftest import REPO

BUGGY = "import torch\nx = torch.zeros(2).cuda()\n"
CLEAN = 'import torch\ndevice = torch.device("cuda" if torch.cuda.is_available() else "cpu")\nx = torch.zeros(2, device=device)\n'


@pytest.fixture(scope="module")
def pre_commit_home(tmp_path_factory):
    if shutil.which("git") is None or not (REPO / ".git").exists():
        pytest.fail("the pre-commit hooks are tested from a git checkout of devfix with git installed")
    return tmp_path_factory.mktemp("pre-commit-home")


@pytest.fixture
def repository(tmp_path):
    def git(*args: str) -> None:
        subprocess.run(["git", "-c", "user.email=t@example.com", "-c", "user.name=t", *args], cwd=tmp_path, check=True, capture_output=True)

    git("init", "-q")
    (tmp_path / "train.py").write_text(BUGGY)
    (tmp_path / "clean.py").write_text(CLEAN)
    (tmp_path / "notes.txt").write_text("x.cuda()\n")
    git("add", ".")
    git("commit", "-qm", "start")
    return tmp_path


def try_hook(hook: str, repository, home, *files: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PRE_COMMIT_HOME": str(home)}
    selection = ["--files", *files] if files else ["--all-files"]
    return subprocess.run(
        [sys.executable, "-m", "pre_commit", "try-repo", str(REPO), hook, *selection],
        cwd=repository, env=env, capture_output=True, text=True, timeout=600, check=False,
    )


def test_the_check_hook_fails_on_a_finding_and_passes_clean_files(repository, pre_commit_home):
    failed = try_hook("devfix", repository, pre_commit_home)
    assert failed.returncode == 1, failed.stdout + failed.stderr
    assert "train.py:2:5: DF001" in failed.stdout
    assert (repository / "train.py").read_text() == BUGGY
    passed = try_hook("devfix", repository, pre_commit_home, "clean.py")
    assert passed.returncode == 0, passed.stdout
    assert "devfix" in passed.stdout and "Passed" in passed.stdout


def test_the_fix_hook_fixes_the_file_and_fails_the_commit_once(repository, pre_commit_home):
    first = try_hook("devfix-fix", repository, pre_commit_home)
    assert first.returncode == 1 and "files were modified by this hook" in first.stdout
    assert "x = torch.zeros(2).to(device)" in (repository / "train.py").read_text()
    assert (repository / "clean.py").read_text() == CLEAN
    second = try_hook("devfix-fix", repository, pre_commit_home)
    assert second.returncode == 0, second.stdout
