"""Toy token sequences and the collate function that pads them."""
import torch
from torch.utils.data import Dataset


class ToySequences(Dataset):
    def __init__(self, n, vocab=20, max_len=7, seed=0):
        g = torch.Generator().manual_seed(seed)
        self.items = []
        for _ in range(n):
            length = int(torch.randint(2, max_len + 1, (1,), generator=g))
            tokens = torch.randint(1, vocab, (length,), generator=g)
            self.items.append((tokens, int(tokens.sum()) % 2))

    def __len__(self):
        return len(self.items)

    def __getitem__(self, index):
        return self.items[index]


def pad_batch(batch):
    longest = max(len(tokens) for tokens, _ in batch)
    ids = torch.zeros(len(batch), longest, dtype=torch.long)
    for row, (tokens, _) in enumerate(batch):
        ids[row, : len(tokens)] = tokens
    labels = torch.tensor([label for _, label in batch])
    return ids, labels
