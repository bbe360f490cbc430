"""A text classifier split across files: the batch moves here, but the lengths only reach
`pack_padded_sequence` in model.py's encoder and must stay on the CPU; the encoder builds its
initial state on the CPU; and utils.accuracy's GPU results go to numpy in utils.summarize."""
import torch
import torch.nn as nn
from torch.utils.data import DataLoader

from data import ToyText, collate
from model import Classifier
from utils import accuracy, summarize


def run_epoch(model, loader, criterion, optimizer, device):
    accs = []
    for tokens, lengths, labels in loader:
        tokens, labels = tokens.to(device), labels.to(device)
        logits = model(tokens, lengths)
        loss = criterion(logits, labels)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        accs.append(accuracy(logits, labels))
    return summarize(accs)


if __name__ == "__main__":
    torch.manual_seed(0)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model = Classifier().to(device)
    loader = DataLoader(ToyText(), batch_size=6, collate_fn=collate)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    score = run_epoch(model, loader, nn.CrossEntropyLoss(), optimizer, device)
    print("RESULT", score)
