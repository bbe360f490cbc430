"""A recurrent model trained on the GPU, then handed to a plotting helper of another module that
builds its own batch from numpy and feeds the model: the helper module places nothing itself, so
only its callers say the model it is given runs on a device."""
import numpy as np
import torch
import torch.nn as nn

from helpers import make_batch, plot_predictions


class RNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.rnn = nn.RNN(3, 8, batch_first=True)
        self.out = nn.Linear(8, 3)

    def forward(self, x):
        h, last = self.rnn(x)
        return self.out(h), last


np.random.seed(0)
torch.manual_seed(0)
device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
rnn = RNN().to(device)
opt = torch.optim.Adam(rnn.parameters(), lr=1e-2)
for step in range(3):
    X = make_batch(4).to(device)
    out, _ = rnn(X)
    loss = (out - X).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
print("RESULT", round(plot_predictions(rnn, 2), 4))
