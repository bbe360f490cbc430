import torch
from torch import nn

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
torch.manual_seed(0)
G = nn.Sequential(nn.Linear(2, 4), nn.ReLU(), nn.Linear(4, 2)).to(device)
D = nn.Sequential(nn.Linear(2, 4), nn.LeakyReLU(0.2), nn.Linear(4, 1))
criterion = nn.BCEWithLogitsLoss()
real = torch.randn(8, 2).to(device)
z = torch.randn(8, 2)
fake = G(z)
valid = torch.ones(8, 1)
loss = criterion(D(real), valid) + criterion(D(fake.detach()), torch.zeros(8, 1))
print("RESULT", loss.item())
