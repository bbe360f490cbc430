"""The one analysis of a file that every rule reads, computed once per text with Python's `ast`.

- `role`: a program (it runs: a `__main__` block or top-level training code), a library module
  (imported by others: only definitions), or a test. Only a program may get a module-level
  `device = torch.device(...)`: a library or a test must not grow global state.
- `framework`: the framework that owns placement in this file (accelerate, Lightning, XLA, RPC,
  DeepSpeed, ...): it moves models and batches itself, so devfix adds no moves there.
- `values`: the kind of every name where it is read (`analysis.kinds`), of `self` attributes and
  of the file's functions' results.
"""

from __future__ import annotations

import ast
import enum
import re
from collections.abc import Callable
from functools import cached_property
from pathlib import PurePath

from devfix import python_parser
from devfix.analysis import screen, signals
from devfix.analysis.ast_nodes import children, defined_once, every_node
from devfix.analysis.cuda_only_calls import UncheckedCudaCall, unchecked_cuda_only_calls
from devfix.analysis.entry_lines import first_top_level_binding, only_setup_between, top_level_entry_lines
from devfix.analysis.expected_errors import expected_error_blocks
from devfix.analysis.factory_meetings import meeting_scopes
from devfix.analysis.following_returns import Followed
from devfix.analysis.forward_lengths import SUBMODULE_DEPTH, Packing, forward_packing_parameters
from devfix.analysis.generator_draws import CpuGeneratorDraw, cpu_generator_draws
from devfix.analysis.gpu_flags import hardcoded_gpu_flags
from devfix.analysis.gpu_options import GpuOption, gpu_option
from devfix.analysis.host_helpers import HelperSummary, ModuleScope, host_copy_methods, module_scope, summarise
from devfix.analysis.host_instances import program_devices_in_host_classes
from devfix.analysis.host_moving_helpers import host_moves, parameters_moved_to_host
from devfix.analysis.host_sinks import (
    HostParameters,
    array_names,
    device_value_may_reach_host,
    parameters_given_to_host,
)
from devfix.analysis.importers import (
    ForeignCall,
    given_key,
    passes_a_built_value,
    passes_a_device_value,
    passes_a_loader,
    passes_a_moved_name,
)
from devfix.analysis.imports import ImportTable
from devfix.analysis.kinds import DATALOADER_KINDS, ITEM_ASSIGNABLE, Kind
from devfix.analysis.method_factories import class_feeds_fresh_tensors
from devfix.analysis.module_instances import Instances, called_instances
from devfix.analysis.parameter_copies import classes_copying_parameters
from devfix.analysis.plain_tensor_attributes import plain_tensor_attributes
from devfix.analysis.project import ProjectIndex
from devfix.analysis.returned_modules import returns_built_module
from devfix.analysis.returned_moves import ReturnedMove, returned_listed_moves, returned_move
from devfix.analysis.returned_pairs import ReturnedPair, returned_pairs
from devfix.analysis.test_devices import AcceleratedTests
from devfix.analysis.torch_api import places_devices, places_on_several_gpus
from devfix.analysis.unmoved_object_models import unmoved_object_models
from devfix.analysis.values import ValueFacts, analyse_values
from devfix.analysis.worker_placements import places_items_in_workers

# `mps` or `xpu` not joined to a letter or digit on either side (`no_mps`, `"mps:0"`, `.xpu.`)
_OTHER_ACCELERATOR = re.compile(r"(?<![A-Za-z0-9])(?:mps|xpu)(?![A-Za-z0-9])")

PLACEMENT_FRAMEWORKS = (
    "accelerate", "lightning", "pytorch_lightning", "lightning_fabric", "torch_xla", "deepspeed",
    "torch.distributed.rpc", "torch.distributed", "torch.nn.parallel.DistributedDataParallel", "colossalai", "horovod",
    "ray.train",
)
TEST_MODULES = ("pytest", "unittest")
PROGRAM_STATEMENTS = (ast.For, ast.While, ast.With, ast.AsyncFor, ast.AsyncWith)


PLACING_NAME = re.compile(r"(?:\bdevice\s*=\s*|\.to\(\s*)([A-Za-z_]\w*)\s*[,)]")  # the name a tensor is placed on

class FileRole(enum.Enum):
    PROGRAM = "program"
    LIBRARY = "library module"
    TEST = "test"


class FileFacts:
    """Computed from one text; the value analysis runs only when a rule asks for it."""

    def __init__(self, tree: ast.Module, source: str, path: str, project: ProjectIndex | None) -> None:
        self._tree = tree
        self._walk = screen.walk(tree)
        self.imports = self._walk.imports
        self.classes = _class_kinds(tree, self.imports, path, project)
        self.role = _role(tree, path, self.imports, self.classes)
        self.framework = _framework(self.imports, self._walk)
        self.text = source
        self.lines = tuple(source.splitlines())
        self._path, self._project = path, project or ProjectIndex()
        self._imported_helpers: dict[str, bool] = {}  # `_imported_host_helper`'s answers
        self._returned_moves: dict[str, ReturnedMove | None] = {}
        self._returned_listed_moves: dict[str, ReturnedMove | None] = {}
        self._host_moved: dict[str, dict[int, str]] = {}
        self._returned_modules: dict[str, bool] = {}
        self._local_helpers: dict[str, HelperSummary | None] = {}
        self._packing: dict[str, Packing | None] = {}  # `forward_packing`'s answers
        self._followed: dict[str, Followed] = {}  # `followed`'s answers

    @property
    def tree(self) -> ast.Module:
        """The file's `ast` (shared: not to be changed)."""
        return self._tree

    def registered_by_bases(self, class_name: str) -> frozenset[str]:
        """The names the bases of the file's class `class_name` register as buffers or parameters
        (in this file or another of the project)."""
        return self._project.registered_by_bases(self._path, self._tree, self.imports, class_name)

    @property
    def import_statements(self) -> list[ast.Import | ast.ImportFrom]:
        """Every import statement of the file, at any depth."""
        return self._walk.import_statements

    @cached_property
    def expected_error_blocks(self) -> tuple[tuple[int, int], ...]:
        """Lines of `with pytest.raises(...)` or `with self.assertRaises(...)` blocks (`analysis.expected_errors`)."""
        return expected_error_blocks(self._tree, self.imports) if "aises" in self.text else ()

    @cached_property
    def test_devices(self) -> AcceleratedTests:
        """Which tests of a test file run anything on an accelerator (`analysis.test_devices`)."""
        return AcceleratedTests(self._tree, self.lines)

    def runs_on_a_device_at(self, line: int) -> bool:
        """False only in a test file, for a test that places nothing on an accelerator (nor does what
        the file's tests share): its tensors are CPU tensors wherever it runs."""
        return self.role is not FileRole.TEST or self.test_devices.runs_on_a_device(line)

    def expects_an_error(self, line: int) -> bool:
        """The line is in a block that checks that an error is raised: nothing there is to align."""
        return any(first <= line <= last for first, last in self.expected_error_blocks)

    @cached_property
    def signals(self) -> frozenset[str]:
        """The code shapes rules look for (`analysis.screen`), but for a lazy one (`has_signal`)."""
        found = screen.signals(self._walk, self.classes)
        if self.hardcoded_gpu_flags:
            found |= {signals.HARDCODED_CUDA}
        if signals.PLAIN_CLASS_MOVE not in found and any(
                self.models_moved_beside(*given) for given in self._walk.given_models):
            found |= {signals.PLAIN_CLASS_MOVE}  # `Trainer(model, loader)` in `main.py` after `model.to(device)`
        if signals.HARDCODED_CUDA in found and self.several_gpus:
            found -= {signals.HARDCODED_CUDA}  # several GPUs on purpose: DF001 leaves the file alone
        if signals.UNPLACED_FACTORY_IN_METHOD not in found and self.imported_factory_helpers:
            classes = {id(node): node for name in self.imported_factory_helpers for node in self._walk.imported_calls_in_methods[name]}
            helpers = self._walk.factory_helpers | self.imported_factory_helpers  # (`factory_helpers` asks for these signals)
            seeded = [node for node in classes.values() if class_feeds_fresh_tensors(node, self.imports, helpers)]
            if seeded:  # `self.block(x, src_mask=causal_mask(t))`, `from utils import causal_mask`
                self._walk.class_sites[signals.UNPLACED_FACTORY_IN_METHOD] = [
                    *self._walk.class_sites.get(signals.UNPLACED_FACTORY_IN_METHOD, []), *seeded]
                found |= {signals.UNPLACED_FACTORY_IN_METHOD}
        return found

    @cached_property
    def factory_helpers(self) -> frozenset[str]:
        """The functions, of the file (`Walk.factory_helpers`) or imported from the project, whose
        calls in a method DF016 may follow as it follows a factory."""
        self.signals  # noqa: B018 -- the screen finds the file's own as it computes the signals
        return self._walk.factory_helpers | self.imported_factory_helpers

    @cached_property
    def imported_factory_helpers(self) -> frozenset[str]:
        """Functions of the project the file's methods call, whose every `return` makes a tensor on
        the host, never a 0-dim one (DF016 follows what they give a layer)."""
        found = set()
        for name in self._walk.imported_calls_in_methods:
            summary = self._project.imported_helper(self._path, self.imports.names[name])
            if summary is not None and summary.makes_host_tensors:
                found.add(name)
        return frozenset(found)

    def signal_sites(self, signal: str) -> list[ast.AST] | None:
        """Where the screen raised one of the signals of a class's code (`Walk.class_sites`): a
        superset of where the rules that need it find anything. None for anywhere: under a star
        import (the screen then assumes every signal), or where the screen says so."""
        if self._walk.star_import:
            return None
        self.signals  # noqa: B018 -- the screen fills the sites as it computes the signals
        return self._walk.class_sites.get(signal, [])

    def has_signal(self, signal: str) -> bool:
        if signal in self.signals:
            return True
        if signal == signals.MODULE_TENSOR_ATTRIBUTE:  # `self.x = x` in __init__: is `x` a tensor?
            return self._any_tensor(self._walk.tensor_candidates)
        if signal == signals.BARE_MOVE:  # `x.to(device)` as a statement: is `x` a tensor (not a Module)?
            reads = self.values.reads if self._walk.bare_item_moves else {}
            return self._any_tensor(self._walk.bare_move_receivers) or any(
                reads.get((name.lineno, name.col_offset)) in ITEM_ASSIGNABLE for name in self._walk.bare_item_moves)
        if signal == signals.PLACES_DEVICES:
            return places_devices(self.text)
        if signal == signals.RUNS_ON_A_DEVICE:
            return self._runs_on_a_device
        if signal == signals.FACTORY_MEETS_TENSOR:
            return self._factory_meets_tensor
        if signal == signals.DEVICE_VALUE_TO_HOST:
            return self._device_value_to_host
        if signal == signals.HOST_SINK:  # a call of an imported function that hands its argument to numpy
            return bool(self.imported_host_functions)
        if signal == signals.CALLED_CONSTRUCTION:  # `Layer(...)(x)` in a method: is `Layer` a Module class?
            return any(self._builds_a_module(call) for call in self._walk.constructions)
        if signal == signals.BUILT_AND_CALLED:  # `model = Net()` and `model(x)`: is `Net` a Module class? Or a trainer's
            return self._built_and_called or bool(self.unmoved_object_models)
        if signal == signals.CUDA_ONLY_CALL:  # outside a program DF024 only guards whole statements
            return any(call.guardable or self.role is FileRole.PROGRAM for call in self.cuda_only_calls.values())
        if signal == signals.CPU_GENERATOR_DRAW:
            return bool(self.cpu_generator_draws)
        if signal == signals.PROGRAM_DEVICE_IN_HOST_MODULE:
            return bool(self.program_devices_in_host_classes)
        if signal == signals.MODEL_LEFT_ON_HOST:
            return self.moves_models_to_host
        if signal == signals.LOADER_WORKER_DEVICE:
            return places_items_in_workers(self._tree, self.imports, self.imported_dataset_moves_items)
        if signal == signals.LOADER_LOOP:  # a loader of another file: returned by its function, or given by its calls
            return any(self._project.imported_kind(self._path, name) in DATALOADER_KINDS for name in self._walk.loader_calls) or any(
                self.given_loaders_beside(function, position, parameter) for function, position, parameter in self._walk.loader_parameters
            )
        return False

    @cached_property
    def methods_called_only_in_constructors(self) -> frozenset[str]:
        """Method names the file calls (`x.name(...)`, any receiver) only inside `__init__` methods:
        such a method runs while a module is built, before any move (DF016)."""
        places: dict[str, set[bool]] = {}
        stack: list[tuple[ast.AST, bool]] = [(self._tree, False)]
        while stack:
            node, in_init = stack.pop()
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                in_init = node.name == "__init__"
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
                places.setdefault(node.func.attr, set()).add(in_init)
            stack.extend((child, in_init) for child in children(node))
        return frozenset(name for name, found in places.items() if found == {True})

    def given_loaders_beside(self, function: str, position: int, parameter: str) -> bool:
        """Every call of the file's `function` in the files beside it passes a DataLoader for the
        parameter (`analysis.importers`): one built there, or one a function of the project returns
        (`train_loader, test_loader = make_loaders()`)."""
        return self._every_call_beside(
            function, lambda call: passes_a_loader(call, position, parameter) or self._passes_a_returned_loader(call, position, parameter),
        )

    def models_moved_beside(self, function: str, position: int, parameter: str) -> bool:
        """Every call of the file's `function` in the files beside it passes, for the parameter, a
        name moved to a device before the call (`predict(model, image)` after `model.to(device)`)."""
        return self._every_call_beside(function, lambda call: passes_a_moved_name(call, position, parameter))

    def torch_modules_built_beside(self, function: str, position: int, parameter: str) -> bool:
        """Every call of the file's `function` in the files beside it builds, for the parameter, a
        torch.nn Module in place (`Trainer(model, nn.CrossEntropyLoss(), device)` in `main.py`)."""
        return self._every_call_beside(function, lambda call: passes_a_built_value(
            call, position, parameter, lambda built: built.startswith("torch.nn.") and self._project.is_module_class(call.file, built) is True))

    def device_values_beside(self, function: str, position: int, parameter: str) -> bool:
        """Every call of the file's `function` in the files beside it passes, for the parameter, a
        value that may be on a device (`importers.passes_a_device_value`: `accuracy(logits, y)`
        after `logits = model(x)` of a moved model)."""
        return self._every_call_beside(function, lambda call: passes_a_device_value(call, position, parameter))

    def imported_dataset_moves_items(self, name: str) -> bool:
        """`name` is imported from a file of the project, a Dataset class whose `__getitem__` moves
        its items to the GPU (`ProjectIndex.imported_dataset_moves_items`)."""
        qualified = self.imports.names.get(name)
        return qualified is not None and self._project.imported_dataset_moves_items(self._path, qualified)

    def forward_packing(self, class_name: str) -> Packing | None:
        """For the Module class `class_name` of this file, or imported from a file of the project:
        its `forward`'s positional parameters and those it only packs as lengths, through its
        submodules (`analysis.forward_lengths`); None when devfix cannot find it."""
        if class_name not in self._packing:
            if any(isinstance(node, ast.ClassDef) and node.name == class_name for node in self._tree.body):
                found = forward_packing_parameters(self._tree, self.imports, class_name, self._imported_packing)
            else:
                found = self._imported_packing(class_name, SUBMODULE_DEPTH)
            self._packing[class_name] = found
        return self._packing[class_name]

    def packing_classes(self) -> list[str]:
        """The classes of this file and those it imports from the project whose `forward` only packs
        some parameter: the candidates for a model a function is given."""
        names = [node.name for node in self._tree.body if isinstance(node, ast.ClassDef)]
        names += [name for name, qualified in self.imports.names.items() if "." in qualified and name not in names]
        return [name for name in names if (found := self.forward_packing(name)) is not None and found[1]]

    def _imported_packing(self, name: str, hops: int) -> Packing | None:
        qualified = self.imports.names.get(name)
        return self._project.imported_packing_parameters(self._path, qualified) if qualified and hops >= 0 else None

    def used_only_here(self, name: str) -> bool:
        """No file beside this one calls or imports the file's top-level function or class `name`:
        its calls in the file are all there are."""
        return self._project.foreign_calls(self._path, name) == []

    def _every_call_beside(self, function: str, passes: Callable[[ForeignCall], bool]) -> bool:
        """The file's `function` has calls in the files beside it, known all, and each `passes`."""
        calls = self._project.foreign_calls(self._path, function)
        return bool(calls) and all(passes(call) for call in calls)

    def _passes_a_returned_loader(self, call: ForeignCall, position: int, parameter: str) -> bool:
        key = given_key(call, position, parameter)
        qualified = dict(call.bound_by).get(key) if key is not None else None
        return qualified is not None and self._project.imported_kind(call.file, qualified) in DATALOADER_KINDS

    @cached_property
    def plain_tensor_attributes(self) -> dict[str, frozenset[str]]:
        """Class → the attributes its instances keep as CPU tensors that `.to()` does not move
        (`analysis.plain_tensor_attributes`); none in a file that sets a default device."""
        return {} if self.sets_a_default_device else plain_tensor_attributes(self._tree, self.imports)

    @cached_property
    def unmoved_object_models(self) -> dict[str, dict[str, str]]:
        """Plain class → the model attribute it keeps unmoved → the device attribute its methods move
        that model's inputs to (`analysis.unmoved_object_models`)."""
        beside = lambda class_name, position, parameter: self._project.constructions_give_unmoved_modules(  # noqa: E731
            self._path, class_name, position, parameter)
        return unmoved_object_models(self._tree, self.imports, self._builds_a_module, beside)

    @cached_property
    def host_copy_methods(self) -> frozenset[str]:
        """Methods of the file's classes that return host copies (`host_helpers.host_copy_methods`)."""
        return host_copy_methods(self._tree)

    @cached_property
    def several_gpus(self) -> bool:
        """The file places on several GPUs on purpose (`torch_api.places_on_several_gpus`); the uses
        of the one GPU an option chooses (`.cuda(args.gpu)`, `analysis.gpu_options`) do not count."""
        option = self.gpu_option
        return places_on_several_gpus(self.text if option is None else option.masked(self.text))

    @cached_property
    def gpu_option(self) -> GpuOption | None:
        """`args.gpu` of `parser.add_argument("--gpu", type=int, default=0)` where the file names its
        one GPU with it (`analysis.gpu_options`)."""
        if "parse_args" not in self.text:
            return None
        return gpu_option(self._tree)

    @cached_property
    def cuda_only_calls(self) -> dict[tuple[int, int], UncheckedCudaCall]:
        """`torch.cuda.synchronize()` and the other calls that need CUDA, and pinned memory, where
        nothing checks for it (by line and byte column); none in a file with several GPUs on
        purpose (DF001's markers)."""
        if ("cuda" not in self.text and "pin_memory" not in self.text) or self.several_gpus:
            return {}
        return unchecked_cuda_only_calls(self._tree, self.imports)

    @cached_property
    def program_devices_in_host_classes(self) -> dict[str, frozenset[tuple[int, int]]]:
        """Module classes of the file whose every instance stays on the CPU (built here and in no
        other file, or built only by files beside it that keep them so) → where (line, byte column)
        their methods name a program device, the file's own or one imported from the project, to
        place tensors on (`analysis.host_instances`)."""
        if "class " not in self.text:
            return {}
        placing = set(PLACING_NAME.findall(self.text))  # `device=DEVICE`, `.to(DEVICE)`: one pass over the text
        imported = {  # names imported from a module that place tensors here (`from config import DEVICE`)
            name for name, qualified in self.imports.names.items() if name in placing and "." in qualified
        }
        if "cuda" not in self.text and not imported:
            return {}
        modules = {name for name, kind in self.classes.items() if kind is Kind.MODULE}
        if not modules:
            return {}
        return program_devices_in_host_classes(
            self._tree, modules, self.imports.qualify,
            lambda name: name in imported and self._project.imported_program_device(self._path, self.imports.names[name]),
            lambda class_name: self._project.instances_kept_on_host(self._path, class_name),
            self._project.imported_keeping(self._path, self.imports),
            lambda class_name: self._project.foreign_calls(self._path, class_name) == [],
        )

    @cached_property
    def sets_a_default_device(self) -> bool:
        """The file sets a global default device other than the CPU (`torch.set_default_device(device)`,
        `torch.set_default_tensor_type('torch.cuda.FloatTensor')`): its factories without `device=`
        are made there already, and aligning them changes nothing."""
        if "set_default_" not in self.text:
            return False
        return any(isinstance(node, ast.Call) and _sets_a_device_default(node, self.imports) for node in ast.walk(self._tree))

    @cached_property
    def hardcoded_gpu_flags(self) -> dict[int, str]:
        """Lines of `use_cuda = True` where that flag is bound once and guards CUDA-only code
        (`analysis.gpu_flags`): DF001 makes it `torch.cuda.is_available()`."""
        if "True" not in self.text or "cuda" not in self.text:  # CUDA-only code always names it
            return {}
        return hardcoded_gpu_flags(self._tree, self.text, self.imports)

    @cached_property
    def names_another_accelerator(self) -> bool:
        """The file names an accelerator other than CUDA (`"mps"`, `torch.backends.mps`, `args.no_mps`,
        `torch.xpu`) as a word of its own, not inside another (`samples`, `json.dumps`): a path
        taken without CUDA may run there."""
        return _OTHER_ACCELERATOR.search(self.text) is not None

    @cached_property
    def parameter_copying_classes(self) -> dict[str, tuple[int, str, str | None]]:
        """Plain classes of the file that copy the parameters of the model they are given and later
        blend the copies with a model's (an EMA): class → (position, name) of that parameter, and
        the method that makes the copies (None: `__init__`) (`analysis.parameter_copies`)."""
        return classes_copying_parameters(self._tree, self.imports) if "class " in self.text else {}

    @cached_property
    def cpu_generator_draws(self) -> dict[tuple[int, int], CpuGeneratorDraw]:
        """`torch.randn(..., generator=g, device=device)` with `g` a CPU generator (by line and byte
        column): a GPU device raises (`analysis.generator_draws`)."""
        if "Generator" not in self.text:
            return {}
        return cpu_generator_draws(self._tree, self.imports)

    @cached_property
    def _runs_on_a_device(self) -> bool:
        """The file, or a module of the project it imports, places something on a device, or the files
        beside it give one of its functions a moved model to call (`plot_predictions(rnn, 2)` after
        `rnn = RNN().to(device)`): else a program runs on the CPU wherever it runs, and aligning its
        values changes nothing."""
        if places_devices(self.text):
            return True
        if any(self._project.imported_module_places_devices(self._path, name) for name in set(self.imports.names.values())):
            return True
        return any(self.models_moved_beside(*called) for called in _called_parameters(self._tree))

    @cached_property
    def _built_and_called(self) -> bool:
        return any(self._builds_a_module_here(call) for call in screen.built_once_and_called(self._walk, self.classes))

    def _builds_a_module_here(self, call: ast.Call) -> bool:
        """`Net(...)`, or `build_model(...)` of a function that hands back a Module it built."""
        return self._builds_a_module(call) or isinstance(call.func, ast.Name) and self.returns_built_module(call.func.id)

    def runs_only_setup_before_the_move(self, model: str, move_line: int) -> bool:
        """Between the top level's first binding of `model` and its move on `move_line`, the top level
        calls only set-up code (`analysis.entry_lines.only_setup_between`): torch and builtins, Module
        constructors, methods of the model itself (`model.eval()`)."""
        first = first_top_level_binding(self._tree, model)
        return first is not None and first < move_line and only_setup_between(
            self._tree, first, move_line, lambda call: self._is_setup_call(call, model))

    def _is_setup_call(self, call: ast.Call, model: str) -> bool:
        qualified = self.imports.qualify(call.func) or ""
        if qualified.startswith(("torch.", "builtins.")) or self._builds_a_module(call):
            return True
        func = call.func
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == model:
            return True  # `model.eval()`, `model.half()`
        if isinstance(func, ast.Attribute) and func.attr == "from_pretrained":
            owner = self.imports.qualify(func.value)  # a pretrained Module of the project or of transformers
            return owner is not None and (self._project.is_module_class(self._path, owner) is True or owner.startswith("transformers."))
        return False

    def _builds_a_module(self, call: ast.Call) -> bool:
        """`Net(...)` where `Net` is a Module class: of this file, or as the run's files tell; and
        torch.nn's alternative constructors (`nn.Embedding.from_pretrained(vectors)`)."""
        func = call.func
        if isinstance(func, ast.Attribute) and func.attr == "from_pretrained":
            owner = self.imports.qualify(func.value)
            return owner is not None and owner.startswith("torch.nn.") and self._project.is_module_class(self._path, owner) is True
        qualified = self.imports.qualify(call.func)
        if qualified is None:
            return False
        return self.classes.get(qualified) is Kind.MODULE or self._project.is_module_class(self._path, qualified) is True

    def _any_tensor(self, names: list[ast.Name]) -> bool:
        if not names:
            return False
        reads = self.values.reads
        return any(reads.get((name.lineno, name.col_offset)) is Kind.TENSOR for name in names)

    @cached_property
    def _device_value_to_host(self) -> bool:
        """In a file that places nothing, only through a top-level function some call in another file
        gives a device value (`accuracy(logits, y)` in `utils.py`)."""
        return device_value_may_reach_host(
            self._tree, self.imports, places_devices(self.text), self.host_functions, self.numpy_arrays, self._given_device_values_beside,
            self.followed,
        )

    def followed(self, name: str) -> Followed:
        """The parameters whose tensors every return of the function `name` of the file, or of the
        project's function the file imports as `name`, is computed from (`analysis.following_returns`)."""
        if name not in self._followed:
            summary = self.helper(name)
            self._followed[name] = summary.follows if summary is not None else ()
        return self._followed[name]

    def _given_device_values_beside(self, function: str) -> bool:
        """Some call of the file's `function` in the files beside it gives it a value that may be on
        a device (the screen's question; DF008 asks `device_values_beside` of each parameter)."""
        return any(call.device_values for call in self._project.foreign_calls(self._path, function) or ())

    @cached_property
    def _factory_meets_tensor(self) -> bool:
        """The value analysis runs only if a factory meets a name whose kind matters."""
        return bool(self._factory_meeting_scope_lines)

    @cached_property
    def factory_meeting_lines(self) -> frozenset[int] | None:
        """Where DF004 can find anything: the `def` lines of the functions where a factory may meet a
        tensor (0: the top level). None for anywhere: under a star import (the screen assumes every
        signal), or where tokenizer encodings are fed to a model (`ENCODED_INPUTS`)."""
        if self._walk.star_import or self.has_signal(signals.ENCODED_INPUTS):
            return None
        return self._factory_meeting_scope_lines

    @cached_property
    def returned_pairs(self) -> dict[int, list[ReturnedPair]]:
        """By `def` line: factories a function returns beside a tensor computed from its
        parameters, that every caller puts together with it (`analysis.returned_pairs`)."""
        found: dict[int, list[ReturnedPair]] = {}
        is_tensor = lambda name: self.values.reads.get((name.lineno, name.col_offset)) is Kind.TENSOR  # noqa: E731
        top_level = {node.lineno: node.name for node in self._tree.body if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))}
        for pair in returned_pairs(self._tree, self.imports, is_tensor, self._instance_calls):
            if pair.function_line in top_level and self._project.foreign_calls(self._path, top_level[pair.function_line]) != []:
                continue  # another file of the project uses the function: its callers are not all in view
            found.setdefault(pair.function_line, []).append(pair)
        return found

    def _instance_calls(self, class_name: str) -> list[ast.Call] | None:
        """Every call of the file's instances of its Module class `class_name`, when the names
        holding them are only called or asked for attributes (`analysis.module_instances`)."""
        if self.classes.get(class_name) is not Kind.MODULE:
            return None
        instances = self._called_instances
        if class_name in instances.layers.values() or class_name in instances.immediate.values():
            return None
        names = {name for name, held in instances.names.items() if held == class_name}
        return [node for node in ast.walk(self._tree) if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in names]

    @cached_property
    def _called_instances(self) -> Instances:
        modules = {name for name, kind in self.classes.items() if kind is Kind.MODULE}
        return called_instances(self._tree, modules, self.imports.qualify)

    @cached_property
    def _factory_meeting_scope_lines(self) -> frozenset[int]:
        scopes = meeting_scopes(
            self._tree, self.imports, lambda name: self.values.reads.get((name.lineno, name.col_offset), Kind.UNKNOWN),
            self.non_tensor_names, self._imported_host_helper, self.classes, self._imported_meets,
            lambda name: self.returned_move(name) is not None or self.returned_listed_moves(name) is not None, self.models_moved_beside,
            lambda name: self._project.imported_class_methods(self._path, self.imports.names[name]),
            lambda name: (summary := self.local_helper(name)) is None or summary.gives_tensors,
        )
        return frozenset(0 if function is None else function.lineno for function in scopes) | set(self.returned_pairs)

    def _imported_meets(self, name: str) -> bool:
        """`from metrics import accuracy`: a function of the project that puts two of its parameters
        into one tensor operation, or feeds one to a model it is given as another
        (`ProjectIndex.imported_meetings`)."""
        meetings = self._project.imported_meetings(self._path, self.imports.names[name])
        return bool(meetings and (meetings.pairs or meetings.fed))

    @cached_property
    def host_functions(self) -> dict[str, HostParameters]:
        """The file's top-level functions that hand a parameter whole to a host library
        (`analysis.host_sinks.parameters_given_to_host`), and in a file that places values on
        devices, the functions it imports from the project's modules and calls, that only hand
        a parameter to one (`ProjectIndex.imported_host_parameters`: `accuracy(preds, labels)` of
        `from metrics import accuracy`)."""
        return {**self.imported_host_functions, **parameters_given_to_host(self._tree, self.imports)}

    @cached_property
    def imported_host_functions(self) -> dict[str, HostParameters]:
        """The imported part of `host_functions`, by the name the file calls them."""
        if not places_devices(self.text):
            return {}
        found = {}
        for name in sorted(self._walk.called & self.imports.names.keys()):
            host = self._project.imported_host_parameters(self._path, self.imports.names[name])
            if host is not None:
                found[name] = host
        return found

    @cached_property
    def numpy_arrays(self) -> frozenset[str]:
        """Names bound to a numpy array made by shape (`analysis.host_sinks.array_names`): a tensor
        stored into one of its items goes to numpy."""
        return array_names(self._tree, self.imports)

    @cached_property
    def entry_lines(self) -> dict[str, list[int] | None]:
        """From which top-level lines each top-level function runs (`analysis.entry_lines`)."""
        return top_level_entry_lines(self._tree)

    def local_helper(self, name: str) -> HelperSummary | None:
        """The summary of the file's own top-level function `name` (`analysis.host_helpers`),
        when the file defines it once; it reads the summaries of the file's functions it calls."""
        if name not in self._local_helpers:
            self._local_helpers[name] = None  # a function that calls itself, directly or not, ends here
            function = defined_once(self._tree.body, (ast.FunctionDef, ast.AsyncFunctionDef), name)
            if function is not None:
                self._local_helpers[name] = summarise(function, self.imports, self._module_scope, self.local_helper)
        return self._local_helpers[name]

    def helper(self, name: str) -> HelperSummary | None:
        """The summary of the file's own top-level function `name` (defined once), else of the
        function of a file of the project it imports under that name."""
        summary = self.local_helper(name)
        if summary is None and name in self.imports.names:
            summary = self._project.imported_helper(self._path, self.imports.names[name])
        return summary

    def returned_move(self, name: str) -> ReturnedMove | None:
        """What the top-level function `name` of the file (defined once), or of a file of the project
        it imports, moves and gives back, when every `return` of it does (`analysis.returned_moves`:
        `return model.to(device)`)."""
        if name not in self._returned_moves:
            function = defined_once(self._tree.body, (ast.FunctionDef, ast.AsyncFunctionDef), name)
            if function is not None:
                self._returned_moves[name] = returned_move(function, self.imports, self._module_scope.once)
            elif name in self.imports.names:  # `from models import build_model`: a function of the project
                self._returned_moves[name] = self._project.imported_returned_move(self._path, self.imports.names[name])
            else:
                self._returned_moves[name] = None
        return self._returned_moves[name]

    def parameters_moved_to_host(self, name: str) -> dict[int, str]:
        """Position → name of the parameters the top-level function `name` of the file (defined
        once), or of a file of the project it imports, brings to the host in place and leaves there
        (`analysis.host_moving_helpers`: a plotting helper's `model.to("cpu")`)."""
        if name not in self._host_moved:
            function = defined_once(self._tree.body, (ast.FunctionDef, ast.AsyncFunctionDef), name)
            if function is not None:
                self._host_moved[name] = parameters_moved_to_host(function, self.imports)
            elif name in self.imports.names:
                self._host_moved[name] = self._project.imported_parameters_moved_to_host(self._path, self.imports.names[name]) or {}
            else:
                self._host_moved[name] = {}
        return self._host_moved[name]

    @cached_property
    def calls_moving_models_to_host(self) -> bool:
        """A call of a function that brings a parameter to the host in place
        (`plot_decision_boundary(model_0, X, y)`)."""
        return any(self.parameters_moved_to_host(name) for name in sorted(self._walk.called))

    @cached_property
    def moves_models_to_host(self) -> bool:
        """DF030's screen: `calls_moving_models_to_host`, or a name the file calls (a model, not a
        tensor) brought to the host inside a larger statement (`torch.save(model.cpu().state_dict(), path)`)."""
        if self.calls_moving_models_to_host:
            return True
        if "cpu" not in self.text:
            return False
        return any(name in self._walk.called and not (isinstance(statement, ast.Expr) and call is statement.value)
                   for statement in every_node(self._tree) if isinstance(statement, ast.stmt)
                   for name, call in host_moves(statement, self.imports))

    def returned_listed_moves(self, name: str) -> ReturnedMove | None:
        """What the top-level function `name` of the file (defined once), or of a file of the project
        it imports, gives back when every `return` is a list of moves to one device
        (`analysis.returned_moves.returned_listed_moves`: an ensemble's builder)."""
        if name not in self._returned_listed_moves:  # asked by every rule's scope that loops over the call's result
            function = defined_once(self._tree.body, (ast.FunctionDef, ast.AsyncFunctionDef), name)
            if function is not None:
                self._returned_listed_moves[name] = returned_listed_moves(function, self.imports, self._module_scope.once)
            elif name in self.imports.names:  # `from models import build_ensemble`
                self._returned_listed_moves[name] = self._project.imported_returned_listed_moves(self._path, self.imports.names[name])
            else:
                self._returned_listed_moves[name] = None
        return self._returned_listed_moves[name]

    def returns_built_module(self, name: str) -> bool:
        """The top-level function `name` of the file (defined once), or of a file of the project it
        imports, hands back a Module it built and left on the host (`analysis.returned_modules`:
        `model = Net(); ...; return model`)."""
        if name not in self._returned_modules:
            function = defined_once(self._tree.body, (ast.FunctionDef, ast.AsyncFunctionDef), name)
            self._returned_modules[name] = False  # a function that calls itself ends here
            if function is not None:
                self._returned_modules[name] = returns_built_module(function, self.imports, self._builds_a_module_here)
            elif name in self.imports.names:  # `from models import build_model`: a function of the project
                self._returned_modules[name] = self._project.imported_returns_built_module(self._path, self.imports.names[name])
        return self._returned_modules[name]

    def method_summary(self, class_name: str, method: str) -> HelperSummary | None:
        """The summary (`analysis.host_helpers`) of the method `method` of the file's top-level
        class `class_name`, when the file defines that class, and that method in it, once."""
        class_node = defined_once(self._tree.body, (ast.ClassDef,), class_name)
        function = defined_once(class_node.body, (ast.FunctionDef, ast.AsyncFunctionDef), method) if class_node is not None else None
        return summarise(function, self.imports, self._module_scope) if function is not None else None

    @cached_property
    def _module_scope(self) -> ModuleScope:
        return module_scope(self._tree, self._walk.declared_global)

    def _imported_host_helper(self, name: str) -> bool:
        """`from utils import causal_mask`: a function of the project that returns CPU tensors, or
        a tuple or dict of them (`x, y = load_split(rows)`, `batch = encode(rows)`)."""
        if name not in self._imported_helpers:
            summary = self._project.imported_helper(self._path, self.imports.names[name])
            self._imported_helpers[name] = summary is not None and (
                summary.returns_host_tensors or summary.host_tuple_size > 0 or summary.returns_host_dicts)
        return self._imported_helpers[name]

    @cached_property
    def values(self) -> ValueFacts:
        return self._analyse_values(self._tree)

    def read_values_in(self, part: str) -> None:
        """Let the value analysis, when nothing has needed it yet, read only `part`: a line-for-line
        slice of the file that keeps with its statements everything they depend on (`check_slice`,
        `CheckSlice.values_complete`). The kinds of the names read in the kept statements are the
        whole file's (the slice keeps the definitions they read, the calls that give their parameters
        kinds, the statements that change what they read); nothing else may be asked. A long file's
        analysis then costs its slice's."""
        if "values" not in self.__dict__:
            self.__dict__["values"] = self._analyse_values(python_parser.parse(part))

    def _analyse_values(self, tree: ast.Module) -> ValueFacts:
        imported = lambda qualified: self._project.imported_kind(self._path, qualified)  # noqa: E731
        constructed = lambda class_name: self._project.constructed_kinds(self._path, class_name)  # noqa: E731
        called = lambda class_name, method: self._project.method_call_kinds(self._path, class_name, method)  # noqa: E731
        forward = lambda class_name: self._project.forward_call_kinds(self._path, class_name)  # noqa: E731
        return analyse_values(tree, self.imports, self.classes, self._walk.declared_global, imported, constructed,
                              called_beside=called, forward_beside=forward)

    def kind_at(self, line: int, column: int) -> Kind:
        """The kind of the name read at `line` and character `column` (0-based), as libcst counts."""
        return self.values.reads.get((line, self.byte_column(line, column)), Kind.UNKNOWN)

    def attribute_kind_at(self, line: int, column: int) -> Kind:
        """The kind of the attribute `self.x` read at `line` and character `column`."""
        return self.values.attribute_reads.get((line, self.byte_column(line, column)), Kind.UNKNOWN)

    def iterated_call_kind_at(self, line: int, column: int) -> Kind:
        """The kind of the call a `for` statement iterates over at `line` and character `column`."""
        return self.values.iterated_calls.get((line, self.byte_column(line, column)), Kind.UNKNOWN)

    def byte_column(self, line: int, column: int) -> int:
        """`ast` counts columns in UTF-8 bytes, libcst in characters."""
        text = self.lines[line - 1] if 0 < line <= len(self.lines) else ""
        return column if text.isascii() else len(text[:column].encode("utf-8"))

    def non_tensor_names(self, first_line: int, last_line: int) -> set[str]:
        """Names read somewhere in these lines as a proven non-tensor (a list, a number, an array)."""
        reads, names = self.values.reads, self.values.read_names
        return {
            names[position]
            for position, kind in reads.items()
            if first_line <= position[0] <= last_line and kind.is_known_non_tensor
        }


def analyse_file(source: str, path: str, project: ProjectIndex | None = None, whole: str | None = None) -> FileFacts | None:
    """None when Python's own parser rejects the text (the engine reports that separately).
    `whole`: the whole file when `source` is a part of it (the editor's quick diagnostics); what
    the file is and which framework it uses are then read from the whole."""
    try:
        tree = python_parser.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    facts = FileFacts(tree, source, path, project)
    if whole is not None and whole != source:
        whole_facts = analyse_file(whole, path, project)
        if whole_facts is not None:
            facts.role, facts.framework = whole_facts.role, whole_facts.framework
    return facts


def _called_parameters(tree: ast.Module) -> list[tuple[str, int, str]]:
    """(function, position, parameter) for each positional parameter a top-level function calls
    (`model(X)` in `def plot_predictions(model, n)`)."""
    found = []
    for function in tree.body:
        if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        positional = [argument.arg for argument in [*function.args.posonlyargs, *function.args.args]]
        called = {node.func.id for node in ast.walk(function) if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)}
        found += [(function.name, position, name) for position, name in enumerate(positional) if name in called]
    return found


def _sets_a_device_default(call: ast.Call, imports: ImportTable) -> bool:
    """`torch.set_default_device(x)` with `x` no CPU literal, or `torch.set_default_tensor_type(t)`
    with a CUDA type (`torch.cuda.FloatTensor`, `'torch.cuda.FloatTensor'`, or a choice of one)."""
    setter = imports.qualify(call.func)
    given = call.args[0] if call.args else None
    if given is None or setter not in ("torch.set_default_device", "torch.set_default_tensor_type"):
        return False
    if setter == "torch.set_default_device":
        return not (isinstance(given, ast.Constant) and given.value == "cpu")
    return any(
        isinstance(node, ast.Constant) and isinstance(node.value, str) and "cuda" in node.value
        or isinstance(node, ast.Attribute) and node.attr == "cuda"
        for node in ast.walk(given)
    )


def _role(tree: ast.Module, path: str, imports: ImportTable, classes: dict[str, Kind]) -> FileRole:
    name = PurePath(path).name
    if name.endswith(".ipynb"):
        return FileRole.PROGRAM  # a notebook's cells run top to bottom in one kernel
    if name.startswith("test_") or name.endswith("_test.py") or name == "conftest.py":
        return FileRole.TEST
    has_tests = any(
        isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.name.lower().startswith("test")
        for node in tree.body
    )
    if has_tests and imports.imports_any(TEST_MODULES):
        return FileRole.TEST
    if name == "__init__.py":
        return FileRole.LIBRARY
    runs = any(_runs_at_import(statement, imports, classes) for statement in tree.body)
    return FileRole.PROGRAM if runs else FileRole.LIBRARY


def _runs_at_import(statement: ast.stmt, imports: ImportTable, classes: dict[str, Kind]) -> bool:
    """A `__main__` block, a loop, a call made for its effect, or model and tensor work at the top
    level: a script. A library's top level only defines (constants, loggers, registries)."""
    if isinstance(statement, ast.If):
        test = statement.test
        main_block = isinstance(test, ast.Compare) and isinstance(test.left, ast.Name) and test.left.id == "__name__"
        if main_block:
            return not _runs_only_self_tests(statement, imports)
        return any(_runs_at_import(inner, imports, classes) for inner in statement.body)
    if isinstance(statement, PROGRAM_STATEMENTS):
        return True
    if isinstance(statement, ast.Expr):
        return isinstance(statement.value, ast.Call) and not _is_setup_call(statement.value) and not _is_private_library_call(statement.value, imports)
    if isinstance(statement, (ast.Assign, ast.AnnAssign)) and statement.value is not None:
        return any(_is_device_work(call, imports, classes) for call in every_node(statement.value) if isinstance(call, ast.Call))
    return False


SELF_TEST_RUNNERS = ("doctest.", "unittest.main", "pytest.main", "builtins.print", "sys.exit", "builtins.exit")


def _runs_only_self_tests(block: ast.If, imports: ImportTable) -> bool:
    """`if __name__ == "__main__": import doctest; doctest.testmod()`: a library module that runs
    its own doctests (or unit tests) when run, and nothing else, is no program."""
    calls = [node for node in every_node(block) if isinstance(node, ast.Call)]
    return bool(calls) and all((imports.qualify(call.func) or "").startswith(SELF_TEST_RUNNERS) for call in calls)


def _is_device_work(call: ast.Call, imports: ImportTable, classes: dict[str, Kind]) -> bool:
    """Building a model, a loader or a tensor, loading a checkpoint, moving something."""
    if isinstance(call.func, ast.Attribute) and call.func.attr in ("cuda", "to", "train", "eval"):
        return True
    qualified = imports.qualify(call.func) or ""
    if classes.get(qualified) is Kind.MODULE or qualified.endswith("DataLoader"):
        return True
    parts = qualified.split(".")
    is_torch_call = parts[0] == "torch" and parts[-1] not in ("device", "dtype", "finfo", "iinfo", "Size")
    return is_torch_call and (len(parts) == 2 or qualified.startswith("torch.nn."))


def _is_private_library_call(call: ast.Call, imports: ImportTable) -> bool:
    """`torchaudio._extension._load_lib("torchaudio_prefixctc")` at a module's top level: a call
    into an imported package's private API is that package initialising itself (loading its
    extension), which only the package's own modules do; a script calls public API."""
    if not isinstance(call.func, ast.Attribute):
        return False
    qualified = imports.qualify(call.func) or ""
    parts = qualified.split(".")
    return len(parts) > 1 and parts[0] != "" and any(part.startswith("_") and not part.startswith("__") for part in parts[1:])


def _is_setup_call(call: ast.Call) -> bool:
    """Calls libraries make at import time too: `warnings.filterwarnings(...)`, `logger.setLevel(...)`,
    `logging.basicConfig(...)`, `register(...)`; a script's calls (`main()`, `train(model)`, `print(...)`) are not these."""
    func = call.func
    name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
    return name.startswith((
        "filterwarnings", "simplefilter", "setLevel", "register", "add_", "update", "append", "extend",
        "basicConfig", "addHandler", "setFormatter", "captureWarnings",  # logging configured at import
    ))


def _framework(imports: ImportTable, found: screen.Walk) -> str | None:
    """The framework that places the file's models: imported, or called by its full name
    (`torch.nn.parallel.DistributedDataParallel(model, device_ids=[rank])` after `import torch`)."""
    for prefix in PLACEMENT_FRAMEWORKS:
        if imports.imports_any((prefix,)):
            return prefix
    if not imports.imports_any(("torch",)):
        return None
    for node, _ in found.nodes:
        qualified = imports.qualify(node.func) if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) else None
        if qualified is not None and qualified.startswith("torch."):
            named = [prefix for prefix in PLACEMENT_FRAMEWORKS if qualified == prefix or qualified.startswith(prefix + ".")]
            if named:
                return named[0]
    return None


def _class_kinds(tree: ast.Module, imports: ImportTable, path: str, project: ProjectIndex | None) -> dict[str, Kind]:
    """Local class name → MODULE (an nn.Module), OBJECT (a dataclass or plain class), or UNKNOWN."""
    kinds: dict[str, Kind] = {}
    for node in tree.body:
        if not isinstance(node, ast.ClassDef):
            continue
        base_kinds = [_base_kind(base, imports, kinds, path, project) for base in node.bases]
        if Kind.MODULE in base_kinds:
            kinds[node.name] = Kind.MODULE
        elif all(kind is Kind.OBJECT for kind in base_kinds):
            kinds[node.name] = Kind.OBJECT
        else:
            kinds[node.name] = Kind.UNKNOWN
    return kinds


def _base_kind(base: ast.expr, imports: ImportTable, local: dict[str, Kind], path: str, project: ProjectIndex | None) -> Kind:
    qualified = imports.qualify(base)
    if qualified is None:
        return Kind.UNKNOWN
    if qualified in local:
        return local[qualified]
    if qualified in ("builtins.object", "abc.ABC", "typing.NamedTuple", "enum.Enum"):
        return Kind.OBJECT
    verdict = (project or ProjectIndex()).is_module_class(path, qualified)
    if verdict is None:
        return Kind.UNKNOWN
    return Kind.MODULE if verdict else Kind.OBJECT  # False: every base resolved, none is a Module
