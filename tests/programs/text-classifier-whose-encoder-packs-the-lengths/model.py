import torch
import torch.nn as nn


class Encoder(nn.Module):
    def __init__(self, vocab, dim, hidden):
        super().__init__()
        self.hidden = hidden
        self.embed = nn.Embedding(vocab, dim, padding_idx=0)
        self.rnn = nn.GRU(dim, hidden, batch_first=True, bidirectional=True)

    def init_state(self, batch):
        return torch.zeros(2, batch, self.hidden)

    def forward(self, tokens, lengths):
        packed = nn.utils.rnn.pack_padded_sequence(self.embed(tokens), lengths, batch_first=True, enforce_sorted=False)
        _, h = self.rnn(packed, self.init_state(tokens.size(0)))
        return torch.cat([h[0], h[1]], dim=1)


class Classifier(nn.Module):
    def __init__(self, vocab=40, dim=8, hidden=6, classes=3):
        super().__init__()
        self.encoder = Encoder(vocab, dim, hidden)
        self.head = nn.Linear(2 * hidden, classes)

    def forward(self, tokens, lengths):
        return self.head(self.encoder(tokens, lengths))
