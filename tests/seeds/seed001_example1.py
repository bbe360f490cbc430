import torch

# Check for CUDA availability
device = torch.device("cuda" if torch.cuda.is_available() else "cpu")

# Create tensors – initial placement is irrelevant; we'll move them
tensor_cpu = torch.tensor([1, 2, 3])
tensor_gpu = torch.tensor([4, 5, 6]).to("cuda") if torch.cuda.is_available() else torch.tensor([4, 5, 6])

# Move tensors to the chosen device
tensor_cpu = tensor_cpu.to(device)
tensor_gpu = tensor_gpu.to(device)

# Now, operations are safe
result = tensor_cpu + tensor_gpu
print(result)  # Output: tensor([5, 7, 9]) or tensor([5,7,9]) on CPU if CUDA is unavailable
