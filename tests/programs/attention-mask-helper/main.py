"""A small causal self-attention block whose mask helper method hard-codes `.cuda()` (a user's
"works on the cluster, crashes on my laptop" report), trained for a few steps."""
import torch
from torch import nn


class CausalSelfAttention(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)

    def causal_mask(self, length):
        return torch.tril(torch.ones(length, length)).bool().cuda()

    def forward(self, x):
        b, t, c = x.shape
        q, k, v = self.qkv(x).split(c, dim=2)
        q, k, v = (z.view(b, t, self.heads, c // self.heads).transpose(1, 2) for z in (q, k, v))
        scores = (q @ k.transpose(-2, -1)) / (c // self.heads) ** 0.5
        scores = scores.masked_fill(~self.causal_mask(t), float("-inf"))
        out = scores.softmax(dim=-1) @ v
        return self.proj(out.transpose(1, 2).reshape(b, t, c))


class TinyDecoder(nn.Module):
    def __init__(self, vocab, dim, heads):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.attn = CausalSelfAttention(dim, heads)
        self.head = nn.Linear(dim, vocab)

    def forward(self, tokens):
        x = self.embed(tokens)
        return self.head(x + self.attn(x))


def train(model, device, vocab, steps=3):
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-3)
    total = 0.0
    for _ in range(steps):
        tokens = torch.randint(0, vocab, (4, 9)).to(device)
        logits = model(tokens[:, :-1])
        loss = nn.functional.cross_entropy(logits.reshape(-1, vocab), tokens[:, 1:].reshape(-1))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        total += loss.item()
    return total


device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
torch.manual_seed(0)
model = TinyDecoder(16, 8, 2).to(device)
print("RESULT", round(train(model, device, 16), 4))
