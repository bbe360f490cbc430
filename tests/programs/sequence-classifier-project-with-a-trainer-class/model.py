"""A small Transformer encoder that classifies padded token sequences."""
import torch
import torch.nn as nn


def padding_mask(ids, pad=0):
    return ids == pad


class Classifier(nn.Module):
    def __init__(self, vocab=20, dim=16, max_len=16):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim, padding_idx=0)
        self.position = nn.Embedding(max_len, dim)
        layer = nn.TransformerEncoderLayer(dim, 2, 32, batch_first=True, dropout=0.0)
        self.encoder = nn.TransformerEncoder(layer, 1)
        self.head = nn.Linear(dim, 2)

    def forward(self, ids):
        positions = torch.arange(ids.size(1)).unsqueeze(0)
        h = self.embed(ids) + self.position(positions)
        h = self.encoder(h, src_key_padding_mask=padding_mask(ids))
        keep = (~padding_mask(ids)).unsqueeze(-1).float()
        pooled = (h * keep).sum(1) / keep.sum(1)
        return self.head(pooled)
