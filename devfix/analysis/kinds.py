"""What kind of value each name holds where it is read: tensor, number, numpy array, list, ...

Read from Python's `ast` in one pass over the file, flow-sensitive within a function: branches are
joined, loops run to a fixed point, and a name rebound to something else is a new value. Calls to
the file's own functions use their return kind. A rule asks `kind_at(line, column)` for a name it
wants to call a tensor method on: only `Kind.TENSOR` is proof; a known other kind is a veto.
"""

from __future__ import annotations

import ast
import enum
from collections.abc import Callable, Iterable

from devfix.analysis.ast_nodes import dotted_head, every_node, is_self_attribute
from devfix.analysis.imports import ImportTable
from devfix.analysis.module_instances import Instances
from devfix.analysis.torch_api import STACKING_FUNCTIONS, TENSOR_NAMESPACES, VARIABLE_WRAPPERS


class Kind(enum.Enum):
    TENSOR = "tensor"
    SCALAR = "Python number"
    NDARRAY = "numpy array"
    LIST = "list"
    TUPLE = "tuple"
    DICT = "dict"
    SET = "set"
    STR = "str"
    NONE = "None"
    MODULE = "nn.Module"
    DEVICE = "torch.device"
    OBJECT = "other object"
    TENSOR_TUPLE = "tuple of tensors"  # a TensorDataset's item
    IMAGE_SAMPLE = "(image tensor, target) sample"  # an item of a torchvision dataset made with ToTensor
    TENSOR_DATASET = "TensorDataset"
    COLLATED_DATASET = "Dataset whose items collate into tensors"  # tensors beside numbers or arrays
    IMAGE_DATASET = "torchvision dataset of image tensors"
    IMAGE_TRANSFORM = "torchvision transform that makes image tensors"  # `Compose([..., ToTensor()])`
    TENSOR_LOADER = "DataLoader of tensor batches"  # over a TensorDataset, default collate
    IMAGE_LOADER = "DataLoader of (image tensor, target) batches"  # over a torchvision dataset
    BATCH_LIST = "list of (tensor, ...) batches"  # `[(x[i:i + n], y[i:i + n]) for i in range(0, len(x), n)]`
    TENSOR_LIST = "list of tensors"  # `[x, y]`, `[w * torch.ones(n) for w in ws]`: a list whose every item is a tensor
    TENSOR_LOADERS = "tuple of DataLoaders of tensor batches"  # `return DataLoader(train), DataLoader(val)`
    IMAGE_LOADERS = "tuple of DataLoaders of (image tensor, target) batches"
    UNKNOWN = "unknown"

    @property
    def is_known_non_tensor(self) -> bool:
        return self not in (Kind.TENSOR, Kind.UNKNOWN)


def _placed_here(node: ast.expr) -> bool:
    """`x.to(device)`, `x.cuda()`, `torch.zeros(n, device=device)`: a value given its device where it is written."""
    return isinstance(node, ast.Call) and (
        (isinstance(node.func, ast.Attribute) and node.func.attr in ("to", "cuda"))
        or any(keyword.arg == "device" for keyword in node.keywords)
    )


def join(kinds: Iterable[Kind]) -> Kind:
    found = set(kinds)
    if len(found) == 2 and found <= LISTS:
        return Kind.LIST  # a list, of tensors on one path only
    return found.pop() if len(found) == 1 else Kind.UNKNOWN


NON_TENSOR_TORCH = {
    "torch.device": Kind.DEVICE, "torch.Size": Kind.TUPLE, "torch.is_tensor": Kind.SCALAR, "torch.numel": Kind.SCALAR,
    "torch.is_floating_point": Kind.SCALAR, "torch.get_default_dtype": Kind.OBJECT, "torch.save": Kind.NONE,
    "torch.load": Kind.UNKNOWN, "torch.compile": Kind.UNKNOWN, "torch.no_grad": Kind.OBJECT,
    "torch.manual_seed": Kind.OBJECT, "torch.Generator": Kind.OBJECT, "torch.dtype": Kind.OBJECT,
    "torch.typename": Kind.STR, "torch.inference_mode": Kind.OBJECT, "torch.autocast": Kind.OBJECT,
    "torch.is_grad_enabled": Kind.SCALAR, "torch.seed": Kind.SCALAR, "torch.initial_seed": Kind.SCALAR,
    "torch.set_grad_enabled": Kind.OBJECT, "torch.enable_grad": Kind.OBJECT, "torch.is_complex": Kind.SCALAR,
}
NON_TENSOR_PREFIXES = ("set_", "get_", "is_", "use_", "are_", "_")  # torch.set_num_threads(4), torch.is_tensor(x)
NON_TENSOR_NAMESPACES = ("torch.cuda.", "torch.backends.", "torch.distributed.", "torch.optim.", "torch.jit.")


def makes_no_tensor(qualified: str) -> bool:
    """A torch callable whose result is surely no tensor: `torch.device(...)`, `torch.is_tensor(x)`,
    `torch.cuda.device_count()`, a class of `torch.optim`... (a `torch.utils.data` dataset holds
    tensors: not one of these)."""
    parts = qualified.split(".")
    return (qualified in NON_TENSOR_TORCH or qualified.startswith(NON_TENSOR_NAMESPACES)
            or (len(parts) == 2 and parts[0] == "torch" and parts[1].startswith(NON_TENSOR_PREFIXES)))


LEGACY_TENSOR_CLASSES = {"Tensor", "FloatTensor", "LongTensor", "DoubleTensor", "IntTensor", "BoolTensor", "ByteTensor", "HalfTensor"}
BUILTIN_KINDS = {
    "list": Kind.LIST, "sorted": Kind.LIST, "dict": Kind.DICT, "tuple": Kind.TUPLE, "set": Kind.SET, "str": Kind.STR,
    "len": Kind.SCALAR, "int": Kind.SCALAR, "float": Kind.SCALAR, "bool": Kind.SCALAR, "round": Kind.SCALAR,
    "repr": Kind.STR, "format": Kind.STR, "isinstance": Kind.SCALAR, "range": Kind.OBJECT, "zip": Kind.OBJECT,
    "open": Kind.OBJECT, "print": Kind.NONE, "abs": Kind.UNKNOWN,
}
# builtins that give a Python number whatever they are given (`float(t)` copies a CUDA tensor's value to the host)
NUMBER_BUILTINS = frozenset({"len", "int", "float", "bool"})
METHOD_KINDS = {
    "tolist": Kind.LIST, "item": Kind.SCALAR, "numpy": Kind.NDARRAY, "keys": Kind.OBJECT, "values": Kind.OBJECT,
    "items": Kind.OBJECT, "size": Kind.UNKNOWN, "dim": Kind.SCALAR, "numel": Kind.SCALAR, "append": Kind.NONE,
    "extend": Kind.NONE, "format": Kind.STR, "join": Kind.STR, "split": Kind.UNKNOWN,
}
SAME_KIND_METHODS = {"to", "cuda", "cpu", "float", "double", "half", "bfloat16", "long", "int", "bool", "detach", "clone",
                     "contiguous", "requires_grad_", "pin_memory", "train", "eval", "share_memory"}
TENSOR_TO_TENSOR_METHODS = {
    "view", "reshape", "unsqueeze", "squeeze", "permute", "transpose", "expand", "expand_as", "repeat", "flatten",
    "sum", "mean", "max", "min", "argmax", "argmin", "softmax", "log_softmax", "sigmoid", "relu", "exp", "log", "abs",
    "masked_fill", "gather", "index_select", "matmul", "mm", "bmm", "eq", "ne", "gt", "lt", "ge", "le", "type_as",
    "new_zeros", "new_ones", "new_full", "new_empty", "new_tensor", "clamp", "pow", "sqrt", "norm", "cumsum", "t",
    "add", "sub", "mul", "div", "narrow", "unfold", "float", "detach", "clone", "contiguous",
}
TENSOR_ONLY_METHODS = {  # not on numpy arrays, Modules, lists or PIL images
    "unsqueeze", "unsqueeze_", "permute", "masked_fill", "masked_fill_", "contiguous", "detach", "clone", "type_as",
    "expand_as", "new_zeros", "new_ones", "new_full", "new_empty", "index_select", "masked_select",
}
TENSOR_ATTRIBUTES = {"T", "mT", "data", "grad", "real", "imag"}
# module constants that are Python numbers (`2.0 / torch.pi` is a number, `torch.tensor` of it 0-dim)
NUMBER_CONSTANTS = frozenset({
    "math.pi", "math.e", "math.tau", "math.inf", "math.nan", "torch.pi", "torch.e", "torch.inf", "torch.nan",
    "numpy.pi", "numpy.e", "numpy.inf", "numpy.nan",
})
NUMPY_ROOTS = ("numpy.",)
ITEM_KINDS = {Kind.TENSOR_DATASET: Kind.TENSOR_TUPLE, Kind.IMAGE_DATASET: Kind.IMAGE_SAMPLE}
LOADER_KINDS = {Kind.TENSOR_DATASET: Kind.TENSOR_LOADER, Kind.COLLATED_DATASET: Kind.TENSOR_LOADER, Kind.IMAGE_DATASET: Kind.IMAGE_LOADER}
BATCH_KINDS = {Kind.TENSOR_LOADER: Kind.TENSOR_TUPLE, Kind.IMAGE_LOADER: Kind.IMAGE_SAMPLE, Kind.BATCH_LIST: Kind.TENSOR_TUPLE}
LOADER_TUPLES = {Kind.TENSOR_LOADER: Kind.TENSOR_LOADERS, Kind.IMAGE_LOADER: Kind.IMAGE_LOADERS}  # a tuple of one kind of loader
LISTS = frozenset({Kind.LIST, Kind.TENSOR_LIST})
ITEM_ASSIGNABLE = frozenset({Kind.DICT, *LISTS})  # `batch[key] = value` works on these
KNOWN_LOADERS = frozenset(BATCH_KINDS)  # DataLoaders whose batches devfix knows
DATALOADER_KINDS = KNOWN_LOADERS | frozenset(LOADER_TUPLES.values())  # those, and tuples of them
IMAGE_TO_TENSOR = frozenset({
    "torchvision.transforms.ToTensor", "torchvision.transforms.PILToTensor",
    "torchvision.transforms.transforms.ToTensor", "torchvision.transforms.v2.ToTensor",
})


class Resolver:
    """Kinds of expressions given an environment of names (one scope at one point)."""

    def __init__(self, imports: ImportTable, classes: dict[str, Kind], functions: dict[str, Kind]) -> None:
        self.imports = imports
        self.classes = classes  # local class name → what its instances are (MODULE, OBJECT)
        self.functions = functions  # local function name → its return kind
        self.class_attributes: dict[tuple[str, str], Kind] = {}  # (class, attribute) → kind of `self.attribute`
        self.class_constants: dict[tuple[str, str], Kind] = {}  # (class, attribute) → kind of `Class.attribute`
        self.tensor_layers: frozenset[tuple[str, str]] = frozenset()  # (class, attribute) holding `nn.Linear(...)` and the like
        self.tensor_layer_names: frozenset[str] = frozenset()  # module-level names holding one (`G = nn.Sequential(...)`)
        self.class_name: str | None = None  # the class whose methods are being read
        self.parameter_kinds: dict[str, list[Kind]] = {}  # function or Class.method → kinds its calls pass by position
        self.method_names: frozenset[str] = frozenset()  # methods whose calls are noted (`.step(...)`)
        self.watched_calls: frozenset[str] = frozenset()  # calls through a module whose kinds are noted (`training.Trainer`)
        self.imported: Callable[[str], Kind] = lambda qualified: Kind.UNKNOWN  # a function of another file of the project
        self.instances = Instances()  # names and layers that only hold an instance of a Module class of the file
        self.forward_output: Callable[[str], Kind] = lambda class_name: Kind.UNKNOWN  # what a Module class's `forward` returns
        self.sizes: dict[int, frozenset[str]] = {}  # id of a function → its parameters given as sizes (`analysis.size_parameters`)

    def for_class(self, class_name: str) -> Resolver:
        """The same resolver, reading `self.x` as an attribute of `class_name`."""
        resolver = Resolver(self.imports, self.classes, self.functions)
        resolver.class_attributes, resolver.class_name = self.class_attributes, class_name
        resolver.class_constants, resolver.tensor_layers = self.class_constants, self.tensor_layers
        resolver.tensor_layer_names = self.tensor_layer_names
        resolver.parameter_kinds, resolver.method_names = self.parameter_kinds, self.method_names
        resolver.watched_calls = self.watched_calls
        resolver.imported = self.imported
        resolver.instances = self.instances
        resolver.forward_output = self.forward_output
        resolver.sizes = self.sizes
        return resolver

    def kind(self, node: ast.expr | None, env: dict[str, Kind]) -> Kind:
        if node is None:
            return Kind.NONE
        method = getattr(self, f"_kind_{type(node).__name__}", None)
        return method(node, env) if method is not None else Kind.UNKNOWN

    def _kind_Constant(self, node: ast.Constant, env: dict[str, Kind]) -> Kind:
        if node.value is None:
            return Kind.NONE
        if isinstance(node.value, (str, bytes)):
            return Kind.STR
        return Kind.SCALAR if isinstance(node.value, (bool, int, float, complex)) else Kind.OBJECT

    def _kind_JoinedStr(self, node: ast.JoinedStr, env: dict[str, Kind]) -> Kind:
        return Kind.STR

    def _kind_List(self, node: ast.List, env: dict[str, Kind]) -> Kind:
        """A list; of batches when each item is a tuple display of tensors (`[(x, y), (x2, y2)]`)."""
        batches = bool(node.elts) and all(self._tensor_tuple(element, env) for element in node.elts)
        if batches:
            return Kind.BATCH_LIST
        tensors = bool(node.elts) and all(self.kind(element, env) is Kind.TENSOR for element in node.elts)
        return Kind.TENSOR_LIST if tensors else Kind.LIST

    def _kind_ListComp(self, node: ast.ListComp, env: dict[str, Kind]) -> Kind:
        """A list; of batches when its item is a tuple display of tensors, read with the
        comprehension's own variables unknown (`[(x[i:i + n], y[i:i + n]) for i in ...]`)."""
        own = {name.id for generator in node.generators for name in ast.walk(generator.target) if isinstance(name, ast.Name)}
        inner = {name: kind for name, kind in env.items() if name not in own}
        if self._tensor_tuple(node.elt, inner):
            return Kind.BATCH_LIST
        return Kind.TENSOR_LIST if self.kind(node.elt, inner) is Kind.TENSOR else Kind.LIST

    def _tensor_tuple(self, node: ast.expr, env: dict[str, Kind]) -> bool:
        """A tuple display of two or more items, each a tensor, none placed there (`x.to(device)`,
        `device=`): rows like a DataLoader's batches, which the loop over them must move."""
        return (isinstance(node, ast.Tuple) and len(node.elts) >= 2
                and all(self.kind(element, env) is Kind.TENSOR and not _placed_here(element) for element in node.elts))

    def _kind_Tuple(self, node: ast.Tuple, env: dict[str, Kind]) -> Kind:
        """A tuple; of DataLoaders of one kind when each item is one (`train_loader, val_loader`)."""
        if node.elts and not any(isinstance(element, ast.Starred) for element in node.elts):
            items = join(self.kind(element, env) for element in node.elts)
            if items in LOADER_TUPLES:
                return LOADER_TUPLES[items]
        return Kind.TUPLE

    def _kind_Dict(self, node: ast.expr, env: dict[str, Kind]) -> Kind:
        return Kind.DICT

    _kind_DictComp = _kind_Dict

    def _kind_Set(self, node: ast.expr, env: dict[str, Kind]) -> Kind:
        return Kind.SET

    _kind_SetComp = _kind_Set

    def _kind_Lambda(self, node: ast.expr, env: dict[str, Kind]) -> Kind:
        return Kind.OBJECT

    def _kind_Name(self, node: ast.Name, env: dict[str, Kind]) -> Kind:
        return env.get(node.id, Kind.UNKNOWN)

    def _kind_NamedExpr(self, node: ast.NamedExpr, env: dict[str, Kind]) -> Kind:
        return self.kind(node.value, env)

    def _kind_IfExp(self, node: ast.IfExp, env: dict[str, Kind]) -> Kind:
        return join((self.kind(node.body, env), self.kind(node.orelse, env)))

    def _kind_UnaryOp(self, node: ast.UnaryOp, env: dict[str, Kind]) -> Kind:
        return Kind.SCALAR if isinstance(node.op, ast.Not) else self.kind(node.operand, env)

    def _kind_BinOp(self, node: ast.BinOp, env: dict[str, Kind]) -> Kind:
        left, right = self.kind(node.left, env), self.kind(node.right, env)
        if left is Kind.STR and isinstance(node.op, ast.Mod):
            return Kind.STR  # `"pred %d" % pred`: formatting, whatever it formats
        if Kind.TENSOR in (left, right):
            return Kind.TENSOR
        if left == right and left in (Kind.SCALAR, Kind.LIST, Kind.TENSOR_LIST, Kind.STR, Kind.TUPLE, Kind.NDARRAY):
            return left
        if {left, right} == LISTS:
            return Kind.LIST
        if {left, right} == {Kind.NDARRAY, Kind.SCALAR}:
            return Kind.NDARRAY
        return Kind.UNKNOWN

    def _kind_BoolOp(self, node: ast.BoolOp, env: dict[str, Kind]) -> Kind:
        return join(self.kind(value, env) for value in node.values)

    def _kind_Compare(self, node: ast.Compare, env: dict[str, Kind]) -> Kind:
        operands = [node.left, *node.comparators]
        if any(isinstance(op, (ast.Is, ast.IsNot, ast.In, ast.NotIn)) for op in node.ops):
            return Kind.SCALAR
        kinds = [self.kind(operand, env) for operand in operands]
        if Kind.TENSOR in kinds:
            return Kind.TENSOR
        return Kind.SCALAR if all(kind in (Kind.SCALAR, Kind.STR, Kind.NONE) for kind in kinds) else Kind.UNKNOWN

    def _kind_Subscript(self, node: ast.Subscript, env: dict[str, Kind]) -> Kind:
        container = self.kind(node.value, env)
        if container in (Kind.TENSOR, Kind.STR):
            return container
        if container in ITEM_KINDS and not isinstance(node.slice, ast.Slice):
            return ITEM_KINDS[container]  # `test_data[0]`
        if container is Kind.TENSOR_TUPLE and not isinstance(node.slice, ast.Slice):
            return Kind.TENSOR
        if container is Kind.TENSOR_LIST:
            return Kind.TENSOR_LIST if isinstance(node.slice, ast.Slice) else Kind.TENSOR
        if container is Kind.IMAGE_SAMPLE and isinstance(node.slice, ast.Constant) and node.slice.value == 0:
            return Kind.TENSOR  # the image; the target may be a plain int
        if container is Kind.NDARRAY:
            return Kind.NDARRAY  # an element of an array is a numpy scalar: not a tensor either
        return Kind.UNKNOWN

    def is_class_constant(self, node: ast.Attribute, env: dict[str, Kind]) -> bool:
        """`Config.weights`: an attribute a top-level class binds once in its body (`class_constants`)."""
        return isinstance(node.value, ast.Name) and node.value.id not in env and (node.value.id, node.attr) in self.class_constants

    def _kind_Attribute(self, node: ast.Attribute, env: dict[str, Kind]) -> Kind:
        if isinstance(node.value, ast.Name) and node.value.id == "self" and self.class_name is not None:
            return self.class_attributes.get((self.class_name, node.attr), Kind.UNKNOWN)
        if self.is_class_constant(node, env):
            return self.class_constants[(node.value.id, node.attr)]
        if dotted_head(node) not in env and self.imports.qualify(node) in NUMBER_CONSTANTS:
            return Kind.SCALAR  # `torch.pi`, `math.e`
        owner = self.kind(node.value, env)
        if node.attr == "device" and owner in (Kind.TENSOR, Kind.MODULE):
            return Kind.DEVICE
        if owner is Kind.TENSOR:
            if node.attr in TENSOR_ATTRIBUTES:
                return Kind.TENSOR
            if node.attr == "shape":
                return Kind.TUPLE
            if node.attr in ("ndim", "is_cuda", "requires_grad"):
                return Kind.SCALAR
        if owner is Kind.NDARRAY and node.attr in ("T", "shape", "ndim", "size", "dtype"):
            return Kind.NDARRAY if node.attr == "T" else Kind.OBJECT
        return Kind.UNKNOWN

    def _kind_Await(self, node: ast.Await, env: dict[str, Kind]) -> Kind:
        return Kind.UNKNOWN

    def _kind_Call(self, node: ast.Call, env: dict[str, Kind]) -> Kind:
        qualified = None if dotted_head(node.func) in env else self.imports.qualify(node.func)
        if qualified is not None:
            return self._kind_of_named_call(qualified, node, env)
        if (isinstance(node.func, ast.Name) or is_self_attribute(node.func)) and self.kind(node.func, env) is Kind.IMAGE_TRANSFORM:
            return Kind.TENSOR  # `transform(image)`, `self.transform(image)` of a `Compose([..., ToTensor()])`
        if is_self_attribute(node.func) and (self.class_name, node.func.attr) in self.tensor_layers:
            return Kind.TENSOR  # `self.emb(ids)` of `self.emb = nn.Embedding(...)`
        if isinstance(node.func, ast.Name) and node.func.id in self.tensor_layer_names:
            return Kind.TENSOR  # `G(z)` of `G = nn.Sequential(nn.Linear(8, 64), nn.Tanh())`
        held = self._instance_called(node)
        if held is not None:
            return self.forward_output(held)  # `self.pos(h)` of a `PositionalEncoding` of the file: what its `forward` returns
        if isinstance(node.func, ast.Attribute):
            receiver = self.kind(node.func.value, env)
            if node.func.attr == "type" and receiver is Kind.TENSOR and len(node.args) == 1:
                return Kind.TENSOR  # `x.type(torch.FloatTensor)` converts; `x.type()` names the type
            if node.func.attr == "size" and len(node.args) == 1 and not node.keywords and receiver in (Kind.TENSOR, Kind.UNKNOWN):
                return Kind.SCALAR  # `output.size(1)`: one dimension's length (numpy's `size` is no method)
            if node.func.attr == "view" and len(node.args) >= 2 and receiver in (Kind.TENSOR, Kind.UNKNOWN):
                return Kind.TENSOR  # `recon.view(-1, 4, 4)`: sizes; numpy's `view` takes one dtype
            return self._kind_of_method(node.func.attr, receiver)
        return Kind.UNKNOWN

    def _instance_called(self, call: ast.Call) -> str | None:
        """The Module class of the file whose instance the callee of `call` only ever holds (`Instances`)."""
        func = call.func
        if is_self_attribute(func) and self.class_name is not None:
            return self.instances.layers.get((self.class_name, func.attr))
        if isinstance(func, ast.Call):
            return self.instances.called_at(call)  # `Loss()(x, y)`
        return self.instances.names.get(func.id) if isinstance(func, ast.Name) else None

    def _kind_of_named_call(self, qualified: str, node: ast.Call, env: dict[str, Kind]) -> Kind:
        if qualified in NON_TENSOR_TORCH:
            return NON_TENSOR_TORCH[qualified]
        parts = qualified.split(".")
        if len(parts) == 2 and parts[0] == "torch" and parts[1].startswith(NON_TENSOR_PREFIXES):
            return Kind.SCALAR if parts[1].startswith("is_") else Kind.UNKNOWN
        if qualified.startswith(TENSOR_NAMESPACES) and parts[-1][:1].islower() or qualified in STACKING_FUNCTIONS:
            return Kind.TENSOR
        if parts[0] == "torch" and len(parts) == 2 and (parts[1][:1].islower() and not parts[1].startswith("_")
                                                        or parts[1] in LEGACY_TENSOR_CLASSES):
            return Kind.TENSOR
        if qualified.startswith("torch.nn.") and parts[-1] in ("Parameter",):
            return Kind.TENSOR
        if qualified.startswith("torch.nn.") and parts[-1][:1].isupper():
            return Kind.MODULE
        if qualified.startswith(NUMPY_ROOTS):
            return Kind.NDARRAY if parts[-1][:1].islower() else Kind.OBJECT
        if qualified.startswith("math.") and parts[-1][:1].islower():
            return Kind.SCALAR
        if qualified.startswith("builtins."):
            return BUILTIN_KINDS.get(parts[-1], Kind.UNKNOWN)
        if qualified == "torch.utils.data.TensorDataset":
            return Kind.TENSOR_DATASET
        if qualified == "torch.utils.data.DataLoader":
            return self._loader_kind(node, env)
        if qualified.startswith("torchvision.datasets.") and parts[-1][:1].isupper() and self._makes_image_tensors(node, env):
            return Kind.IMAGE_DATASET
        if qualified.startswith("torchvision.transforms.") and parts[-1][:1].isupper() and self._holds_to_tensor(node):
            return Kind.IMAGE_TRANSFORM
        if qualified in ("copy.deepcopy", "copy.copy") and node.args:
            return self.kind(node.args[0], env)
        if qualified in VARIABLE_WRAPPERS:  # `Variable(t)` is `t` today
            return self.kind(node.args[0], env) if node.args else Kind.UNKNOWN
        if "." not in qualified:  # a class or function of this file
            if qualified in self.classes:
                return self.classes[qualified]
            return self.functions.get(qualified, Kind.UNKNOWN)
        return self.imported(qualified)  # `from data import make_loaders`: what it returns in its file

    def _loader_kind(self, node: ast.Call, env: dict[str, Kind]) -> Kind:
        """A DataLoader over a dataset of tensors, collated by default: its batches are samples
        stacked (a TensorDataset's: all tensors; a torchvision dataset's: the images are)."""
        dataset = node.args[0] if node.args else next((k.value for k in node.keywords if k.arg == "dataset"), None)
        if any(keyword.arg in ("collate_fn", "batch_sampler") for keyword in node.keywords) or dataset is None:
            return Kind.OBJECT
        return LOADER_KINDS.get(self.kind(dataset, env), Kind.OBJECT)

    def _makes_image_tensors(self, node: ast.Call, env: dict[str, Kind]) -> bool:
        """`transform=ToTensor()` (or a Compose holding one, written there or bound to the name
        given): the dataset's images are tensors."""
        transform = next((keyword.value for keyword in node.keywords if keyword.arg == "transform"), None)
        return transform is not None and (self._holds_to_tensor(transform) or self.kind(transform, env) is Kind.IMAGE_TRANSFORM)

    def _holds_to_tensor(self, transform: ast.expr) -> bool:
        return any(isinstance(call, ast.Call) and self.imports.qualify(call.func) in IMAGE_TO_TENSOR for call in every_node(transform))

    def _kind_of_method(self, method: str, receiver: Kind) -> Kind:
        if method in METHOD_KINDS and (receiver in (Kind.TENSOR, Kind.NDARRAY, Kind.DICT, Kind.LIST, Kind.TENSOR_LIST, Kind.STR)):
            if method == "tolist" and receiver is Kind.NDARRAY:
                return Kind.LIST
            return METHOD_KINDS[method]
        if method in ("tolist", "item"):
            return METHOD_KINDS[method]  # whatever has them, these give Python values
        if method in SAME_KIND_METHODS and receiver in (Kind.TENSOR, Kind.MODULE):
            return receiver
        if receiver is Kind.TENSOR and method in TENSOR_TO_TENSOR_METHODS:
            return Kind.TENSOR
        if receiver is Kind.UNKNOWN and method in TENSOR_ONLY_METHODS:
            return Kind.TENSOR  # nothing but a tensor has them: the call proves what the receiver was
        if receiver is Kind.STR:
            return Kind.UNKNOWN if method == "split" else Kind.STR
        return Kind.UNKNOWN
