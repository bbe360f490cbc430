"""The model class lives in another file; it is never moved, and the helper has no device."""
import torch
from torch.utils.data import DataLoader

from models import Encoder


def embed_all(encoder, loader):
    chunks = []
    for batch in loader:
        chunks.append(encoder(batch).sum(dim=1))
    return torch.cat(chunks)


device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
torch.manual_seed(0)
encoder = Encoder(4)
probe = torch.randn(2, 4).to(device)
first = encoder(probe)
print("RESULT", embed_all(encoder, DataLoader(torch.randn(6, 4), batch_size=2)).sum().item() + first.sum().item())
