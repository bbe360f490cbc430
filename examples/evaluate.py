"""Accuracy of a model over a loader, on the device the caller chose."""

import torch
from torch.utils.data import DataLoader


def evaluate(model, loader: DataLoader, device) -> float:
    model.eval()
    correct = 0
    with torch.no_grad():
        for inputs, labels in loader:
            predictions = model(inputs).argmax(dim=1)
            correct += (predictions == labels).sum().item()
    return correct / len(loader.dataset)
