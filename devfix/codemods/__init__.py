"""The rules, one a module. `devfix.rule_registry` selects them by code or prefix without importing them."""

from __future__ import annotations

from devfix.codemods.base import DevfixRule
from devfix.codemods.df001_hardcoded_cuda import HardcodedCuda
from devfix.codemods.df002_loader_to_device import LoaderToDevice
from devfix.codemods.df003_module_not_moved import ModuleNotMoved
from devfix.codemods.df004_constructor_device import ConstructorDevice
from devfix.codemods.df005_discarded_to import DiscardedTo
from devfix.codemods.df006_pack_padded_lengths import PackPaddedLengths
from devfix.codemods.df007_load_map_location import LoadMapLocation
from devfix.codemods.df008_tensor_to_numpy import TensorToNumpy
from devfix.codemods.df009_legacy_constructor import LegacyConstructor
from devfix.codemods.df010_helper_device import HelperDevice
from devfix.codemods.df011_loss_weight_device import LossWeightDevice
from devfix.codemods.df012_lookup_table_device import LookupTableDevice
from devfix.codemods.df013_runtime_placement import RuntimePlacement
from devfix.codemods.df014_tensor_attribute_buffer import TensorAttributeBuffer
from devfix.codemods.df015_module_container import ModuleContainer
from devfix.codemods.df016_method_tensor_device import MethodTensorDevice
from devfix.codemods.df017_copy_before_move import CopyBeforeMove
from devfix.codemods.df018_module_in_forward import ModuleInForward
from devfix.codemods.df019_device_argument_layer import DeviceArgumentLayer
from devfix.codemods.df020_trainer_attributes import TrainerAttributes
from devfix.codemods.df021_data_parallel_placement import DataParallelPlacement
from devfix.codemods.df022_optimizer_state_order import OptimizerStateOrder
from devfix.codemods.df023_device_captured_at_init import DeviceCapturedAtInit
from devfix.codemods.df024_cuda_only_call import CudaOnlyCall
from devfix.codemods.df025_generator_device import GeneratorDevice
from devfix.codemods.df026_layer_replaced_after_move import LayerReplacedAfterMove
from devfix.codemods.df027_distribution_attribute import DistributionAttribute
from devfix.codemods.df028_program_device_in_module import ProgramDeviceInModule
from devfix.codemods.df029_loader_worker_device import LoaderWorkerDevice
from devfix.codemods.df030_model_left_on_host import ModelLeftOnHost
from devfix.rule_registry import UnknownRuleCode, select_specs, spec_by_code

ALL_RULES: tuple[type[DevfixRule], ...] = (
    HardcodedCuda,
    LoaderToDevice,
    ModuleNotMoved,
    ConstructorDevice,
    DiscardedTo,
    PackPaddedLengths,
    LoadMapLocation,
    TensorToNumpy,
    LegacyConstructor,
    HelperDevice,
    LossWeightDevice,
    LookupTableDevice,
    RuntimePlacement,
    TensorAttributeBuffer,
    ModuleContainer,
    MethodTensorDevice,
    CopyBeforeMove,
    ModuleInForward,
    DeviceArgumentLayer,
    TrainerAttributes,
    DataParallelPlacement,
    OptimizerStateOrder,
    DeviceCapturedAtInit,
    CudaOnlyCall,
    GeneratorDevice,
    LayerReplacedAfterMove,
    DistributionAttribute,
    ProgramDeviceInModule,
    LoaderWorkerDevice,
    ModelLeftOnHost,
)
__all__ = ["ALL_RULES", "UnknownRuleCode", "rule_by_code", "select_rules"]


def rule_by_code(code: str) -> type[DevfixRule]:
    return spec_by_code(code).load()


def select_rules(select: tuple[str, ...] = (), ignore: tuple[str, ...] = ()) -> tuple[type[DevfixRule], ...]:
    """Rules whose code starts with a selected prefix (all when none) and no ignored prefix."""
    return tuple(spec.load() for spec in select_specs(select, ignore))
