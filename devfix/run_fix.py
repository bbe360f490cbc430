"""`devfix run --fix`: run the program under simulated CUDA (or on the real GPU); at each device
error choose one edit (a static rule's fix at the lines the error names, else one made from the
run's provenance), apply it in memory and run again, until the program ends. Then run the fixed
program on the CPU too and compare what it printed (and its exit status) with the original
program's CPU run: the edits are proven when both machines run the fixed program to the same output.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
from pathlib import Path

from devfix.analysis.project import ProjectIndex
from devfix.analysis.torch_api import LIST_FILLERS
from devfix.codemods import ALL_RULES
from devfix.engine import process
from devfix.fix_policy import FixPolicy
from devfix.program import Program
from devfix.run_rounds import RoundResult, run_round

DEVICE_NAME = re.compile(r"\b(cuda(:\d+)?|cpu)\b")
TENSOR_DEVICE = re.compile(r", device='(cuda|cpu)(:\d+)?'")  # in a tensor's repr: only a CUDA tensor shows it
DEVICE_REPR = re.compile(r"device\(type='(cuda|cpu)'(, index=\d+)?\)")  # torch.device('cuda:0') prints its index
NUMBER = re.compile(r"-?\d+(\.\d+)?([eE][-+]?\d+)?")
CREATED_BY = re.compile(r"^created on cpu by torch\.(\w+)$")


@dataclass(frozen=True)
class Edit:
    path: Path
    before: str
    after: str
    cured: str  # the error this edit made go away
    how: str  # "DF004 (static rule)" or what the provenance showed
    answered: tuple[tuple[str, int, str], ...] = ()  # where that error's CPU operands came from (path, line, event)


@dataclass
class FixRun:
    edits: list[Edit] = field(default_factory=list)
    proven: bool = False
    failures: list[str] = field(default_factory=list)
    original_cpu: RoundResult | None = None
    final_cuda: RoundResult | None = None
    final_cpu: RoundResult | None = None

    def texts(self) -> dict[Path, tuple[str, str]]:
        """Each edited file: its text on disk and its text after every edit."""
        files: dict[Path, tuple[str, str]] = {}
        for edit in self.edits:
            first = files.get(edit.path, (edit.before, edit.before))[0]
            files[edit.path] = (first, edit.after)
        return files


def fix_by_running(
    program: Program, argv: list[str], max_rounds: int = 10, static: bool = True, timeout: float | None = None, allow_numbers: bool = False,
    machine: str = "sim",
) -> FixRun:
    """`machine` is the CUDA machine: "sim" (simulated CUDA) or "cuda" (the real GPU)."""
    run = FixRun()
    texts: dict[Path, str] = {}
    run.original_cpu = run_round(program, argv, {}, "cpu", timeout)
    tried: set[tuple[str, str]] = set()
    for _ in range(max_rounds):
        cuda = run_round(program, argv, texts, machine, timeout)
        failing = cuda if not cuda.finished else None
        cpu = None
        if failing is None:
            cpu = run_round(program, argv, texts, "cpu", timeout)
            failing = cpu if cpu.device_error else None
        if failing is None:
            run.final_cuda, run.final_cpu = cuda, cpu
            break
        if not (failing.device_error or failing.error_type == "SimulatorUnsupported"):  # the latter: a static fix may remove it
            run.failures.append(f"the program failed with an error devfix does not fix: {failing.headline()}")
            run.final_cuda = cuda
            return run
        if run.edits and _did_not_cure(run.edits[-1], failing):
            undone = run.edits.pop()  # stays in `tried`: the next choice is another candidate
            texts[undone.path] = undone.before
        edit = choose_edit(failing, texts, static, tried)
        if edit is None:
            run.failures.append(f"no edit found for {failing.headline()}")
            run.final_cuda = cuda
            return run
        texts[edit.path] = edit.after
        run.edits.append(edit)
    else:
        run.failures.append(f"still failing after {max_rounds} rounds (--max-rounds)")
        return run
    if run.edits:  # an unchanged program proves nothing new (and an unseeded one prints new numbers each run)
        run.failures += _compare(run, allow_numbers)
    run.proven = not run.failures
    return run


def _did_not_cure(edit: Edit, result: RoundResult) -> bool:
    """The error is the one the edit answered, at the same line, and a CPU operand still comes
    from a line the edit changed (`device=reward_batch.device` where `reward_batch` is on the CPU
    too): the edit put the value nowhere new, and is taken back. Not when that operand is another
    value than the one answered (`bce(D(real), torch.ones(n, 1)) + bce(D(fake), torch.zeros(n, 1))`:
    after the `ones` got its device, the `zeros` of the same line fails next)."""
    if result.headline() != edit.cured:
        return False
    changed = _changed_lines(edit.before, edit.after)
    return any(
        operand.device == "cpu" and operand.origin is not None and Path(operand.origin[0]).resolve() == edit.path
        and operand.origin[1] in changed and (not edit.answered or operand.origin in edit.answered)
        for operand in result.operands
    )


def _cpu_origins(result: RoundResult) -> tuple[tuple[str, int, str], ...]:
    """Where the failing call's CPU operands came from (what an edit for it answers)."""
    return tuple(operand.origin for operand in result.operands if operand.device == "cpu" and operand.origin is not None)


def _changed_lines(before: str, after: str) -> set[int]:
    """The lines of `after` (1-based) that are not in `before` where they stand."""
    import difflib

    matcher = difflib.SequenceMatcher(None, before.splitlines(), after.splitlines(), autojunk=False)
    return {line + 1 for tag, _, _, start, end in matcher.get_opcodes() if tag != "equal" for line in range(start, end)}


def choose_edit(result: RoundResult, texts: dict[Path, str], static: bool, tried: set) -> Edit | None:
    """The static finding's fix at a line the error names, else an edit from the provenance, else
    a static finding's fix where a name the traceback reads was bound."""
    places = _places(result, texts)
    if static:
        edit = _static_edit(result, places, texts, tried)
        if edit is not None:
            return edit
    edit = _provenance_edit(result, texts, tried)
    if edit is None and static:  # last: a finding where a name the traceback's lines read was bound (`np.mean(losses)`)
        edit = _static_edit(result, _bindings_read(result, texts), texts, tried)
    return edit


def _bindings_read(result: RoundResult, texts: dict[Path, str]) -> list[tuple[Path, int]]:
    """The lines, before each line of the traceback, that bind a name that line reads
    (`losses = [trainer.step(b) for b in loader]` for `np.mean(losses)`), then the lines of the
    file's functions whose results those bindings take (`history += train(model, loader)` for
    `plt.plot(history)`: what `train` appended)."""
    places, called = [], []
    for frame in result.frames:
        text = _text(frame.path, texts)
        for name in names_read_on(text, frame.line) if text is not None else ():
            lines = [line for line in binding_lines(text, name) if line < frame.line]
            places += [(frame.path, line) for line in lines]
            called += [(frame.path, line) for line in function_lines_called_on(text, lines)]
    return list(dict.fromkeys(places + called))


def function_lines_called_on(text: str, lines: list[int]) -> list[int]:
    """The lines of the top-level functions of the file that the statements starting on `lines`
    call for the value they bind (`history += train(...)`, `y_pred, probs = collect(...)`)."""
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return []
    functions = {node.name: node for node in tree.body if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))}
    found = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.Assign, ast.AugAssign)) and node.lineno in lines and isinstance(node.value, ast.Call) \
                and isinstance(node.value.func, ast.Name) and node.value.func.id in functions:
            function = functions[node.value.func.id]
            found += range(function.lineno, (function.end_lineno or function.lineno) + 1)
    return sorted(set(found))


def _places(result: RoundResult, texts: dict[Path, str]) -> list[tuple[Path, int]]:
    """The lines the error names: where the operands were made or moved, where the variables that
    held them (and the module that holds a parameter) were bound, the other lines of the failing
    function that use those variables (`mask.cuda()` with its result thrown away), then the
    traceback's."""
    places = [(Path(operand.origin[0]).resolve(), operand.origin[1]) for operand in result.operands if operand.origin is not None]
    named = [(result.frames[0].path, operand.name) for operand in result.operands if operand.name and result.frames]
    named += [(Path(operand.owner[0]).resolve(), operand.owner[1]) for operand in result.operands if operand.owner]
    for path, name in named:
        text = _text(path, texts)
        places += [(path, line) for line in binding_lines(text, name)] if text is not None else []
    if result.frames:
        frame = result.frames[0]
        text = _text(frame.path, texts)
        for operand in result.operands:
            places += [(frame.path, line) for line in lines_using(text, operand.name, frame.line)] if text and operand.name else []
    places += [(frame.path, frame.line) for frame in result.frames]
    for frame in result.frames:  # last: the loops around the traceback's lines (a batch they received)
        text = _text(frame.path, texts)
        places += [(frame.path, line) for line in enclosing_loop_lines(text, frame.line)] if text is not None else []
    return list(dict.fromkeys(places))


def enclosing_loop_lines(text: str, line: int) -> list[int]:
    """The `for` statements whose body holds `line`, innermost first."""
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return []
    loops = [node for node in ast.walk(tree) if isinstance(node, ast.For) and node.body[0].lineno <= line <= (node.end_lineno or 0)]
    return [loop.lineno for loop in sorted(loops, key=lambda loop: -loop.lineno)]


def lines_using(text: str, name: str, line: int) -> list[int]:
    """The lines of the function around `line` (or of the module's top level) that read `name`."""
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return []
    functions = [
        node for node in ast.walk(tree)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.lineno <= line <= (node.end_lineno or 0)
    ]
    scope = min(functions, key=lambda node: (node.end_lineno or 0) - node.lineno) if functions else tree
    return sorted({node.lineno for node in ast.walk(scope) if isinstance(node, ast.Name) and node.id == name})


def names_read_on(text: str, line: int) -> list[str]:
    """The names the statement starting on `line` reads, in order."""
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return []
    statements = [node for node in ast.walk(tree) if isinstance(node, ast.stmt) and node.lineno == line]
    names = [node.id for statement in statements[-1:] for node in ast.walk(statement) if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load)]
    return list(dict.fromkeys(names))


def binding_lines(text: str, name: str) -> list[int]:
    """The lines of the statements that assign `name` anywhere in the file, or fill the list it
    holds (`losses.append(loss)`: what `np.array(losses)` then reads was made there)."""
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return []
    lines = []
    for node in ast.walk(tree):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, (ast.AnnAssign, ast.AugAssign, ast.For)) else []
        if any(isinstance(leaf, ast.Name) and leaf.id == name for target in targets for leaf in ast.walk(target)):
            lines.append(node.lineno)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in LIST_FILLERS \
                and isinstance(node.func.value, ast.Name) and node.func.value.id == name:
            lines.append(node.lineno)
    return sorted(set(lines))


def _text(path: Path, texts: dict[Path, str]) -> str | None:
    if path in texts:
        return texts[path]
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None


def _static_edit(result: RoundResult, places, texts: dict[Path, str], tried: set) -> Edit | None:
    project = ProjectIndex({str(path): text for path, text in texts.items()})
    for path in dict.fromkeys(path for path, _ in places):
        text = _text(path, texts)
        if text is None:
            continue
        lines = {line for place, line in places if place == path}
        findings = process(text.encode(), str(path), ALL_RULES, project).findings
        for finding in findings:
            if finding.fix_safety is None or finding.start.line not in lines or (str(path), f"{finding.code}:{finding.start}") in tried:
                continue
            tried.add((str(path), f"{finding.code}:{finding.start}"))
            policy = FixPolicy(apply=True, unsafe=True, only=(finding.code, finding.start))
            fixed = process(text.encode(), str(path), ALL_RULES, project, policy)
            if fixed.changed:
                return Edit(path, text, fixed.fixed.decode(), result.headline(), f"{finding.code} (static rule): {finding.message}",
                            _cpu_origins(result))
    return None


def _provenance_edit(result: RoundResult, texts: dict[Path, str], tried: set) -> Edit | None:
    from devfix import provenance_fixes

    frame = result.frames[0] if result.frames else None
    candidates = []  # (file, line, what the edit does, the edit)
    if frame is not None and "to numpy" in result.message:
        candidates.append((frame.path, frame.line, "`.cpu()` before `.numpy()`",
                           lambda text, path: provenance_fixes.numpy_on_host(text, path, frame.line)))
    if frame is not None and "Torch not compiled with CUDA" in result.message:
        candidates.append((frame.path, frame.line, "`.to(device)` instead of `.cuda()`",
                           lambda text, path: provenance_fixes.cuda_call_portable(text, path, frame.line)))
    devices = {operand.device.split(":")[0] for operand in result.operands}
    if devices == {"cpu", "cuda"}:
        for operand in result.operands:
            if operand.device != "cpu":
                continue
            if operand.owner is not None:
                owner_path, owner = Path(operand.owner[0]).resolve(), operand.owner[1]
                candidates.append((owner_path, 0, f"the module `{owner}` moved to the device where it is built",
                                   lambda text, path, owner=owner: provenance_fixes.module_on_device(text, path, owner)))
            if operand.origin is None:
                continue
            path, line, event = Path(operand.origin[0]).resolve(), operand.origin[1], operand.origin[2]
            created = CREATED_BY.match(event)
            if created is not None and operand.owner is None:
                function = created.group(1)
                device = _parameter_device(result, path, line, texts)
                candidates.append((path, line, f"placed on the device where `torch.{function}` made the CPU tensor",
                                   lambda text, path, line=line, function=function, device=device:
                                   provenance_fixes.factory_on_device(text, path, line, function, device)))
            if operand.name is not None:
                device = _parameter_device(result, path, line, texts)
                candidates.append((path, line, f"`{operand.name}` moved to the device where the loop receives it",
                                   lambda text, path, line=line, name=operand.name, device=device:
                                   provenance_fixes.loop_variable_on_device(text, path, line, name, device)))
    for path, line, how, make in candidates:
        text = _text(path, texts)
        key = (str(path), line, how)
        if text is None or key in tried:
            continue
        after = make(text, str(path))
        if after is not None:
            tried.add(key)
            return Edit(path, text, after, result.headline(), f"from the run: {how}", _cpu_origins(result))
    return None


def _parameter_device(result: RoundResult, path: Path, line: int, texts: dict[Path, str]) -> str | None:
    """`logits.device` when `line` lies in a function of the traceback whose parameter `logits`
    held a tensor on the device (or a Module there: `next(model.parameters()).device`), and the
    function never rebinds that name."""
    text = _text(path, texts)
    for parameter in result.device_parameters:
        if Path(parameter.path).resolve() != path or not parameter.first_line <= line <= parameter.last_line or text is None:
            continue
        rebound = [bound for bound in binding_lines(text, parameter.name) if parameter.first_line <= bound <= parameter.last_line]
        if not rebound:
            return parameter.expression
    return None


def _compare(run: FixRun, allow_numbers: bool) -> list[str]:
    """On both machines the fixed program must print what the original printed on the CPU (or,
    when the original cannot run there, what the fixed program prints on the CPU), and end with
    the same status. Device names may differ ("Using cuda device"). Under pytest what counts is
    each test's outcome (its report prints timings)."""
    cuda, cpu, original = run.final_cuda, run.final_cpu, run.original_cpu
    if cpu is None or cuda is None:
        return ["the fixed program did not run on both machines"]
    if not cpu.finished:
        return [f"the fixed program fails on the CPU: {cpu.headline()}"]
    reference, named = (original, "the original on the CPU") if original is not None and original.finished else (cpu, "the fixed program on the CPU")
    expected = _comparable(reference, allow_numbers)
    return [
        f"the fixed program {where} {'ends its tests' if outcome.outcomes else 'prints'} differently from {named}"
        for where, outcome in (("on the CUDA machine", cuda), ("on the CPU", cpu))
        if outcome is not reference and _comparable(outcome, allow_numbers) != expected
    ]


def _comparable(result: RoundResult, allow_numbers: bool) -> tuple:
    if result.outcomes:
        return result.exit_code, result.outcomes
    output = DEVICE_NAME.sub("<device>", DEVICE_REPR.sub("device(<device>)", TENSOR_DEVICE.sub("", result.stdout)))
    return result.exit_code, NUMBER.sub("<number>", output) if allow_numbers else output


def report_json(run: FixRun, program: Program) -> str:
    """`--report`: what was fixed, why, and whether it is proven."""
    import json

    return json.dumps({
        "program": program.display(),
        "proven": run.proven,
        "failures": run.failures,
        "edits": [{"file": str(edit.path), "cured": edit.cured, "how": edit.how} for edit in run.edits],
        "files": {str(path): {"before": before, "after": after} for path, (before, after) in run.texts().items()},
    }, indent=2) + "\n"
