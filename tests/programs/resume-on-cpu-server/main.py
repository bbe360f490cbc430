"""Train on the GPU box and save a checkpoint; then a serving function restores it into a fresh
model on a machine that may have no GPU (a user's "Attempting to deserialize object on a CUDA
device" report). The restore helper loads without `map_location`."""
import os
import tempfile

import torch
from torch import nn


class Regressor(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(5, 8), nn.ReLU(), nn.Linear(8, 1))

    def forward(self, x):
        return self.net(x)


def train_and_save(path):
    model = Regressor().cuda()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    for _ in range(3):
        x = torch.randn(16, 5).cuda()
        loss = (model(x) - x.sum(1, keepdim=True)).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    torch.save({"state": model.state_dict(), "epoch": 3}, path)


def restore(path):
    checkpoint = torch.load(path)
    model = Regressor()
    model.load_state_dict(checkpoint["state"])
    model.eval()
    return model, checkpoint["epoch"]


torch.manual_seed(0)
path = os.path.join(tempfile.mkdtemp(), "regressor.pt")
train_and_save(path)
model, epoch = restore(path)
with torch.no_grad():
    prediction = model(torch.ones(2, 5)).sum().item()
print("RESULT", round(prediction + epoch, 5))
