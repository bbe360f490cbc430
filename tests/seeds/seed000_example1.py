import torch

# Assume we have a model already loaded onto the GPU:
model = MyModel() #Your model definition
model.to('cuda')

# Correct approach: Move input data to the GPU before feeding to the model
input_data = torch.randn(1, 3, 224, 224) #Example input data on CPU
input_data = input_data.to('cuda') #Move data to GPU

output = model(input_data) #Process data on the GPU
output = output.cpu() #Move output back to CPU if further processing on CPU is needed


# Incorrect approach (leads to the error):
# input_data = torch.randn(1, 3, 224, 224)  #Data on CPU
# output = model(input_data) # Attempts to execute model on GPU with CPU input.  Error!

print("Output shape:", output.shape)
