import numpy as np
import torch


def stats(values):
    t = torch.tensor(values, dtype=torch.float32)
    mask = torch.ones(len(values), dtype=torch.bool)
    return t[mask].mean().numpy(), np.asarray(t)


class Table:
    def __init__(self):
        self.values = torch.arange(10)

    def get(self, index: int):
        return self.values[index].item()


print(stats([1.0, 2.0]), Table().get(3))
