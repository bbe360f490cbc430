import argparse

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader, TensorDataset


class Net(nn.Module):
    def __init__(self, dim, classes):
        super().__init__()
        self.layers = nn.ModuleList([nn.Linear(dim, dim) for _ in range(2)])
        self.head = nn.Linear(dim, classes)
        self.register_buffer("scale", torch.ones(dim))

    def forward(self, x):
        positions = torch.arange(x.size(1), device=x.device)
        for layer in self.layers:
            x = F.relu(layer(x * self.scale)) + positions.float().mean() * 0
        return self.head(x)


def evaluate(model, loader, device):
    model.eval()
    preds = []
    with torch.no_grad():
        for x, y in loader:
            x = x.to(device)
            preds.append(model(x).argmax(1).cpu().numpy())
    return np.concatenate(preds)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--cpu", action="store_true")
    args = parser.parse_args([])
    device = torch.device("cuda" if torch.cuda.is_available() and not args.cpu else "cpu")
    model = Net(4, 3).to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    loader = DataLoader(TensorDataset(torch.randn(16, 4), torch.randint(0, 3, (16,))), batch_size=4)
    for x, y in loader:
        x, y = x.to(device), y.to(device)
        loss = F.cross_entropy(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    torch.save(model.state_dict(), "m.pt")
    model.load_state_dict(torch.load("m.pt", map_location=device))
    print(evaluate(model, loader, device).sum())


if __name__ == "__main__":
    main()
