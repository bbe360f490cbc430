import torch
from torch import nn


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(10, 4)

    @property
    def device(self):
        return self.embed.weight.device

    def forward(self, input_ids, attention_mask=None):
        if attention_mask is None:
            attention_mask = torch.ones_like(input_ids)
        hidden = self.embed(input_ids) * attention_mask.unsqueeze(-1)
        return hidden.sum(1)


device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
model = Encoder().to(device)
batch = {"input_ids": torch.tensor([[1, 2, 3]]), "attention_mask": torch.tensor([[1, 1, 0]]), "text": ["a"]}
batch = {k: v.to(device) if torch.is_tensor(v) else v for k, v in batch.items()}
out = model(batch["input_ids"], batch["attention_mask"])
print(out.detach().cpu().tolist())
