import torch
import torch.nn as nn

class CustomLayer(nn.Module):
    def __init__(self, device):
        super().__init__()
        self.device = torch.device(device)  # Ensure a specific torch.device object
        self.cache = torch.randn(10, device=self.device)
        self.weight = nn.Parameter(torch.randn(10, device=self.device))

    def forward(self, x):
        return x + self.cache + self.weight

device = "cuda:0" if torch.cuda.is_available() else "cpu"
model = CustomLayer(device)
input_tensor = torch.randn(10, device=model.device)
output = model(input_tensor)
print("Output:", output)
