import torch
import torch.nn as nn

# Define a model
model = nn.Sequential(nn.Linear(10, 20), nn.ReLU(), nn.Linear(20, 5))

# Device specification
device = torch.device("cuda" if torch.cuda.is_available() else "cpu")

# Move model to the device
model.to(device)

# ... data loading and preprocessing (as shown in example 2) ...

for batch_X, batch_y in train_loader:
    batch_X = batch_X.to(device)
    batch_y = batch_y.to(device)

    # Forward and backward pass – parameters already on the correct device
    output = model(batch_X)
    loss = loss_function(output, batch_y)  # Assuming loss_function is defined
    loss.backward()
    optimizer.step() # Assuming optimizer is defined
    optimizer.zero_grad()

