"""A bag-of-embeddings classifier over padded sequences; the mask and length helpers of `utils`
hard-code the GPU, so the script fails on a machine without one."""
import torch
import torch.nn as nn

from utils import pad_mask, sequence_lengths, to_var


class Pool(nn.Module):
    def __init__(self, vocab, dim):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.out = nn.Linear(dim, 2)

    def forward(self, seq, mask):
        h = self.embed(seq) * mask.unsqueeze(-1)
        return self.out(h.sum(1) / mask.sum(1, keepdim=True))


def main():
    torch.manual_seed(0)
    model = to_var(Pool(10, 8))
    seq = torch.randint(1, 10, (4, 6))
    seq[:, 4:] = 0
    seq = to_var(seq)
    mask = pad_mask(seq)
    lengths = sequence_lengths(seq)
    out = model(seq, mask)
    print("RESULT", out.sum().item() + lengths.sum().item())


if __name__ == "__main__":
    main()
