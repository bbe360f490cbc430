import torch
from torch.utils.data import DataLoader, TensorDataset

# Correct approach: Utilize the pin_memory=True flag and device='cuda' within dataloader
train_data = torch.randn(1000, 3, 224, 224)
train_labels = torch.randint(0, 10, (1000,)) #Example labels
dataset = TensorDataset(train_data, train_labels)
train_loader = DataLoader(dataset, batch_size=32, pin_memory=True) #Pin memory for faster GPU transfer

#Using Data Loaders Directly in GPU
for inputs, labels in train_loader:
    inputs, labels = inputs.to('cuda'), labels.to('cuda') # Explicitly move to GPU
    # ... your model training code
