"""The libcst trees a long-lived process analysed last, with their metadata.

Parsing a 1,000-line file with libcst and resolving its scopes, qualified names, parents and
positions costs most of a second; a rule's own pass over the resolved tree costs a tenth of that.
The language server's worker asks twice about the same text: its diagnostics, then the quick fix
the user picks from them. With this cache the fix reuses the analysis the diagnostics resolved
(`engine.process(trees=...)`). The CLI does not use it: it sees each text once.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    from libcst.metadata import MetadataWrapper

DEFAULT_SIZE = 4  # documents: the file being edited and a few beside it


class ParsedTree(NamedTuple):
    """A tree with its metadata, and its code (generating the code of a 1,000-line tree again costs
    10-15 ms, a tenth of a quick fix)."""

    wrapper: MetadataWrapper
    code: str


class TreeCache:
    """The last `size` parsed texts (the exact bytes), each with one metadata wrapper over its tree.

    A wrapper is built with `unsafe_skip_copy`: a freshly parsed tree holds no node twice, and the
    rules never change a tree in place (libcst nodes are immutable), so metadata resolved for one
    request stays true for the next one on the same bytes."""

    def __init__(self, size: int = DEFAULT_SIZE) -> None:
        self._size = size
        self._trees: OrderedDict[bytes, ParsedTree] = OrderedDict()

    def get(self, source: bytes) -> ParsedTree | None:
        tree = self._trees.get(source)
        if tree is not None:
            self._trees.move_to_end(source)
        return tree

    def remember(self, source: bytes, tree: ParsedTree) -> None:
        self._trees[source] = tree
        self._trees.move_to_end(source)
        while len(self._trees) > self._size:
            self._trees.popitem(last=False)
