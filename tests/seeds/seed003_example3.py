import torch
import torch.nn as nn
from torch.nn.parallel import DataParallel

class SimpleModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(10, 1)

    def forward(self, x):
        return self.linear(x)

if __name__ == '__main__':
    if torch.cuda.device_count() > 1:
        device = "cuda:0"
        model = SimpleModel()
        model = DataParallel(model)
        model.to(device)
        input_tensor = torch.randn(10, device=device)
        try:
            output = model(input_tensor)
        except Exception as e:
            print(f"Error: {e}")

