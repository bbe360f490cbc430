"""Correct: legacy constructors that only meet host values, an LSTM whose forward builds its state
on the input's device, and a checkpoint loaded with map_location="cpu" then moved; nothing may
change."""
import os
import tempfile

import torch
from torch import nn


class CharLSTM(nn.Module):
    def __init__(self, vocab, hidden):
        super().__init__()
        self.hidden = hidden
        self.embed = nn.Embedding(vocab, 8)
        self.lstm = nn.LSTM(8, hidden, batch_first=True)
        self.head = nn.Linear(hidden, vocab)

    def forward(self, tokens):
        h0 = torch.zeros(1, tokens.size(0), self.hidden, device=tokens.device)
        out, _ = self.lstm(self.embed(tokens), (h0, torch.zeros_like(h0)))
        return self.head(out)


def class_balance(counts):
    totals = torch.FloatTensor(counts)
    return (totals / totals.sum()).tolist()


device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
torch.manual_seed(0)
model = CharLSTM(12, 16).to(device)
tokens = torch.randint(0, 12, (4, 6)).to(device)
path = os.path.join(tempfile.mkdtemp(), "lstm.pt")
torch.save(model.state_dict(), path)
restored = CharLSTM(12, 16)
restored.load_state_dict(torch.load(path, map_location="cpu"))
restored.to(device)
with torch.no_grad():
    score = restored(tokens).sum().item()
print("RESULT", round(score + sum(class_balance([3, 1, 4])), 4))
