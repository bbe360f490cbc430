"""A small classifier used by the training script."""

import torch
from torch import nn


class Classifier(nn.Module):
    def __init__(self, in_features: int, classes: int) -> None:
        super().__init__()
        self.body = nn.Sequential(nn.Linear(in_features, 16), nn.ReLU(), nn.Linear(16, classes))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.body(x)
