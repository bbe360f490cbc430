"""Which classes are `nn.Module`s, across the files of a run.

Model code often lives in another file than the script that misuses it, and base classes in yet
another. The index reads files lazily with `ast` (cheap, no libcst) and follows imports, so
`from models.net import Net` in a training script resolves to the class in `models/net.py`.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from devfix import python_parser
from devfix.analysis.device_parameters import takes_any_device
from devfix.analysis.forward_items import ClassResolver, host_item_positions
from devfix.analysis.forward_lengths import SUBMODULE_DEPTH, Packing, forward_packing_parameters
from devfix.analysis.host_helpers import HelperSummary, function_in_text, summarise_in_text
from devfix.analysis.host_instances import kept_by_locals, program_device_names
from devfix.analysis.host_moving_helpers import parameters_moved_to_host
from devfix.analysis.host_sinks import HostParameters, parameters_only_given_to_host
from devfix.analysis.importers import ForeignCall, calls_in_tree, neighbour_files, passes_a_device_value
from devfix.analysis.imports import BUILTIN_NAMES, ImportTable, may_be_project_name
from devfix.analysis.keeping_callees import KeepingUses
from devfix.analysis.kinds import DATALOADER_KINDS, Kind
from devfix.analysis.returned_modules import returns_built_module
from devfix.analysis.returned_moves import ReturnedMove, returned_listed_moves, returned_move
from devfix.analysis.torch_api import HOST_LIBRARY_MODULES, places_devices
from devfix.analysis.unmoved_object_models import constructions_give_unmoved_modules
from devfix.analysis.values import PassedKinds, forward_calls_passed, method_calls_passed, passed_to, returned_kind
from devfix.analysis.worker_placements import gpu_moving_getitem

if TYPE_CHECKING:
    from devfix.analysis.method_inputs import MethodInputs  # libcst: imported only when asked
    from devfix.analysis.parameter_meetings import FunctionMeetings

MODULE_BASE_SUFFIXES = ("LightningModule", "PreTrainedModel")
MODULE_PACKAGES = ("torch.nn.", "torchmetrics.", "torchvision.models.", "torch_geometric.nn.")  # their classes are Modules
HOST_TEXT_MARKERS = (*HOST_LIBRARY_MODULES, ".numpy(")  # a module without any of these hands nothing to numpy
NOT_MODULES = {"torch.nn.Parameter", "torch.nn.parameter.Parameter", "torch.nn.Buffer"}


@dataclass
class FileClasses:
    """Class name → base names (qualified through the file's imports), and the file's imports."""

    classes: dict[str, tuple[str, ...]] = field(default_factory=dict)
    imports: dict[str, str] = field(default_factory=dict)


class ProjectIndex:
    """Lazily parsed class facts; `sources` holds texts newer than the disk (an editor buffer)."""

    def __init__(self, sources: dict[str, str] | None = None) -> None:
        self._sources = dict(sources or {})
        self._files: dict[str, FileClasses | None] = {}
        self._placements: dict[str, bool] = {}  # module file → does it place anything on a device
        self._helpers: dict[tuple[str, str], HelperSummary | None] = {}  # (module file, function) → its summary
        self._module_files: dict[tuple[str, str], tuple[dict[str, bool], Path | None]] = {}  # (directory, module) → where found
        self._foreign_calls: dict[tuple[str, str], tuple[list[str], list[ForeignCall] | None]] = {}  # (file, function) → (read, calls)
        self._returned_kinds: dict[tuple[str, str], Kind] = {}  # (module file, function) → what it returns
        self._passed: dict[tuple[str, str, str], list[PassedKinds] | None] = {}  # (caller, module file, class) → its calls there
        self._method_calls: dict[tuple[str, str], list[PassedKinds] | None] = {}  # (caller, method) → its calls there
        self._forward_calls: dict[tuple[str, str, str], list[PassedKinds] | None] = {}  # (caller, module file, class) → its instances' calls
        self._meetings: dict[tuple[str, str], FunctionMeetings | None] = {}  # → its parameters that meet
        self._method_inputs: dict[tuple[str, str], MethodInputs | None] = {}  # (module file, class) → what reaches its layers
        self._class_methods: dict[tuple[str, str], frozenset[str]] = {}  # (module file, class) → its methods
        self._returned_moves: dict[tuple[str, str], ReturnedMove | None] = {}  # → what it moves and gives back
        self._returned_listed_moves: dict[tuple[str, str], ReturnedMove | None] = {}  # → the list of moves it gives back
        self._host_moved: dict[tuple[str, str], dict[int, str] | None] = {}  # → the parameters it leaves on the host
        self._returned_modules: dict[tuple[str, str], bool] = {}  # → it gives back a Module it built, unplaced
        self._host_parameters: dict[str, dict[str, HostReads]] = {}  # module file → its functions' parameters only handed to numpy
        self._device_takers: dict[tuple[str, str, str], bool] = {}  # (module file, function, parameter) → it takes any device
        self._packing: dict[tuple[str, str], Packing | None] = {}  # (module file, class) → its forward's packed-only parameters
        self._dataset_moves: dict[tuple[str, str], bool] = {}  # (module file, class) → its `__getitem__` moves items to the GPU
        self._keeping: dict[str, KeepingUses | None] = {}  # module file → what its functions and plain classes keep
        self._forward_items: dict[tuple[str, str], frozenset[int]] = {}  # (module file, class) → its forward's maybe-host items
        self._resident: dict[tuple[str, str], bool] = {}  # (module file, class) → a Dataset keeping its tensors on a device
        self._parameter_free: dict[tuple[str, str], bool] = {}  # (module file, class) → a Module proven to hold no parameter
        self.consulted: dict[str, bool] = {}  # path → it existed: what the answers since `take_consulted` rest on

    def read_as(self, file: str, text: str) -> None:
        """Answer for `file` from `text` instead of its bytes (a notebook: the program of its cells)."""
        key = str(Path(file).resolve())
        self._sources[key] = text
        self._files.pop(key, None)
        self._placements.pop(key, None)
        self._helpers = {found: summary for found, summary in self._helpers.items() if found[0] != key}
        self._module_files = {}  # a file new to the run may now be found
        self._foreign_calls = {}
        self._returned_kinds = {}
        self._passed = {}
        self._forward_calls = {}
        self._meetings = {found: meetings for found, meetings in self._meetings.items() if found[0] != key}
        self._method_inputs = {found: inputs for found, inputs in self._method_inputs.items() if found[0] != key}
        self._class_methods = {found: methods for found, methods in self._class_methods.items() if found[0] != key}
        self._returned_moves = {found: move for found, move in self._returned_moves.items() if found[0] != key}
        self._returned_listed_moves = {found: move for found, move in self._returned_listed_moves.items() if found[0] != key}
        self._host_moved = {found: moved for found, moved in self._host_moved.items() if found[0] != key}
        self._returned_modules = {}  # its answers rest on the Module classes of other files too
        self._host_parameters.pop(key, None)
        self._device_takers = {found: takes for found, takes in self._device_takers.items() if found[0] != key}
        self._packing = {}  # its answers follow submodules into other files
        self._dataset_moves = {found: moves for found, moves in self._dataset_moves.items() if found[0] != key}
        self._keeping.pop(key, None)
        self._forward_items = {}  # its answers follow submodules into other files
        self._resident = {found: kept for found, kept in self._resident.items() if found[0] != key}
        self._parameter_free = {found: free for found, free in self._parameter_free.items() if found[0] != key}

    def take_consulted(self) -> dict[str, bool]:
        """The files the answers since the last call read, and the places where a module was looked
        for and not found (a result cache is valid while they stay so); then starts afresh."""
        consulted, self.consulted = self.consulted, {}
        return consulted

    def is_module_class(self, from_file: str, qualified_name: str) -> bool | None:
        """True or False when known; None when devfix cannot tell (then a rule must not guess)."""
        return self._is_module(Path(from_file).resolve(), qualified_name, set())

    def imported_module_places_devices(self, from_file: str, imported: str) -> bool:
        """Does the local module that `imported` (`models.net.Net`, `helpers`) comes from move
        anything to a device? False when it is not a file of the project (torch, numpy, ...)."""
        target = self._project_module(Path(from_file).resolve(), imported)
        if target is None:
            return False
        if str(target) not in self._placements:  # each module is read once per run
            self._placements[str(target)] = places_devices(self._text(target))
        return self._placements[str(target)]

    def is_project_name(self, from_file: str, imported: str) -> bool:
        """Does `imported` (`models.net.Net`, `.helpers.load`) come from a file of the project,
        one devfix can read (not torch, numpy, diffusers, ...)?"""
        return self._project_module(Path(from_file).resolve(), imported) is not None

    def _project_module(self, file: Path, imported: str) -> Path | None:
        """The file of the longest module prefix of `imported` that is a file of the project."""
        dots = imported[: len(imported) - len(imported.lstrip("."))]  # a relative import's level
        parts = imported[len(dots):].split(".")
        for end in range(len(parts), 0, -1):
            target = self._module_file(file, dots + ".".join(parts[:end]))
            if target is not None:
                return target
        return None

    def _class_file(self, file: Path, qualified_name: str, hops: int = 0) -> tuple[Path, str] | None:
        """(the project file, the class name) of `qualified_name` (`dataset.Points`) imported from
        `file`; through a package that imports it from one of its modules (`model_utils/__init__.py`:
        `from .rxn_model_morgan import ReactionModel_LWTemp`), up to three such hops."""
        owner, _, class_name = qualified_name.rpartition(".")
        target = self._module_file(file, owner) if owner else None
        if target is None:
            return None
        facts = self._facts(target) if hops < 3 else None
        if facts is not None and class_name not in facts.classes and class_name in facts.imports:
            return self._class_file(target, facts.imports[class_name], hops + 1)
        return target, class_name

    def imported_helper(self, from_file: str, qualified_name: str) -> HelperSummary | None:
        """What the top-level function `qualified_name` (`utils.causal_mask`) of a local module
        returns (`analysis.host_helpers`); None when it is no function of a file of the project."""
        key = self._local_function(from_file, qualified_name)
        if key is None:
            return None
        if key not in self._helpers:
            self._helpers[key] = summarise_in_text(self._text(Path(key[0])), key[1])
        self.consulted[key[0]] = True
        return self._helpers[key]

    def imported_returned_move(self, from_file: str, qualified_name: str) -> ReturnedMove | None:
        """What the top-level function `qualified_name` (`models.build_model`) of a local module
        moves and gives back (`analysis.returned_moves`); None when it gives back no move, or is
        no function of a file of the project."""
        return self._imported_function_summary(from_file, qualified_name, self._returned_moves, returned_move)

    def imported_returned_listed_moves(self, from_file: str, qualified_name: str) -> ReturnedMove | None:
        """What the top-level function `qualified_name` (`models.build_ensemble`) of a local module
        gives back when every `return` is a list of moves to one device (`analysis.returned_moves`);
        None otherwise, or when it is no function of a file of the project."""
        return self._imported_function_summary(from_file, qualified_name, self._returned_listed_moves, returned_listed_moves)

    def imported_parameters_moved_to_host(self, from_file: str, qualified_name: str) -> dict[int, str] | None:
        """The parameters the top-level function `qualified_name` (`helper_functions.plot_decision_boundary`)
        of a local module brings to the host in place (`analysis.host_moving_helpers`); None when it
        is no function of a file of the project."""
        return self._imported_function_summary(from_file, qualified_name, self._host_moved, parameters_moved_to_host)

    def _imported_function_summary(self, from_file: str, qualified_name: str, cache: dict, summarise):
        """`summarise(function, imports)` of the top-level function `qualified_name` of a local
        module, read once per run; None when it is no function of a file of the project."""
        key = self._local_function(from_file, qualified_name)
        if key is None:
            return None
        if key not in cache:
            found = function_in_text(self._text(Path(key[0])), key[1])
            cache[key] = summarise(*found) if found is not None else None
        self.consulted[key[0]] = True
        return cache[key]

    def imported_returns_built_module(self, from_file: str, qualified_name: str) -> bool:
        """The top-level function `qualified_name` (`models.build_model`) of a local module hands back
        a Module it built and left on the host (`analysis.returned_modules`): `return Net(n)`,
        with `Net` a Module class of that file or of what it imports, or `return make_net(n)` with
        `make_net` another such function of that file."""
        key = self._local_function(from_file, qualified_name)
        return key is not None and self._returns_built_module(key)

    def _returns_built_module(self, key: tuple[str, str]) -> bool:
        if key not in self._returned_modules:
            self._returned_modules[key] = False  # a function that calls itself ends here
            found = function_in_text(self._text(Path(key[0])), key[1])
            if found is not None:
                function, imports = found
                file = Path(key[0])

                def builds_module(call: ast.Call) -> bool:
                    if isinstance(call.func, ast.Name) and call.func.id not in imports.names:
                        local = call.func.id  # a class the file defines, or a function that returns one
                        return self._local_class(file, local, set()) is True or self._returns_built_module((key[0], local))
                    qualified = imports.qualify(call.func)
                    return qualified is not None and self._is_module(file, qualified, set()) is True

                self._returned_modules[key] = returns_built_module(function, imports, builds_module)
        self.consulted[key[0]] = True
        return self._returned_modules[key]

    def imported_meetings(self, from_file: str, qualified_name: str) -> FunctionMeetings | None:
        """The parameters of the top-level function `qualified_name` (`metrics.accuracy`) of a local
        module, the pairs of them it puts into one tensor operation, and those it feeds to one another
        (`analysis.parameter_meetings`); None when it is no function of a file of the project."""
        key = self._local_function(from_file, qualified_name)
        if key is None:
            return None
        if key not in self._meetings:
            from devfix.analysis.parameter_meetings import meetings_in_text  # libcst: only for a call that may need it

            self._meetings[key] = meetings_in_text(self._text(Path(key[0])), key[1])
        self.consulted[key[0]] = True
        return self._meetings[key]

    def imported_class_methods(self, from_file: str, qualified_name: str) -> frozenset[str]:
        """The methods the class `qualified_name` (`model.VAE`) of a local module defines (none when
        it is no class of a file of the project): DF004's screen, before `imported_method_inputs`."""
        found = self._class_file(Path(from_file).resolve(), qualified_name)
        if found is None:
            return frozenset()
        key = (str(found[0]), found[1])
        if key not in self._class_methods:
            parsed = self._parsed(found[0])
            classes = [node for node in parsed[0].body if isinstance(node, ast.ClassDef) and node.name == found[1]] if parsed else []
            self._class_methods[key] = frozenset(
                node.name for node in classes[0].body if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
            ) if len(classes) == 1 else frozenset()
        self.consulted[key[0]] = True
        return self._class_methods[key]

    def imported_method_inputs(self, from_file: str, qualified_name: str) -> MethodInputs | None:
        """Which parameters of each method of the class `qualified_name` (`model.VAE`) of a local
        module reach its layers (`analysis.method_inputs`); None when it is no class of a file of
        the project."""
        found = self._class_file(Path(from_file).resolve(), qualified_name)
        if found is None:
            return None
        key = (str(found[0]), found[1])
        if key not in self._method_inputs:
            from devfix.analysis.method_inputs import method_inputs_in_text  # libcst: only for a call that may need it

            self._method_inputs[key] = method_inputs_in_text(self._text(found[0]), found[1])
        self.consulted[key[0]] = True
        return self._method_inputs[key]

    def forward_host_items(self, from_file: str, qualified_name: str) -> frozenset[int]:
        """The positions of the tuple the `forward` of the class `qualified_name` (`hgraph.HierVAE`,
        or a class `from_file` defines) returns whose item may be no tensor
        (`analysis.forward_items`); empty when the class is not found in the project."""
        file = Path(from_file).resolve()
        found = self._class_file(file, qualified_name) if "." in qualified_name else self._class_here_or_starred(file, qualified_name)
        if found is None:
            return frozenset()
        key = (str(found[0]), found[1])
        if key not in self._forward_items:
            parsed = self._parsed(found[0]) if "forward" in self._text(found[0]) else None
            self._forward_items[key] = frozenset() if parsed is None else host_item_positions(parsed[0], found[1], self._class_resolver(found[0], parsed[1]))
        self.consulted[key[0]] = True
        return self._forward_items[key]

    def _class_here_or_starred(self, file: Path, class_name: str) -> tuple[Path, str] | None:
        """A class `file` defines, or one a `from hgraph import *` of it brings from the project."""
        facts = self._facts(file)
        if facts is None or class_name in facts.classes:
            return (file, class_name) if facts is not None else None
        parsed = self._parsed(file) if "*" in self._text(file) else None
        for node in parsed[0].body if parsed is not None else ():
            if isinstance(node, ast.ImportFrom) and any(alias.name == "*" for alias in node.names):
                found = self._class_file(file, "." * node.level + (node.module or "") + "." + class_name)
                inner = self._facts(found[0]) if found is not None else None
                if inner is not None and found[1] in inner.classes:
                    return found
        return None

    def _class_resolver(self, file: Path, imports: ImportTable) -> ClassResolver:
        """Finds a class as `file` writes it (`HierMPNDecoder`, imported there) in the project."""
        def resolve(written: str) -> tuple[ast.Module, str, ClassResolver | None] | None:
            head, dot, rest = written.partition(".")
            qualified = imports.names.get(head)
            if qualified is None:
                return None
            found = self._class_file(file, qualified + dot + rest)
            parsed = self._parsed(found[0]) if found is not None else None
            if parsed is None:
                return None
            self.consulted[str(found[0])] = True
            return parsed[0], found[1], self._class_resolver(found[0], parsed[1])

        return resolve

    def imported_host_parameters(self, from_file: str, qualified_name: str) -> HostParameters | None:
        """The top-level function `qualified_name` (`metrics.accuracy`) of a local module, with the
        parameters it only hands to numpy (`host_sinks.parameters_only_given_to_host`) as `fed`,
        but those DF008, run on that file, brings to the host there: read only by `.numpy()`, in
        a file that places nothing on a device and never uses the function itself, every call of
        which in the files beside it passes a value that may be on a device
        (`FileFacts.device_values_beside`). None when none is left. Each module is read once per run."""
        if not may_be_project_name(qualified_name):
            return None
        function = qualified_name.rpartition(".")[2]
        key = self._local_function(from_file, qualified_name)
        if key is None:
            return None
        if key[0] not in self._host_parameters:
            self._host_parameters[key[0]] = _host_parameters_of(self._text(Path(key[0])))
        self.consulted[key[0]] = True
        found = self._host_parameters[key[0]].get(function)
        if found is None:
            return None
        positional, parameters, may_fix_itself = found
        fed = frozenset(
            parameter for parameter, numpy_only in parameters.items()
            if not (numpy_only and may_fix_itself and self._given_device_values(key, positional.index(parameter) if parameter in positional else -1, parameter))
        )
        return HostParameters(positional, fed) if fed else None

    def _given_device_values(self, key: tuple[str, str], position: int, parameter: str) -> bool:
        calls = self.foreign_calls(*key)
        return bool(calls) and all(passes_a_device_value(call, position, parameter) for call in calls)

    def _local_function(self, from_file: str, qualified_name: str) -> tuple[str, str] | None:
        """(module file, function name) of `utils.causal_mask` when `utils` is a file of the project."""
        owner, _, function = qualified_name.rpartition(".")
        target = self._module_file(Path(from_file).resolve(), owner) if owner else None
        return (str(target), function) if target is not None else None

    def imported_kind(self, from_file: str, qualified_name: str) -> Kind:
        """The kind the top-level function `qualified_name` (`data.make_loaders`) of a local module
        returns (`values.returned_kind`) when it is DataLoaders (what callers need; read only in
        modules that build one); unknown otherwise."""
        owner, _, function = qualified_name.rpartition(".")
        if not may_be_project_name(qualified_name):
            return Kind.UNKNOWN
        target = self._module_file(Path(from_file).resolve(), owner)
        if target is None:
            return Kind.UNKNOWN
        key = (str(target), function)
        if key not in self._returned_kinds:
            parsed = self._parsed(target) if "DataLoader" in self._text(target) else None
            found = Kind.UNKNOWN if parsed is None else returned_kind(*parsed, function)
            self._returned_kinds[key] = found if found in DATALOADER_KINDS else Kind.UNKNOWN
        self.consulted[str(target)] = True
        return self._returned_kinds[key]

    def constructed_kinds(self, from_file: str, class_name: str) -> list[PassedKinds] | None:
        """What each construction of the top-level class `class_name` of `from_file` in the files
        beside it passes, as the value analysis of the file that holds it sees it (`Trainer(model,
        DataLoader(TensorDataset(x, y)))` in `main.py`, or `training.Trainer(...)` through its
        module); None when there is none, or when some file uses the class otherwise than calling it."""
        def read(caller: str, parsed, names: set[str], imported) -> list[PassedKinds] | None:
            return passed_to(*parsed, names, imported, *self._caller_modules(caller))

        return self._kinds_beside(from_file, class_name, self._passed, read, every_call=True)

    def forward_call_kinds(self, from_file: str, class_name: str) -> list[PassedKinds] | None:
        """What the calls of the instances of the top-level Module class `class_name` of `from_file`
        pass in the files beside it that build it (`model = Pooler(...).to(device)`, then
        `model(ids.to(device), lengths.to(device))` in `train.py`), as the value analysis of each
        such file sees it; None when there is no construction, or when a file uses the class, or an
        instance, otherwise than building and calling it (`values.forward_calls_passed`)."""
        def read(caller: str, parsed, names: set[str], imported) -> list[PassedKinds] | None:
            return forward_calls_passed(*parsed, {name for name in names if "." not in name}, imported)

        return self._kinds_beside(from_file, class_name, self._forward_calls, read, every_call=False)

    def _kinds_beside(self, from_file: str, class_name: str, cache: dict, read, every_call: bool) -> list[PassedKinds] | None:
        """`read(caller, parsed, names, imported)` of each file beside `from_file` that calls its class
        `class_name`, under the names that file gives it (`Trainer`, `training.Trainer` of `import
        trainer as training`), joined; None when one answer is None (or, with `every_call`, does not
        count every call of the class there)."""
        calls = self.foreign_calls(from_file, class_name)
        if not calls:
            return None
        target = Path(from_file).resolve()
        passed: list[PassedKinds] = []
        for caller in sorted({call.file for call in calls}):
            key = (caller, str(target), class_name)
            if key not in cache:
                parsed = self._parsed(Path(caller))
                imported_names = parsed[1].names.items() if parsed is not None else ()
                names = {local for local, qualified in imported_names if qualified.rpartition(".")[2] == class_name
                         and self._module_file(Path(caller), qualified.rpartition(".")[0]) == target}
                names |= {f"{local}.{class_name}" for local, qualified in imported_names  # `import trainer as training`
                          if self._module_file(Path(caller), qualified) == target}
                imported = lambda qualified, caller=caller: self.imported_kind(caller, qualified)  # noqa: E731
                cache[key] = None  # while it is read: files whose analyses ask each other
                cache[key] = read(caller, parsed, names, imported) if names else None
            found = cache[key]
            if found is None or (every_call and len(found) != sum(call.file == caller for call in calls)):
                return None
            passed += found
        return passed

    def constructions_give_unmoved_modules(self, from_file: str, class_name: str, position: int, parameter: str) -> bool | None:
        """Every construction of the top-level class `class_name` of `from_file` in the files beside
        it gives the parameter an unmoved Module built in that file (`Trainer(model, loader)` in
        `main.py` after `model = Net()`, `analysis.unmoved_object_models`); None when no file beside
        constructs it, False when one uses it otherwise than calling it."""
        calls = self.foreign_calls(from_file, class_name)
        if calls is None:
            return False
        target = Path(from_file).resolve()
        for caller in sorted({call.file for call in calls}):
            parsed = self._parsed(Path(caller))
            if parsed is None:
                return False
            tree, imports = parsed
            names = {local for local, qualified in imports.names.items() if qualified.rpartition(".")[2] == class_name
                     and self._module_file(Path(caller), qualified.rpartition(".")[0]) == target}
            modules = {local for local, qualified in imports.names.items() if self._module_file(Path(caller), qualified) == target}

            def is_the_class(func: ast.expr, names=names, modules=modules) -> bool:
                if isinstance(func, ast.Name):
                    return func.id in names
                return isinstance(func, ast.Attribute) and func.attr == class_name and isinstance(func.value, ast.Name) and func.value.id in modules

            def builds_a_module(call: ast.Call, caller=caller, imports=imports) -> bool:
                qualified = imports.qualify(call.func)
                return qualified is not None and self.is_module_class(caller, qualified) is True

            if not constructions_give_unmoved_modules(tree, is_the_class, position, parameter, imports, builds_a_module):
                return False
        return True if calls else None

    def _caller_modules(self, caller: str) -> tuple[dict[str, Kind], Callable[[str], list[PassedKinds] | None]]:
        """The Module classes of `caller` and where to ask what their instances are called with in
        the files beside it: a helper `model.py` calls in `forward` takes the kinds `train.py` gives."""
        facts = self._facts(Path(caller))
        modules = {name: Kind.MODULE for name in (facts.classes if facts is not None else ()) if self.is_module_class(caller, name) is True}
        return modules, lambda class_name: self.forward_call_kinds(caller, class_name)

    def method_call_kinds(self, from_file: str, class_name: str, method: str) -> list[PassedKinds] | None:
        """What the calls of a method named `method` pass in the files beside `from_file` that
        construct its top-level class `class_name` (`trainer.train_epoch(loader)` in `main.py`, as
        the value analysis of that file sees it); None when there is no construction, or when such a
        file uses the method's name otherwise than calling it."""
        calls = self.foreign_calls(from_file, class_name)
        if not calls:
            return None
        passed: list[PassedKinds] = []
        for caller in sorted({call.file for call in calls}):
            key = (caller, method)
            if key not in self._method_calls:
                parsed = self._parsed(Path(caller))
                imported = lambda qualified, caller=caller: self.imported_kind(caller, qualified)  # noqa: E731
                self._method_calls[key] = method_calls_passed(*parsed, method, imported) if parsed is not None else None
            found = self._method_calls[key]
            if found is None:
                return None
            passed += found
        return passed or None

    def imported_packing_parameters(self, from_file: str, qualified_name: str) -> Packing | None:
        """For the Module class `qualified_name` (`model.Classifier`) of a local module: its
        `forward`'s positional parameters and those it only packs as lengths, through its submodules
        (`analysis.forward_lengths`); None when it is no class of a file of the project."""
        found = self._class_file(Path(from_file).resolve(), qualified_name)
        return self._packing_parameters(*found) if found is not None else None

    def _packing_parameters(self, file: Path, class_name: str, depth: int = SUBMODULE_DEPTH) -> Packing | None:
        key = (str(file), class_name)
        if key not in self._packing:
            self._packing[key] = None  # a class reached again through its own submodules packs nothing more
            parsed = self._parsed(file)
            if parsed is not None:
                tree, imports = parsed

                def resolve(name: str, hops: int) -> Packing | None:
                    found = self._class_file(file, imports.names.get(name, ""))
                    return self._packing_parameters(*found, hops) if found is not None else None

                self._packing[key] = forward_packing_parameters(tree, imports, class_name, resolve, depth)
        self.consulted[str(file)] = True
        return self._packing[key]

    def imported_dataset_moves_items(self, from_file: str, qualified_name: str) -> bool:
        """Is `qualified_name` (`dataset.Points`) a class of a file of the project whose
        `__getitem__` moves its items to the GPU (`worker_placements.gpu_moving_getitem`)?"""
        found = self._class_file(Path(from_file).resolve(), qualified_name)
        if found is None:
            return False
        target, class_name = found
        key = (str(target), class_name)
        if key not in self._dataset_moves:
            parsed = self._parsed(target)
            self._dataset_moves[key] = parsed is not None and gpu_moving_getitem(parsed[0], parsed[1], class_name)
        self.consulted[str(target)] = True
        return self._dataset_moves[key]

    def imported_dataset_keeps_device_tensors(self, from_file: str, qualified_name: str) -> bool:
        """Is `qualified_name` (`dataset.ColorizedDataset`) a class of a file of the project whose
        `__init__` moves the tensors its `__getitem__` reads (`self.x = torch.tensor(f0).to(device)`,
        `loaders.resident_tensors`): its items are on the device already."""
        found = self._class_file(Path(from_file).resolve(), qualified_name)
        if found is None:
            return False
        key = (str(found[0]), found[1])
        if key not in self._resident:
            from devfix.analysis.loaders import resident_tensors  # libcst: only for a loop that may need it
            from devfix.analysis.parameter_meetings import parsed_class_in_text

            parsed = parsed_class_in_text(self._text(found[0]), found[1])
            self._resident[key] = parsed is not None and bool(resident_tensors(*parsed, lambda node: 0))
        self.consulted[key[0]] = True
        return self._resident[key]

    def imported_class_is_parameter_free(self, from_file: str, qualified_name: str) -> bool:
        """Is `qualified_name` (`lightly.loss.vicreg_loss.VICRegLoss`) a Module class of a file of the
        project that builds no parameter (`parameter_free.class_is_parameter_free`, read in that file
        alone: a base class of its own file is not followed, and then nothing is proven)?"""
        found = self._class_file(Path(from_file).resolve(), qualified_name)
        if found is None:
            return False
        key = (str(found[0]), found[1])
        if key not in self._parameter_free:
            import libcst as cst  # only for a fix that may need it

            from devfix.analysis.parameter_free import class_is_parameter_free
            from devfix.analysis.parameter_meetings import parsed_class_in_text

            parsed = parsed_class_in_text(self._text(found[0]), found[1])
            self._parameter_free[key] = parsed is not None and class_is_parameter_free(parsed[0], cst.Module([parsed[0]]), parsed[1])
        self.consulted[key[0]] = True
        return self._parameter_free[key]

    def registered_by_bases(self, from_file: str, tree: ast.Module, imports: ImportTable, class_name: str) -> frozenset[str]:
        """The names the bases of `class_name`, a class of `from_file` (its `tree`), register as
        buffers or parameters, those bases followed into the project's other files
        (`analysis.registered_state`)."""
        from devfix.analysis.registered_state import registered_by_bases

        return registered_by_bases(tree, class_name, self._class_resolver(Path(from_file).resolve(), imports))

    def imported_program_device(self, from_file: str, qualified_name: str) -> bool:
        """Is `qualified_name` (`core.constants.DEVICE`) a top-level name a file of the project binds
        once to a device that may be CUDA (`analysis.host_instances.program_device_names`)?"""
        found = self._class_file(Path(from_file).resolve(), qualified_name)
        if found is None:
            return False
        parsed = self._parsed(found[0]) if found[1] in self._text(found[0]) else None
        self.consulted[str(found[0])] = True
        return parsed is not None and found[1] in program_device_names(parsed[0])

    def imported_keeping(self, from_file: str, imports: ImportTable) -> Callable[[str], tuple[KeepingUses, str] | None]:
        """For `KeepingUses` of `from_file`: a name it imports from a file of the project → that
        file's `KeepingUses` (which looks no further) and the name there."""
        def find(name: str) -> tuple[KeepingUses, str] | None:
            qualified = imports.names.get(name)
            found = self._class_file(Path(from_file).resolve(), qualified) if qualified is not None else None
            if found is None:
                return None
            key = str(found[0])
            if key not in self._keeping:
                parsed = self._parsed(found[0])
                self._keeping[key] = KeepingUses(parsed[0]) if parsed is not None else None
            self.consulted[key] = True
            uses = self._keeping[key]
            return (uses, found[1]) if uses is not None else None

        return find

    def instances_kept_on_host(self, from_file: str, class_name: str) -> bool:
        """The files beside `from_file` build its class `class_name` (by the name they import it
        as) only into names their scope binds once and only calls, asks for methods that are no
        move, or hands to code of that file that never moves them (`analysis.host_instances`), and
        some such name is read: every instance runs on the CPU."""
        calls = self.foreign_calls(from_file, class_name)
        if not calls:
            return False
        for file in {call.file for call in calls}:
            parsed = self._parsed(Path(file))
            if parsed is None:
                return False
            local = {alias for alias, imported in parsed[1].names.items() if imported.rpartition(".")[2] == class_name}
            built = [node.func.id for node in ast.walk(parsed[0])
                     if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in local]
            kept = kept_by_locals(parsed[0], set(built), self.imported_keeping(file, parsed[1]))
            if len(built) != sum(call.file == file for call in calls) or kept != set(built):
                return False  # a construction not by the imported name (`models.Net()`), or one not kept
        return True

    def imported_takes_any_device(self, from_file: str, qualified_name: str, parameter: str) -> bool:
        """The top-level function `qualified_name` of a local module uses `parameter` as a device
        (`analysis.device_parameters`): `evaluate(model, loader, device="cuda")` of `evaluate.py`."""
        key = self._local_function(from_file, qualified_name)
        if key is None:
            return False
        self.consulted[key[0]] = True
        asked = (*key, parameter)
        if asked not in self._device_takers:  # one parse per module function asked, not one per call
            parsed = self._parsed(Path(key[0]))
            found = [node for node in parsed[0].body if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == key[1]] \
                if parsed is not None else []
            self._device_takers[asked] = len(found) == 1 and takes_any_device(found[0], parameter)
        return self._device_takers[asked]

    def _parsed(self, file: Path) -> tuple[ast.Module, ImportTable] | None:
        """The file's tree and imports, None when it does not parse; not kept (see
        `analysis.importers`: what is kept is what was learnt from it)."""
        try:
            tree = python_parser.parse(self._text(file))
        except (SyntaxError, ValueError):
            return None
        return tree, ImportTable.of(tree)

    def foreign_calls(self, from_file: str, function: str) -> list[ForeignCall] | None:
        """The calls of the top-level function `function` of `from_file` in the files beside it
        (`analysis.importers`); None when one of them uses it otherwise than calling it."""
        target = Path(from_file).resolve()
        key = (str(target), function)
        if key not in self._foreign_calls:
            files = neighbour_files(target)
            calls: list[ForeignCall] | None = []
            for file in files:
                parsed = self._parsed(file) if function in self._text(file) else None
                found = calls_in_tree(file, *parsed, target, function, self._module_file) if parsed is not None else []
                if found is None:
                    calls = None
                    break
                calls += found
            read = [str(target.parent), str(target.parent.parent), *map(str, files)]
            self._foreign_calls[key] = (read, calls)
        read, calls = self._foreign_calls[key]
        self.consulted.update(dict.fromkeys(read, True))  # a directory stands for the list of its files
        return calls

    def _text(self, file: Path) -> str:
        if str(file) in self._sources:
            return self._sources[str(file)]
        try:
            return file.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return ""

    def _is_module(self, file: Path, name: str, seen: set[tuple[Path, str]]) -> bool | None:
        if (file, name) in seen:
            return None
        seen.add((file, name))
        if name in NOT_MODULES or name.startswith("builtins."):
            return False
        if name.startswith(MODULE_PACKAGES) and name.rsplit(".", 1)[1][:1].isupper():
            return True
        if name.endswith(MODULE_BASE_SUFFIXES):
            return True
        owner, _, class_name = name.rpartition(".")
        if not owner:
            return self._local_class(file, class_name, seen)
        target = self._module_file(file, owner)
        if target is None and owner.split(".")[0] in sys.stdlib_module_names:
            return False  # `ast.NodeVisitor`, `types.ModuleType`: no standard-library class is a Module
        return None if target is None else self._local_class(target, class_name, seen)

    def _local_class(self, file: Path, class_name: str, seen: set[tuple[Path, str]]) -> bool | None:
        facts = self._facts(file)
        if facts is None:
            return None
        if class_name in facts.classes:
            verdicts = [self._is_module(file, base, seen) for base in facts.classes[class_name]]
            if any(verdict is True for verdict in verdicts):
                return True
            return False if all(verdict is False for verdict in verdicts) else None
        if class_name in facts.imports:
            return self._is_module(file, facts.imports[class_name], seen)
        if class_name in BUILTIN_NAMES:
            return False  # `class Schedule(object)`, `class Failure(Exception)`: no builtin is a Module
        return None

    def _module_file(self, file: Path, dotted: str) -> Path | None:
        """The file of module `dotted` imported from `file`; the places it looked are consulted
        again on every call (the result cache depends on them), the file system only once."""
        key = (str(file.parent), dotted)
        if key not in self._module_files:
            self._module_files[key] = self._find_module_file(file, dotted)
        looked, found = self._module_files[key]
        self.consulted.update(looked)
        return found

    def _find_module_file(self, file: Path, dotted: str) -> tuple[dict[str, bool], Path | None]:
        looked: dict[str, bool] = {}
        level = len(dotted) - len(dotted.lstrip("."))
        parts = [part for part in dotted.lstrip(".").split(".") if part]
        if level:
            bases = [file.parents[level - 1]] if level <= len(file.parents) else []
        else:
            bases = list(file.parents)
        for base in bases:
            package = base.joinpath(*parts, "__init__.py")
            for candidate in (base.joinpath(*parts).with_suffix(".py"), package) if parts else (package,):  # `from . import x`: the package
                found = str(candidate) in self._sources or candidate.is_file()
                looked[str(candidate)] = found
                if found:
                    return looked, candidate
        return looked, None

    def _facts(self, file: Path) -> FileClasses | None:
        key = str(file)
        self.consulted[key] = True
        if key not in self._files:
            self._files[key] = _read_facts(file, self._sources.get(key))
        return self._files[key]


HostReads = tuple[list[str], dict[str, bool], bool]  # (positional parameters, those only handed to numpy, may fix itself)


def _host_parameters_of(text: str) -> dict[str, HostReads]:
    """For each top-level function of a module (defined once), the parameters it only hands to a
    host library (`host_sinks.parameters_only_given_to_host`), when it has any; with whether DF008
    may bring them to the host in that file: it places nothing on a device and never uses the
    function itself."""
    if not any(marker in text for marker in HOST_TEXT_MARKERS):
        return {}
    try:
        tree = python_parser.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return {}
    imports = ImportTable.of(tree)
    functions = [node for node in tree.body if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))]
    names = [function.name for function in functions]
    used = {node.id for node in ast.walk(tree) if isinstance(node, ast.Name)}
    places = places_devices(text)
    found: dict[str, HostReads] = {}
    for function in functions:
        parameters = parameters_only_given_to_host(function, imports) if names.count(function.name) == 1 else {}
        if parameters:
            positional = [argument.arg for argument in [*function.args.posonlyargs, *function.args.args]]
            found[function.name] = (positional, parameters, not places and function.name not in used)
    return found


def _read_facts(file: Path, text: str | None) -> FileClasses | None:
    try:
        tree = python_parser.parse(text if text is not None else file.read_bytes())
    except (OSError, SyntaxError, ValueError):
        return None
    facts = FileClasses()
    for node in _statements(tree.body):
        if isinstance(node, ast.Import):
            for alias in node.names:
                facts.imports[alias.asname or alias.name.split(".")[0]] = alias.name if alias.asname else alias.name.split(".")[0]
        elif isinstance(node, ast.ImportFrom):
            prefix = "." * node.level + (node.module or "")
            for alias in node.names:
                separator = "" if prefix.endswith(".") else "."
                facts.imports[alias.asname or alias.name] = f"{prefix}{separator}{alias.name}"
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            facts.classes[node.name] = tuple(_qualify(base, facts.imports) for base in node.bases)
    return facts


def _statements(body: list[ast.stmt]):
    """Every statement in source order, nested ones included (imports sit in `if`/`try` blocks),
    never descending into expressions: what `ast.walk` costs on a large module is its expressions."""
    for node in body:
        yield node
        for name in ("body", "orelse", "finalbody"):
            nested = getattr(node, name, None)
            if isinstance(nested, list):
                yield from _statements(nested)
        for block in (*getattr(node, "handlers", ()), *getattr(node, "cases", ())):
            yield from _statements(block.body)


def _qualify(expression: ast.expr, imports: dict[str, str]) -> str:
    dotted = ast.unparse(expression)
    head, _, rest = dotted.partition(".")
    if head in imports:
        return imports[head] + ("." + rest if rest else "")
    return dotted
