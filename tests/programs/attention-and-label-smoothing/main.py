import torch
import torch.nn.functional as F
from torch import nn


class Attention(nn.Module):
    def __init__(self, dim, heads, max_len=64):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)
        self.scale = (dim // heads) ** -0.5

    def forward(self, x, padding_mask=None):
        B, T, C = x.shape
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        att = (q @ k.transpose(-2, -1)) * self.scale
        causal = torch.triu(torch.ones(T, T, dtype=torch.bool), diagonal=1)
        att = att.masked_fill(causal, float("-inf"))
        if padding_mask is not None:
            att = att.masked_fill(padding_mask[:, None, :], float("-inf"))
        return self.proj(att.softmax(-1) @ v)


class LabelSmoothing(nn.Module):
    def __init__(self, classes, smoothing=0.1):
        super().__init__()
        self.classes = classes
        self.smoothing = smoothing

    def forward(self, logits, target):
        true_dist = torch.zeros(logits.size(0), self.classes)
        true_dist.fill_(self.smoothing / (self.classes - 1))
        true_dist.scatter_(1, target.unsqueeze(1), 1 - self.smoothing)
        return torch.mean(torch.sum(-true_dist * F.log_softmax(logits, dim=-1), dim=-1))


device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
torch.manual_seed(0)
att = Attention(8, 2).to(device)
crit = LabelSmoothing(8)
x = torch.randn(2, 5, 8).to(device)
out = att(x)
loss = crit(out[:, -1, :], torch.tensor([1, 3]).to(device))
print("RESULT", loss.item())
