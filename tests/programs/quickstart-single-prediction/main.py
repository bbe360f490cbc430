"""The PyTorch quickstart, shrunk: train/test functions that move each batch, then one prediction
on a single test sample taken straight from the dataset (a report from users following it on a
GPU machine: the sample is still on the CPU)."""
import argparse

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

classes = ["T-shirt", "Trouser", "Pullover", "Dress"]


class NeuralNetwork(nn.Module):
    def __init__(self):
        super().__init__()
        self.flatten = nn.Flatten()
        self.linear_relu_stack = nn.Sequential(nn.Linear(36, 32), nn.ReLU(), nn.Linear(32, len(classes)))

    def forward(self, x):
        return self.linear_relu_stack(self.flatten(x))


def train(dataloader, model, loss_fn, optimizer, device):
    model.train()
    for X, y in dataloader:
        X, y = X.to(device), y.to(device)
        loss = loss_fn(model(X), y)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()


def test(dataloader, model, loss_fn, device):
    model.eval()
    correct, total_loss = 0, 0.0
    with torch.no_grad():
        for X, y in dataloader:
            X, y = X.to(device), y.to(device)
            pred = model(X)
            total_loss += loss_fn(pred, y).item()
            correct += (pred.argmax(1) == y).type(torch.float).sum().item()
    return correct / len(dataloader.dataset), total_loss / len(dataloader)


def main():
    parser = argparse.ArgumentParser(description="quickstart")
    parser.add_argument("--epochs", type=int, default=2)
    args = parser.parse_args([])
    device = "cuda" if torch.cuda.is_available() else "cpu"
    print(f"Using {device} device")
    torch.manual_seed(0)
    training_data = TensorDataset(torch.rand(64, 6, 6), torch.randint(0, len(classes), (64,)))
    test_data = TensorDataset(torch.rand(16, 6, 6), torch.randint(0, len(classes), (16,)))
    model = NeuralNetwork().to(device)
    loss_fn = nn.CrossEntropyLoss()
    optimizer = torch.optim.SGD(model.parameters(), lr=1e-1)
    for _ in range(args.epochs):
        train(DataLoader(training_data, batch_size=16), model, loss_fn, optimizer, device)
    accuracy, loss = test(DataLoader(test_data, batch_size=16), model, loss_fn, device)

    model.eval()
    x, y = test_data[0][0], test_data[0][1]
    with torch.no_grad():
        x = x.unsqueeze(0)
        pred = model(x)
        predicted, actual = classes[pred[0].argmax(0)], classes[y]
        print(f'Predicted: "{predicted}", Actual: "{actual}"')
    print("RESULT", round(accuracy + loss + pred.softmax(1)[0, 0].item(), 5))


if __name__ == "__main__":
    main()
