"""A small CNN training script in the style of a course assignment: labels never moved, a loss
weight and a temperature left on the CPU, predictions and a loss history (extended with what
`train` returns) given to sklearn and matplotlib, a checkpoint loaded without `map_location`."""
import argparse
import io

import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from sklearn.metrics import confusion_matrix, f1_score
from torch.utils.data import DataLoader, Dataset


class ToyImages(Dataset):
    def __init__(self, n, seed):
        rng = np.random.RandomState(seed)
        self.images = rng.rand(n, 1, 8, 8).astype(np.float32)
        self.labels = (self.images.mean(axis=(1, 2, 3)) > 0.5).astype(np.int64)

    def __len__(self):
        return len(self.labels)

    def __getitem__(self, idx):
        return torch.from_numpy(self.images[idx]), self.labels[idx]


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 4, 3, padding=1)
        self.pool = nn.MaxPool2d(2)
        self.fc = nn.Linear(4 * 4 * 4, 2)
        self.temperature = torch.tensor([1.5])

    def forward(self, x):
        x = self.pool(F.relu(self.conv1(x)))
        x = x.view(x.size(0), -1)
        return self.fc(x) / self.temperature


def train(model, loader, optimizer, criterion, device):
    model.train()
    losses = []
    for images, labels in loader:
        images = images.to(device)
        optimizer.zero_grad()
        out = model(images)
        loss = criterion(out, labels)
        loss.backward()
        optimizer.step()
        losses.append(loss.detach())
    return losses


def evaluate(model, loader, device):
    model.eval()
    preds, trues = [], []
    with torch.no_grad():
        for images, labels in loader:
            out = model(images.to(device))
            preds.append(out.argmax(1))
            trues.append(labels)
    preds = torch.cat(preds).numpy()
    trues = torch.cat(trues).numpy()
    return f1_score(trues, preds, average="macro"), confusion_matrix(trues, preds)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=2)
    args = parser.parse_args([])
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    torch.manual_seed(0)
    model = Net().to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    class_weights = torch.tensor([1.0, 2.0])
    criterion = nn.CrossEntropyLoss(weight=class_weights)
    train_loader = DataLoader(ToyImages(32, 0), batch_size=8, shuffle=False)
    test_loader = DataLoader(ToyImages(16, 1), batch_size=8)
    history = []
    for epoch in range(args.epochs):
        history += train(model, train_loader, optimizer, criterion, device)
    plt.plot(history)
    f1, cm = evaluate(model, test_loader, device)
    buffer = io.BytesIO()
    torch.save(model.state_dict(), buffer)
    buffer.seek(0)
    model.load_state_dict(torch.load(buffer))
    print("RESULT", round(float(f1) + float(cm.sum()), 4))


if __name__ == "__main__":
    main()
