import torch

# Determine device (GPU if available, otherwise CPU)
device = torch.device("cuda" if torch.cuda.is_available() else "cpu")

# Define tensors on the specified device
x = torch.randn(10, 20, device=device)
w = torch.randn(20, 5, device=device)
b = torch.randn(5, device=device)

# Perform operations; no device mismatch error here
y = torch.matmul(x, w) + b

print(y.device)  # Output: cuda:0 (or cpu)
