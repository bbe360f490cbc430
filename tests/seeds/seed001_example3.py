import torch

device_cpu = torch.device("cpu")
device_gpu = torch.device("cuda") if torch.cuda.is_available() else torch.device("cpu")

tensor_cpu = torch.randn(1000, 1000).to(device_cpu)
tensor_gpu = torch.randn(1000, 1000).to(device_gpu)

with torch.no_grad(): # Prevents gradient calculations, speeding up transfer
    tensor_cpu_gpu = tensor_cpu.to(device_gpu, non_blocking=True) #Asynchronous transfer

result = tensor_cpu_gpu + tensor_gpu

print("Operation completed.")
