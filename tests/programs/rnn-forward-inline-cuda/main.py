"""A character-level LSTM whose forward builds its initial state with `.cuda()` (a user's model
that "only runs on the lab machine"), trained on a toy sequence task on whatever device exists."""
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
        embedded = self.embed(tokens)
        h0 = torch.zeros(1, tokens.size(0), self.hidden).cuda()
        c0 = torch.zeros(1, tokens.size(0), self.hidden).cuda()
        out, _ = self.lstm(embedded, (h0, c0))
        return self.head(out)


def make_batch(vocab, batch, length):
    tokens = torch.randint(0, vocab, (batch, length + 1))
    return tokens[:, :-1], tokens[:, 1:]


def train(model, device, steps=3, vocab=12):
    optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
    losses = []
    for _ in range(steps):
        inputs, targets = make_batch(vocab, 4, 6)
        inputs, targets = inputs.to(device), targets.to(device)
        logits = model(inputs)
        loss = nn.functional.cross_entropy(logits.reshape(-1, vocab), targets.reshape(-1))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses


device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
torch.manual_seed(0)
model = CharLSTM(12, 16).to(device)
print("RESULT", round(sum(train(model, device)), 5))
