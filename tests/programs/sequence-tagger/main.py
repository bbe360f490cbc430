"""Every tensor of the batch is moved, lengths included; outputs go to numpy."""
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
torch.manual_seed(0)
tokens = torch.randint(1, 9, (6, 5))
lengths = torch.tensor([5, 3, 4, 2, 5, 1])
loader = DataLoader(TensorDataset(tokens, lengths), batch_size=3)
embedding = nn.Embedding(10, 4).to(device)
lstm = nn.LSTM(4, 3, batch_first=True).to(device)
scores = []
for batch_tokens, batch_lengths in loader:
    batch_tokens, batch_lengths = batch_tokens.to(device), batch_lengths.to(device)
    packed = nn.utils.rnn.pack_padded_sequence(embedding(batch_tokens), batch_lengths, batch_first=True, enforce_sorted=False)
    _, (hidden, _) = lstm(packed)
    scores.append(hidden[-1].sum(dim=1).detach().numpy())
print("RESULT", float(sum(chunk.sum() for chunk in scores)))
