"""`devfix check` over real projects' sources against the libcst parse floor, in one run.

Downloads pinned wheels of timm, lightning and diffusers from the package index (they carry their
`.py` sources), unpacks them under a cache folder, then for each project times, in this process:
  - the floor: `libcst.parse_module` of every `.py` file's bytes;
  - `ast.parse` of the same bytes, for scale;
  - devfix's check of every file (`engine.process`, the function `devfix check` runs per file,
    with one project index for the run, as each worker of `devfix check` keeps one);
and prints the ratio check / floor. Same process, same files, one core: the ratio does not depend
on the worker count. The three are timed file by file, one after the other, so that a machine whose
speed drifts during the run (this one's does, by a fifth) slows the floor and the check alike; the
garbage collector runs, untimed, before each, so that none pays for the garbage another left. Both run under the garbage-collector thresholds `devfix check` sets
(`devfix.gc_settings`). Also times `devfix check` as a subprocess with its default workers, and for
timm the check of `timm/models/hiera.py` (about 1,000 lines, the file issue 10 names), best of 5,
as it is, with a 3-line function holding a `.cuda()` and a `.numpy()` appended (two findings), and
with an 11-line Module appended that keeps a CPU tensor attribute and makes one in `forward` (two
findings of class-wide rules, DF014 and DF016).

    python benchmarks/check_vs_parse.py [--cache DIR] [NAME==VERSION ...]
"""

from __future__ import annotations

import argparse
import ast
import gc
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import libcst

from devfix import gc_settings
from devfix.analysis.project import ProjectIndex
from devfix.codemods import ALL_RULES
from devfix.engine import process

PROJECTS = ("timm==1.0.15", "lightning==2.5.1", "diffusers==0.33.1")
ONE_FILE = "timm/models/hiera.py"
BUG = b"\n\ndef debug_features(model, x):\n    feats = model(x.cuda())\n    return feats.numpy()\n"
# a Module keeping a CPU tensor as a plain attribute (DF014) and making one in forward (DF016): class-wide rules
CLASS_BUG = b"""

class PositionalHead(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.emb = nn.Embedding(64, dim)
        self.scale = torch.ones(dim)

    def forward(self, x):
        positions = torch.arange(x.size(1))
        return (x + self.emb(positions)) * self.scale
"""


def sources(spec: str, cache: Path) -> Path:
    name = spec.split("==")[0]
    target = cache / name / "src"
    if not target.is_dir():
        wheels = cache / name / "wheel"
        subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", spec, "-d", str(wheels)], check=True)
        with zipfile.ZipFile(next(wheels.glob("*.whl"))) as wheel:
            wheel.extractall(target)
    return target


def timed(function, items) -> float:
    start = time.perf_counter()
    for item in items:
        function(item)
    return time.perf_counter() - start


def measure(spec: str, cache: Path) -> None:
    root = sources(spec, cache)
    files = sorted(root.rglob("*.py"))
    data = [(path, path.read_bytes()) for path in files]
    lines = sum(source.count(b"\n") for _, source in data)
    findings = 0
    index = ProjectIndex()

    def check(item) -> None:
        nonlocal findings
        findings += len(process(item[1], str(item[0]), ALL_RULES, index).findings)

    floor = python_parse = checked = 0.0
    for item in data:  # file by file, the three one after the other: a machine that slows down does so for all three
        gc.collect()  # each starts from a collected heap: no one pays for the garbage the one before left
        floor += timed(lambda item: libcst.parse_module(item[1]), [item])
        gc.collect()
        python_parse += timed(lambda item: ast.parse(item[1]), [item])
        gc.collect()
        checked += timed(check, [item])
    start = time.perf_counter()
    subprocess.run(["devfix", "check", "--quiet", "--no-cache", str(root)], capture_output=True, check=False)  # exit 1: findings
    cli = time.perf_counter() - start
    print(f"{spec}: {len(files)} files, {lines} lines, {findings} findings")
    print(f"  libcst parse {floor:6.1f} s   ast.parse {python_parse:5.1f} s   devfix check {checked:6.1f} s"
          f"   ratio {checked / floor:4.2f}x   (CLI, all cores: {cli:.1f} s, {lines / cli:.0f} lines/s)")
    for path, source in data:
        if path.as_posix().endswith(ONE_FILE):
            best = min(timed(check, [(path, source)]) for _ in range(5))
            parse = min(timed(lambda item: libcst.parse_module(item[1]), [(path, source)]) for _ in range(5))
            with_bug = min(timed(check, [(path, source + BUG)]) for _ in range(5))
            with_class = min(timed(check, [(path, source + CLASS_BUG)]) for _ in range(5))
            one_file_lines = source.count(b"\n")
            print(f"  {ONE_FILE} ({one_file_lines} lines): check {best * 1000:.0f} ms, libcst parse {parse * 1000:.0f} ms; "
                  f"with two findings appended: check {with_bug * 1000:.0f} ms; with a Module holding two: {with_class * 1000:.0f} ms")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cache", type=Path, default=Path.home() / ".cache" / "devfix-bench")
    parser.add_argument("projects", nargs="*", default=list(PROJECTS))
    arguments = parser.parse_args()
    gc_settings.for_analysis()
    for spec in arguments.projects:
        measure(spec, arguments.cache)


if __name__ == "__main__":
    main()
