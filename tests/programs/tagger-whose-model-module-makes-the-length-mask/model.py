import torch
import torch.nn as nn


class PositionalEncoding(nn.Module):
    def __init__(self, d_model, max_len=64):
        super().__init__()
        position = torch.arange(max_len).unsqueeze(1)
        div = torch.exp(torch.arange(0, d_model, 2) * (-9.21 / d_model))
        pe = torch.zeros(max_len, d_model)
        pe[:, 0::2] = torch.sin(position * div)
        pe[:, 1::2] = torch.cos(position * div)
        self.pe = pe

    def forward(self, x):
        return x + self.pe[: x.size(1)]


class Tagger(nn.Module):
    def __init__(self, vocab, d_model, n_tags):
        super().__init__()
        self.embed = nn.Embedding(vocab, d_model)
        self.pos = PositionalEncoding(d_model)
        self.out = nn.Linear(d_model, n_tags)

    def forward(self, ids):
        return self.out(self.pos(self.embed(ids)))


def make_mask(lengths, max_len):
    return torch.arange(max_len)[None, :] < lengths[:, None]
