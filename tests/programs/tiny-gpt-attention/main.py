"""A tiny GPT: causal mask and positions built on the CPU inside forward."""
import math

import torch
from torch import nn


class CausalSelfAttention(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)

    def forward(self, x):
        batch, length, dim = x.shape
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        q = q.view(batch, length, self.heads, -1).transpose(1, 2)
        k = k.view(batch, length, self.heads, -1).transpose(1, 2)
        v = v.view(batch, length, self.heads, -1).transpose(1, 2)
        scores = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))
        mask = torch.triu(torch.ones(length, length), diagonal=1).bool()
        scores = scores.masked_fill(mask, float("-inf"))
        out = scores.softmax(dim=-1) @ v
        return self.proj(out.transpose(1, 2).reshape(batch, length, dim))


class TinyGPT(nn.Module):
    def __init__(self, vocab, dim, length):
        super().__init__()
        self.tokens = nn.Embedding(vocab, dim)
        self.positions = nn.Embedding(length, dim)
        self.attention = CausalSelfAttention(dim, 2)
        self.head = nn.Linear(dim, vocab)

    def forward(self, ids):
        positions = torch.arange(ids.size(1))
        h = self.tokens(ids) + self.positions(positions)
        return self.head(self.attention(h))


device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
torch.manual_seed(0)
model = TinyGPT(11, 8, 6).to(device)
ids = torch.randint(0, 11, (2, 6), device=device)
logits = model(ids)
loss = nn.functional.cross_entropy(logits.view(-1, 11), ids.view(-1))
print("RESULT", loss.item())
