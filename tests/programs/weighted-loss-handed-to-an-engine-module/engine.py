"""Training and evaluation loops of the kind a project keeps in `engine.py`: the batch is moved, the
labels are not, and the predictions go to numpy and scikit-learn as they come."""
import numpy as np
import torch
from sklearn.metrics import accuracy_score


def train_one_epoch(model, loader, optimizer, criterion, device):
    model.train()
    total = 0.0
    for x, y in loader:
        x = x.to(device)
        out = model(x)
        loss = criterion(out, y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        total += loss.item()
    return total


def evaluate(model, loader, device):
    model.eval()
    preds, targets = [], []
    with torch.no_grad():
        for x, y in loader:
            out = model(x.to(device))
            preds.append(out.argmax(1))
            targets.append(y)
    preds = torch.cat(preds).numpy()
    targets = torch.cat(targets).numpy()
    return accuracy_score(targets, preds), float(np.mean(preds))
