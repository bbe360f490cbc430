import torch
from torch.utils.data import DataLoader, TensorDataset


def make_loaders(n=60, batch_size=12):
    g = torch.Generator().manual_seed(0)
    x = torch.randn(n, 6, generator=g)
    y = torch.randint(0, 3, (n,), generator=g)
    train = DataLoader(TensorDataset(x[:48], y[:48]), batch_size=batch_size)
    test = DataLoader(TensorDataset(x[48:], y[48:]), batch_size=batch_size)
    return train, test


def evaluate(model, loader):
    correct = 0
    with torch.no_grad():
        for xb, yb in loader:
            pred = model(xb).argmax(1)
            correct += (pred == yb).sum().item()
    return correct / len(loader.dataset)
