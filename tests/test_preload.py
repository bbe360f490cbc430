"""The parent that forks a child per program run imports torch, torch's compiler stack and the host
libraries the program imports once, so its children inherit them (`devfix/preload.py`)."""

from __future__ import annotations

import subprocess
import sys

import torch

from devfix.preload import host_libraries_imported


def test_the_host_libraries_a_program_imports_are_found_in_each_of_its_files(tmp_path):
    (tmp_path / "main.py").write_text(
        "import numpy as np\nfrom sklearn import metrics\nfrom helpers import plot\nimport torch\n"
        "def late():\n    import seaborn\n"
    )
    (tmp_path / "helpers.py").write_text("from matplotlib.pyplot import subplots\nfrom .local import thing\n")
    (tmp_path / "broken.py").write_text("def (:\n")
    found = host_libraries_imported(sorted(tmp_path.glob("*.py")))
    assert found >= {"numpy", "sklearn", "sklearn.metrics", "seaborn", "matplotlib.pyplot", "matplotlib.pyplot.subplots"}
    assert not {name for name in found if name.split(".")[0] in {"torch", "helpers", "local"}}


def test_the_parent_imports_them_and_never_the_programs_own_modules(tmp_path):
    (tmp_path / "main.py").write_text("from sklearn.metrics import f1_score\nimport helpers\n")
    (tmp_path / "helpers.py").write_text("raise SystemExit('a program module must not run in the parent')\n")
    probe = (
        "import sys; from pathlib import Path; from devfix.preload import preload_for\n"
        f"preload_for(Path({str(tmp_path)!r}))\n"
        "print(sorted(name for name in ('sklearn.metrics', 'torch._dynamo', 'helpers', 'seaborn') if name in sys.modules))\n"
    )
    completed = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    compiler = ["torch._dynamo"] if torch.version.cuda is None else []  # a CUDA build leaves it to the child
    assert completed.stdout.strip() == str(["sklearn.metrics", *compiler])
