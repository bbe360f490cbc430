"""The libcst metadata the rules read, computed for less than libcst's own providers cost.

libcst's `ParentNodeProvider` visits the tree with its generic visitor and asks every node for its
`children` (a second visitor per node): 130 ms on a 1,000-line file. `ParentProvider` gives the
same answers from one plain walk over the nodes' fields: 17 ms. Qualified names are asked of the
scope analysis for the few nodes a rule asks about, instead of `QualifiedNameProvider`'s walk that
prepares an answer for every node of the file (110 ms there). Positions come from libcst's own
codegen pass, which generates the module's code as it goes: `PositionProvider` keeps that code, so
a check need not generate it a second time (`generated_code`).
"""

from __future__ import annotations

import libcst as cst
from libcst.metadata import MetadataWrapper, ScopeProvider
from libcst.metadata import PositionProvider as LibcstPositionProvider
from libcst.metadata.base_provider import BaseMetadataProvider
from libcst.metadata.position_provider import PositionProvidingCodegenState

from devfix.cst_walk import children


class ParentProvider(BaseMetadataProvider[cst.CSTNode]):
    """Each node's parent, as `libcst.metadata.ParentNodeProvider` gives it (the module has none)."""

    def _gen_impl(self, module: cst.Module) -> None:
        parents = self._computed
        pending: list[cst.CSTNode] = [module]
        while pending:
            node = pending.pop()
            for child in children(node):
                parents[child] = node
                pending.append(child)


class Positions(dict):
    """Each node's `CodeRange`, and the code they are positions in."""

    code: str


class PositionProvider(LibcstPositionProvider):
    """libcst's positions (the same pass), with the code that pass generated (`Positions.code`)."""

    def _gen(self, wrapper: MetadataWrapper) -> Positions:
        module = wrapper.module
        self._computed = positions = Positions()  # the codegen state records into it
        state = PositionProvidingCodegenState(default_indent=module.default_indent, default_newline=module.default_newline, provider=self)
        module._codegen(state)
        positions.code = "".join(state.tokens)  # what `Module.code` joins from the same tokens
        return positions


def generated_code(wrapper: MetadataWrapper) -> str:
    """`wrapper.module.code`, from the pass that resolves the rules' positions (done once)."""
    return wrapper.resolve(PositionProvider).code


def scope_qualified_names(visitor: cst.MetadataDependent, node: cst.CSTNode) -> set[str]:
    """What `QualifiedNameProvider` answers for `node`, from the scope analysis it rests on."""
    scope = visitor.get_metadata(ScopeProvider, node, None)
    if scope is None:
        return set()
    return {qualified.name for qualified in scope.get_qualified_names_for(node)}
