"""`python -m shapes.demo`: standardize a batch on the machine's device and print its top scores."""

import torch

from shapes.layers import Standardize, top_scores

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
layer = Standardize(3).to(device)
batch = torch.tensor([[0.1, 0.9, 0.5], [0.7, 0.2, 0.3]], device=device)
print("top", top_scores(layer(batch), 1).tolist())
