"""`analysis.packed_lengths.lengths_only_parameters`: the parameters a function only packs as lengths,
which a caller must keep on the CPU; any other read may need the device."""

from __future__ import annotations

import libcst as cst
from libcst.metadata import MetadataWrapper, ScopeProvider

from devfix.analysis.packed_lengths import lengths_only_parameters

HEADER = "import torch\nfrom torch.nn.utils.rnn import pack_padded_sequence\n\n\n"


def lengths_only(body: str) -> set[str]:
    wrapper = MetadataWrapper(cst.parse_module(HEADER + "def forward(self, ids, lengths, extra=None):\n" + body))
    scopes = wrapper.resolve(ScopeProvider)
    function = next(statement for statement in wrapper.module.body if isinstance(statement, cst.FunctionDef))

    def qualified(node: cst.CSTNode) -> set[str]:
        scope = scopes.get(node)
        return {name.name for name in scope.get_qualified_names_for(node)} if scope is not None else set()

    return set(lengths_only_parameters(function, qualified))


def test_lengths_only_packed_or_converted_for_the_host():
    assert lengths_only("    return pack_padded_sequence(ids, lengths, batch_first=True)\n") == {"lengths"}
    assert lengths_only("    return torch.nn.utils.rnn.pack_padded_sequence(ids, lengths=lengths)\n") == {"lengths"}
    assert lengths_only("    return pack_padded_sequence(ids, lengths.cpu())\n") == {"lengths"}
    assert lengths_only("    print(lengths.tolist())\n    return pack_padded_sequence(ids, lengths)\n") == {"lengths"}


def test_any_other_read_or_a_rebinding_may_need_the_device():
    assert lengths_only("    mask = ids < lengths[:, None]\n    return pack_padded_sequence(ids, lengths), mask\n") == set()
    assert lengths_only("    lengths = lengths + 1\n    return pack_padded_sequence(ids, lengths)\n") == set()
    assert lengths_only("    return pack_padded_sequence(ids, lengths), (lambda: lengths)\n") == set()
    assert lengths_only("    return ids\n") == set()  # never packed
    assert lengths_only("    return pack_padded_sequence(ids, extra)\n") == {"extra"}


def test_an_attribute_or_a_keyword_of_the_same_name_is_not_the_parameter():
    body = "    out = pack_padded_sequence(ids, lengths)\n    return self.lengths, dict(lengths=1)\n"
    assert lengths_only(body) == {"lengths"}
    assert lengths_only("    return pack_padded_sequence(ids, self.lengths)\n") == set()
