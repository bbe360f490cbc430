"""One file: bytes → libcst module → rules (report, or fix to a fixed point) → FileResult.

Parsing bytes keeps the BOM, coding cookie and newline style; the engine refuses to return code
that does not parse, so a rule bug can never corrupt a user's file.
"""

from __future__ import annotations

import ast
from collections.abc import Sequence

import libcst as cst
from libcst.codemod import CodemodContext

from devfix.analysis.project import ProjectIndex
from devfix.codemods.base import DevfixRule, FixPolicy
from devfix.findings import FileResult, Finding, Position
from devfix.suppressions import Suppressions

MAX_PASSES = 8


class RuleProducedInvalidCode(RuntimeError):
    """A rule's output failed to parse: a devfix bug, reported instead of written."""


def parse(source: bytes) -> cst.Module:
    return cst.parse_module(source)


def check_module(
    module: cst.Module, path: str, rules: Sequence[type[DevfixRule]], project: ProjectIndex
) -> list[Finding]:
    """Findings on `module` as it is; nothing is changed."""
    findings: list[Finding] = []
    suppressions = Suppressions.from_source(module.code)
    for rule in rules:
        findings += _run_rule(rule, module, path, FixPolicy(), suppressions, project)[1]
    return sorted(findings, key=Finding.sort_key)


def fix_module(
    module: cst.Module,
    path: str,
    rules: Sequence[type[DevfixRule]],
    project: ProjectIndex,
    policy: FixPolicy,
) -> tuple[cst.Module, list[Finding]]:
    """Apply the allowed fixes until nothing changes; returns the new module and the applied fixes."""
    applied: list[Finding] = []
    for _ in range(MAX_PASSES):
        before = module.code
        for rule in rules:
            suppressions = Suppressions.from_source(module.code)
            module, findings = _run_rule(rule, module, path, policy, suppressions, project)
            applied += [finding for finding in findings if finding.applied]
        if module.code == before or policy.only is not None:
            break
    return module, applied


def process(
    source: bytes,
    path: str,
    rules: Sequence[type[DevfixRule]],
    project: ProjectIndex,
    policy: FixPolicy = FixPolicy(),
) -> FileResult:
    """Check `source`; with `policy.apply`, also fix it and report what remains."""
    try:
        module = parse(source)
    except (cst.ParserSyntaxError, SyntaxError, UnicodeDecodeError, LookupError) as error:
        return FileResult(path, source, source, error=describe_parse_error(path, error))
    findings = check_module(module, path, rules, project)
    if not policy.apply or not any(finding.fixable for finding in findings):
        return FileResult(path, source, source, tuple(findings))
    fixed, applied = fix_module(module, path, rules, project, policy)
    fixed_bytes = fixed.bytes
    ensure_parses(fixed_bytes, path)
    remaining = check_module(fixed, path, rules, project) if applied else findings
    return FileResult(path, source, fixed_bytes, tuple(remaining), tuple(applied))


def ensure_parses(source: bytes, path: str) -> None:
    try:
        ast.parse(source, filename=path)
        cst.parse_module(source)
    except (SyntaxError, cst.ParserSyntaxError, ValueError) as error:
        raise RuleProducedInvalidCode(f"{path}: devfix produced code that does not parse ({error}); file left untouched") from error


def describe_parse_error(path: str, error: Exception) -> str:
    if isinstance(error, cst.ParserSyntaxError):
        return f"{path}:{error.raw_line}:{error.raw_column + 1}: syntax error: {error.message}; file skipped"
    if isinstance(error, (UnicodeDecodeError, LookupError)) or "encoding" in str(error):
        return f"{path}: not valid UTF-8 and no usable coding cookie ({error}); file skipped"
    return f"{path}: cannot parse: {error}; file skipped"


def _run_rule(
    rule: type[DevfixRule],
    module: cst.Module,
    path: str,
    policy: FixPolicy,
    suppressions: Suppressions,
    project: ProjectIndex,
) -> tuple[cst.Module, list[Finding]]:
    instance = rule(CodemodContext(filename=path), policy, suppressions, project)
    new_module = instance.transform_module(module)
    return new_module, instance.findings


def position_key(finding: Finding) -> tuple[str, Position]:
    return (finding.code, finding.start)
