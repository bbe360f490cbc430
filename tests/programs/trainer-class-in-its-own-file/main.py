"""A sentiment LSTM project whose trainer class lives in its own file: `Trainer` moves the model it
is given to the device it picks, and loops over the loader `main.py` builds and hands it; the batches
stay on the CPU (found only by asking `main.py` what it constructs the trainer with)."""
import torch
from torch.utils.data import DataLoader, TensorDataset

from model import SentimentLSTM
from trainer import Trainer

torch.manual_seed(0)
reviews = torch.randint(1, 50, (40, 12))
labels = torch.randint(0, 2, (40,))
loader = DataLoader(TensorDataset(reviews, labels), batch_size=8, drop_last=True)
trainer = Trainer(SentimentLSTM(50, 16, 8), loader)
total = 0.0
for epoch in range(2):
    total += trainer.train_epoch(8)
print("RESULT", round(total, 4))
