"""Legacy typed constructors, a hard-coded .cuda() policy and numpy actions."""
import numpy as np
import torch
from torch import nn

torch.manual_seed(0)
policy = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2)).cuda()
observations = np.array([[0.1, -0.2, 0.3, 0.0], [1.0, 0.5, -0.5, 0.2]], dtype=np.float32)
obs = torch.cuda.FloatTensor(observations)
with torch.no_grad():
    actions = policy(obs).argmax(dim=1).numpy()
rewards = torch.cuda.FloatTensor([1.0, 0.5])
print("RESULT", float(actions.sum()) + rewards.sum().item())
