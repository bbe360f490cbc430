"""The base of every devfix rule: a libcst codemod that reports findings and applies only the
fixes the run allows (selected, not suppressed, safe or --unsafe-fixes, or the one fix asked for)."""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

import libcst as cst
from libcst.metadata import ScopeProvider

from devfix import cst_walk
from devfix.analysis.cst_metadata import ParentProvider, PositionProvider
from devfix.analysis.device_scope import PREAMBLE_NAME, DeviceChoice, insert_preamble
from devfix.analysis.facts import FileFacts, FileRole
from devfix.analysis.kinds import Kind
from devfix.analysis.project import ProjectIndex
from devfix.analysis.tensors import is_zero_dim_literal
from devfix.analysis.torch_names import torch_alias
from devfix.findings import Finding, Position, Safety
from devfix.fix_policy import FixPolicy
from devfix.rule_registry import RuleSpec, spec_by_code
from devfix.suppressions import Suppressions

if TYPE_CHECKING:
    from libcst.codemod import CodemodContext  # libcst.codemod imports libcst.matchers: 0.5 s

cst_walk.install()  # wherever rules run (the CLI, the language server, Fixit), libcst's visitors stop rebuilding the tree


class DevfixRule(cst.CSTTransformer):
    """One rule: `CODE`, `NAME`, `SAFETY`, a one-line `DESCRIPTION`, and the docstring as its docs.

    A plain metadata-aware transformer with a codemod context (for AddImportsVisitor), like
    libcst's VisitorBasedCodemodCommand minus its matcher-decorator scan on every instantiation,
    which dominated devfix's run time."""

    CODE: ClassVar[str]
    NAME: ClassVar[str]
    SAFETY: ClassVar[Safety]
    REPORT_ONLY: ClassVar[bool] = False  # diagnostics without fixes (tested by unit tests, not fixtures)
    SPEC: ClassVar[RuleSpec]  # triggers and signals: `rule_registry`, where a run reads them without libcst
    TRIGGERS: ClassVar[tuple[str, ...]] = ()
    MOVES_VALUES: ClassVar[bool] = False

    def __init_subclass__(cls, **kwargs) -> None:
        super().__init_subclass__(**kwargs)
        if "CODE" in cls.__dict__:
            cls.SPEC = spec_by_code(cls.CODE)
            cls.TRIGGERS, cls.MOVES_VALUES = cls.SPEC.triggers, cls.SPEC.moves_values

    @classmethod
    def has_signals(cls, facts: FileFacts) -> bool:
        """The code shapes the rule needs (`analysis.screen`) are in the file."""
        return cls.SPEC.has_signals(facts)

    @classmethod
    def may_apply(cls, code: str, facts: FileFacts | None = None) -> bool:
        """`RuleSpec.may_apply`: cheap tests that skip a whole tree pass."""
        return cls.SPEC.may_apply(code, facts)

    METADATA_DEPENDENCIES = (PositionProvider, ScopeProvider, ParentProvider)

    def __init__(
        self,
        context: CodemodContext,
        policy: FixPolicy,
        suppressions: Suppressions,
        project: ProjectIndex,
        facts: FileFacts | None = None,
    ) -> None:
        super().__init__()
        self.context = context
        self.policy = policy
        self.suppressions = suppressions
        self.project = project
        self.facts = facts
        self.findings: list[Finding] = []
        self._needs_preamble = False
        self._preamble_name = PREAMBLE_NAME

    @property
    def module(self) -> cst.Module:
        """The module being transformed, as it was before this pass."""
        return self.context.module

    def report(
        self,
        node: cst.CSTNode,
        message: str,
        *,
        fix_title: str = "",
        fixable: bool = True,
        safety: Safety | None = None,
    ) -> bool:
        """Record a finding at the original `node`; True when the caller should apply its fix."""
        code_range = self.get_metadata(PositionProvider, node)
        start = Position(code_range.start.line, code_range.start.column + 1)
        end = Position(code_range.end.line, code_range.end.column + 1)
        if self.suppressions.suppresses(self.CODE, (start.line, self._statement_line(node))):
            return False
        if self.facts is not None and self.facts.expects_an_error(start.line):
            return False  # a test that the error is raised: correct as it is
        if self.SPEC.aligns_values and self.facts is not None and not self.facts.runs_on_a_device_at(start.line):
            return False  # a test that runs everything on the CPU: nothing to align
        fix_safety = (safety or self.SAFETY) if fixable else None
        apply = fix_safety is not None and self._allowed(fix_safety, start)
        self.findings.append(Finding(self.CODE, message, start, end, fix_safety, fix_title, apply))
        return apply

    def fix_asked_elsewhere(self, node: cst.CSTNode) -> bool:
        """One fix is asked for (`policy.only`, an editor's quick fix) and not at `node`: what the rule
        would find there is neither applied nor reported (that pass's findings are not kept), so
        its analysis can be skipped."""
        only = self.policy.only
        if only is None:
            return False
        start = self.get_metadata(PositionProvider, node).start
        return only != (self.CODE, Position(start.line, start.column + 1))

    def kind_of(self, node: cst.CSTNode) -> Kind:
        """The kind (tensor, list, numpy array, ...) of the name `node`, or of the attribute
        `self.x` in a method or `Config.x` of a class constant, where it is read, or of the call
        a `for` statement iterates over."""
        if self.facts is None:
            return Kind.UNKNOWN
        if isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name):
            start = self.get_metadata(PositionProvider, node).start
            return self.facts.attribute_kind_at(start.line, start.column)
        if isinstance(node, cst.Call):  # only where a `for` statement iterates over it
            start = self.get_metadata(PositionProvider, node).start
            return self.facts.iterated_call_kind_at(start.line, start.column)
        if not isinstance(node, cst.Name):
            return Kind.UNKNOWN
        start = self.get_metadata(PositionProvider, node).start
        return self.facts.kind_at(start.line, start.column)

    def is_scalar_tensor(self, call: cst.Call) -> bool:
        """`torch.tensor(<a Python number>)`: a 0-dim CPU tensor, allowed next to CUDA tensors in
        arithmetic (a literal, or a value the analysis proved to be a number)."""
        if is_zero_dim_literal(call):
            return True
        if self.facts is None:
            return False
        start = self.get_metadata(PositionProvider, call).start
        return (start.line, self.facts.byte_column(start.line, start.column)) in self.facts.values.scalar_tensors

    @property
    def may_add_globals(self) -> bool:
        """Only a program may get a module-level `device` preamble; a library module or a test not."""
        return self.facts is not None and self.facts.role is FileRole.PROGRAM

    def use_device(self, choice: DeviceChoice) -> str:
        """The name to write for `choice`; asks for the preamble when the name is new."""
        if choice.needs_preamble:
            self._needs_preamble = True
            self._preamble_name = choice.name
        return choice.name

    def torch_name(self) -> str:
        """The name `torch` is bound to, for a fix that writes `torch.`: `import torch` is added when
        the file only has `from torch import ...` (else the fix would raise NameError)."""
        alias = torch_alias(self.module)
        if alias is None:
            _add_needed_import(self.context, "torch")
            return "torch"
        return alias

    def leave_Module(self, original_node: cst.Module, updated_node: cst.Module) -> cst.Module:
        if not self._needs_preamble:
            return updated_node
        alias = torch_alias(updated_node)
        if alias is None:
            _add_needed_import(self.context, "torch")
            alias = "torch"
        return insert_preamble(updated_node, alias, self._preamble_name, self.policy.device_idiom)

    def _allowed(self, safety: Safety, start: Position) -> bool:
        policy = self.policy
        if not policy.apply:
            return False
        if policy.only is not None:
            return policy.only == (self.CODE, start)
        return safety is Safety.SAFE or policy.unsafe

    def statement_of(self, node: cst.CSTNode) -> cst.BaseStatement | None:
        """The statement holding `node` (a simple statement line or a compound statement)."""
        current: cst.CSTNode | None = node
        while current is not None and not isinstance(current, cst.BaseStatement):
            current = self.get_metadata(ParentProvider, current, None)
        return current

    def _statement_line(self, node: cst.CSTNode) -> int:
        """First line of the statement holding `node`, where a suppression comment also counts."""
        statement = self.statement_of(node)
        return -1 if statement is None else self.get_metadata(PositionProvider, statement).start.line


def _add_needed_import(context: CodemodContext, module: str) -> None:
    """`import <module>` once the pass ends; libcst's codemod package is imported only then."""
    from libcst.codemod.visitors import AddImportsVisitor

    AddImportsVisitor.add_needed_import(context, module)
