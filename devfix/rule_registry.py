"""The rules by code, without their implementations: what a run needs to select rules and to decide,
from the `ast` screen alone, which of them may find something in a file.

Importing a rule imports libcst (about 0.3 s); a check of files where no rule can find anything
must not pay that, so the engine loads a rule's class (`RuleSpec.load`) only for a file it runs
on. Each rule class reads its triggers and signals from here (`codemods.base.DevfixRule`).
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import TYPE_CHECKING

from devfix.analysis import signals as screen  # the signal names only: the screen is loaded when a file needs it
from devfix.analysis.torch_api import LEGACY_DTYPES  # (constants only: no parser)

if TYPE_CHECKING:
    from devfix.analysis.facts import FileFacts
    from devfix.codemods.base import DevfixRule


@dataclass(frozen=True)
class RuleSpec:
    """A rule's code, where its class lives, and the cheap conditions for it to find anything:
    `triggers` (text that must occur), `signals` (one of these code shapes, `analysis.screen`),
    `needs_all_signals`, `moves_values` (it adds moves a placement framework makes itself),
    `in_tests`, `library_signal` (in a library module, only with that signal), `aligns_values` (it
    aligns a value with another one's device: not in a program that places nothing, nor in a test
    that runs nothing on an accelerator, `analysis.test_devices`); `findings_in`, the function of `analysis.finding_seeds` that says which top-level
    statements can hold its findings (None: any), so that a check analyses only those
    (`devfix.check_slice`)."""

    CODE: str
    module: str
    class_name: str
    triggers: tuple[str, ...] = ()
    signals: frozenset[str] = frozenset()
    needs_all_signals: frozenset[str] = frozenset()
    moves_values: bool = False
    in_tests: bool = True
    library_signal: str | None = None
    aligns_values: bool = False
    findings_in: str | None = None

    def has_signals(self, facts: FileFacts) -> bool:
        """The code shapes the rule needs (`analysis.screen`) are in the file."""
        if self.signals and not any(facts.has_signal(signal) for signal in self.signals):
            return False
        return all(facts.has_signal(signal) for signal in self.needs_all_signals)

    def may_apply(self, code: str, facts: FileFacts | None = None) -> bool:
        """Cheap tests that skip a whole tree pass: the text cannot match, the code shapes the rule
        needs are absent, the file's role excludes the rule, or a framework owns placement in the
        file (accelerate, Lightning, XLA, ...)."""
        if self.triggers and not any(trigger in code for trigger in self.triggers):
            return False
        if facts is None:
            return True
        if not self.has_signals(facts):
            return False
        if not self._fits_role(facts):
            return False
        return not (self.moves_values and facts.framework is not None)

    def _fits_role(self, facts: FileFacts) -> bool:
        from devfix.analysis.facts import FileRole

        if facts.role is FileRole.TEST:
            return self.in_tests and (not self.aligns_values or facts.test_devices.runs_anywhere)
        if facts.role is FileRole.LIBRARY and self.library_signal is not None:
            return facts.has_signal(self.library_signal)
        if facts.role is FileRole.PROGRAM and self.aligns_values:
            return facts.has_signal(screen.RUNS_ON_A_DEVICE)
        return True

    def load(self) -> type[DevfixRule]:
        """The rule's class (imports libcst and the rule's module)."""
        return getattr(importlib.import_module(f"devfix.codemods.{self.module}"), self.class_name)


CUDA_TYPE_TRIGGERS = tuple(f"cuda.{name}" for name in LEGACY_DTYPES)  # `dtype = torch.cuda.FloatTensor`: DF001

RULE_SPECS: tuple[RuleSpec, ...] = (
    RuleSpec(  # not in tests: a test that names "cuda" is a GPU test (`@RunIf(min_cuda_gpus=1)`, a GPU CI job) by intent
        "DF001", "df001_hardcoded_cuda", "HardcodedCuda", triggers=('"cuda', "'cuda", '.cuda(', "set_default_", "device=0", *CUDA_TYPE_TRIGGERS),
        signals=frozenset({screen.HARDCODED_CUDA}), in_tests=False, findings_in="hardcoded_cuda",
    ),
    RuleSpec("DF002", "df002_loader_to_device", "LoaderToDevice", triggers=('for ', 'iter('), signals=frozenset({screen.LOADER_LOOP}), moves_values=True),
    RuleSpec("DF003", "df003_module_not_moved", "ModuleNotMoved", triggers=('.to(', '.cuda('), signals=frozenset({screen.MOVE_CALL}), needs_all_signals=frozenset({screen.BUILT_AND_CALLED}), moves_values=True),
    RuleSpec(  # a program that places nothing (nor do the modules it imports) runs on the CPU: nothing to align
        "DF004", "df004_constructor_device", "ConstructorDevice", triggers=('torch.', 'from torch'),
        signals=frozenset({screen.ENCODED_INPUTS, screen.FACTORY_MEETS_TENSOR}), aligns_values=True,
        findings_in="constructor_device",
    ),
    RuleSpec("DF005", "df005_discarded_to", "DiscardedTo", triggers=('.to(', '.cuda(', '.cpu('), signals=frozenset({screen.BARE_MOVE}), findings_in="discarded_move"),
    RuleSpec("DF006", "df006_pack_padded_lengths", "PackPaddedLengths", triggers=('pack_padded_sequence',)),
    RuleSpec(  # not in tests (a test may load onto a device on purpose); in a library, only into a state dict
        "DF007", "df007_load_map_location", "LoadMapLocation", triggers=("load",), signals=frozenset({screen.LOAD_CALL}),
        in_tests=False, library_signal=screen.LOAD_INTO_STATE_DICT, findings_in="load_without_map_location",
    ),
    RuleSpec("DF008", "df008_tensor_to_numpy", "TensorToNumpy", signals=frozenset({screen.HOST_SINK}), needs_all_signals=frozenset({screen.DEVICE_VALUE_TO_HOST}), findings_in="tensor_to_numpy"),
    RuleSpec("DF009", "df009_legacy_constructor", "LegacyConstructor", triggers=('Tensor(', 'Tensor)', 'Tensor\n', 'Parameter('), signals=frozenset({screen.LEGACY_CONSTRUCTOR}), findings_in="legacy_constructor"),
    RuleSpec(  # a program that places nothing (nor do the modules it imports) runs its helpers' models on the CPU
        "DF010", "df010_helper_device", "HelperDevice", triggers=('for ', 'iter('), signals=frozenset({screen.LOADER_LOOP}),
        moves_values=True, aligns_values=True,
    ),
    RuleSpec("DF011", "df011_loss_weight_device", "LossWeightDevice", triggers=('weight=',), signals=frozenset({screen.LOSS_WEIGHT})),
    RuleSpec(  # as DF004: in a program that places nothing (nor do the modules it imports) no index is on a device
        "DF012", "df012_lookup_table_device", "LookupTableDevice", triggers=('class ', 'def ', '['), signals=frozenset({screen.PLAIN_CLASS_TABLE}),
        aligns_values=True, findings_in="lookup_table",
    ),
    RuleSpec("DF013", "df013_runtime_placement", "RuntimePlacement", triggers=('jit.trace', 'device_map'), signals=frozenset({screen.RUNTIME_PLACEMENT})),
    RuleSpec(  # as DF016: a program that places nothing (nor do the modules it imports) runs its Modules on the CPU
        "DF014", "df014_tensor_attribute_buffer", "TensorAttributeBuffer", triggers=('class ',), signals=frozenset({screen.MODULE_TENSOR_ATTRIBUTE}),
        aligns_values=True, findings_in="tensor_attribute",
    ),
    RuleSpec("DF015", "df015_module_container", "ModuleContainer", triggers=('class ',), signals=frozenset({screen.MODULE_CONTAINER}), findings_in="module_container"),
    RuleSpec(  # as DF004: a program that places nothing (nor do the modules it imports) runs its Modules on the CPU
        "DF016", "df016_method_tensor_device", "MethodTensorDevice", triggers=('class ',), signals=frozenset({screen.UNPLACED_FACTORY_IN_METHOD}),
        aligns_values=True, findings_in="method_tensor_device",
    ),
    RuleSpec("DF017", "df017_copy_before_move", "CopyBeforeMove", triggers=('deepcopy',), signals=frozenset({screen.COPY_OF_MOVED}), moves_values=True),
    RuleSpec("DF018", "df018_module_in_forward", "ModuleInForward", triggers=('class ',), signals=frozenset({screen.CALLED_CONSTRUCTION})),
    RuleSpec("DF019", "df019_device_argument_layer", "DeviceArgumentLayer", triggers=('class ',), signals=frozenset({screen.DEVICE_ARGUMENT_LAYER}), findings_in="device_argument_layer"),
    RuleSpec("DF020", "df020_trainer_attributes", "TrainerAttributes", triggers=('self.',), signals=frozenset({screen.PLAIN_CLASS_MOVE}), moves_values=True),
    RuleSpec("DF021", "df021_data_parallel_placement", "DataParallelPlacement", triggers=('DataParallel',), signals=frozenset({screen.DATA_PARALLEL})),
    RuleSpec("DF022", "df022_optimizer_state_order", "OptimizerStateOrder", triggers=('load_state_dict', 'Adagrad', '.clone(', 'deepcopy'), signals=frozenset({screen.OPTIMIZER_LOADED_BEFORE_MOVE})),
    RuleSpec("DF023", "df023_device_captured_at_init", "DeviceCapturedAtInit", triggers=('.device',), signals=frozenset({screen.DEVICE_CAPTURED_AT_INIT})),
    RuleSpec("DF024", "df024_cuda_only_call", "CudaOnlyCall", triggers=('cuda', 'pin_memory'), signals=frozenset({screen.CUDA_ONLY_CALL}), in_tests=False, findings_in="cuda_only_call"),
    RuleSpec("DF025", "df025_generator_device", "GeneratorDevice", triggers=('Generator',), signals=frozenset({screen.CPU_GENERATOR_DRAW}), findings_in="cpu_generator_draw"),
    RuleSpec("DF026", "df026_layer_replaced_after_move", "LayerReplacedAfterMove", triggers=('.to(', '.cuda('), signals=frozenset({screen.LAYER_REPLACED_AFTER_MOVE}), moves_values=True),
    RuleSpec("DF027", "df027_distribution_attribute", "DistributionAttribute", triggers=('distributions',), signals=frozenset({screen.DISTRIBUTION_ATTRIBUTE}), findings_in="distribution_attribute"),
    RuleSpec("DF028", "df028_program_device_in_module", "ProgramDeviceInModule", triggers=('"cuda', "'cuda", "device=", ".to("), signals=frozenset({screen.PROGRAM_DEVICE_IN_HOST_MODULE})),
    RuleSpec("DF029", "df029_loader_worker_device", "LoaderWorkerDevice", triggers=('num_workers',), signals=frozenset({screen.LOADER_WORKER_DEVICE})),
    RuleSpec("DF030", "df030_model_left_on_host", "ModelLeftOnHost", triggers=('.to(', '.cuda('),
             signals=frozenset({screen.MODEL_LEFT_ON_HOST})),
)
SPECS_BY_CODE = {spec.CODE: spec for spec in RULE_SPECS}


class UnknownRuleCode(ValueError):
    pass


def spec_by_code(code: str) -> RuleSpec:
    spec = SPECS_BY_CODE.get(code.upper())
    if spec is None:
        raise UnknownRuleCode(f"unknown rule code {code!r}; `devfix rules` lists them")
    return spec


def select_specs(select: tuple[str, ...] = (), ignore: tuple[str, ...] = ()) -> tuple[RuleSpec, ...]:
    """Rules whose code starts with a selected prefix (all when none) and no ignored prefix."""
    for prefix in (*select, *ignore):
        if prefix.upper() not in ("ALL",) and not any(spec.CODE.startswith(prefix.upper()) for spec in RULE_SPECS):
            raise UnknownRuleCode(f"{prefix!r} matches no rule code; `devfix rules` lists them")
    return tuple(
        spec
        for spec in RULE_SPECS
        if (not select or any(_matches(spec.CODE, prefix) for prefix in select))
        and not any(_matches(spec.CODE, prefix) for prefix in ignore)
    )


def _matches(code: str, prefix: str) -> bool:
    return prefix.upper() == "ALL" or code.startswith(prefix.upper())
