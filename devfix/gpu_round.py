"""A round of `devfix run --fix --device cuda`: the program runs on the real GPU in a fresh
interpreter (`python -m devfix.gpu_round REQUEST ANSWER`), since CUDA does not survive a fork once
started; the request and the answer travel as pickles in a temporary folder.
"""

from __future__ import annotations

import os
import pickle
import subprocess
import sys
import tempfile
from pathlib import Path

from devfix.program import Program
from devfix.run_rounds import RoundResult, child_payload, result_of


def gpu_present() -> bool:
    """Whether torch sees a CUDA device, asked of a fresh interpreter: asking here would start CUDA
    in this process, and the forked rounds could not use it."""
    probe = "import sys, torch; sys.exit(0 if torch.cuda.is_available() and torch.version.cuda else 1)"
    return subprocess.run([sys.executable, "-c", probe], check=False, capture_output=True).returncode == 0


def run_in_fresh_interpreter(program: Program, argv: list[str], texts: dict[Path, str], timeout: float | None) -> RoundResult:
    with tempfile.TemporaryDirectory(prefix="devfix-round-") as folder:
        request, answer = Path(folder) / "request", Path(folder) / "answer"
        request.write_bytes(pickle.dumps((program, argv, texts, "cuda", timeout)))
        command = [sys.executable, "-m", "devfix.gpu_round", str(request), str(answer)]
        try:  # the child's own timer stops the program; this one, a child stuck where signals wait
            subprocess.run(command, check=False, timeout=None if timeout is None else timeout + 60)
        except subprocess.TimeoutExpired:
            return RoundResult(False, 2, "", "", "Timeout", f"still running after {timeout:g} s (--timeout)")
        return result_of(answer.read_bytes() if answer.exists() else b"")


if __name__ == "__main__":
    request_path, answer_path = sys.argv[1:3]
    Path(answer_path).write_bytes(child_payload(*pickle.loads(Path(request_path).read_bytes())))
    os._exit(0)
