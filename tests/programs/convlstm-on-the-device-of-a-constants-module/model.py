import torch
from torch import nn

from core.constants import DEVICE


class ConvLSTM(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.conv = nn.Conv2d(2 * channels, 4 * channels, 3, padding=1)
        self.channels = channels

    def forward(self, clip):
        b, t, _, h, w = clip.shape
        hidden = torch.zeros((b, self.channels, h, w), device=DEVICE)
        cell = torch.zeros((b, self.channels, h, w), device=DEVICE)
        frames = []
        for step in range(t):
            gates = self.conv(torch.cat([clip[:, step], hidden], dim=1))
            i, f, o, g = torch.chunk(gates, 4, dim=1)
            cell = torch.sigmoid(f) * cell + torch.sigmoid(i) * torch.tanh(g)
            hidden = torch.sigmoid(o) * torch.tanh(cell)
            frames.append(hidden)
        return torch.stack(frames, dim=1)
