"""One file: bytes → libcst module → rules (report, or fix to a fixed point) → FileResult.

Parsing bytes keeps the BOM, coding cookie and newline style; the engine refuses to return code
that does not parse, so a rule bug can never corrupt a user's file. libcst and the rules' modules
are imported only when a file reaches them: a check where the `ast` screen rules everything out
never pays for them.
"""

from __future__ import annotations

import io
import tokenize
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Union

from devfix import python_parser
from devfix.analysis.facts import FileFacts, analyse_file
from devfix.analysis.project import ProjectIndex
from devfix.budget import OverTimeBudget
from devfix.findings import FileResult, Finding
from devfix.fix_policy import FixPolicy
from devfix.rule_registry import RuleSpec
from devfix.suppressions import Suppressions

if TYPE_CHECKING:
    import libcst as cst
    from libcst.metadata import MetadataWrapper

    from devfix.check_slice import CheckSlice
    from devfix.codemods.base import DevfixRule
    from devfix.tree_cache import TreeCache

Rule = Union[RuleSpec, "type[DevfixRule]"]  # a spec is loaded (`RuleSpec.load`) when a file needs it

MAX_PASSES = 8
RESOURCE_ERRORS = (MemoryError, RecursionError)  # out of the file's memory or stack: not a rule's bug


class RuleProducedInvalidCode(RuntimeError):
    """A rule's output failed to parse: a devfix bug, reported instead of written."""


CRASH_DETAIL_CHARS = 200  # a KeyError's key can be a whole libcst subtree: pages of repr


def _crash_message(path: str, rule: type[DevfixRule], error: Exception) -> str:
    detail = " ".join(repr(error).split())
    if len(detail) > CRASH_DETAIL_CHARS:
        detail = detail[:CRASH_DETAIL_CHARS] + "..."
    return (f"{path}: devfix bug: rule {rule.CODE} raised {detail}; it was skipped for this file and the "
            "other rules ran. Please report it with the file.")


def parse(source: bytes) -> cst.Module:
    import libcst as cst

    return cst.parse_module(source)


def _rule_classes(rules: Sequence[Rule]) -> list[type[DevfixRule]]:
    return [rule.load() if isinstance(rule, RuleSpec) else rule for rule in rules]


def check_module(
    module: cst.Module,
    path: str,
    rules: Sequence[Rule],
    project: ProjectIndex,
    facts: FileFacts | None = None,
    crashes: list[str] | None = None,
    suppressions: Suppressions | None = None,
    wrapper: MetadataWrapper | None = None,
    code: str | None = None,
    whole_text: str | None = None,
) -> list[Finding]:
    """Findings on `module` as it is; nothing is changed. `facts` may come from the screen; a rule
    that raises is skipped and described in `crashes`; `suppressions` (when given) learn which of
    them silenced a finding; `wrapper` is `module`'s, with the metadata already resolved for it;
    `code` is `module.code` when the caller has it (generating it costs a tree walk). `whole_text`
    is the file's text when `module` is a line-for-line slice of it (`check_slice`): the rules,
    facts and suppressions are the whole file's."""
    from libcst.metadata import MetadataWrapper

    findings: list[Finding] = []
    code = code if code is not None else module.code
    text = whole_text if whole_text is not None else code
    suppressions = suppressions if suppressions is not None else Suppressions.from_source(text)
    if wrapper is None:
        wrapper = MetadataWrapper(module, unsafe_skip_copy=True)  # one analysis shared: check mode changes nothing
    facts = _facts_for(text, path, project, facts)
    for rule in _rule_classes(rules):
        if rule.may_apply(text, facts):
            try:
                findings += _run_rule(rule, wrapper, path, FixPolicy(), suppressions, project, facts)[1]
            except Exception as error:  # noqa: BLE001 - a devfix bug must not cost the other rules' findings
                _raise_if_out_of_budget(error)
                _note_crash(crashes, _crash_message(path, rule, error))
    return sorted(findings, key=Finding.sort_key)


def _raise_if_out_of_budget(error: Exception) -> None:
    """Out of the file's memory or stack is not a rule's bug: the whole file is skipped. Nor is an
    exception raised while handling the budget running out (libcst's cleanup code turns a
    MemoryError, or the time budget's exception, into a KeyError)."""
    if isinstance(error, RESOURCE_ERRORS):
        raise error
    cause = error.__context__
    while cause is not None:
        if isinstance(cause, (*RESOURCE_ERRORS, OverTimeBudget, KeyboardInterrupt)):
            raise cause from error
        cause = cause.__context__


def _note_crash(crashes: list[str] | None, message: str) -> None:
    if crashes is not None and message not in crashes:
        crashes.append(message)


@dataclass(frozen=True)
class FixOutcome:
    module: cst.Module
    code: str  # `module.code`
    applied: list[Finding]
    remaining: list[Finding] | None  # findings on the final code, when the last pass saw it whole


def fix_module(
    module: cst.Module,
    path: str,
    rules: Sequence[Rule],
    project: ProjectIndex,
    policy: FixPolicy,
    facts: FileFacts | None = None,
    crashes: list[str] | None = None,
    wrapper: MetadataWrapper | None = None,
    code: str | None = None,
) -> FixOutcome:
    """Apply the allowed fixes until a whole pass changes nothing. That last pass ran every rule on
    the final code, so its findings are what remains (no separate check is needed). One fix asked
    for (`policy.only`) takes one pass of its own rule: no other rule may apply anything. `code` is
    `module.code` when the caller has it."""
    from libcst.metadata import MetadataWrapper

    rules = _rule_classes(rules)
    if policy.only is not None:
        rules = [rule for rule in rules if rule.CODE == policy.only[0]]
    applied: list[Finding] = []
    if wrapper is None:
        wrapper = MetadataWrapper(module)
    code = code if code is not None else module.code
    suppressions = Suppressions.from_source(code)
    facts = _facts_for(code, path, project, facts)
    crashed: set[str] = set()
    for _ in range(MAX_PASSES):
        changed, pass_findings = False, []
        for rule in rules:
            if rule.CODE in crashed or not rule.may_apply(code, facts):
                continue
            try:
                new_module, findings = _run_rule(rule, wrapper, path, policy, suppressions, project, facts)
            except Exception as error:  # noqa: BLE001 - skip the rule for this file; the others' fixes still apply
                _raise_if_out_of_budget(error)
                crashed.add(rule.CODE)
                _note_crash(crashes, _crash_message(path, rule, error))
                continue
            applied += [finding for finding in findings if finding.applied]
            pass_findings += findings
            new_code = code if new_module is wrapper.module else new_module.code
            if policy.only is not None:
                return FixOutcome(new_module, new_code, applied, None)  # the one rule that may apply it has run
            if new_code != code:
                wrapper = MetadataWrapper(new_module)  # metadata is only valid for the tree it was built on
                code = new_code
                suppressions = Suppressions.from_source(code)
                facts = analyse_file(code, path, project)
                changed = True
        if policy.only is not None:
            return FixOutcome(wrapper.module, code, applied, None)  # its rule does not apply to this file
        if not changed:
            return FixOutcome(wrapper.module, code, applied, sorted(pass_findings, key=Finding.sort_key))
    return FixOutcome(wrapper.module, code, applied, None)


def process(
    source: bytes,
    path: str,
    rules: Sequence[Rule],
    project: ProjectIndex,
    policy: FixPolicy = FixPolicy(),  # noqa: B008 - frozen: one shared default is right
    whole: str | None = None,
    report_unused_ignores: bool = False,
    trees: TreeCache | None = None,
    report_remaining: bool = True,
) -> FileResult:
    """Check `source`; with `policy.apply`, also fix it and report what remains. `whole` is the
    whole file when `source` is a part of it (see `analysis.facts.analyse_file`). With
    `report_unused_ignores` (check only), a suppression comment that silenced nothing is a finding.
    `trees` keeps the parsed tree and its metadata for the next call on the same bytes. Without
    `report_remaining`, a fix is not followed by a check of the fixed code when its last pass did
    not see it whole (the result then has no findings): for a caller that only wants the text.

    The `ast` screen comes first: when no rule can find anything in the file, no libcst tree is
    built at all (most library code)."""
    facts = screen(source, path, project, whole)
    if facts is None and (rejected := python_rejects(source, path)) is not None:
        return FileResult(path, source, source, error=rejected)  # never handed to libcst's native parser
    if policy.only is not None and not report_remaining:
        rules = [rule for rule in rules if _spec(rule).CODE == policy.only[0]]  # one fix asked for: only its rule runs
    if facts is not None and not any(rule.may_apply(facts.text, facts) for rule in rules):
        unused = unused_ignores(Suppressions.from_source(facts.text), rules) if report_unused_ignores else ()
        return FileResult(path, source, source, tuple(unused))
    import libcst as cst

    if facts is not None and not policy.apply and trees is None and whole is None and not report_unused_ignores:
        part = _slice_for(facts, rules)
        if part is not None:
            return _check_slice(source, path, rules, project, facts, part)
    tree = trees.get(source) if trees is not None else None
    if tree is not None:
        wrapper, code = tree
        module = wrapper.module
    else:
        try:
            module = parse(source)
        except (cst.ParserSyntaxError, SyntaxError, UnicodeDecodeError, LookupError) as error:
            return FileResult(path, source, source, error=describe_parse_error(path, error))
        from libcst.metadata import MetadataWrapper

        from devfix.analysis.cst_metadata import generated_code

        wrapper = MetadataWrapper(module, unsafe_skip_copy=True)  # a fresh parse holds no node twice
        code = generated_code(wrapper)  # with the positions every rule reads: one codegen pass for both
        if trees is not None:
            from devfix.tree_cache import ParsedTree

            trees.remember(source, ParsedTree(wrapper, code))
    crashes: list[str] = []
    if not policy.apply:
        suppressions = Suppressions.from_source(code)
        findings = check_module(module, path, rules, project, facts, crashes, suppressions, wrapper, code)
        if report_unused_ignores:
            findings = sorted([*findings, *unused_ignores(suppressions, rules)], key=Finding.sort_key)
        return FileResult(path, source, source, tuple(findings), rule_crashes=tuple(crashes))
    outcome = fix_module(module, path, rules, project, policy, facts, crashes, wrapper, code)
    if not outcome.applied:
        remaining = outcome.remaining
        if remaining is None:
            remaining = check_module(module, path, rules, project, None, crashes, wrapper=wrapper, code=code) if report_remaining else []
        return FileResult(path, source, source, tuple(remaining), rule_crashes=tuple(crashes))
    fixed_bytes = outcome.code.encode(outcome.module.encoding)  # what `Module.bytes` does, without a second codegen
    ensure_parses(fixed_bytes, path)
    remaining = outcome.remaining
    if remaining is None:
        remaining = check_module(outcome.module, path, rules, project, None, crashes, code=outcome.code) if report_remaining else []
    return FileResult(path, source, fixed_bytes, tuple(remaining), tuple(outcome.applied), rule_crashes=tuple(crashes))


def _slice_for(facts: FileFacts, rules: Sequence[Rule]) -> CheckSlice | None:
    """The part of the file a check of `rules` needs (`check_slice`), or None for all of it."""
    from devfix.check_slice import check_slice

    applicable = [rule for rule in rules if rule.may_apply(facts.text, facts)]
    return check_slice(facts, [_spec(rule).findings_in for rule in applicable])


def _spec(rule: Rule) -> RuleSpec:
    return rule if isinstance(rule, RuleSpec) else rule.SPEC


def _check_slice(source: bytes, path: str, rules: Sequence[Rule], project: ProjectIndex, facts: FileFacts, part: CheckSlice) -> FileResult:
    """The check of the whole file, from the statements that can hold findings (`check_slice`)."""
    import libcst as cst

    try:
        module = cst.parse_module(part.text)
    except (cst.ParserSyntaxError, SyntaxError):  # Python accepted the file, libcst's parser not: say so as before
        try:
            parse(source)
        except (cst.ParserSyntaxError, SyntaxError, UnicodeDecodeError, LookupError) as error:
            return FileResult(path, source, source, error=describe_parse_error(path, error))
        raise
    crashes: list[str] = []
    if part.values_complete:
        facts.read_values_in(part.text)
    found = check_module(module, path, rules, project, facts, crashes, code=part.text, whole_text=facts.text)
    findings = tuple(finding for finding in found if part.holds(finding.start.line))
    return FileResult(path, source, source, findings, rule_crashes=tuple(crashes))


UNUSED_IGNORE = "DF100"


def unused_ignores(suppressions: Suppressions, rules: Sequence[Rule]) -> list[Finding]:
    """A finding for each suppression that silenced nothing in this check (`--report-unused-ignores`)."""
    from devfix.findings import Position

    checked = frozenset(rule.CODE for rule in rules)
    findings = []
    for line, code in suppressions.unused(checked):
        start, end = suppressions.columns[line]
        what = "`# devfix: ignore`" if code == "*" else f"`# devfix: ignore[{code}]`"
        findings.append(Finding(UNUSED_IGNORE, f"unused {what}: nothing to silence on this line", Position(line, start), Position(line, end)))
    return findings


def screen(source: bytes, path: str, project: ProjectIndex, whole: str | None = None) -> FileFacts | None:
    """The file's facts from Python's own parser, or None when it rejects the bytes (then the
    libcst path reports the error as before)."""
    try:
        encoding = tokenize.detect_encoding(io.BytesIO(source).readline)[0]
        text = source.decode(encoding)
    except (SyntaxError, UnicodeDecodeError, LookupError):
        return None
    return analyse_file(text, path, project, whole)


def _facts_for(code: str, path: str, project: ProjectIndex, facts: FileFacts | None) -> FileFacts | None:
    """The facts of `code`: those given when they were computed from the same text."""
    return facts if facts is not None and facts.text == code else analyse_file(code, path, project)


def ensure_parses(source: bytes, path: str) -> None:
    """Python's own parser is the judge of what the user can run: libcst's would only say again
    that its code generator round-trips (and on deep nesting its native parser can crash)."""
    try:
        python_parser.parse(source, path)
    except (SyntaxError, ValueError) as error:
        raise RuleProducedInvalidCode(f"{path}: devfix produced code that does not parse ({error}); file left untouched") from error


def python_rejects(source: bytes, path: str) -> str | None:
    """Python's own verdict on the source, as the user's message, or None when it parses (or cannot
    be decoded: the libcst path reports encodings). What CPython rejects never reaches libcst: its
    native parser crashes the process on very deep nesting (2,000 parentheses, 8,000-term sums)
    that CPython refuses cleanly."""
    try:
        text = source.decode(tokenize.detect_encoding(io.BytesIO(source).readline)[0])
    except (SyntaxError, UnicodeDecodeError, LookupError):
        return None
    try:
        python_parser.parse(text, path)
    except SyntaxError as error:
        line, column = error.lineno or 1, error.offset or 1
        return f"{path}:{line}:{column}: syntax error: {error.msg}; file skipped"
    except ValueError as error:  # a NUL byte
        return f"{path}: cannot parse: {error}; file skipped"
    except RecursionError:  # MemoryError goes on: it is the file's memory budget (`budget.limit_memory`)
        return f"{path}: nested too deeply for Python's parser; file skipped"
    return None


def describe_parse_error(path: str, error: Exception) -> str:
    import libcst as cst

    if isinstance(error, cst.ParserSyntaxError):
        return f"{path}:{error.raw_line}:{error.raw_column + 1}: syntax error: {error.message}; file skipped"
    if isinstance(error, (UnicodeDecodeError, LookupError)) or "encoding" in str(error):
        return f"{path}: not valid UTF-8 and no usable coding cookie ({error}); file skipped"
    return f"{path}: cannot parse: {error}; file skipped"


def _run_rule(
    rule: type[DevfixRule],
    wrapper: MetadataWrapper,
    path: str,
    policy: FixPolicy,
    suppressions: Suppressions,
    project: ProjectIndex,
    facts: FileFacts | None,
) -> tuple[cst.Module, list[Finding]]:
    """One rule over an already analysed tree (what `Codemod.transform_module` does, minus a fresh
    copy and re-analysis of the tree for every rule). A check changes nothing: the rule walks the
    tree without rebuilding it (`cst_walk`)."""
    from libcst.codemod import CodemodContext  # only for files that reach libcst: it costs 0.5 s to import
    from libcst.codemod.visitors import AddImportsVisitor, RemoveImportsVisitor

    from devfix import cst_walk

    context = CodemodContext(filename=path, wrapper=wrapper)
    instance = rule(context, policy, suppressions, project, facts)
    with instance.resolve(wrapper):
        if policy.apply:
            new_module = wrapper.module.visit(instance)
        else:
            cst_walk.walk(wrapper.module, instance)
            new_module = wrapper.module
    for follow_up in (AddImportsVisitor, RemoveImportsVisitor):
        if follow_up.CONTEXT_KEY in instance.context.scratch:
            new_module = follow_up(instance.context).transform_module(new_module)
    return new_module, instance.findings
