import torch
import torch.nn as nn


class Classifier(nn.Module):
    def __init__(self, n_in=6, hidden=16, n_out=3):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(n_in, hidden), nn.ReLU(), nn.Linear(hidden, n_out))
        self.class_prior = torch.tensor([0.2, 0.3, 0.5]).log()

    def forward(self, x):
        return self.net(x) + self.class_prior
