"""SA-ConvLSTM-Pytorch's layout before its device fixes: `core/constants.py` picks DEVICE, the
ConvLSTM in model.py makes its hidden state there, and this script builds the model unmoved and
hands it to trainer.py's Trainer, which only calls it. On a GPU machine the CUDA state meets the
CPU convolution; the state follows the module's parameters instead."""
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

from model import ConvLSTM
from trainer import Trainer


def main():
    torch.manual_seed(0)
    clips = torch.randn(8, 4, 2, 8, 8)
    targets = torch.randn(8, 4, 2, 8, 8)
    loader = DataLoader(TensorDataset(clips, targets), batch_size=4)
    model = ConvLSTM(2)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    trainer = Trainer(model, loader, optimizer, nn.MSELoss())
    print("RESULT", trainer.train())


if __name__ == "__main__":
    main()
