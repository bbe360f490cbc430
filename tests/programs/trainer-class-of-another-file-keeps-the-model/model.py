import torch.nn as nn


class Classifier(nn.Module):
    def __init__(self, n_in, n_classes):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(n_in, 32), nn.ReLU(), nn.Linear(32, n_classes))

    def forward(self, x):
        return self.net(x)
