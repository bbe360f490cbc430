import numpy as np
import torch
from torch import nn


def accuracy(model, inputs, labels):
    logits = model(inputs)
    predictions = logits.argmax(dim=1).numpy()
    return float((predictions == labels.numpy()).mean())


device = "cuda" if torch.cuda.is_available() else "cpu"
torch.manual_seed(0)
model = nn.Linear(4, 2).to(device)
inputs = torch.randn(10, 4).to(device)
labels = torch.randint(0, 2, (10,)).to(device)
with torch.no_grad():
    print("RESULT", accuracy(model, inputs, labels))
