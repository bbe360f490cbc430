"""Inference helpers of the project: `predict` turns an image array into a batch for the model it
is given. The scripts beside this module move that model to the GPU first."""
import torch


def predict(model, image):
    x = torch.from_numpy(image).permute(2, 0, 1).unsqueeze(0).float() / 255.0
    with torch.no_grad():
        logits = model(x)
    return int(logits.argmax(1).item()), float(logits.max().item())
