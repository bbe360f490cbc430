"""A model never moved, functional class weights on the CPU, batches not moved."""
import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
torch.manual_seed(0)
class_weights = torch.tensor([0.2, 0.8])
model = nn.Linear(3, 2)
loader = DataLoader(TensorDataset(torch.randn(8, 3), torch.randint(0, 2, (8,))), batch_size=4)
total = 0.0
for x, y in loader:
    x, y = x.to(device), y.to(device)
    logits = model(x)
    total += F.cross_entropy(logits, y, weight=class_weights).item()
print("RESULT", total)
