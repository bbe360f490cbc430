"""A VAE whose `encode`/`decode` methods the training script of another file calls: trained on the
device, then sampled through `decode` with a latent batch drawn on the CPU."""
import torch
import torch.nn as nn


class VAE(nn.Module):
    def __init__(self, d=12, z=3):
        super().__init__()
        self.enc = nn.Linear(d, 2 * z)
        self.dec = nn.Linear(z, d)

    def encode(self, x):
        return self.enc(x).chunk(2, dim=1)

    def decode(self, z):
        return torch.sigmoid(self.dec(z))

    def forward(self, x):
        mu, logvar = self.encode(x)
        z = mu + torch.randn_like(mu) * torch.exp(0.5 * logvar)
        return self.decode(z), mu, logvar
