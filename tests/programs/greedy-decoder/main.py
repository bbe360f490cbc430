"""A decoder moved with .to("cuda"), tokens appended on the CPU, ids converted with numpy."""
import torch
from torch import nn


def decode(model, ids: torch.Tensor, steps: int) -> torch.Tensor:
    for _ in range(steps):
        next_token = model(ids.float()).argmax(dim=-1, keepdim=True)[:, -1:]
        ids = torch.cat([ids[:, 1:], torch.tensor([[int(next_token)]])], dim=1)
    return ids


torch.manual_seed(0)
model = nn.Linear(4, 4).to("cuda")
ids = torch.tensor([[1, 2, 3, 0]]).to("cuda")
result = decode(model, ids, 4)
print("RESULT", float(result.numpy().sum()))
