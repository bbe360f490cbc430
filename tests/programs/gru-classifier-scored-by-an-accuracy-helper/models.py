import torch
import torch.nn as nn


class GRUClassifier(nn.Module):
    def __init__(self, d_in, hidden, classes):
        super().__init__()
        self.hidden = hidden
        self.gru = nn.GRU(d_in, hidden, batch_first=True)
        self.fc = nn.Linear(hidden, classes)

    def forward(self, x):
        h0 = torch.zeros(1, x.size(0), self.hidden)
        out, _ = self.gru(x.unsqueeze(1), h0)
        return self.fc(out[:, -1])
