"""Workers die with their parent: after SIGKILL of `devfix check`, no worker lives on holding the
caller's pipe (issue 13)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from tests.conftest import REPO


def children(pid: int) -> list[int]:
    found = []
    for task in Path(f"/proc/{pid}/task").glob("*/children"):
        found += [int(child) for child in task.read_text().split()]
    return found


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def test_pool_workers_die_when_the_main_process_is_killed(tmp_path):
    program = (REPO / "examples" / "train.py").read_text()
    for index in range(300):
        (tmp_path / f"train_{index}.py").write_text(program + f"\n# copy {index}\n")
    main = subprocess.Popen([sys.executable, "-m", "devfix", "check", "--no-cache", "-j", "2", str(tmp_path)],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    workers: list[int] = []
    deadline = time.monotonic() + 60
    while len(workers) < 2 and time.monotonic() < deadline and main.poll() is None:
        workers = children(main.pid)
        time.sleep(0.05)
    assert len(workers) >= 2, "the run ended before its workers could be seen"
    os.kill(main.pid, signal.SIGKILL)
    main.wait()
    deadline = time.monotonic() + 10
    while any(alive(worker) for worker in workers) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not any(alive(worker) for worker in workers)
    main.stdout.close()
