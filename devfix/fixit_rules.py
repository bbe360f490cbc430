"""devfix's rules as Fixit lint rules: `enable = ["devfix.fixit_rules"]` in Fixit's configuration.

Each adapter runs one devfix rule through the devfix engine on the module Fixit hands it and
reports every finding at its own position; the first finding of the rule carries the rule's whole
fix as the module's replacement (Fixit replaces nodes, and the module is the only node all of a
rule's edits, preamble included, fit in). Safe fixes only: unsafe ones stay `devfix --unsafe-fixes`'s.
"""

from __future__ import annotations

import libcst as cst
from fixit import LintRule
from libcst.metadata import CodePosition, CodeRange, FilePathProvider

from devfix.analysis.project import ProjectIndex
from devfix.codemods import ALL_RULES
from devfix.codemods.base import DevfixRule
from devfix.engine import process
from devfix.fix_policy import FixPolicy


def _adapter(rule: type[DevfixRule]) -> type[LintRule]:
    class Adapter(LintRule):
        __doc__ = rule.__doc__ or rule.DESCRIPTION
        MESSAGE = rule.DESCRIPTION
        METADATA_DEPENDENCIES = (*LintRule.METADATA_DEPENDENCIES, FilePathProvider)

        def visit_Module(self, node: cst.Module) -> None:
            """The same entry point as `devfix check`/`fix` (screen, parse guard), with the file's
            real path so classes of its project resolve."""
            path = str(self.get_metadata(FilePathProvider, node, "<fixit>"))
            source = node.bytes
            findings = process(source, path, [rule], ProjectIndex()).findings
            replacement = None
            if any(finding.fixable for finding in findings):
                fixed = process(source, path, [rule], ProjectIndex(), FixPolicy(apply=True)).fixed
                replacement = cst.parse_module(fixed) if fixed != source else None
            for index, finding in enumerate(findings):
                position = CodeRange(
                    CodePosition(finding.start.line, finding.start.column - 1),
                    CodePosition(finding.end.line, finding.end.column - 1),
                )
                self.report(node, f"{finding.code} {finding.message}", position=position, replacement=replacement if index == 0 else None)

    name = "".join(part.capitalize() for part in rule.NAME.split("-"))
    Adapter.__name__ = Adapter.__qualname__ = f"{rule.CODE}{name}"
    Adapter.__module__ = __name__
    return Adapter


for _rule in ALL_RULES:
    _adapter_class = _adapter(_rule)
    globals()[_adapter_class.__name__] = _adapter_class

__all__ = [f"{rule.CODE}{''.join(part.capitalize() for part in rule.NAME.split('-'))}" for rule in ALL_RULES]
