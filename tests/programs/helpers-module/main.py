"""Helpers in another file have no device; the script hard-codes .cuda()."""
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

from helpers import evaluate, smoothed

torch.manual_seed(0)
model = nn.Linear(5, 3).cuda()
data = TensorDataset(torch.randn(12, 5), torch.randint(0, 3, (12,)))
accuracy = evaluate(model, DataLoader(data, batch_size=4))
targets = smoothed(torch.tensor([0, 2, 1]).cuda(), 3)
print("RESULT", accuracy + targets.sum().item())
