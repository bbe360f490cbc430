"""Toy blobs for the engine's loops: numpy arrays, one tensor pair per item."""
import numpy as np
import torch
from torch.utils.data import Dataset


class Blobs(Dataset):
    def __init__(self, n=40, seed=0):
        rng = np.random.RandomState(seed)
        self.x = rng.randn(n, 4).astype(np.float32)
        self.y = (self.x.sum(1) > 0).astype(np.int64)

    def __len__(self):
        return len(self.x)

    def __getitem__(self, i):
        return torch.from_numpy(self.x[i]), torch.tensor(self.y[i])
