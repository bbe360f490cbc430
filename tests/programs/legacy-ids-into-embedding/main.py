import torch
from torch import nn

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
torch.manual_seed(0)
embedding = nn.Embedding(10, 3).cuda()
ids = torch.LongTensor([[1, 2, 3]])
vectors = embedding(ids)
weights = torch.FloatTensor([0.5, 0.25, 0.25])
print("RESULT", (vectors[0].sum(-1) * weights).sum().item())
