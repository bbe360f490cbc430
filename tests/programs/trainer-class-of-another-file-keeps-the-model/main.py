"""A trainer class of its own file keeps the model main.py builds, and moves only the batches."""
import torch
from torch.utils.data import DataLoader, TensorDataset

from model import Classifier
from trainer import Trainer

torch.manual_seed(0)
x = torch.randn(64, 10)
y = (x.sum(1) > 0).long()
loader = DataLoader(TensorDataset(x, y), batch_size=16)

model = Classifier(10, 2)
trainer = Trainer(model, loader)
for epoch in range(3):
    loss = trainer.train_epoch()
print("RESULT", round(loss, 3))
