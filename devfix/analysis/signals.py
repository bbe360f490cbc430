"""The names of the code shapes the `ast` screen looks for (`analysis.screen`), apart from the
screen itself: the rule registry names each rule's signals without importing the analysis, so a
run whose files are all answered from the result cache never loads it."""

HARDCODED_CUDA = "hardcoded-cuda"  # `.cuda()`, `.to("cuda")`, `device="cuda"`, `device = "cuda"`
DATA_PARALLEL = "data-parallel"  # nn.DataParallel(...)
RUNTIME_PLACEMENT = "runtime-placement"  # jit.trace; a move after device_map=
OPTIMIZER_LOADED_BEFORE_MOVE = "optimizer-loaded-before-move"  # `optimizer.load_state_dict(...)`, then `model.to(device)`
DEVICE_CAPTURED_AT_INIT = "device-captured-at-init"  # `self.device = next(self.parameters()).device` in `__init__`
LOADER_LOOP = "loader-loop"  # `for batch in loader:` over what may be a DataLoader
MOVE_CALL = "move-call"
BARE_MOVE = "bare-move"
FACTORY_MEETS_TENSOR = "factory-meets-tensor"  # lazy: analysis.factory_meetings
UNPLACED_FACTORY_IN_METHOD = "unplaced-factory-in-method"
LEGACY_CONSTRUCTOR = "legacy-constructor"
LOAD_CALL = "load-call"  # `torch.load(path)` without `map_location`
LOAD_INTO_STATE_DICT = "load-into-state-dict"  # ... whose result `load_state_dict` may receive
LOSS_WEIGHT = "loss-weight"  # `F.cross_entropy(x, y, weight=w)`
COPY_OF_MOVED = "copy-of-moved"  # `ema = copy.deepcopy(model)` of a name moved somewhere
HOST_SINK = "host-sink"
PLACES_DEVICES = "places-devices"  # lazy: the text has a move, `device=` or `torch.device(`
RUNS_ON_A_DEVICE = "runs-on-a-device"  # lazy: PLACES_DEVICES here or in a local module the file imports
DEVICE_VALUE_TO_HOST = "device-value-to-host"  # lazy: analysis.host_sinks
PLAIN_CLASS_TABLE = "plain-class-table"
PLAIN_CLASS_MOVE = "plain-class-move"
MODULE_TENSOR_ATTRIBUTE = "module-tensor-attribute"
MODULE_CONTAINER = "module-container"
CALLED_CONSTRUCTION = "called-construction"  # lazy: `Layer(...)(x)` of a Module class with state
DEVICE_ARGUMENT_LAYER = "device-argument-layer"
BUILT_AND_CALLED = "built-and-called"  # lazy: `model = Net()`, `model(x)`, `Net` a Module class with state; or a trainer's unmoved model
ENCODED_INPUTS = "encoded-inputs"
CUDA_ONLY_CALL = "cuda-only-call"  # lazy: `torch.cuda.synchronize()` and kin that nothing checks (analysis.cuda_only_calls)
CPU_GENERATOR_DRAW = "cpu-generator-draw"  # lazy: `torch.randn(..., generator=<CPU generator>, device=d)` (analysis.generator_draws)
LAYER_REPLACED_AFTER_MOVE = "layer-replaced-after-move"  # `model.fc = nn.Linear(...)` of a name moved somewhere
DISTRIBUTION_ATTRIBUTE = "distribution-attribute"  # `self.prior = Normal(...)` in a Module's `__init__`
PROGRAM_DEVICE_IN_HOST_MODULE = "program-device-in-host-module"  # lazy: analysis.host_instances
LOADER_WORKER_DEVICE = "loader-worker-device"  # lazy: a `__getitem__` that places items, a DataLoader given workers
MODEL_LEFT_ON_HOST = "model-left-on-host"  # lazy: a helper leaving a parameter on the host, or `model.cpu()` in a statement
ALL_SIGNALS = frozenset({
    BUILT_AND_CALLED, ENCODED_INPUTS,
    HARDCODED_CUDA, RUNTIME_PLACEMENT, OPTIMIZER_LOADED_BEFORE_MOVE, DEVICE_CAPTURED_AT_INIT, DATA_PARALLEL, LOADER_LOOP, MOVE_CALL, BARE_MOVE, FACTORY_MEETS_TENSOR, UNPLACED_FACTORY_IN_METHOD, LEGACY_CONSTRUCTOR,
    LOAD_CALL, LOAD_INTO_STATE_DICT, LOSS_WEIGHT, COPY_OF_MOVED, HOST_SINK, PLACES_DEVICES, RUNS_ON_A_DEVICE, DEVICE_VALUE_TO_HOST, PLAIN_CLASS_TABLE, PLAIN_CLASS_MOVE, MODULE_TENSOR_ATTRIBUTE, MODULE_CONTAINER,
    CALLED_CONSTRUCTION, DEVICE_ARGUMENT_LAYER, CUDA_ONLY_CALL, CPU_GENERATOR_DRAW, LAYER_REPLACED_AFTER_MOVE,
    DISTRIBUTION_ATTRIBUTE, PROGRAM_DEVICE_IN_HOST_MODULE, LOADER_WORKER_DEVICE, MODEL_LEFT_ON_HOST,
})
