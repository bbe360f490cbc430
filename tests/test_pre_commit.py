"""The hooks of `.pre-commit-hooks.yaml`, run by pre-commit itself on a temporary repository whose
`.pre-commit-config.yaml` names this checkout (pre-commit installs devfix from it into its own
environment, as a user's pre-commit would; once per module, not once per run as `try-repo` does)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO

BUGGY = "import torch\nx = torch.zeros(2).cuda()\n"
CLEAN = 'import torch\ndevice = torch.device("cuda" if torch.cuda.is_available() else "cpu")\nx = torch.zeros(2, device=device)\n'


def git(folder: Path, *args: str) -> str:
    done = subprocess.run(["git", "-c", "user.email=t@example.com", "-c", "user.name=t", *args],
                          cwd=folder, check=True, capture_output=True, text=True)
    return done.stdout


@pytest.fixture(scope="module")
def hook_repository(tmp_path_factory) -> tuple[Path, str]:
    """This checkout as it is, uncommitted changes included (as `pre-commit try-repo` takes it), at
    one commit of a clone: pre-commit keys the environments it installs by repository and commit."""
    if shutil.which("git") is None or not (REPO / ".git").exists():
        pytest.fail("the pre-commit hooks are tested from a git checkout of devfix with git installed")
    clone = tmp_path_factory.mktemp("hooks") / "devfix"
    subprocess.run(["git", "clone", "-q", str(REPO), str(clone)], check=True, capture_output=True)
    listed = git(REPO, "ls-files", "-z", "--modified", "--others", "--deleted", "--exclude-standard").split("\0")
    for name in filter(None, listed):
        source, target = REPO / name, clone / name
        if source.is_file():
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source, target)
        elif target.is_file():
            target.unlink()
    git(clone, "add", "-A")
    git(clone, "commit", "-qm", "the checkout as it is", "--allow-empty")
    return clone, git(clone, "rev-parse", "HEAD").strip()


@pytest.fixture(scope="module")
def pre_commit_home(tmp_path_factory):
    return tmp_path_factory.mktemp("pre-commit-home")


@pytest.fixture
def repository(tmp_path, hook_repository):
    clone, commit = hook_repository
    (tmp_path / ".pre-commit-config.yaml").write_text(
        f"repos:\n  - repo: {clone.as_uri()}\n    rev: {commit}\n    hooks:\n      - id: devfix\n      - id: devfix-fix\n"
    )
    git(tmp_path, "init", "-q")
    (tmp_path / "train.py").write_text(BUGGY)
    (tmp_path / "clean.py").write_text(CLEAN)
    (tmp_path / "notes.txt").write_text("x.cuda()\n")
    git(tmp_path, "add", ".")
    git(tmp_path, "commit", "-qm", "start")
    return tmp_path


def try_hook(hook: str, repository, home, *files: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PRE_COMMIT_HOME": str(home)}
    selection = ["--files", *files] if files else ["--all-files"]
    return subprocess.run(
        [sys.executable, "-m", "pre_commit", "run", hook, *selection],
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
