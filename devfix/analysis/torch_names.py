"""Names of torch things, matched on qualified names so any import style works."""

from __future__ import annotations

import re
from collections.abc import Callable

import libcst as cst
from libcst.metadata import QualifiedNameProvider

QualifiedNames = Callable[[cst.CSTNode], set[str]]

DATALOADER_NAMES = frozenset({"torch.utils.data.DataLoader", "torch.utils.data.dataloader.DataLoader"})
ENUMERATE_NAMES = frozenset({"enumerate", "builtins.enumerate"})
PROGRESS_WRAPPERS = ENUMERATE_NAMES | {"tqdm", "tqdm.tqdm", "tqdm.auto.tqdm", "tqdm.notebook.tqdm", "iter", "builtins.iter"}
DEVICE_CONSTRUCTOR = "torch.device"
CUDA_LITERALS = frozenset({"cuda", "cuda:0"})
# code that places on several GPUs on purpose: DF001 leaves its files alone
MULTI_GPU_MARKERS = re.compile(
    r"cuda:[1-9]|\.cuda\(\s*(?!non_blocking)[1-9a-zA-Z_]|device_ids\s*=|init_process_group|set_device\(|"
    r"local_rank|LOCAL_RANK|DistributedDataParallel"
)

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
        "PairwiseDistance",
    }
)
LOSS_TENSOR_KEYWORDS = frozenset({"weight", "pos_weight"})
CHECKPOINT_LOADERS = frozenset({"torch.load", "torch.hub.load_state_dict_from_url", "torch.utils.model_zoo.load_url"})
# legacy typed constructors (`torch.FloatTensor`, `torch.cuda.LongTensor`) and the dtype each makes
LEGACY_DTYPES = {
    "FloatTensor": "float32", "DoubleTensor": "float64", "HalfTensor": "float16", "BFloat16Tensor": "bfloat16",
    "LongTensor": "int64", "IntTensor": "int32", "ShortTensor": "int16", "CharTensor": "int8",
    "ByteTensor": "uint8", "BoolTensor": "bool",
}
FUNCTIONAL_LOSSES = frozenset(
    f"torch.nn.functional.{name}"
    for name in (
        "cross_entropy", "nll_loss", "binary_cross_entropy", "binary_cross_entropy_with_logits",
        "multilabel_soft_margin_loss", "multi_margin_loss",
    )
)


def qualified_names(visitor: cst.MetadataDependent, node: cst.CSTNode) -> set[str]:
    """Qualified names of a dotted name (`torch.nn.functional.relu`, `F.relu`, `zeros`).

    Empty for anything else: libcst names `torch.triu(x).bool` "torch.triu.bool", which is a
    method of a tensor, not a torch function."""
    if not _is_dotted_name(node):
        return set()
    return {qualified.name for qualified in visitor.get_metadata(QualifiedNameProvider, node, set())}


def _is_dotted_name(node: cst.CSTNode) -> bool:
    while isinstance(node, cst.Attribute):
        node = node.value
    return isinstance(node, cst.Name)


def call_names(visitor: cst.MetadataDependent, node: cst.CSTNode) -> set[str]:
    """Qualified names of the callee when `node` is a call, else the empty set."""
    return qualified_names(visitor, node.func) if isinstance(node, cst.Call) else set()


def is_cuda_literal(node: cst.BaseExpression) -> bool:
    """`"cuda"` or `"cuda:0"`: the hard-coded single-GPU device (other indices are deliberate)."""
    return isinstance(node, cst.SimpleString) and node.evaluated_value in CUDA_LITERALS


def is_cuda_device_expression(node: cst.BaseExpression, qualified: QualifiedNames) -> bool:
    """A CUDA literal, or `torch.device("cuda")` / `torch.device("cuda", 0)`."""
    if is_cuda_literal(node):
        return True
    if not isinstance(node, cst.Call) or DEVICE_CONSTRUCTOR not in qualified(node.func):
        return False
    args = node.args
    if len(args) == 1 and is_cuda_literal(args[0].value):
        return True
    return (
        len(args) == 2
        and isinstance(args[0].value, cst.SimpleString)
        and args[0].value.evaluated_value == "cuda"
        and isinstance(args[1].value, cst.Integer)
        and args[1].value.value == "0"
    )


def torch_alias(module: cst.Module) -> str | None:
    """The local name bound to the `torch` package by a top-level `import torch [as T]`."""
    for statement in module.body:
        if isinstance(statement, cst.SimpleStatementLine):
            for small in statement.body:
                if isinstance(small, cst.Import):
                    for alias in small.names:
                        if isinstance(alias.name, cst.Name) and alias.name.value == "torch":
                            return alias.asname.name.value if alias.asname else "torch"
    return None


def keyword(call: cst.Call, name: str) -> cst.Arg | None:
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == name:
            return arg
    return None


def name_of(node: cst.CSTNode) -> str | None:
    return node.value if isinstance(node, cst.Name) else None


def holds_state(constructor: cst.Call, qualified: QualifiedNames) -> bool:
    """False for torch.nn classes known to hold no parameters or buffers (`nn.ReLU()`, a loss
    without `weight=`): calling them with device tensors works wherever they live."""
    for name in qualified(constructor.func):
        if name.startswith("torch.nn."):
            class_name = name.rsplit(".", 1)[1]
            if class_name in PARAMETER_FREE_NN:
                return False
            if class_name.endswith("Loss"):
                return any(arg.keyword is None or arg.keyword.value in LOSS_TENSOR_KEYWORDS for arg in constructor.args)
    return True


def is_optimizer_name(name: str) -> bool:
    """`optimizer`, `optim_g`, `opt`, `sgd`: a name that reads as an optimizer (DF013's order check)."""
    return "optim" in name.lower() or name in ("opt", "sgd", "adam")


def places_devices(code: str) -> bool:
    """Does the file move anything to a device anywhere (a move, `device=`, a `torch.device`)?"""
    return any(marker in code for marker in (".cuda(", ".to(", "device=", "torch.device("))
