import torch
from torch import nn


class Tagger(nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(3, 4, batch_first=True)

    def forward(self, x, lengths):
        packed = nn.utils.rnn.pack_padded_sequence(x, lengths.cpu(), batch_first=True, enforce_sorted=False)
        out, _ = self.lstm(packed)
        padded, _ = nn.utils.rnn.pad_packed_sequence(out, batch_first=True)
        return padded


device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
model = Tagger().to(device)
x = torch.randn(2, 5, 3).to(device)
lengths = torch.tensor([5, 3]).to(device)
print(model(x, lengths).shape)
