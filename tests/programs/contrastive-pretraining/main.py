"""Loader batches not moved and contrastive targets created on the CPU."""
import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader, TensorDataset


def info_nce(z1: torch.Tensor, z2: torch.Tensor) -> torch.Tensor:
    logits = F.normalize(z1, dim=1) @ F.normalize(z2, dim=1).T / 0.2
    labels = torch.arange(z1.size(0))
    return F.cross_entropy(logits, labels)


device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
torch.manual_seed(0)
encoder = nn.Linear(6, 4).to(device)
loader = DataLoader(TensorDataset(torch.randn(16, 6), torch.randn(16, 6)), batch_size=8)
total = 0.0
for view_a, view_b in loader:
    total += info_nce(encoder(view_a), encoder(view_b)).item()
print("RESULT", total)
