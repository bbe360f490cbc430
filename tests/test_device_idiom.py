"""`[tool.devfix] device-idiom = "accelerator"`: the preamble uses `torch.accelerator` (PyTorch 2.6+,
also Apple MPS and Intel XPU), and the fixed program is proven by execution like the `cuda` form."""

from __future__ import annotations

import os

from devfix.fixture_cases import FixtureCase
from devfix.verify import verify_pair
from tests.cli_runner import invoke_devfix

os.environ.setdefault("OMP_NUM_THREADS", "1")

PROGRAM = (
    "import torch\n\ntorch.manual_seed(0)\nmodel = torch.nn.Linear(4, 2).cuda()\n"
    "x = torch.randn(3, 4).cuda()\nprint('RESULT', model(x).sum().item())\n"
)
ACCELERATOR_PREAMBLE = 'device = torch.device(torch.accelerator.current_accelerator().type if torch.accelerator.is_available() else "cpu")\n'


def test_the_accelerator_idiom_is_written_and_proven_by_execution(tmp_path, monkeypatch):
    case = tmp_path / "DF001-hardcoded-cuda" / "accelerator"
    case.mkdir(parents=True)
    (case / "before.py").write_text(PROGRAM)
    (case / "after.py").write_text(PROGRAM)
    (tmp_path / "pyproject.toml").write_text('[tool.devfix]\ndevice-idiom = "accelerator"\n')
    monkeypatch.chdir(tmp_path)
    assert invoke_devfix(["fix", str(case / "after.py")]).exit_code == 0
    fixed = (case / "after.py").read_text()
    assert ACCELERATOR_PREAMBLE in fixed and ".to(device)" in fixed and "cuda" not in fixed
    report = verify_pair(FixtureCase(case), case / "before.py", case / "after.py")
    assert report.ok, report.failures
    assert invoke_devfix(["fix", str(case / "after.py")]).exit_code == 0
    assert (case / "after.py").read_text() == fixed  # a second run finds nothing in the new form


def test_the_cuda_idiom_stays_the_default_and_a_bad_idiom_is_an_error(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "train.py").write_text(PROGRAM)
    assert 'device = torch.device("cuda" if torch.cuda.is_available() else "cpu")' in invoke_devfix(["diff", "train.py"]).stdout
    (tmp_path / "pyproject.toml").write_text('[tool.devfix]\ndevice-idiom = "mps"\n')
    result = invoke_devfix(["diff", "train.py"])
    assert result.exit_code == 2 and "device-idiom must be one of 'cuda', 'accelerator'" in result.stderr
