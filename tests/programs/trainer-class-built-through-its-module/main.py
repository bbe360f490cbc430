"""The trainer-class project again, `main.py` importing the trainer's module and building
`training.Trainer(...)` through it: the loader it hands over is found the same way."""
import torch
import trainer as training
from model import SentimentLSTM
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
reviews = torch.randint(1, 50, (40, 12))
labels = torch.randint(0, 2, (40,))
loader = DataLoader(TensorDataset(reviews, labels), batch_size=8, drop_last=True)
trainer = training.Trainer(SentimentLSTM(50, 16, 8), loader)
total = 0.0
for epoch in range(2):
    total += trainer.train_epoch(8)
print("RESULT", round(total, 4))
