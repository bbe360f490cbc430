import torch
from torch.utils.data import Dataset


class ToyText(Dataset):
    def __init__(self, n=24, seed=0):
        g = torch.Generator().manual_seed(seed)
        self.lengths = torch.randint(2, 7, (n,), generator=g)
        self.tokens = [torch.randint(1, 40, (int(l),), generator=g) for l in self.lengths]
        self.labels = torch.randint(0, 3, (n,), generator=g)

    def __len__(self):
        return len(self.labels)

    def __getitem__(self, i):
        return self.tokens[i], self.labels[i]


def collate(batch):
    tokens, labels = zip(*batch)
    lengths = torch.tensor([len(t) for t in tokens])
    padded = torch.nn.utils.rnn.pad_sequence(tokens, batch_first=True)
    return padded, lengths, torch.stack(labels)
