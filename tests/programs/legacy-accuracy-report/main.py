"""An old evaluation script: accuracy divided by a `torch.FloatTensor`, class weights and picked
columns built with legacy CPU constructors, all meeting the model's outputs on the GPU (written
after users' reports from code ported from PyTorch 0.3)."""
import argparse

import torch
from torch import nn


class Classifier(nn.Module):
    def __init__(self, features, classes):
        super().__init__()
        self.layers = nn.Sequential(nn.Linear(features, 16), nn.ReLU(), nn.Linear(16, classes))

    def forward(self, x):
        return self.layers(x)


def evaluate(model, inputs, labels, device):
    inputs, labels = inputs.to(device), labels.to(device)
    with torch.no_grad():
        scores = model(inputs)
    correct = (scores.argmax(1) == labels).sum()
    accuracy = correct.float() / torch.FloatTensor([len(labels)])
    columns = torch.LongTensor([0, 2])
    weighted = scores[:, columns] * torch.Tensor([1.0, 0.5])
    return accuracy.item(), weighted.mean().item()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--samples", type=int, default=24)
    args = parser.parse_args([])
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    torch.manual_seed(0)
    model = Classifier(6, 3).to(device)
    inputs = torch.randn(args.samples, 6)
    labels = torch.randint(0, 3, (args.samples,))
    accuracy, weighted = evaluate(model, inputs, labels, device)
    print(f"accuracy {accuracy:.3f}")
    print("RESULT", round(accuracy + weighted, 5))


if __name__ == "__main__":
    main()
