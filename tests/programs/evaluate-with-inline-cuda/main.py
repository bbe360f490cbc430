"""An evaluate() loop that moves images inline with .cuda() but compares against CPU labels."""
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset


def evaluate(model, loader):
    model.eval()
    correct, total = 0, 0
    with torch.no_grad():
        for images, labels in loader:
            outputs = model(images.cuda())
            predicted = outputs.argmax(dim=1)
            correct += (predicted == labels).sum().item()
            total += labels.size(0)
    return correct / total


torch.manual_seed(0)
data = TensorDataset(torch.randn(20, 5), torch.randint(0, 2, (20,)))
model = nn.Sequential(nn.Linear(5, 8), nn.ReLU(), nn.Linear(8, 2)).cuda()
print("RESULT", evaluate(model, DataLoader(data, batch_size=5)))
