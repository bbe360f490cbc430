import torch

#Robust approach to handle cases where GPU might not be available
device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')
model = MyModel().to(device)
input_data = torch.randn(1, 3, 224, 224).to(device)

output = model(input_data)
print("Output shape:", output.shape)
print("Output device:", output.device)
