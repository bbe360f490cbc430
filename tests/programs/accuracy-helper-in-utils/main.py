import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

from utils import AverageMeter, accuracy, confusion_matrix

torch.manual_seed(0)
device = torch.device("cuda" if torch.cuda.is_available() else "cpu")

features = torch.randn(64, 10)
labels = (features[:, 0] > 0).long() + (features[:, 1] > 0).long()
loader = DataLoader(TensorDataset(features, labels), batch_size=16)

model = nn.Sequential(nn.Linear(10, 32), nn.ReLU(), nn.Linear(32, 3)).to(device)
criterion = nn.CrossEntropyLoss()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)

for epoch in range(3):
    meter = AverageMeter()
    for inputs, targets in loader:
        inputs, targets = inputs.to(device), targets.to(device)
        outputs = model(inputs)
        loss = criterion(outputs, targets)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        meter.update(accuracy(outputs, targets), inputs.size(0))
    print(f"epoch {epoch}: accuracy {meter.avg:.3f}")

model.eval()
with torch.no_grad():
    outputs = model(features.to(device))
    matrix = confusion_matrix(outputs, labels.to(device), 3)
print("RESULT", int(matrix.trace()) + round(meter.avg, 4))
