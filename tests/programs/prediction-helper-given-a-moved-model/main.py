import numpy as np
import torch
import torch.nn as nn

from inference import predict

torch.manual_seed(0)
np.random.seed(0)
device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
model = nn.Sequential(nn.Conv2d(3, 4, 3), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(4, 5)).to(device)
model.eval()
scores = []
for _ in range(3):
    image = np.random.randint(0, 255, (16, 16, 3)).astype(np.uint8)
    label, score = predict(model, image)
    scores.append(label + score)
print("RESULT", round(sum(scores), 4))
