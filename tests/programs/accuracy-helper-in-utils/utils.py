"""Metrics shared by the training and evaluation scripts."""

import numpy as np


def accuracy(output, target):
    pred = output.argmax(dim=1)
    return float((pred.numpy() == target.numpy()).mean())


def confusion_matrix(output, target, num_classes):
    matrix = np.zeros((num_classes, num_classes), dtype=np.int64)
    for t, p in zip(target.numpy(), output.argmax(dim=1).numpy()):
        matrix[t, p] += 1
    return matrix


class AverageMeter:
    def __init__(self):
        self.total, self.count = 0.0, 0

    def update(self, value, n=1):
        self.total += value * n
        self.count += n

    @property
    def avg(self):
        return self.total / max(self.count, 1)
