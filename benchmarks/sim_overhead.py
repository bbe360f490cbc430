"""Simulated CUDA overhead: a small MLP training loop (100 steps), plain CPU vs simulated CUDA.

Run: OMP_NUM_THREADS=1 python benchmarks/sim_overhead.py   (the target is a ratio of at most 3)
"""

from __future__ import annotations

import os
import statistics
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")

import torch  # noqa: E402
from torch import nn  # noqa: E402

from devfix.sim import simulated_cuda  # noqa: E402

STEPS = 100


def train(device: str) -> float:
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 128), nn.ReLU(), nn.Linear(128, 10)).to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    inputs, labels = torch.randn(STEPS, 32, 64), torch.randint(0, 10, (STEPS, 32))
    start = time.perf_counter()
    for step in range(STEPS):
        x, y = inputs[step].to(device), labels[step].to(device)
        optimizer.zero_grad()
        loss = nn.functional.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
    loss.item()
    return time.perf_counter() - start


def main() -> None:
    train("cpu")  # warm up
    plain = statistics.median(train("cpu") for _ in range(5))
    with simulated_cuda():
        train("cuda")
        simulated = statistics.median(train("cuda") for _ in range(5))
    print(f"plain CPU:      {plain * 1000:8.1f} ms / {STEPS} steps")
    print(f"simulated CUDA: {simulated * 1000:8.1f} ms / {STEPS} steps")
    print(f"overhead:       {simulated / plain:8.2f}x")


if __name__ == "__main__":
    main()
