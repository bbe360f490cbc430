import torch
import torch.nn as nn

from models import Classifier
from utils import evaluate, make_loaders


def train_epoch(model, loader, optimizer, device):
    criterion = nn.CrossEntropyLoss()
    total = 0.0
    for xb, yb in loader:
        optimizer.zero_grad()
        loss = criterion(model(xb.to(device)), yb)
        loss.backward()
        optimizer.step()
        total += loss.item()
    return total


def main():
    torch.manual_seed(0)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model = Classifier().to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
    train_loader, test_loader = make_loaders()
    for epoch in range(2):
        loss = train_epoch(model, train_loader, optimizer, device)
    print("RESULT", round(loss + evaluate(model, test_loader), 4))


if __name__ == "__main__":
    main()
