import torch
import torch.nn as nn

class CustomLayer(nn.Module):
    def __init__(self, device):
        super().__init__()
        self.cache = torch.randn(10, device=device)
        self.weight = nn.Parameter(torch.randn(10))

    def forward(self, x):
        return x + self.cache + self.weight

device = "cuda:0" if torch.cuda.is_available() else "cpu"
try:
  model = CustomLayer(device)
  input_tensor = torch.randn(10, device=device)
  output = model(input_tensor)
except Exception as e:
    print(f"Error: {e}")
