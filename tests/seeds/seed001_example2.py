import torch
import torch.nn as nn
import torch.nn.parallel

class MyModel(nn.Module):
    def __init__(self):
        super(MyModel, self).__init__()
        # Define your model layers here...
        self.linear = nn.Linear(10, 1)

    def forward(self, x):
        # Define your forward pass
        return self.linear(x)


model = MyModel()
if torch.cuda.device_count() > 1:
    print("Let's use", torch.cuda.device_count(), "GPUs!")
    # dim = 0 [30, xxx] -> [10, ...], [10, ...], [10, ...] on 3 GPUs
    model = torch.nn.DataParallel(model)

model.to(device)  # Move the model to the selected device

# ... rest of your training loop ...
