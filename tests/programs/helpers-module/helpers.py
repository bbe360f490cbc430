import torch


def evaluate(model, loader) -> float:
    correct = 0
    for inputs, labels in loader:
        correct += (model(inputs).argmax(dim=1) == labels).sum().item()
    return correct / len(loader.dataset)


def smoothed(labels: torch.Tensor, classes: int) -> torch.Tensor:
    return torch.eye(classes)[labels] * 0.9 + 0.1 / classes
