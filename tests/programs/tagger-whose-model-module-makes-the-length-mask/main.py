"""A tagger trained on padded sentences: the positional table of `model.py` is a plain attribute
(DF014), and its `make_mask(lengths, n)`, never called in that file, is given the lengths moved
to the device here (DF004 reads what the calls beside it pass)."""
import torch
import torch.nn.functional as F

from model import Tagger, make_mask

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
torch.manual_seed(0)
model = Tagger(50, 16, 5).to(device)
opt = torch.optim.Adam(model.parameters(), lr=1e-2)
ids = torch.randint(0, 50, (4, 10))
tags = torch.randint(0, 5, (4, 10))
lengths = torch.tensor([10, 7, 5, 3])
for step in range(2):
    ids_d, tags_d, lengths_d = ids.to(device), tags.to(device), lengths.to(device)
    logits = model(ids_d)
    mask = make_mask(lengths_d, ids.size(1))
    loss = F.cross_entropy(logits[mask], tags_d[mask])
    opt.zero_grad()
    loss.backward()
    opt.step()
print("RESULT", round(loss.item(), 4))
