"""A hard-coded .cuda() training step, then a checkpoint restored into a CPU model without map_location."""
import os
import tempfile

import torch
from torch import nn

torch.manual_seed(0)
model = nn.Linear(3, 2).cuda()
optimizer = torch.optim.Adam(model.parameters(), lr=0.1)
x = torch.randn(4, 3).cuda()
loss = model(x).pow(2).mean()
loss.backward()
optimizer.step()
path = os.path.join(tempfile.mkdtemp(), "checkpoint.pt")
torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict()}, path)

restored = nn.Linear(3, 2)
checkpoint = torch.load(path)
restored.load_state_dict(checkpoint["model"])
print("RESULT", restored(torch.ones(1, 3)).sum().item())
