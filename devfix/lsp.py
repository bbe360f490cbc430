"""`devfix lsp`: diagnostics and quick fixes over the Language Server Protocol (pygls 2).

A thin shell over the engine: findings become diagnostics; a quick fix applies one finding's fix
(`FixPolicy.only`) and sends the minimal text edits; "fix all" applies every allowed fix. Positions
are code points inside devfix and are converted to the encoding negotiated with the client (UTF-16,
UTF-8 or UTF-32) by pygls. A document that does not parse gets no diagnostics and no fixes until
it parses again (stale fixes could corrupt it). Nothing here writes to stdout: it is the channel.

After a change, diagnostics come in two steps: quick ones from the edited top-level statements
(`devfix.incremental`, tens of milliseconds), then, once typing pauses, the full analysis, sent
only where it differs. Full analyses and fixes run in a worker process (`devfix.background`), so
the server answers while they run. Code actions always use the full analysis. Notebooks synced
with `notebookDocument/*` are handled in `devfix.lsp_notebooks`.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lsprotocol import types as lsp
from pygls.lsp.server import LanguageServer
from pygls.workspace.position_codec import ServerTextPosition

from devfix import __version__, lsp_notebooks
from devfix.analysis.project import ProjectIndex
from devfix.background import BackgroundAnalyser, Request, run_engine
from devfix.codemods import ALL_RULES, rule_by_code
from devfix.config import ConfigError, Settings, load_settings
from devfix.diffing import TextEdit, minimal_edits
from devfix.engine import RuleProducedInvalidCode, process
from devfix.findings import Finding
from devfix.fix_policy import FixPolicy
from devfix.incremental import QuickDiagnostics
from devfix.lsp_actions import FIX_ALL_KIND, disable_for_line, fix_all, fix_policy, offers_fix, overlaps, quick_fix
from devfix.lsp_protocol import DevfixProtocol

APPLY_AUTOFIX_COMMAND = "devfix.applyAutofix"
QUICK_DELAY_SECONDS = 0.005  # quick diagnostics: changes that arrive together are analysed once
FULL_DELAY_SECONDS = 0.4  # the full analysis waits for a pause in typing
PYTHON_SUFFIXES = (".py", ".pyi")


@dataclass(frozen=True)
class EditorOptions:
    """What the editor asked for (initializationOptions / workspace/didChangeConfiguration)."""

    select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    unsafe_fixes: bool | None = None

    @classmethod
    def from_json(cls, data: Any) -> EditorOptions:
        if not isinstance(data, dict):
            return cls()
        data = data.get("devfix", data)
        codes = lambda key: tuple(str(code).upper() for code in data.get(key) or ())
        unsafe = data.get("unsafeFixes", data.get("unsafe-fixes"))
        return cls(codes("select"), codes("ignore"), None if unsafe is None else bool(unsafe))


@dataclass(frozen=True)
class Analysis:
    version: int | None
    text: str
    findings: tuple[Finding, ...] = ()
    parses: bool = True
    exact: bool = True  # False: quick diagnostics from the edited statements only


class DevfixLanguageServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__("devfix", __version__, protocol_cls=DevfixProtocol, notebook_document_sync=lsp_notebooks.SYNC_OPTIONS)
        self.options = EditorOptions()
        self.analyses: dict[str, Analysis] = {}
        self.quick: dict[str, QuickDiagnostics] = {}
        self.pending: dict[str, asyncio.Task] = {}
        self.published: dict[str, Analysis] = {}
        self.background = BackgroundAnalyser()
        self.too_big: set[str] = set()  # documents over max-file-bytes, already logged
        self.running: dict[str, tuple[tuple[int | None, str], asyncio.Future]] = {}
        # per document, the fixed texts computed for its current (version, text), by policy: an editor
        # without codeAction/resolve is sent every edit with each list of actions
        self.fixes: dict[str, tuple[tuple[int | None, str], dict[FixPolicy, str | None]]] = {}
        self.notebooks = lsp_notebooks.NotebookState()
        self.generation = 0  # of the settings

    # -- engine calls -------------------------------------------------------------------------------

    def analysable(self, document) -> bool:
        """A Python document within `max-file-bytes`; a bigger one is left alone, said once in the
        log (the CLI skips such a file too). A document the client never opened is read from disk
        by the workspace: one that cannot be read is not analysed (no -32603 traceback)."""
        if not is_python(document):
            return False
        try:
            source = document.source
        except (OSError, UnicodeDecodeError):
            return False
        limit = self.settings_for(document.path or "untitled.py").max_file_bytes
        size = len(source.encode("utf-8", "surrogatepass"))
        if size <= limit:
            return True
        if document.uri not in self.too_big:
            self.too_big.add(document.uri)
            self.window_log_message(lsp.LogMessageParams(lsp.MessageType.Warning, f"devfix: {document.uri} is {size} bytes, over max-file-bytes ({limit}); not analysed"))
        return False

    def settings_for(self, path: str) -> Settings:
        try:
            base = load_settings(Path(path))
        except ConfigError:
            base = Settings()
        return base.with_command_line(select=self.options.select, ignore=self.options.ignore, unsafe_fixes=self.options.unsafe_fixes)

    async def analyse(self, uri: str) -> Analysis | None:
        """The full analysis of the document as it is now (in the worker process). It runs to its
        end even when the caller gives up: its findings are what quick diagnostics build on."""
        document = self.workspace.get_text_document(uri)
        if not self.analysable(document):
            return None
        cached = self.current(uri)
        if cached is not None:
            return cached
        running = self.running.get(uri)
        if running is None or running[0] != (document.version, document.source):
            running = ((document.version, document.source), asyncio.ensure_future(self._full_analysis(uri, document)))
            self.running[uri] = running
        return await asyncio.shield(running[1])

    async def _full_analysis(self, uri: str, document) -> Analysis:
        version, text, generation = document.version, document.source, self.generation
        outcome = await self.background.analyse(uri, self.request(document))
        analysis = Analysis(version, text, outcome.findings, outcome.parses)
        if generation != self.generation:
            return analysis  # computed with settings that no longer hold: keep nothing
        if outcome.parses:
            self.quick.setdefault(uri, QuickDiagnostics()).remember(text, analysis.findings)
        if self.workspace.get_text_document(uri).source == text:
            self.analyses[uri] = analysis
        return analysis

    def request(self, document, part: str | None = None) -> Request:
        """What the engine needs for the document (or for `part` of it), with its settings."""
        path = document.path or "untitled.py"
        settings = self.settings_for(path)
        text = document.source if part is None else part
        return Request(text, path, *settings.selection(Path(path)), None if part is None else document.source, settings.file_timeout)

    def current(self, uri: str) -> Analysis | None:
        """The full analysis of this very version, if it is done."""
        document = self.workspace.get_text_document(uri)
        cached = self.analyses.get(uri)
        if cached is not None and cached.version == document.version and cached.text == document.source:
            return cached
        return None

    def quick_analyse(self, uri: str) -> Analysis | None:
        """Provisional diagnostics from the statements changed since the last full analysis; None
        when the full analysis is needed (nothing to build on, or most of the file changed)."""
        document = self.workspace.get_text_document(uri)
        quick = self.quick.get(uri)
        if quick is None or not self.analysable(document):
            return None
        cached = self.current(uri)
        if cached is not None:
            return cached
        text = document.source
        if not quick.parses(text):
            return Analysis(document.version, text, (), parses=False, exact=False)

        def analyse_slice(part: str) -> list[Finding]:
            try:
                result = run_engine(self.request(document, part), FixPolicy())
            except RuleProducedInvalidCode:
                raise QuickDiagnostics.Unavailable from None
            if result.error is not None:
                raise QuickDiagnostics.Unavailable
            return list(result.findings)

        findings = quick.quick(text, analyse_slice)
        return None if findings is None else Analysis(document.version, text, tuple(findings), exact=False)

    async def fixed_text(self, uri: str, version: int | None, policy: FixPolicy) -> str | None:
        """The document after the fixes `policy` allows (in the worker); None when nothing
        changes or the document moved on meanwhile."""
        document = self.workspace.get_text_document(uri)
        if document.version != version:
            return None
        state, generation = (document.version, document.source), self.generation
        known = self.fixes.get(uri)
        if known is not None and known[0] == state and policy in known[1]:
            return known[1][policy]
        fixed = await self.background.fix(self.request(document), policy)
        if self.workspace.get_text_document(uri).version != version:
            return None
        if generation == self.generation:
            known = self.fixes.get(uri)  # another request may have started this version's table meanwhile
            if known is None or known[0] != state:
                known = self.fixes[uri] = (state, {})
            known[1][policy] = fixed
        return fixed

    # -- conversions --------------------------------------------------------------------------------

    def diagnostics(self, document, findings) -> list[lsp.Diagnostic]:
        lines = document.lines  # pygls splits the text on every access: once for all findings
        return [self.diagnostic(document, finding, lines) for finding in findings]

    def diagnostic(self, document, finding: Finding, lines=None) -> lsp.Diagnostic:
        rule = rule_by_code(finding.code)
        module_file = Path(__import__(rule.__module__, fromlist=["_"]).__file__)
        start, end = (finding.start.line - 1, finding.start.column - 1), (finding.end.line - 1, finding.end.column - 1)
        return lsp.Diagnostic(
            range=self.client_range(document, start, end, lines),
            message=finding.message,
            severity=lsp.DiagnosticSeverity.Warning,
            code=finding.code,
            code_description=lsp.CodeDescription(href=module_file.as_uri()),
            source="devfix",
            data={"fixable": finding.fix_safety is not None, "line": finding.start.line, "column": finding.start.column},
        )

    def client_range(self, document, start: tuple[int, int], end: tuple[int, int], lines=None) -> lsp.Range:
        lines = document.lines if lines is None else lines
        codec = document.position_codec
        return lsp.Range(
            start=codec.position_to_client_units(lines, ServerTextPosition(*start)),
            end=codec.position_to_client_units(lines, ServerTextPosition(*end)),
        )

    def workspace_edit(self, uri: str, edits: list[TextEdit]) -> lsp.WorkspaceEdit:
        document = self.workspace.get_text_document(uri)
        lines = document.lines
        text_edits = [lsp.TextEdit(range=self.client_range(document, edit.start, edit.end, lines), new_text=edit.new_text) for edit in edits]
        return lsp.WorkspaceEdit(changes={uri: text_edits})

    def supports_pull(self) -> bool:
        capabilities = self.client_capabilities.text_document
        return capabilities is not None and capabilities.diagnostic is not None

    def resolves_edits(self) -> bool:
        """Does the client fetch a code action's edit with codeAction/resolve?"""
        text_document = self.client_capabilities.text_document
        code_action = text_document.code_action if text_document is not None else None
        support = code_action.resolve_support if code_action is not None else None
        return support is not None and "edit" in support.properties

    def supports_refresh(self) -> bool:
        """Can the server ask a pulling client to pull again (after the full analysis)?"""
        workspace = self.client_capabilities.workspace
        return bool(workspace is not None and workspace.diagnostics is not None and workspace.diagnostics.refresh_support)

    def forget(self) -> None:
        """Settings changed: nothing computed so far holds."""
        self.generation += 1
        self.analyses.clear()
        self.notebooks.forget()
        self.fixes.clear()
        self.published.clear()
        self.running.clear()
        for quick in self.quick.values():
            quick.forget()


server = DevfixLanguageServer()


def is_python(document) -> bool:
    """Python by its language id; without one (None or "", as some clients send), by its extension."""
    if document.language_id:
        return document.language_id == "python"
    return document.uri.endswith(PYTHON_SUFFIXES)


# -- lifecycle and document sync --------------------------------------------------------------------


@server.feature(lsp.INITIALIZE)
def initialize(ls: DevfixLanguageServer, params: lsp.InitializeParams) -> None:
    ls.options = EditorOptions.from_json(params.initialization_options)
    ls.background.start()
    asyncio.ensure_future(asyncio.to_thread(_warm_up))


def _warm_up() -> None:
    """Quick diagnostics run the engine in this process: pay its first-run costs before the first
    keystroke does."""
    process(b"import torch\nx = torch.zeros(1).cuda()\n", "warm_up.py", ALL_RULES, ProjectIndex(), FixPolicy())


@server.feature(lsp.SHUTDOWN)
def shutdown(ls: DevfixLanguageServer, params: None) -> None:
    ls.background.shutdown()


@server.feature(lsp.WORKSPACE_DID_CHANGE_CONFIGURATION)
def did_change_configuration(ls: DevfixLanguageServer, params: lsp.DidChangeConfigurationParams) -> None:
    ls.options = EditorOptions.from_json(params.settings)
    ls.forget()
    if ls.supports_pull():
        ls.workspace_diagnostic_refresh(None)
    else:
        for uri in list(ls.workspace.text_documents):
            if lsp_notebooks.notebook_of(ls, uri) is None:  # a cell: its notebook's analysis publishes it
                schedule_publish(ls, uri, quick_delay=None)
        for uri in list(ls.workspace.notebook_documents):
            lsp_notebooks.schedule_publish(ls, uri)


@server.feature(lsp.TEXT_DOCUMENT_DID_OPEN)
def did_open(ls: DevfixLanguageServer, params: lsp.DidOpenTextDocumentParams) -> None:
    schedule_publish(ls, params.text_document.uri, quick_delay=None)


@server.feature(lsp.TEXT_DOCUMENT_DID_CHANGE)
def did_change(ls: DevfixLanguageServer, params: lsp.DidChangeTextDocumentParams) -> None:
    schedule_publish(ls, params.text_document.uri, quick_delay=QUICK_DELAY_SECONDS)


@server.feature(lsp.TEXT_DOCUMENT_DID_SAVE)
def did_save(ls: DevfixLanguageServer, params: lsp.DidSaveTextDocumentParams) -> None:
    schedule_publish(ls, params.text_document.uri, quick_delay=0)


@server.feature(lsp.NOTEBOOK_DOCUMENT_DID_OPEN)
def did_open_notebook(ls: DevfixLanguageServer, params: lsp.DidOpenNotebookDocumentParams) -> None:
    lsp_notebooks.schedule_publish(ls, params.notebook_document.uri)


@server.feature(lsp.NOTEBOOK_DOCUMENT_DID_CHANGE)
def did_change_notebook(ls: DevfixLanguageServer, params: lsp.DidChangeNotebookDocumentParams) -> None:
    lsp_notebooks.schedule_publish(ls, params.notebook_document.uri)


@server.feature(lsp.NOTEBOOK_DOCUMENT_DID_CLOSE)
def did_close_notebook(ls: DevfixLanguageServer, params: lsp.DidCloseNotebookDocumentParams) -> None:
    lsp_notebooks.close(ls, params.notebook_document.uri, [cell.uri for cell in params.cell_text_documents])


@server.feature(lsp.TEXT_DOCUMENT_DID_CLOSE)
def did_close(ls: DevfixLanguageServer, params: lsp.DidCloseTextDocumentParams) -> None:
    uri = params.text_document.uri
    for table in (ls.analyses, ls.quick, ls.published, ls.running, ls.fixes):
        table.pop(uri, None)
    pending = ls.pending.pop(uri, None)
    if pending is not None:
        pending.cancel()
    if not ls.supports_pull():
        ls.text_document_publish_diagnostics(lsp.PublishDiagnosticsParams(uri=uri, diagnostics=[]))


def schedule_publish(ls: DevfixLanguageServer, uri: str, quick_delay: float | None) -> None:
    """Push diagnostics (for clients without pull): quick ones after `quick_delay` (None: none),
    the full analysis after a pause in typing. A newer change cancels the older computation."""
    if not ls.supports_pull():
        _replace_pending(ls, uri, publish_later(ls, uri, quick_delay))


def _replace_pending(ls: DevfixLanguageServer, uri: str, work) -> None:
    """Run `work` for the document, cancelling what was pending for it (an older version's)."""
    previous = ls.pending.pop(uri, None)
    if previous is not None:
        previous.cancel()
    ls.pending[uri] = asyncio.ensure_future(work)


async def publish_later(ls: DevfixLanguageServer, uri: str, quick_delay: float | None) -> None:
    if quick_delay is not None:
        await asyncio.sleep(quick_delay)
        if _publish(ls, uri, await asyncio.to_thread(ls.quick_analyse, uri)):
            await asyncio.sleep(FULL_DELAY_SECONDS)
    _publish(ls, uri, await ls.analyse(uri))


def _publish(ls: DevfixLanguageServer, uri: str, analysis: Analysis | None) -> bool:
    """Publish `analysis` unless the document moved on since or the same was published already."""
    document = ls.workspace.get_text_document(uri)
    if analysis is None or analysis.version != document.version or analysis.text != document.source:
        return False
    shown = ls.published.get(uri)
    if shown is None or shown.version != analysis.version or shown.findings != analysis.findings:
        diagnostics = ls.diagnostics(document, analysis.findings)
        ls.text_document_publish_diagnostics(lsp.PublishDiagnosticsParams(uri=uri, diagnostics=diagnostics, version=analysis.version))
    ls.published[uri] = analysis
    return True


@server.feature(
    lsp.TEXT_DOCUMENT_DIAGNOSTIC,
    lsp.DiagnosticOptions(identifier="devfix", inter_file_dependencies=False, workspace_diagnostics=False),
)
async def pull_diagnostics(ls: DevfixLanguageServer, params: lsp.DocumentDiagnosticParams) -> lsp.DocumentDiagnosticReport:
    """A client that accepts a refresh gets quick diagnostics first and is asked to pull again
    when the full analysis differs. One that does not (Neovim 0.11, which pulls again neither on
    save nor on entering the buffer) gets the full analysis unless the quick one is exact: what it
    shows must never wait for a pull that will not come."""
    uri = params.text_document.uri
    notebook = lsp_notebooks.notebook_of(ls, uri)
    if notebook is not None:
        return lsp.RelatedFullDocumentDiagnosticReport(items=await lsp_notebooks.cell_diagnostics(ls, notebook, uri))
    document = ls.workspace.get_text_document(uri)
    analysis = await asyncio.to_thread(ls.quick_analyse, uri)
    if analysis is not None and not analysis.exact:
        if ls.supports_refresh():
            _replace_pending(ls, uri, _full_analysis_later(ls, uri, analysis))
        else:
            analysis = None
    if analysis is None:
        analysis = await ls.analyse(uri)
    items = [] if analysis is None else ls.diagnostics(document, analysis.findings)
    return lsp.RelatedFullDocumentDiagnosticReport(items=items)


async def _full_analysis_later(ls: DevfixLanguageServer, uri: str, quick: Analysis) -> None:
    """After a pause in typing; asks the client to pull again if the quick answer was wrong."""
    await asyncio.sleep(FULL_DELAY_SECONDS)
    analysis = await ls.analyse(uri)
    differs = analysis is not None and analysis.version == quick.version and analysis.findings != quick.findings
    if differs and ls.supports_refresh():
        ls.workspace_diagnostic_refresh(None)


# -- code actions ---------------------------------------------------------------------------------------


@server.feature(
    lsp.TEXT_DOCUMENT_CODE_ACTION,
    lsp.CodeActionOptions(code_action_kinds=[lsp.CodeActionKind.QuickFix, FIX_ALL_KIND], resolve_provider=True),
)
async def code_action(ls: DevfixLanguageServer, params: lsp.CodeActionParams) -> list[lsp.CodeAction]:
    """Quick fixes and disable comments for the findings in the range, and fix-all. Fix edits are
    computed in the worker: on resolve when the client supports it, else before answering."""
    uri = params.text_document.uri
    notebook = lsp_notebooks.notebook_of(ls, uri)
    if notebook is not None:
        actions = await lsp_notebooks.code_actions(ls, notebook, params)
        return await _with_edits(ls, [action for action in actions if _wanted(action.kind, params.context.only)])
    analysis = await ls.analyse(uri)
    document = ls.workspace.get_text_document(uri)
    if analysis is None or not analysis.parses or analysis.text != document.source:
        return []
    settings = ls.settings_for(document.path or "untitled.py")
    actions: list[lsp.CodeAction] = []
    lines = document.lines
    for finding in analysis.findings:
        diagnostic = ls.diagnostic(document, finding, lines)
        if not overlaps(diagnostic.range, params.range):
            continue
        if offers_fix(finding, settings.unsafe_fixes):
            actions.append(quick_fix(finding, diagnostic, {"uri": uri, "version": document.version}, finding.start.line))
        actions.append(disable_for_line(ls, uri, document, finding, diagnostic))
    if any(f.fix_safety is not None for f in analysis.findings):
        actions.append(fix_all({"uri": uri, "version": document.version}))
    return await _with_edits(ls, [action for action in actions if _wanted(action.kind, params.context.only)])


async def _with_edits(ls: DevfixLanguageServer, actions: list[lsp.CodeAction]) -> list[lsp.CodeAction]:
    """The actions with their edits for an editor that cannot resolve them later. Fix-all is then
    the `devfix.applyAutofix` command instead: its edit (every fix, to a fixed point) costs as much
    as the rest together, and such an editor (eglot 1.9) would wait for it each time it lists the
    actions at the cursor."""
    if not ls.resolves_edits():
        for action in actions:
            if action.kind == FIX_ALL_KIND:
                target = action.data.get("notebook") or action.data["uri"]
                action.command = lsp.Command(title=action.title, command=APPLY_AUTOFIX_COMMAND, arguments=[target])
            elif action.edit is None:
                action.edit = await _fix_edit(ls, action.data)
    return actions


@server.feature(lsp.CODE_ACTION_RESOLVE)
async def resolve_code_action(ls: DevfixLanguageServer, action: lsp.CodeAction) -> lsp.CodeAction:
    data = action.data
    if action.edit is None and isinstance(data, dict) and (isinstance(data.get("uri"), str) or isinstance(data.get("notebook"), str)):
        action.edit = await _fix_edit(ls, data)
    return action


@server.command(APPLY_AUTOFIX_COMMAND)
async def apply_autofix(ls: DevfixLanguageServer, *arguments: Any) -> None:
    uri = _uri_argument(arguments)
    if uri is None:
        return
    notebook = lsp_notebooks.notebook_of(ls, uri)
    if notebook is not None:
        edit = await _fix_edit(ls, {"notebook": notebook.uri, "version": notebook.version})
    else:
        edit = await _fix_edit(ls, {"uri": uri, "version": ls.workspace.get_text_document(uri).version})
    if edit.changes:
        await ls.workspace_apply_edit_async(lsp.ApplyWorkspaceEditParams(edit=edit, label="devfix: fix all"))


async def _fix_edit(ls: DevfixLanguageServer, data: dict) -> lsp.WorkspaceEdit:
    """Minimal edits for one finding's fix (`data` names its code and start) or for every allowed
    fix; no edits when the document changed since the action was offered."""
    if "notebook" in data:
        return await lsp_notebooks.fix_edit(ls, data)
    uri = data["uri"]
    document = ls.workspace.get_text_document(uri)
    if not ls.analysable(document):
        return lsp.WorkspaceEdit(changes={})
    policy = fix_policy(data, ls.settings_for(document.path or "untitled.py"))
    source = document.source
    fixed = await ls.fixed_text(uri, data.get("version"), policy)
    return ls.workspace_edit(uri, minimal_edits(source, fixed) if fixed is not None else [])


def _wanted(kind: str | None, only: list[str] | None) -> bool:
    if not only:
        return True
    return kind is not None and any(kind == wanted or kind.startswith(f"{wanted}.") for wanted in only)


def _uri_argument(arguments: tuple) -> str | None:
    for argument in arguments:
        if isinstance(argument, str):
            return argument
        if isinstance(argument, dict) and isinstance(argument.get("uri"), str):
            return argument["uri"]
        if isinstance(argument, (list, tuple)):
            found = _uri_argument(tuple(argument))
            if found:
                return found
    return None


def serve() -> None:
    try:
        server.start_io()
    finally:
        server.background.shutdown()
