"""A GPU-made checkpoint loaded without map_location; normalisation stats moved with a discarded .to()."""
import torch
from torch import nn

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
model = nn.Linear(3, 1)
model.load_state_dict(torch.load("checkpoint.pt"))
model.to(device)
mean = torch.tensor([0.5, 0.5, 0.5])
mean.to(device)
batch = torch.ones(2, 3).to(device)
print("RESULT", model(batch - mean).sum().item())
