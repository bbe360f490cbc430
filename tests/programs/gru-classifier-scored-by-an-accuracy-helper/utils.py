import torch


def load_data(n=32):
    g = torch.Generator().manual_seed(3)
    x = torch.randn(n, 5, generator=g)
    y = (x[:, 0] > 0).long()
    return x, y


def accuracy(out, y):
    return (out.argmax(1) == y).float().mean().item()
