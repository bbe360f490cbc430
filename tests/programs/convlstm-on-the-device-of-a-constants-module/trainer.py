class Trainer:
    def __init__(self, model, loader, optimizer, criterion):
        self.model = model
        self.loader = loader
        self.optimizer = optimizer
        self.criterion = criterion

    def train(self):
        total = 0.0
        self.model.train()
        for inputs, targets in self.loader:
            outputs = self.model(inputs)
            loss = self.criterion(outputs, targets)
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()
            total += loss.item()
        return total


