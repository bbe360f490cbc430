"""A GRUCell decoder whose initial state is built on the CPU inside forward."""
import torch
from torch import nn


class Decoder(nn.Module):
    def __init__(self, vocab, hidden):
        super().__init__()
        self.hidden = hidden
        self.embed = nn.Embedding(vocab, hidden)
        self.cell = nn.GRUCell(hidden, hidden)
        self.out = nn.Linear(hidden, vocab)

    def forward(self, tokens):
        state = torch.zeros(tokens.size(0), self.hidden)
        logits = []
        for step in range(tokens.size(1)):
            state = self.cell(self.embed(tokens[:, step]), state)
            logits.append(self.out(state))
        return torch.stack(logits, dim=1)


device = "cuda" if torch.cuda.is_available() else "cpu"
torch.manual_seed(0)
decoder = Decoder(7, 5).to(device)
tokens = torch.randint(0, 7, (3, 4)).to(device)
print("RESULT", decoder(tokens).sum().item())
