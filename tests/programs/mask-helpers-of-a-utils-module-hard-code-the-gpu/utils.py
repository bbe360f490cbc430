"""Sequence helpers written on a GPU machine: each places what it makes with `.cuda()`."""
import torch


def pad_mask(seq, pad=0):
    mask = torch.ones(seq.size(0), seq.size(1)).cuda()
    return mask * (seq != pad).float()


def to_var(x):
    if torch.cuda.is_available():
        x = x.cuda()
    return x


def sequence_lengths(seq, pad=0):
    lengths = torch.zeros(seq.size(0), dtype=torch.long).cuda()
    lengths += (seq != pad).sum(dim=1)
    return lengths
