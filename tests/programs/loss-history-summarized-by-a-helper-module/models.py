"""The model of the project: a small Transformer classifier with a sinusoidal positional encoding."""
import math

import torch
import torch.nn as nn


class PositionalEncoding(nn.Module):
    def __init__(self, d_model, max_len=64):
        super().__init__()
        pe = torch.zeros(max_len, d_model)
        position = torch.arange(0, max_len).unsqueeze(1).float()
        div_term = torch.exp(torch.arange(0, d_model, 2).float() * (-math.log(10000.0) / d_model))
        pe[:, 0::2] = torch.sin(position * div_term)
        pe[:, 1::2] = torch.cos(position * div_term)
        self.pe = pe.unsqueeze(0)

    def forward(self, x):
        return x + self.pe[:, : x.size(1)]


class TinyTransformer(nn.Module):
    def __init__(self, vocab, d_model=16, classes=3):
        super().__init__()
        self.embed = nn.Embedding(vocab, d_model)
        self.pos = PositionalEncoding(d_model)
        layer = nn.TransformerEncoderLayer(d_model, 2, 32, batch_first=True, dropout=0.0)
        self.encoder = nn.TransformerEncoder(layer, 1)
        self.head = nn.Linear(d_model, classes)

    def forward(self, tokens):
        h = self.encoder(self.pos(self.embed(tokens)))
        return self.head(h.mean(1))


def build_model(cfg):
    return TinyTransformer(cfg["vocab"], cfg["d_model"])
