"""A word-level LSTM language model in the style of the old PyTorch example: `init_hidden` builds
the state with `.cuda()`, so training crashes on a machine without a GPU (users' reports of
"Torch not compiled with CUDA enabled" from models they downloaded)."""
import argparse

import torch
from torch import nn


class RNNModel(nn.Module):
    def __init__(self, ntoken, ninp, nhid, nlayers):
        super().__init__()
        self.nhid, self.nlayers = nhid, nlayers
        self.encoder = nn.Embedding(ntoken, ninp)
        self.rnn = nn.LSTM(ninp, nhid, nlayers)
        self.decoder = nn.Linear(nhid, ntoken)

    def forward(self, tokens, hidden):
        output, hidden = self.rnn(self.encoder(tokens), hidden)
        return self.decoder(output), hidden

    def init_hidden(self, bsz):
        return (torch.zeros(self.nlayers, bsz, self.nhid).cuda(),
                torch.zeros(self.nlayers, bsz, self.nhid).cuda())


def batchify(data, bsz, device):
    nbatch = data.size(0) // bsz
    return data[: nbatch * bsz].view(bsz, -1).t().contiguous().to(device)


def repackage_hidden(h):
    return tuple(v.detach() for v in h)


def train_epoch(model, source, ntokens, bptt, lr):
    model.train()
    hidden = model.init_hidden(source.size(1))
    total = 0.0
    for i in range(0, source.size(0) - 1, bptt):
        seq_len = min(bptt, source.size(0) - 1 - i)
        data, targets = source[i:i + seq_len], source[i + 1:i + 1 + seq_len].reshape(-1)
        hidden = repackage_hidden(hidden)
        model.zero_grad()
        output, hidden = model(data, hidden)
        loss = nn.functional.cross_entropy(output.view(-1, ntokens), targets)
        loss.backward()
        for p in model.parameters():
            p.data.add_(p.grad, alpha=-lr)
        total += loss.item()
    return total


def main():
    parser = argparse.ArgumentParser(description="LSTM language model")
    parser.add_argument("--bptt", type=int, default=5)
    parser.add_argument("--lr", type=float, default=0.5)
    args = parser.parse_args([])
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    torch.manual_seed(0)
    ntokens = 20
    corpus = torch.randint(0, ntokens, (200,))
    train_data = batchify(corpus, 4, device)
    model = RNNModel(ntokens, 8, 16, 2).to(device)
    print("RESULT", round(train_epoch(model, train_data, ntokens, args.bptt, args.lr), 4))


if __name__ == "__main__":
    main()
