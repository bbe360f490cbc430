"""`analysis.forward_lengths`: the parameters a Module's `forward` only packs as lengths, which a
caller must keep on the CPU; through submodules, in the file and in other files of the project."""

from __future__ import annotations

import ast

from devfix.analysis.forward_lengths import forward_packing_parameters
from devfix.analysis.imports import ImportTable
from devfix.analysis.project import ProjectIndex

HEADER = "import torch\nimport torch.nn as nn\nfrom torch.nn.utils.rnn import pack_padded_sequence\n\n\n"


def lengths_only(body: str) -> set[str]:
    tree = ast.parse(HEADER + "class Net(nn.Module):\n    def forward(self, ids, lengths, extra=None):\n" + body)
    positional, packed = forward_packing_parameters(tree, ImportTable.of(tree), "Net")
    assert positional == ("ids", "lengths", "extra")
    return set(packed)


def test_lengths_only_packed_or_converted_for_the_host():
    assert lengths_only("        return pack_padded_sequence(ids, lengths, batch_first=True)\n") == {"lengths"}
    assert lengths_only("        return torch.nn.utils.rnn.pack_padded_sequence(ids, lengths=lengths)\n") == {"lengths"}
    assert lengths_only("        return pack_padded_sequence(ids, lengths.cpu())\n") == {"lengths"}
    assert lengths_only("        print(lengths.tolist())\n        return pack_padded_sequence(ids, lengths)\n") == {"lengths"}


def test_any_other_read_or_a_rebinding_may_need_the_device():
    assert lengths_only("        mask = ids < lengths[:, None]\n        return pack_padded_sequence(ids, lengths), mask\n") == set()
    assert lengths_only("        lengths = lengths + 1\n        return pack_padded_sequence(ids, lengths)\n") == set()
    assert lengths_only("        return pack_padded_sequence(ids, lengths), (lambda: lengths)\n") == set()
    assert lengths_only("        return ids\n") == set()  # never packed
    assert lengths_only("        return pack_padded_sequence(ids, extra)\n") == {"extra"}


def test_an_attribute_or_a_keyword_of_the_same_name_is_not_the_parameter():
    body = "        out = pack_padded_sequence(ids, lengths)\n        return self.lengths, dict(lengths=1)\n"
    assert lengths_only(body) == {"lengths"}
    assert lengths_only("        return pack_padded_sequence(ids, self.lengths)\n") == set()


SUBMODULES = HEADER + """
class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.rnn = nn.GRU(4, 4)

    def forward(self, x, lengths):
        return self.rnn(pack_padded_sequence(x, lengths, enforce_sorted=False))


class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = Encoder()
        self.head = nn.Linear(4, 2)

    def forward(self, x, lengths, weights):
        return self.head(self.encoder(x, lengths=lengths)[1][-1]) * self.head2(weights)


class Masked(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = Encoder()

    def forward(self, x, lengths):
        return self.encoder(x, lengths), x < lengths[:, None]
"""


def test_a_parameter_handed_only_to_a_submodule_that_packs_it():
    tree = ast.parse(SUBMODULES)
    imports = ImportTable.of(tree)
    assert forward_packing_parameters(tree, imports, "Classifier") == (("x", "lengths", "weights"), frozenset({"lengths"}))
    assert forward_packing_parameters(tree, imports, "Masked")[1] == frozenset()  # also compared on the device
    assert forward_packing_parameters(tree, imports, "Missing") is None


def test_classes_of_other_files_through_the_project(tmp_path):
    (tmp_path / "encoders.py").write_text(SUBMODULES.split("class Classifier")[0])
    (tmp_path / "model.py").write_text(HEADER + "from encoders import Encoder\n\n\n" + "class Classifier" + SUBMODULES.split("class Classifier")[1].split("class Masked")[0])
    (tmp_path / "train.py").write_text("from model import Classifier\n")
    project = ProjectIndex()
    found = project.imported_packing_parameters(str(tmp_path / "train.py"), "model.Classifier")
    assert found == (("x", "lengths", "weights"), frozenset({"lengths"}))
    assert project.imported_packing_parameters(str(tmp_path / "train.py"), "torch.nn.GRU") is None
