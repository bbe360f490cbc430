import torch
from torch import nn


class Decoder(nn.Module):
    def __init__(self, vocab, hidden):
        super().__init__()
        self.hidden_size = hidden
        self.embedding = nn.Embedding(vocab, hidden)
        self.gru = nn.GRU(hidden, hidden)
        self.out = nn.Linear(hidden, vocab)

    def init_hidden(self):
        return torch.zeros(1, 1, self.hidden_size)

    def forward(self, token, hidden):
        embedded = self.embedding(token).view(1, 1, -1)
        output, hidden = self.gru(embedded, hidden)
        return self.out(output[0]), hidden


device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
torch.manual_seed(0)
decoder = Decoder(12, 6).to(device)
hidden = decoder.init_hidden()
token = torch.tensor([[0]], device=device)
outputs = []
for _ in range(4):
    logits, hidden = decoder(token, hidden)
    token = logits.argmax(dim=1, keepdim=True)
    outputs.append(token.item())
print("RESULT", float(sum(outputs)))
