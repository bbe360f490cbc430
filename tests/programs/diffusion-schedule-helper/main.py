"""Train a tiny denoiser: a plain scheduler class keeps its noise schedule on the CPU and hands it
to an `extract` helper, indexed with timesteps sampled on the GPU (a report seen in several
diffusion codebases)."""
import argparse

import torch
from torch import nn


def extract(schedule, t, x):
    shape = (x.size(0),) + (1,) * (x.ndim - 1)
    return schedule[t].view(shape).to(x)


class GaussianDiffusion:
    def __init__(self, steps=50):
        self.steps = steps
        betas = torch.linspace(1e-4, 0.02, steps)
        self.alphas_cumprod = torch.cumprod(1.0 - betas, dim=0)

    def q_sample(self, x0, t, noise):
        a = extract(self.alphas_cumprod, t, x0)
        return a.sqrt() * x0 + (1.0 - a).sqrt() * noise


class Denoiser(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(dim + 1, 32), nn.SiLU(), nn.Linear(32, dim))

    def forward(self, x, t):
        return self.net(torch.cat([x, t.float().unsqueeze(1) / 50.0], dim=1))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=3)
    args = parser.parse_args([])
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    torch.manual_seed(0)
    diffusion = GaussianDiffusion()
    model = Denoiser(4).to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    data = torch.randn(32, 4)
    total = 0.0
    for _ in range(args.steps):
        x0 = data.to(device)
        t = torch.randint(0, diffusion.steps, (x0.size(0),), device=device)
        noise = torch.randn_like(x0)
        xt = diffusion.q_sample(x0, t, noise)
        loss = ((model(xt, t) - noise) ** 2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        total += loss.item()
    print("RESULT", round(total, 4))


if __name__ == "__main__":
    main()
