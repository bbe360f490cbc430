import numpy as np


def accuracy(logits, labels):
    preds = logits.argmax(1)
    return (preds == labels).float().mean()


def summarize(history):
    arr = np.array(history)
    return float(arr.mean())
