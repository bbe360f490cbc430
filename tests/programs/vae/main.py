import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader, TensorDataset


class VAE(nn.Module):
    def __init__(self, dim=8, latent=2):
        super().__init__()
        self.enc = nn.Linear(dim, 2 * latent)
        self.dec = nn.Linear(latent, dim)
        self.latent = latent

    def reparameterize(self, mu, logvar):
        eps = torch.randn(mu.shape)
        return mu + eps * torch.exp(0.5 * logvar)

    def forward(self, x):
        mu, logvar = self.enc(x).chunk(2, dim=-1)
        z = self.reparameterize(mu, logvar)
        return self.dec(z), mu, logvar


torch.manual_seed(0)
model = VAE().cuda()
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
data = DataLoader(TensorDataset(torch.randn(32, 8)), batch_size=8)
for (x,) in data:
    recon, mu, logvar = model(x)
    kl = -0.5 * torch.sum(1 + logvar - mu.pow(2) - logvar.exp())
    loss = F.mse_loss(recon, x) + kl
    opt.zero_grad()
    loss.backward()
    opt.step()
print("RESULT", loss.item())
