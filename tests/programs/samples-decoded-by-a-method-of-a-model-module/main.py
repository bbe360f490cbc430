"""Trains the VAE of `model.py` on the device, then decodes a latent batch drawn on the CPU through
its `decode` method."""
import torch
import torch.nn.functional as F

from model import VAE


def main():
    torch.manual_seed(0)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model = VAE().to(device)
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    data = torch.rand(16, 12)
    for _ in range(3):
        x = data.to(device)
        recon, mu, logvar = model(x)
        loss = F.binary_cross_entropy(recon, x) - 0.5 * torch.mean(1 + logvar - mu.pow(2) - logvar.exp())
        opt.zero_grad()
        loss.backward()
        opt.step()
    with torch.no_grad():
        z = torch.randn(4, 3)
        samples = model.decode(z)
    print("RESULT", loss.item() + samples.sum().item())


if __name__ == "__main__":
    main()
