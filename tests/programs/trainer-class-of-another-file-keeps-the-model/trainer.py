import torch
import torch.nn as nn


class Trainer:
    def __init__(self, model, train_loader, lr=1e-2):
        self.device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
        self.model = model
        self.train_loader = train_loader
        self.criterion = nn.CrossEntropyLoss()
        self.optimizer = torch.optim.SGD(self.model.parameters(), lr=lr)

    def train_epoch(self):
        self.model.train()
        total = 0.0
        for inputs, targets in self.train_loader:
            inputs, targets = inputs.to(self.device), targets.to(self.device)
            self.optimizer.zero_grad()
            loss = self.criterion(self.model(inputs), targets)
            loss.backward()
            self.optimizer.step()
            total += loss.item()
        return total / len(self.train_loader)
