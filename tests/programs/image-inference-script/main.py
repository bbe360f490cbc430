"""Fine-tune a tiny image classifier, then classify "photos" read from disk (here: made with
numpy) through a preprocessing function, as an inference script does: the preprocessed image is a
CPU tensor fed to the model on the GPU (a frequent report: "Input type (torch.FloatTensor) and
weight type (torch.cuda.FloatTensor) should be the same")."""
import argparse

import numpy as np
import torch
from torch import nn

MEAN = np.array([0.485, 0.456, 0.406], dtype=np.float32)
STD = np.array([0.229, 0.224, 0.225], dtype=np.float32)


class SmallNet(nn.Module):
    def __init__(self, classes):
        super().__init__()
        self.features = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1))
        self.classifier = nn.Linear(8, classes)

    def forward(self, x):
        return self.classifier(self.features(x).flatten(1))


def read_photo(seed):
    rng = np.random.default_rng(seed)
    return rng.integers(0, 256, size=(16, 16, 3)).astype(np.uint8)


def preprocess(photo):
    array = (photo.astype(np.float32) / 255.0 - MEAN) / STD
    return torch.from_numpy(array).permute(2, 0, 1)


def fine_tune(model, device, steps=3):
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    for step in range(steps):
        images = torch.randn(8, 3, 16, 16).to(device)
        labels = torch.arange(8).remainder(2).to(device)
        loss = nn.functional.cross_entropy(model(images), labels)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


def main():
    parser = argparse.ArgumentParser(description="classify photos")
    parser.add_argument("--photos", type=int, default=3)
    args = parser.parse_args([])
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    torch.manual_seed(0)
    model = SmallNet(2).to(device)
    fine_tune(model, device)
    model.eval()
    total = 0.0
    for seed in range(args.photos):
        img = preprocess(read_photo(seed)).unsqueeze(0)
        with torch.no_grad():
            probabilities = model(img).softmax(dim=1)
        print(f"photo {seed}: class {probabilities.argmax(1).item()}")
        total += probabilities[0, 1].item()
    print("RESULT", round(total, 5))


if __name__ == "__main__":
    main()
