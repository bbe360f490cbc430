"""A denoising autoencoder trained through a small Trainer class (written after users' reports: the
training step drops inputs with a mask and weighs features with a tensor, both created on the CPU
while the batch and the model are on the GPU)."""
import argparse

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset


class AutoEncoder(nn.Module):
    def __init__(self, features, hidden):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(features, hidden), nn.Tanh())
        self.decoder = nn.Linear(hidden, features)

    def forward(self, x):
        return self.decoder(self.encoder(x))


class Trainer:
    def __init__(self, model, device, lr=0.05, drop=0.25):
        self.device = device
        self.model = model.to(device)
        self.optimizer = torch.optim.SGD(self.model.parameters(), lr=lr)
        self.drop = drop
        self.history = []

    def corrupt(self, batch):
        keep = torch.arange(batch.shape[1]) % 4 != 0
        return batch * keep.float()

    def step(self, batch):
        batch = batch.to(self.device)
        noisy = self.corrupt(batch)
        reconstruction = self.model(noisy)
        weights = torch.linspace(1.0, 2.0, batch.shape[1])
        loss = ((reconstruction - batch) ** 2 * weights).mean()
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
        self.history.append(loss.item())
        return loss.item()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--batch-size", type=int, default=8)
    args = parser.parse_args([])
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    torch.manual_seed(0)
    loader = DataLoader(TensorDataset(torch.randn(32, 8)), batch_size=args.batch_size)
    trainer = Trainer(AutoEncoder(8, 4), device)
    for epoch in range(args.epochs):
        epoch_loss = 0.0
        for (batch,) in loader:
            epoch_loss += trainer.step(batch)
        print(f"epoch {epoch}: {epoch_loss:.4f}")
    print("RESULT", round(sum(trainer.history), 5))


if __name__ == "__main__":
    main()
