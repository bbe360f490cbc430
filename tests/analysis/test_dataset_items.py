"""`analysis.dataset_items`: which positions of a Dataset's items `default_collate` makes no tensor of."""

from __future__ import annotations

import libcst as cst
import pytest

from devfix.analysis.dataset_items import (
    non_tensor_names,
    non_tensor_positions,
    non_tensor_positions_of_collate,
    non_tensor_positions_of_rows,
)

DATASET = '''class Items:
    def __init__(self, n, names):
        self.images = torch.randn(n, 4)
        self.captions = [f"caption {i}" for i in range(n)]
        self.paths = ["a.png", "b.png"]
        self.given = names
        self.grown = []
        self.grown.append("x")
        self.boxes = [[0, 0, 4, 4], [1, 1, 2, 2]]

    def __getitem__(self, i):
        BODY
'''


def positions(body: str) -> frozenset[int]:
    module = cst.parse_module(DATASET.replace("BODY", body))
    return non_tensor_positions(module.body[0])


@pytest.mark.parametrize(("body", "expected"), [
    ("return self.images[i], self.captions[i]", {1}),  # a list comprehension of f-strings
    ("return self.paths[i], self.images[i], str(i)", {0, 2}),
    ("name = 'item {}'.format(i)\n        return self.images[i], name", {1}),
    ("return self.images[i], self.given[i]", set()),  # what the caller gave: not known
    ("return self.images[i], self.grown[i]", set()),  # changed after `__init__` bound it
    ("if i:\n            return self.images[i], 'a'\n        return self.images[i], 0", set()),  # not a string at every return
    ("return {'image': self.images[i], 'caption': self.captions[i]}", {'caption'}),  # a dict item: by its key
    # lists: collated into lists (of tensors), no tensor
    ("return self.images[i], self.boxes[i]", {1}),
    ("box = [i, i, i + 1, i + 1]\n        return self.images[i], box", {1}),
    ("return self.images[i], i", set()),  # a number: collated into a tensor
])
def test_positions_collated_into_no_tensor(body, expected):
    assert positions(body) == frozenset(expected)


@pytest.mark.parametrize(("loop", "expected"), [
    ("for images, captions in loader:\n    pass\n", {"captions"}),
    ("for batch in loader:\n    images, captions = batch\n", {"captions"}),
    ("for batch in loader:\n    captions = batch[1]\n    images = batch[0]\n", {"captions"}),
    ("for (images, captions), extra in loader:\n    pass\n", set()),  # nested: positions unknown
])
def test_the_loop_names_holding_those_positions(loop, expected):
    statement = cst.parse_module(loop).body[0]
    assert non_tensor_names(statement, statement.target, frozenset({1})) == expected


ROWS = {
    "texts": cst.parse_expression('["good movie", "bad plot"]'),
    "labels": cst.parse_expression("[1, 0]"),
    "boxes": cst.parse_expression("[[0, 0, 1, 1], [1, 1, 2, 2]]"),
}


@pytest.mark.parametrize(("dataset", "expected"), [
    ("list(zip(texts, labels))", {0}),  # a tuple of strings, a tensor of the labels
    ("list(zip(labels, boxes))", {1}),
    ("list(zip(texts, unknown))", {0}),
    ('[("good movie", 1), ("bad plot", 0)]', {0}),
    ('[("good movie", 1), (review, 0)]', set()),  # one row not proven
    ("features", set()),  # nothing known
])
def test_positions_of_a_list_of_rows(dataset, expected):
    resolve = lambda name: ROWS.get(name.value)  # noqa: E731
    assert non_tensor_positions_of_rows(cst.parse_expression(dataset), resolve) == frozenset(expected)


@pytest.mark.parametrize(("returned", "expected"), [
    ("return [torch.tensor(t) for t, _ in batch], torch.tensor(labels)", {0}),
    ("sequences = [torch.tensor(t) for t, _ in batch]\n    return sequences, torch.tensor(labels)", {0}),
    ("return torch.stack(images), [name for _, name in batch]", {1}),
    ("return pad_sequence(sequences), labels", set()),  # not proven either way
])
def test_positions_a_collate_function_returns_as_no_tensor(returned, expected):
    function = cst.parse_module(f"def collate(batch):\n    {returned}\n").body[0]
    assert non_tensor_positions_of_collate(function) == frozenset(expected)
