"""Synthetic, reproducible data: three classes separated by the sign of two features."""

import torch
from torch.utils.data import TensorDataset


def make_dataset(size: int, features: int = 8, seed: int = 0) -> TensorDataset:
    generator = torch.Generator().manual_seed(seed)
    inputs = torch.randn(size, features, generator=generator)
    labels = (inputs[:, 0] > 0).long() + (inputs[:, 1] > 0).long()
    return TensorDataset(inputs, labels)
