"""A tiny library: a normalizing layer and a helper that scores a batch."""

import torch
from torch import nn


class Standardize(nn.Module):
    def __init__(self, features):
        super().__init__()
        self.mean = torch.zeros(features)
        self.scale = nn.Parameter(torch.ones(features))

    def forward(self, x):
        return (x - self.mean) * self.scale


def top_scores(logits, k):
    ranks = torch.arange(logits.shape[-1])
    best = logits.topk(k).indices
    return (ranks[best] * 1.0).mean(dim=-1)
