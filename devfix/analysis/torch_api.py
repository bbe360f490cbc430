"""What devfix knows about torch's API, as plain names and strings: no libcst here, so the `ast`
analysis and the screens (and a check that needs no rewrite) never import the parser."""

from __future__ import annotations

import re

# --- names of torch things, matched on qualified names so any import style works ----------------
DATALOADER_NAMES = frozenset({"torch.utils.data.DataLoader", "torch.utils.data.dataloader.DataLoader"})
ENUMERATE_NAMES = frozenset({"enumerate", "builtins.enumerate"})
PROGRESS_WRAPPERS = ENUMERATE_NAMES | {"tqdm", "tqdm.tqdm", "tqdm.auto.tqdm", "tqdm.notebook.tqdm", "iter", "builtins.iter"}
DEVICE_CONSTRUCTOR = "torch.device"
CUDA_LITERALS = frozenset({"cuda", "cuda:0"})
# a test that asks about the GPU, or which kind of device is in use (`if device.type == "cpu":`),
# guards a hard-coded device: the code under it chooses on purpose
GUARD_WORDS = re.compile(r"cuda|gpu|\.type\s*[!=]=\s*['\"](cpu|mps|xpu)['\"]", re.IGNORECASE)
# code that places on several GPUs on purpose: DF001 leaves its files alone
MULTI_GPU_MARKERS = re.compile(
    r"cuda:[1-9]|\.cuda\(\s*(?!non_blocking)[1-9a-zA-Z_]|device_ids\s*=|init_process_group|set_device\((?!\s*0\s*\))|"
    r"local_rank|LOCAL_RANK|DistributedDataParallel"
)


def places_on_several_gpus(text: str) -> bool:
    """A marker of multi-GPU placement in the code: not in a comment (nanoGPT's
    `device = 'cuda' # examples: 'cpu', 'cuda', 'cuda:0', 'cuda:1', etc.` is a single-device script)."""
    for match in MULTI_GPU_MARKERS.finditer(text):
        before = text[text.rfind("\n", 0, match.start()) + 1 : match.start()]
        code = before.split("#", 1)[0]
        in_comment = "#" in before and code.count("'") % 2 == 0 and code.count('"') % 2 == 0
        if not in_comment:
            return True
    return False


# torch.nn classes that hold no parameters or buffers (unless given tensor arguments): calling them
# with device tensors works even if they were never moved.
PARAMETER_FREE_NN = frozenset(
    {
        "ReLU", "ReLU6", "LeakyReLU", "ELU", "SELU", "CELU", "GELU", "SiLU", "Mish", "Sigmoid",
        "Tanh", "Softmax", "LogSoftmax", "Softplus", "Softsign", "Hardtanh", "Hardswish",
        "Hardsigmoid", "Tanhshrink", "Threshold", "GLU", "Identity", "Flatten", "Unflatten",
        "Dropout", "Dropout1d", "Dropout2d", "Dropout3d", "AlphaDropout", "MaxPool1d", "MaxPool2d",
        "MaxPool3d", "AvgPool1d", "AvgPool2d", "AvgPool3d", "AdaptiveAvgPool1d",
        "AdaptiveAvgPool2d", "AdaptiveAvgPool3d", "AdaptiveMaxPool1d", "AdaptiveMaxPool2d",
        "AdaptiveMaxPool3d", "Upsample", "PixelShuffle", "PixelUnshuffle", "ZeroPad2d",
        "ConstantPad1d", "ConstantPad2d", "ReflectionPad2d", "ReplicationPad2d", "CosineSimilarity",
        "PairwiseDistance", "UpsamplingBilinear2d", "UpsamplingNearest2d", "Softmax2d", "Softmin",
        "LogSigmoid", "Hardshrink", "Softshrink", "RReLU", "ChannelShuffle", "Fold", "Unfold",
        "ZeroPad1d", "ZeroPad3d", "ConstantPad3d", "ReflectionPad1d", "ReflectionPad3d",
        "ReplicationPad1d", "ReplicationPad3d", "CircularPad1d", "CircularPad2d", "CircularPad3d",
        "LPPool1d", "LPPool2d", "LPPool3d", "FractionalMaxPool2d", "FractionalMaxPool3d", "MaxUnpool1d",
        "MaxUnpool2d", "MaxUnpool3d", "LocalResponseNorm", "CrossMapLRN2d", "FeatureAlphaDropout",
    }
)
LOSS_TENSOR_KEYWORDS = frozenset({"weight", "pos_weight"})
CHECKPOINT_LOADERS = frozenset({"torch.load", "torch.jit.load", "torch.hub.load_state_dict_from_url", "torch.utils.model_zoo.load_url"})
# legacy typed constructors (`torch.FloatTensor`, `torch.cuda.LongTensor`) and the dtype each makes
LEGACY_DTYPES = {
    "FloatTensor": "float32", "DoubleTensor": "float64", "HalfTensor": "float16", "BFloat16Tensor": "bfloat16",
    "LongTensor": "int64", "IntTensor": "int32", "ShortTensor": "int16", "CharTensor": "int8",
    "ByteTensor": "uint8", "BoolTensor": "bool",
}
CPU_TENSOR_TYPES = frozenset(f"torch.{name}" for name in LEGACY_DTYPES)  # `torch.FloatTensor`: CPU tensors only
CUDA_TENSOR_TYPES = frozenset(f"torch.cuda.{name}" for name in LEGACY_DTYPES)  # `torch.cuda.FloatTensor`: CUDA tensors only
FUNCTIONAL_LOSSES = frozenset(
    f"torch.nn.functional.{name}"
    for name in (
        "cross_entropy", "nll_loss", "binary_cross_entropy", "binary_cross_entropy_with_logits",
        "multilabel_soft_margin_loss", "multi_margin_loss",
    )
)


# `device=x.device`, `.to(x.device)`: a value made or moved where another one already is (what
# DF004, DF009, DF011, DF012 and DF016 write). That places nothing: a program made only of those
# still runs on the CPU, and must not look like one that uses a GPU after devfix aligned a value.
ALIGNMENT = re.compile(r"(?:\bdevice\s*=\s*|\.to\(\s*)(?!self\.)([A-Za-z_]\w*)\.device\b(?![\w.(])")
# `args = parser.parse_args()`: `args.device` is the device the user asked for, not a tensor's
PARSED_OPTIONS = re.compile(r"\b([A-Za-z_]\w*)\s*=\s*[\w.]*\bparse(?:_known)?_args\(")
# `.to(torch.float32)`, `.to(dtype=torch.long)`: a cast, which places nothing
DTYPE_CAST = re.compile(r"\.to\(\s*(?:dtype\s*=\s*)?torch\.(?:u?int\d*|float\d*|b?float16|half|double|long|short|bool|complex\d*|cfloat|cdouble)\s*\)")
DEVICE_OPTION = re.compile(r"""add_argument\(\s*(?:['"]-\w['"]\s*,\s*)?['"]--?device['"]""")  # `--device cuda` on the command line


def places_devices(code: str) -> bool:
    """Does the file move anything to a device anywhere (a move, `device=`, a `torch.device`)?
    Aligning a value with another one's device is not a placement (`ALIGNMENT`); the device of
    the parsed command line is (`model.to(args.device)`, a `--device` option), a cast is not
    (`t.to(torch.float32)`)."""
    markers = (".cuda(", ".to(", "device=", "torch.device(")
    if ".to(" in code and "torch." in code:
        code = DTYPE_CAST.sub("", code)
    if not any(marker in code for marker in markers):
        return False
    if "add_argument(" in code and DEVICE_OPTION.search(code):
        return True  # the program runs where its user says: `.to(args.device)`
    options = set(PARSED_OPTIONS.findall(code)) if "parse_" in code else set()
    unaligned = ALIGNMENT.sub(lambda match: match.group(0) if match.group(1) in options else "", code)
    return any(marker in unaligned for marker in markers)


# --- tensors: what makes, takes and returns them ------------------------------------------------
FACTORY_FUNCTIONS = frozenset(
    f"torch.{name}"
    for name in (
        "zeros", "ones", "empty", "full", "rand", "randn", "randint", "randperm", "arange", "range",
        "linspace", "logspace", "eye", "tensor", "as_tensor", "tril_indices", "triu_indices",
        "hann_window", "hamming_window", "blackman_window", "bartlett_window", "kaiser_window",  # given a length, not a tensor
    )
) | {"torch.nn.Transformer.generate_square_subsequent_mask"}  # a static method with `device=` (torch 2.1+)
DEFAULT_DEVICE_FACTORIES = FACTORY_FUNCTIONS | {"torch.Tensor"}  # what a global default device places
# the last part of the name of a torch callable that makes a tensor where `device=` says, the CPU by
# default (`torch.zeros`, `torch.FloatTensor`, `nn.Transformer.generate_square_subsequent_mask`):
# the screens' test for a factory a method calls
FACTORY_LAST_NAMES = frozenset(name.rsplit(".", 1)[1] for name in FACTORY_FUNCTIONS) | {
    "from_numpy", "Tensor", "FloatTensor", "DoubleTensor", "LongTensor", "IntTensor", "ByteTensor", "BoolTensor",  # legacy CPU constructors
}
NON_TENSOR_TORCH_CALLS = frozenset(
    {
        "torch.device", "torch.Size", "torch.dtype", "torch.Generator", "torch.no_grad", "torch.is_tensor",
        "torch.numel", "torch.manual_seed", "torch.get_default_dtype", "torch.save", "torch.load",
        "torch.compile", "torch.typename", "torch.inference_mode", "torch.enable_grad", "torch.autocast",
        "torch.set_grad_enabled", "torch.use_deterministic_algorithms", "torch.is_grad_enabled",
        "torch.is_floating_point", "torch.is_complex", "torch.seed", "torch.initial_seed",
    }
)
# tensor methods that give the receiver's values in another shape or dtype, where it is (`x.reshape(-1, 784)`)
RESHAPING_METHODS = frozenset({
    "view", "reshape", "unsqueeze", "squeeze", "permute", "transpose", "flatten", "contiguous",
    "float", "double", "half", "bfloat16", "long", "int", "bool",
})
# calls that read an object handed to them without moving or wrapping it (`torch.save(model, path)`, `print(model)`)
PLACEMENT_KEEPING_CALLS = frozenset({
    "torch.save", "builtins.print", "builtins.len", "builtins.str", "builtins.repr", "builtins.isinstance", "builtins.id",
    "builtins.type", "builtins.hasattr", "builtins.getattr", "builtins.vars",
})
# torch functions and tensor methods whose result is a tuple of tensors (`torch.split(x, 2)`,
# `x.sort()`), not a tensor: no `register_buffer`, no `.to()`
TUPLE_RESULTS = frozenset({
    "split", "chunk", "unbind", "tensor_split", "hsplit", "vsplit", "dsplit", "meshgrid", "broadcast_tensors", "sort",
    "topk", "kthvalue", "mode", "aminmax", "cummax", "cummin", "frexp", "std_mean", "var_mean", "histogram", "lu", "svd",
    "qr", "slogdet", "eig", "eigh", "lstsq", "lu_factor", "lobpcg", "geqrf", "triangular_solve", "lu_unpack",
})
COMPLEX_MAKERS = frozenset({  # torch's functions and dtypes that make complex tensors
    "polar", "complex", "view_as_complex", "cfloat", "cdouble", "chalf", "complex32", "complex64", "complex128",
})
REDUCTIONS_WITH_INDICES = frozenset({"max", "min", "median", "nanmedian"})  # (values, indices) when given a dimension
TUPLE_KEYWORDS = frozenset({"return_inverse", "return_counts", "as_tuple"})  # `torch.unique(x, return_counts=True)`
TENSOR_NAMESPACES = ("torch.nn.functional.", "torch.linalg.", "torch.fft.", "torch.special.")
# what hands back the Module it is given, compiled or scripted: on that Module's device
MODULE_COMPILERS = frozenset({"torch.jit.script", "torch.jit.trace", "torch.compile"})
# outside those namespaces, a function that stacks a list of tensors into one tensor (not
# `pack_padded_sequence`, whose PackedSequence is no tensor)
STACKING_FUNCTIONS = frozenset({"torch.nn.utils.rnn.pad_sequence"})
TENSOR_ONLY_MEMBERS = frozenset(
    {
        "device", "is_cuda", "requires_grad", "grad", "size", "view", "unsqueeze", "contiguous", "masked_fill",
        "masked_fill_", "detach", "dim", "long", "bool", "int", "numel", "numpy", "item", "tolist",
        "type_as", "expand", "expand_as", "new_zeros", "new_ones", "new_full", "new_empty", "new_tensor",
        "backward", "softmax", "log_softmax", "argmax", "permute", "clamp", "index_select", "masked_select",
        "scatter_", "gather", "chunk", "split", "unbind", "detach_", "sigmoid", "relu", "matmul", "bmm",
    }
)
HOST_SIDE_PREFIXES = ("torch.nn.utils.rnn.",)
# what a tensor tells of itself, never a tensor: `x.shape` handed to numpy is a tuple of ints
METADATA_ATTRIBUTES = frozenset({"shape", "device", "dtype", "ndim", "is_cuda", "requires_grad"})
FROM_NUMPY = frozenset({"torch.from_numpy"})
LEGACY_CPU_CONSTRUCTORS = frozenset(
    f"torch.{name}" for name in ("Tensor", "FloatTensor", "DoubleTensor", "LongTensor", "IntTensor", "ByteTensor", "BoolTensor")
)
MOVED_AFTER = FROM_NUMPY | LEGACY_CPU_CONSTRUCTORS  # they take no CUDA device=: the result is moved
DATA_FACTORIES = frozenset({"torch.tensor", "torch.as_tensor", "torch.scalar_tensor"})
# they make a tensor of the data given first (`torch.from_numpy(state)`): that value is an array, a list
# or a number, no tensor whose device a fix could name (a numpy 2 array's `.device` is "cpu")
DATA_CONVERTERS = DATA_FACTORIES | FROM_NUMPY | LEGACY_CPU_CONSTRUCTORS | {"torch.asarray"}
DEVICE_CHANGING_METHODS = frozenset({"cpu", "cuda", "to", "type", "type_as", "pin_memory"})  # `.type(torch.cuda.FloatTensor)` moves
CAST_KEYWORDS = frozenset({"dtype", "non_blocking", "copy", "memory_format"})  # `x.to(dtype=...)`: what a cast may be given
# methods of a Module or a tensor whose result lives where the receiver does: `Net().to(device).eval()`
# is a moved model, `labels.to(device).long()` a moved tensor
PLACEMENT_KEEPING_METHODS = frozenset({
    "eval", "train", "half", "float", "double", "bfloat16", "long", "int", "bool", "requires_grad_", "contiguous",
})
# what a tensor method gives that is no longer where the tensor is: a CPU copy, Python values, sizes
LEAVING_PLACEMENT_METHODS = frozenset({"cpu", "numpy", "item", "tolist", "size", "dim", "numel"})
# methods whose arguments are sizes and dimensions: `seq_range.expand(batch_size, max_len)` combines
# no tensor with `max_len`, which may be a number (`target.size(1)`) for some caller
SHAPE_METHODS = frozenset({"expand", "view", "reshape", "repeat", "tile", "permute", "transpose", "unsqueeze", "squeeze",
                           "flatten", "unflatten", "narrow", "unfold"})
NOT_COMBINING_METHODS = frozenset({"to", "type_as", "copy_", "view_as", "expand_as", "new_tensor", "new_zeros", "new_ones", "new_full",
                                   "new_empty", "split", "tensor_split"}) | SHAPE_METHODS
VARIABLE_WRAPPERS = frozenset({"torch.autograd.Variable", "torch.autograd.variable.Variable"})  # `Variable(t)` is `t` today
# joined: `torch.cat([torch.arange(n, 2 * n), torch.arange(n)])` is where its parts are
JOINS = frozenset({"torch.cat", "torch.concat", "torch.concatenate", "torch.stack", "torch.hstack", "torch.vstack"})
SOURCE_WRAPPERS = JOINS | frozenset({
    "torch.tril", "torch.triu", "torch.diag", "torch.cumsum", "torch.cumprod", "torch.outer", "torch.exp", "torch.log",
    "torch.sin", "torch.cos", "torch.sqrt", "torch.pow", "torch.meshgrid", "torch.flip",
    # draws shaped and placed by their probabilities: `torch.bernoulli(torch.full(delta.shape, p))` (sd-mecha's TIES dropout)
    "torch.bernoulli", "torch.poisson",
    # views and reshapes: `torch.reshape(torch.tensor(ids), (1, -1))` is where `ids`' tensor is
    "torch.reshape", "torch.squeeze", "torch.unsqueeze", "torch.transpose", "torch.permute", "torch.flatten", "torch.t",
    # the pre-0.4 autograd wrapper: `Variable(t)` is `t` today, where `t` is
    *VARIABLE_WRAPPERS,
})


def is_source_wrapper(qualified: str) -> bool:
    """A torch call whose result is where the tensors it is given are (`SOURCE_WRAPPERS`), or a
    distribution of `torch.distributions` (`Normal(torch.zeros(d), torch.ones(d))`: its samples
    and log-probabilities are where its parameters are)."""
    return qualified in SOURCE_WRAPPERS or (qualified.startswith("torch.distributions.") and qualified.rsplit(".", 1)[-1][:1].isupper())


# `x.sum()` without a dim is 0-dim: a CPU one may meet CUDA tensors in pointwise operations
WHOLE_REDUCTIONS = frozenset({"sum", "mean", "prod", "max", "min", "norm", "std", "var", "all", "any", "amax", "amin", "logsumexp"})
NON_TENSOR_METHODS = frozenset({
    "size", "dim", "numel", "item", "tolist", "numpy", "backward", "split", "chunk", "unbind", "parameters", "state_dict",
    "named_parameters", "items", "keys", "values",
    # numbers and flags about a tensor (DeepSpeed's `torch.tensor([], dtype=d).element_size()` is an int)
    "element_size", "nelement", "ndimension", "stride", "storage_offset", "data_ptr", "get_device", "is_contiguous",
    "is_floating_point", "is_complex", "equal",
})
CHAIN_STOPS = DEVICE_CHANGING_METHODS | NON_TENSOR_METHODS  # a method chain through these is no longer the tensor it started from, where it was
SCALAR_ANNOTATIONS = frozenset({"int", "float", "bool", "str", "builtins.int", "builtins.float", "builtins.bool", "builtins.str"})
TENSOR_ANNOTATIONS = frozenset({"torch.Tensor", "torch.FloatTensor", "torch.LongTensor", "Tensor", "torch.nn.Parameter"})
# types no tensor is, whose objects share members with tensors (`rng.device`, `model.to(...)`)
NON_TENSOR_ANNOTATIONS = SCALAR_ANNOTATIONS | frozenset({
    "torch.Generator", "torch._C.Generator", "torch.device", "torch.dtype", "torch.nn.Module", "torch.nn.modules.module.Module",
})


GRADIENT_FUNCTIONS = frozenset({"torch.autograd.grad", "torch.autograd.backward"})  # `grad_outputs` lives with `outputs`
# torch functions of other objects whose tensors must meet on one device: `kl_divergence(q, prior)`
# of two distributions (where their parameters are, `is_source_wrapper`), and the gradient functions
MEETING_FUNCTIONS = GRADIENT_FUNCTIONS | frozenset({"torch.distributions.kl_divergence", "torch.distributions.kl.kl_divergence"})
PARAMETER_CLASSES = frozenset({"torch.nn.Parameter", "torch.nn.parameter.Parameter"})
# torch functions whose one tensor operand is the first: the rest are counts, sizes, dims
# (`torch.multinomial(torch.ones(v), max_len)`: `max_len` may be a 0-dim tensor, it meets nothing)
FIRST_OPERAND_ONLY = frozenset({
    "multinomial", "topk", "kthvalue", "narrow", "chunk", "split", "tensor_split", "roll", "flip", "tile", "tril", "triu",
    "diagonal", "cumsum", "cumprod", "argmax", "argmin", "argsort", "sort", "softmax", "log_softmax", "flatten", "squeeze",
    "unsqueeze", "transpose", "permute", "reshape", "movedim",
})


def is_torch_tensor_function(names: set[str]) -> bool:
    """A torch function that takes and returns tensors: `torch.<op>` and the functional, linalg,
    fft and special namespaces. Not `torch.jit.script(model)`, `torch.save(obj)`,
    `torch._dynamo...`: their arguments and results are not tensors."""
    for name in names - NON_TENSOR_TORCH_CALLS:
        if name in STACKING_FUNCTIONS:
            return True
        parts = name.split(".")
        if name.startswith(TENSOR_NAMESPACES) and parts[-1][:1].islower():
            return True
        if len(parts) == 2 and parts[0] == "torch" and parts[1][:1].islower() and not parts[1].startswith("_"):
            return True
    return False


# --- placement ----------------------------------------------------------------------------------
TORCH_DTYPES = frozenset(
    {
        "float", "float16", "float32", "float64", "half", "double", "bfloat16", "int", "int8",
        "int16", "int32", "int64", "long", "short", "uint8", "bool", "complex64", "complex128",
    }
)
CPU_LITERALS = frozenset({"cpu"})
DEVICE_NAMES = ("device", "dev", "DEVICE", "torch_device")  # names a program's device variable goes by

# libraries whose calls turn their array arguments into numpy arrays, which a CUDA tensor refuses (DF008)
HOST_LIBRARY_MODULES = ("numpy", "matplotlib", "sklearn", "scipy", "pandas", "seaborn")
HOST_LIBRARIES = tuple(f"{module}." for module in HOST_LIBRARY_MODULES)  # prefixes of their qualified names
# the matplotlib Axes methods that turn their data arguments into numpy arrays, which a CUDA tensor refuses
AXES_DATA_METHODS = frozenset({
    "imshow", "matshow", "plot", "scatter", "hist", "hist2d", "bar", "barh", "fill_between", "errorbar",
    "pcolormesh", "pcolor", "contour", "contourf", "quiver", "boxplot", "violinplot", "semilogx", "semilogy",
    "loglog", "stackplot", "hexbin",
})
ENCODING_TENSOR_FIELDS = frozenset({  # what `tokenizer(..., return_tensors="pt").<field>` reads: CPU tensors (HF BatchEncoding)
    "input_ids", "attention_mask", "token_type_ids", "position_ids", "pixel_values", "pixel_mask", "input_features",
    "input_values", "decoder_input_ids", "decoder_attention_mask", "labels", "special_tokens_mask",
})
TENSOR_ENCODERS = frozenset({"encode", "apply_chat_template"})  # a tokenizer's methods that give the ids tensor itself
LIST_FILLERS = frozenset({"append", "extend"})  # `xs.append(t)`, `xs.extend(t)`: the list then holds t's device tensors
LIST_JOINS = frozenset({"torch.cat", "torch.concat", "torch.concatenate", "torch.stack", "torch.vstack", "torch.hstack"})  # one tensor of a list's
OTHER_ARRAY_LIBRARIES = ("tensorflow", "jax", "cupy", "mxnet")  # their arrays have `.numpy()` too
# `if self.framework == "tf":` (transformers' pipelines): the branch holds another library's arrays
OTHER_FRAMEWORK_LITERALS = frozenset({"tf", "tensorflow", "jax", "flax"})
# numpy arrays made by shape: an item stored into one is converted (`g_loss[i] = loss` calls
# `loss.__array__`), unless the array holds objects (`dtype=object` keeps the tensor itself)
NUMPY_ARRAYS_BY_SHAPE = frozenset({"numpy.zeros", "numpy.ones", "numpy.empty", "numpy.full"})
# what makes a pandas DataFrame a column store (`df["pred"] = t`) converts a tensor into, as numpy does
DATA_FRAME_MAKERS = frozenset({"pandas.DataFrame", "pandas.read_csv", "pandas.read_parquet", "pandas.read_json",
                               "pandas.read_excel", "pandas.read_pickle", "pandas.read_feather"})
OBJECT_DTYPES = frozenset({"object", "O", "builtins.object"})
# optimizers that create their state tensors when built (the others: at the first step())
EAGER_STATE_OPTIMIZERS = frozenset({"torch.optim.Adagrad", "torch.optim.adagrad.Adagrad"})
# torch.nn layers whose output is one tensor where their input is (not the RNNs, attention, LSTMCell: tuples)
TENSOR_OUTPUT_LAYERS = frozenset({
    "Linear", "Bilinear", "Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d",
    "RNNCell", "GRUCell", "Embedding", "EmbeddingBag", "LayerNorm", "GroupNorm", "BatchNorm1d", "BatchNorm2d",
    "BatchNorm3d", "PReLU",
})
# torch.nn layers without parameters that take one tensor and give one tensor (their output is where
# their input is): with TENSOR_OUTPUT_LAYERS, what an `nn.Sequential` of them gives is one tensor
# (pooling layers asked for `return_indices=True` give a tuple: not these)
TENSOR_TO_TENSOR_LAYERS = frozenset({
    "ReLU", "ReLU6", "LeakyReLU", "ELU", "SELU", "CELU", "GELU", "SiLU", "Mish", "Tanh", "Sigmoid", "Hardtanh",
    "Hardswish", "Hardsigmoid", "Softplus", "Softsign", "Softmax", "LogSoftmax", "Threshold", "Dropout", "Dropout1d",
    "Dropout2d", "Dropout3d", "AlphaDropout", "Flatten", "Unflatten", "Identity", "MaxPool1d", "MaxPool2d", "MaxPool3d",
    "AvgPool1d", "AvgPool2d", "AvgPool3d", "AdaptiveAvgPool1d", "AdaptiveAvgPool2d", "AdaptiveAvgPool3d",
    "AdaptiveMaxPool1d", "AdaptiveMaxPool2d", "AdaptiveMaxPool3d", "Upsample", "PixelShuffle", "PixelUnshuffle",
    "ZeroPad2d", "ConstantPad1d", "ConstantPad2d", "ReflectionPad1d", "ReflectionPad2d", "ReplicationPad2d",
    "InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d", "LocalResponseNorm",
})
# `torch.cuda` functions that need CUDA to run: without it they raise "Torch not compiled with
# CUDA enabled" (those that answer on any machine, `is_available`, `memory_allocated`,
# `manual_seed`, `empty_cache`, are not here); `set_device` of another GPU than the first belongs
# to multi-GPU code (DF001's markers) and is left to it: `set_device(0)` only picks the one GPU
CUDA_ONLY_FUNCTIONS = frozenset({
    f"torch.cuda.{name}" for name in (
        "synchronize", "current_device", "get_device_name", "get_device_properties", "get_device_capability",
        "reset_peak_memory_stats", "reset_max_memory_allocated", "reset_accumulated_memory_stats", "mem_get_info",
        "memory_summary", "ipc_collect", "init", "get_rng_state", "Event", "Stream",
        "set_per_process_memory_fraction", "current_stream", "default_stream", "memory_snapshot", "CUDAGraph",
        "set_device",
    )
})


def is_library_constant(qualified: str) -> bool:
    """numpy's names and torch's dtypes (`np.float32`, `torch.long`): what a cast is given, on no device."""
    return qualified.startswith("numpy.") or (qualified.startswith("torch.") and qualified[len("torch."):] in TORCH_DTYPES)


# `torch.distributions` classes built from tensors → their parameters, in order (DF027 keeps each
# tensor argument as a buffer named after its parameter)
DISTRIBUTION_PARAMETERS = {
    "Normal": ("loc", "scale"), "LogNormal": ("loc", "scale"), "Laplace": ("loc", "scale"), "Cauchy": ("loc", "scale"),
    "Gumbel": ("loc", "scale"), "HalfNormal": ("scale",), "HalfCauchy": ("scale",), "Uniform": ("low", "high"),
    "MultivariateNormal": ("loc", "covariance_matrix", "precision_matrix", "scale_tril"),
    "LowRankMultivariateNormal": ("loc", "cov_factor", "cov_diag"), "Bernoulli": ("probs", "logits"),
    "Categorical": ("probs", "logits"), "OneHotCategorical": ("probs", "logits"), "Geometric": ("probs", "logits"),
    "Beta": ("concentration1", "concentration0"), "Gamma": ("concentration", "rate"), "Exponential": ("rate",),
    "Dirichlet": ("concentration",), "StudentT": ("df", "loc", "scale"), "Poisson": ("rate",),
    "VonMises": ("loc", "concentration"), "Binomial": ("total_count", "probs", "logits"),
}

# tensor methods that read by indices → where their index argument is: a CPU table read with CUDA
# indices fails as indexing does (`a.gather(-1, t)`, DF012)
INDEX_READING_METHODS = {"gather": 1, "index_select": 1, "take": 0}
# … and torch functions that do: → ((position, keyword) of the table, (position, keyword) of the index)
INDEX_READING_FUNCTIONS = {
    "torch.nn.functional.embedding": ((1, "weight"), (0, "input")),
    "torch.index_select": ((0, "input"), (2, "index")),
    "torch.gather": ((0, "input"), (2, "index")),
    "torch.take": ((0, "input"), (1, "index")),
}

# transformers' pipeline factory: `device=` takes a torch.device, any device string, or a GPU
# ordinal (`device=0` is cuda:0, -1 the CPU)
PIPELINE_FACTORIES = frozenset({"transformers.pipeline", "transformers.pipelines.pipeline"})

# methods that register a hook on a Module or tensor: what the hook is handed lives where the layer does
HOOK_REGISTRARS = frozenset({"register_forward_hook", "register_full_backward_hook", "register_backward_hook", "register_hook"})
