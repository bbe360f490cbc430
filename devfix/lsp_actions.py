"""The code actions the language server offers for a finding, for files and notebook cells alike:
a quick fix (its edit computed later, in the worker, with `fix_policy`), a comment that disables
the rule on the line, and fix-all."""

from __future__ import annotations

from lsprotocol import types as lsp

from devfix.config import Settings
from devfix.diffing import TextEdit
from devfix.findings import Finding, Position, Safety
from devfix.fix_policy import FixPolicy
from devfix.suppressions import SUPPRESSION

FIX_ALL_KIND = "source.fixAll.devfix"


def offers_fix(finding: Finding, unsafe_fixes: bool) -> bool:
    """A quick fix is offered for a safe fix, and for an unsafe one with `unsafeFixes`."""
    return finding.fix_safety is Safety.SAFE or (finding.fix_safety is Safety.UNSAFE and unsafe_fixes)


def quick_fix(finding: Finding, diagnostic: lsp.Diagnostic, document: dict, line: int) -> lsp.CodeAction:
    """The action applying `finding`'s fix; its data names the document (`document`: its key and
    version) and the finding by code and start, `line` as the engine counts it."""
    return lsp.CodeAction(
        title=f"devfix ({finding.code}): {finding.fix_title or 'apply the fix'}",
        kind=lsp.CodeActionKind.QuickFix,
        diagnostics=[diagnostic],
        is_preferred=finding.fix_safety is Safety.SAFE,
        data={**document, "code": finding.code, "line": line, "column": finding.start.column},
    )


def fix_all(document: dict) -> lsp.CodeAction:
    return lsp.CodeAction(title="devfix: fix all auto-fixable problems", kind=FIX_ALL_KIND, data=document)


def fix_policy(data: dict, settings: Settings) -> FixPolicy:
    """The policy of an action's fix: the one finding `data` names (even an unsafe one: the user
    chose it), or every fix the settings allow."""
    if "code" in data:
        only = (data["code"], Position(data["line"], data["column"]))
        return FixPolicy(apply=True, unsafe=True, only=only, device_idiom=settings.device_idiom)
    return FixPolicy(apply=True, unsafe=settings.unsafe_fixes, device_idiom=settings.device_idiom)


def disable_for_line(ls, uri: str, document, finding: Finding, diagnostic: lsp.Diagnostic) -> lsp.CodeAction:
    index = finding.start.line - 1
    line = document.lines[index].rstrip("\r\n")
    match = SUPPRESSION.search(line)
    if match and match.group("codes") is not None:
        codes = [code.strip() for code in match.group("codes").split(",") if code.strip()] + [finding.code]
        start, end = match.span()
        edit = TextEdit((index, start), (index, end), f"# devfix: ignore[{', '.join(codes)}]")
    else:
        edit = TextEdit((index, len(line)), (index, len(line)), f"  # devfix: ignore[{finding.code}]")
    return lsp.CodeAction(
        title=f"devfix ({finding.code}): disable for this line",
        kind=lsp.CodeActionKind.QuickFix,
        diagnostics=[diagnostic],
        edit=ls.workspace_edit(uri, [edit]),
    )


def overlaps(a: lsp.Range, b: lsp.Range) -> bool:
    return (a.start.line, a.start.character) <= (b.end.line, b.end.character) and (b.start.line, b.start.character) <= (a.end.line, a.end.character)
