"""A small language model whose mask and positional table come from `utils.py`, built on the CPU:
it runs on a CPU machine and fails on a GPU (the helpers live in another file than the model)."""
import torch
import torch.nn as nn

from utils import causal_mask, sinusoid


class TinyLM(nn.Module):
    def __init__(self, vocab=20, d=16):
        super().__init__()
        self.emb = nn.Embedding(vocab, d)
        self.qkv = nn.Linear(d, 3 * d)
        self.out = nn.Linear(d, vocab)

    def forward(self, ids):
        n, d = ids.size(1), self.emb.embedding_dim
        h = self.emb(ids) + sinusoid(n, d)
        q, k, v = self.qkv(h).chunk(3, dim=-1)
        scores = q @ k.transpose(1, 2) / d ** 0.5
        scores = scores.masked_fill(causal_mask(n), float("-inf"))
        return self.out(scores.softmax(-1) @ v)


if __name__ == "__main__":
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    torch.manual_seed(0)
    model = TinyLM().to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    ids = torch.randint(0, 20, (4, 9))
    for step in range(3):
        batch = ids.to(device)
        logits = model(batch[:, :-1])
        loss = nn.functional.cross_entropy(logits.reshape(-1, 20), batch[:, 1:].reshape(-1))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    print("RESULT", loss.item())
