"""A model package with a plain tensor attribute and CPU positions, a script that hard-codes .cuda()."""
import torch
from torch.utils.data import DataLoader, TensorDataset

from vision import Classifier

torch.manual_seed(0)
model = Classifier(dim=4, classes=3).cuda()
optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
loader = DataLoader(TensorDataset(torch.randn(12, 6, 4), torch.randint(0, 3, (12,))), batch_size=4)
for sequences, labels in loader:
    loss = torch.nn.functional.cross_entropy(model(sequences), labels)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
print("RESULT", loss.item())
