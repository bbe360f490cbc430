"""A decoder mask built with numpy (SamLynnEvans/Transformer#30): the helper returns a CPU mask and
the caller moves it with `.cuda()` but throws the result away, and `torch.from_numpy`'s argument is
an array (no tensor to align with)."""
import numpy as np
import torch
from torch import nn


def nopeak_mask(size):
    np_mask = np.triu(np.ones((1, size, size)), k=1).astype("uint8")
    return torch.from_numpy(np_mask) == 0


def create_masks(src, trg, pad):
    src_mask = (src != pad).unsqueeze(-2)
    trg_mask = (trg != pad).unsqueeze(-2)
    size = trg.size(1)
    np_mask = nopeak_mask(size)
    if trg.is_cuda:
        np_mask.cuda()
    trg_mask = trg_mask & np_mask
    return src_mask, trg_mask


class Tiny(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(10, 4)
        self.out = nn.Linear(4, 10)

    def forward(self, src, trg, src_mask, trg_mask):
        h = self.emb(trg) * trg_mask.float().sum(-1, keepdim=True)
        return self.out(h)


device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
torch.manual_seed(0)
model = Tiny().to(device)
src = torch.randint(1, 10, (2, 5)).to(device)
trg = torch.randint(1, 10, (2, 6)).to(device)
src_mask, trg_mask = create_masks(src, trg, 0)
print("RESULT", float(model(src, trg, src_mask, trg_mask).sum()))
