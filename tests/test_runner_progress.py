"""The progress of a parallel run counts each file as it finishes, not in the order of the files:
a slow first file must not hold the bar at 0 % (issue 12)."""

from __future__ import annotations

import time
from pathlib import Path

import devfix.runner
from devfix.findings import FileResult
from devfix.fix_policy import FixPolicy
from devfix.runner import Job, run

MARKER: list[Path] = []  # set before the workers fork: they inherit it


def analyse(job: Job):
    """The first file finishes only once the run has counted another one (or after 20 s)."""
    marker = MARKER[0]
    if job.path.endswith("slow.py"):
        deadline = time.monotonic() + 20
        while not marker.exists() and time.monotonic() < deadline:
            time.sleep(0.01)
        return FileResult(job.path, b"", b"", error="counted-first" if marker.exists() else "waited"), {}
    return FileResult(job.path, b"", b""), {}


def test_files_are_counted_as_they_finish(tmp_path, monkeypatch):
    marker = tmp_path / "first-count-seen"
    MARKER[:] = [marker]
    monkeypatch.setattr(devfix.runner, "analyse_path", analyse)
    counts: list[int] = []

    def on_progress(done: int) -> None:
        counts.append(done)
        marker.touch()

    work = [Job(str(Path(name)), (), FixPolicy(), 1 << 20) for name in ("slow.py", "a.py", "b.py")]
    results = run(work, jobs=2, on_progress=on_progress)
    assert [result.path for result in results] == ["slow.py", "a.py", "b.py"]
    assert results[0].error == "counted-first"
    assert counts == [1, 2, 3]
