"""The libcst trees a long-lived process analysed last, with their metadata.

Parsing a 1,000-line file with libcst and resolving its scopes, qualified names, parents and
positions costs most of a second; a rule's own pass over the resolved tree costs a tenth of that.
The language server's worker asks twice about the same text: its diagnostics, then the quick fix
the user picks from them. With this cache the fix reuses the analysis the diagnostics resolved
(`engine.process(trees=...)`). The CLI does not use it: it sees each text once.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from libcst.metadata import MetadataWrapper

DEFAULT_SIZE = 4  # documents: the file being edited and a few beside it


class TreeCache:
    """The last `size` parsed texts (the exact bytes), each with one metadata wrapper over its tree.

    A wrapper is built with `unsafe_skip_copy`: a freshly parsed tree holds no node twice, and the
    rules never change a tree in place (libcst nodes are immutable), so metadata resolved for one
    request stays true for the next one on the same bytes."""

    def __init__(self, size: int = DEFAULT_SIZE) -> None:
        self._size = size
        self._wrappers: OrderedDict[bytes, MetadataWrapper] = OrderedDict()

    def get(self, source: bytes) -> MetadataWrapper | None:
        wrapper = self._wrappers.get(source)
        if wrapper is not None:
            self._wrappers.move_to_end(source)
        return wrapper

    def remember(self, source: bytes, wrapper: MetadataWrapper) -> None:
        self._wrappers[source] = wrapper
        self._wrappers.move_to_end(source)
        while len(self._wrappers) > self._size:
            self._wrappers.popitem(last=False)
