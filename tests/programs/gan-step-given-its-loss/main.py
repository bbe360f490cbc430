import torch
import torch.nn as nn


class Generator(nn.Module):
    def __init__(self, z_dim):
        super().__init__()
        self.z_dim = z_dim
        self.net = nn.Sequential(nn.Linear(z_dim, 16), nn.ReLU(), nn.Linear(16, 4))

    def forward(self, z):
        return self.net(z)

    def sample(self, n):
        z = torch.randn(n, self.z_dim)
        return self(z)


class Discriminator(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 1))

    def forward(self, x):
        return self.net(x)


def train_step(G, D, real, opt_g, opt_d, bce):
    n = real.size(0)
    fake = G.sample(n)
    d_loss = bce(D(real), torch.ones(n, 1)) + bce(D(fake.detach()), torch.zeros(n, 1))
    opt_d.zero_grad()
    d_loss.backward()
    opt_d.step()
    g_loss = bce(D(fake), torch.ones(n, 1))
    opt_g.zero_grad()
    g_loss.backward()
    opt_g.step()
    return d_loss.item() + g_loss.item()


if __name__ == "__main__":
    torch.manual_seed(0)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    G, D = Generator(8).to(device), Discriminator().to(device)
    opt_g, opt_d = torch.optim.Adam(G.parameters()), torch.optim.Adam(D.parameters())
    real = torch.randn(16, 4).to(device)
    print("RESULT", round(train_step(G, D, real, opt_g, opt_d, nn.BCEWithLogitsLoss()), 4))
