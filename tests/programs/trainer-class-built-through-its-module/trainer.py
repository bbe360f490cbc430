import torch
import torch.nn as nn


class Trainer:
    def __init__(self, model, train_loader, lr=0.01):
        self.device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
        self.model = model.to(self.device)
        self.train_loader = train_loader
        self.criterion = nn.BCELoss()
        self.optimizer = torch.optim.Adam(self.model.parameters(), lr=lr)

    def train_epoch(self, batch_size):
        self.model.train()
        total = 0.0
        for inputs, labels in self.train_loader:
            h = self.model.init_hidden(batch_size)
            self.optimizer.zero_grad()
            output, h = self.model(inputs, h)
            loss = self.criterion(output, labels.float())
            loss.backward()
            self.optimizer.step()
            total += loss.item()
        return total
