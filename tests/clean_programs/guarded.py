import torch
from torch import nn

use_cuda = torch.cuda.is_available()
model = nn.Linear(3, 1)
if use_cuda:
    model = model.cuda()
x = torch.randn(2, 3)
x = x.cuda() if use_cuda else x
y = model(x)
values = y.data.cpu().numpy()
noise = torch.randn(y.shape).to(y.device)
print(values, (y + noise).sum().item())
