"""Moves the model to the device, then hands it to the trainer of `trainer.py` with a DataLoader of CPU tensors."""
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

from trainer import Trainer


def main():
    torch.manual_seed(0)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3)).to(device)
    ds = TensorDataset(torch.linspace(-1, 1, 80).reshape(20, 4), torch.arange(20) % 3)
    trainer = Trainer(model, DataLoader(ds, batch_size=5))
    print("RESULT", round(trainer.train_epoch(), 4))


if __name__ == "__main__":
    main()
