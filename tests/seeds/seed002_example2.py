import torch
from torch.utils.data import DataLoader, TensorDataset

# ... data loading (e.g., from a CSV file) ...

# Assuming 'X_train' and 'y_train' are tensors on CPU
train_dataset = TensorDataset(X_train, y_train)
train_loader = DataLoader(train_dataset, batch_size=32)

# Device specification
device = torch.device("cuda" if torch.cuda.is_available() else "cpu")

for batch_X, batch_y in train_loader:
    # Move data to the specified device
    batch_X = batch_X.to(device)
    batch_y = batch_y.to(device)

    # Perform model computations using batch_X and batch_y
    # ... your model forward pass ...
