"""DF004 constructor-device: a tensor created without `device=` meets a tensor that may be on a GPU.

    Before:  target = torch.arange(z1.size(0))
             loss = F.cross_entropy(z1 @ z2.T, target)
    After:   target = torch.arange(z1.size(0), device=z1.device)

In a function or a script, a factory call (`torch.zeros/ones/empty/full/rand/randn/randint/randperm/arange/
linspace/logspace/eye/tensor/as_tensor`) whose result is combined with a tensor `x` — arithmetic,
comparison, `torch.cat`/`where`/`F.*` arguments, a method of `x`, or indexing the new tensor by `x`
— gets `device=x.device`, where `x` is a parameter or earlier local that is certainly a tensor. A
factory call fed to a Module (`G(torch.randn(8, 2))`, `criterion(D(real), torch.ones(8, 1))`) goes
with the Module's other inputs, or to the device the Module was moved to (a model parameter that
every caller in the file passes moved: its own device, `next(model.parameters()).device`); so does
one given to a torch function beside such a Module's output (`F.cross_entropy(model(xb), yb)`
with `yb = labels[index]`), unless another meeting names a device for it. A parameter that every
call of its function in the file gives a torch.nn Module built in the call is such a Module
(`train_step(D, real, nn.BCEWithLogitsLoss())`, then `bce(D(real), torch.ones(n, 1))`). A model moved under an
`if` (`if use_gpu: model = model.to(device)`) is on the device the move names only where that test
is the device's own choice (`device = torch.device("cuda" if use_gpu else "cpu")`, or both ask for
CUDA's availability); elsewhere its inputs follow its parameters (`model(x.to(next(model.parameters()).device))`).
An ensemble's member is a moved model too: `m` of `for m in members` (or `[m(x) for m in members]`),
where the list was built of moves to one device and is never changed in place
(`members = [Net().to(device) for _ in range(3)]`; `PlacementFacts.element_moves`), also by a
function of the file whose every `return` gives such a list (`members = build_ensemble(3)`).
The fix follows the tensor it meets, so it is right on every device.

`torch.from_numpy(a)` and legacy CPU constructors (`torch.LongTensor(ids)`), which take no CUDA
`device=`, get `.to(<device>)` instead. What a helper of the file returns when every `return`
builds a CPU tensor (`ids = encode(texts)`) moves where it is fed to a Module that was moved:
`model(ids.to(device))`, so the helper's other callers keep their CPU tensors; when the model is a
parameter (`def predict(model, rows)`) whose every caller in the file passes a moved model (or,
for a helper module that never calls it itself, every call in the files beside it,
`analysis.importers`), to the model's own device, `next(model.parameters()).device`; a fresh tensor
that meets what such a model returns, called or through a method of its Module class of the file
(`scores = torch.zeros(beam)` beside `logp = decoder.step(tokens, h)` in a beam search), is made
there. So does a local the
value analysis proves to be a tensor, built from nothing that may be on a device
(`img = transform(image).unsqueeze(0)`, then `model(img)` → `model(img.to(device))`, where
`transform` is a function of the file, or a torchvision `Compose([..., ToTensor()])`, or what it
is given is a PIL image; a sample of a
`TensorDataset` of CPU tensors or of a torchvision dataset made with `ToTensor()`,
`x = test_data[0][0]`), and a
tokenizer's or processor's `return_tensors="pt"` output unpacked into a moved model or one of its
methods (`model.generate(**inputs)` → `model.generate(**inputs.to(device))`), and so are its fields
given to one, also from a function reading a model the top level moved (`enc["input_ids"]`,
`tokenizer(text, return_tensors="pt").input_ids`, `tokenizer.encode(text, return_tensors="pt")`,
a name bound once to such a value: `.to(device)` where given), and in a helper given a model that
every caller moved (`def complete(model, tokenizer, prompt)`: `.to(next(model.parameters()).device)`,
the model's own device). Ids a generation loop grows with the
model's output (`ids = torch.cat([ids, next_id], -1)`) move where they are made, when every other
read takes a device tensor too (`analysis.token_ids`); a name rebound otherwise, or an encoding
bound twice, is left alone. A name a loop unpacks from the rows of a list display or comprehension
of tuples (bound before it: `for tokens, score in beams:` after `beams = [(torch.full((1, 1), sos),
0.0)]`, a beam search's start; `for x, y in [(xs[i:i + 8], ys[i:i + 8]) for i in ...]`) is made where
its item of every row is; so is a name a loop binds to each whole row (`for h in [torch.zeros(2, 3),
torch.ones(2, 3)]`, or of a list bound to such a display or comprehension).

A model parameter compiled or scripted in the function (`scripted = torch.jit.script(model)`,
`torch.compile(model)`) is that model, on its device: a warm-up input given to it is made there.
So are the ids given to `generate(...)` of a transformers model (`AutoModelForCausalLM.from_pretrained(...)`)
moved in the scope: `torch.tensor([tokenizer.encode(text)])` then `model.generate(ids)` →
`device=device`. So is a factory passed to a method of a model moved in the scope, of a class of the file (or of
a file of the project it imports the class from: `from model import VAE`), when that method hands
the parameter to one of the class's layers, directly or through `self(...)` or another method
(`analysis.method_inputs`): `start = torch.zeros((1, 1), dtype=torch.long)` then
`m.generate(start, 20)` → `torch.zeros(..., device=device)`. A value the loop around such a call
rebuilds after it (`masks = torch.FloatTensor(...)` at the end of the body) reaches the call on the
next pass: made where the Module was moved (for a model a function is given and never rebinds, its own
device: a sampling loop's `idx = torch.tensor([[nxt]])`). A model parameter of a helper whose
every caller gives it a moved instance of one class of the file is that class's too: `z =
torch.randn(n, 2)` then `model.decode(z)` in `def sample(model, n)` →
`device=next(model.parameters()).device`.

Through the file's functions too: a value given to a function that hands that parameter to a model
the top level moved (`select_action(state)` running `policy_net(state)`) goes to that model's
device; a value given beside a placed argument to a function that puts the two parameters into one
tensor operation (`train_step(model, opt, x.to(device), y.to(device), weights)` with
`F.cross_entropy(logits, y, weight=weights)`, `analysis.parameter_meetings`) goes where that
argument is (also one computed from values moved to one device: `outputs = self.model(inputs)`
after `inputs = x.to(device)`, the Module one the object's `__init__` builds): `weights = compute_class_weights(masks).to(device)`; a value given beside a moved
model to a function that feeds that parameter to that model (`evaluate(model, xs)` running
`model(xs)`, or its elements: `for x, y in zip(xs, ys)`, of `xs = [torch.randn(4, 3) for _ in
range(5)]`) goes where the model was moved, also when a function of the file or of the project
built and moved it (`model = get_model(args)` giving back `model` after `model.to(args.device)`); what a
CPU-tensor helper of the file returns, given so (`train(encode(src), encoder)`), moves where it is
passed, `train(encode(src).to(device), encoder)`. A parameter every caller gives a torch.nn Module that
holds no state, built in the call or bound to a name (`criterion = nn.NLLLoss()`), puts its inputs
together: `criterion(decoder(x), target)` gives `target` that model too. A model the top level moves is on
the device inside a function only when every top-level call that runs the function comes after the
move (`analysis.entry_lines`): a warm-up probe run before it keeps its CPU inputs.

Names unpacked from a sampler or loader, of the file or of another file of the project, whose every
`return` is a tuple of tensors made on the host (`x, y = get_batch(split)` slicing a module-level
tensor, `analysis.host_helpers`; or slicing the host tensor it is given, `get_batch(data)` of `data =
torch.tensor(ids)`, also inside a function when the top level binds `data` once and never moves it) are moved where they meet a moved model, its output, a loss of it or a function
that puts them together with it (`accuracy(out, y)`): `model(x.to(device), y.to(device))`, also inside a tuple display (`lstm(x, (h, c))` after `h, c
= init_state(n)`). Such a helper's tuple kept whole (`state = init_state(n)`, then `lstm(x,
state)`), or a dict display of host tensors it returns (`batch = encode(rows)`, then
`model(**batch)`), has no `.to()`: it moves item by item where it is fed, `lstm(x,
tuple(value.to(device) for value in state))`, `model(**{key: value.to(device) for key, value in
batch.items()})`, when the name holds nothing else in the scope (a loop's `out, state = lstm(x,
state)` gives it back on the device). An update in place stays on its target's device: `hits =
torch.zeros(1)` then `hits += (model(x).argmax(1) == y).sum()` → `torch.zeros(1, device=device)`. A
torch.nn Module that holds no parameters (`nn.BCELoss()` moved with `.cuda()`) never names the
device (`next(bce.parameters())` raises); the model whose output it is fed does. A container rebuilt
from its items (`state = tuple(s.detach() for s in state)`, truncated backpropagation through an
LSTM's `(h, c)`) holds what it was built from: `state = (torch.zeros(1, b, n), ...)` fed to a moved
model gets `device=` where it is made.

A helper of the file whose every `return` builds a CPU tensor (`mask = subsequent_mask(n)`, a name
the value analysis proves a tensor; also from what another such helper returns, and with a
parameter it gives a factory or a shape method as one of several sizes, a number: SSIM's
`create_window(window_size, channel)` returning `gaussian(window_size, 1.5)`'s outer product
expanded to `(channel, 1, window_size, window_size)`; with a parameter every call leaves at its
literal default or gives a number, `float(...)` of anything, and a list it fills with such tensors:
a detector's `generate_anchors(h, w, stride=8)`) is moved where it is bound when it meets a tensor:
`subsequent_mask(n).to(scores.device)`; called inside the operation, it is moved there:
`x + positional_encoding(n, d)` → `x + positional_encoding(n, d).to(x.device)`; given to a loss
that holds no parameters (no device of its own), it goes where the loss's other input is:
`criterion(D(real), real_targets(n))` → `real_targets(n).to(real.device)`. A tensor method of
a Module's output is a tensor to align with too (`preds = model(x).argmax(1)`, then
`preds == torch.from_numpy(labels)` → `torch.from_numpy(labels).to(preds.device)`).

Two distributions given to `kl_divergence` (their samples and parameters are where the tensors
they are built from are) meet like tensors: `prior = Normal(torch.zeros(d), torch.ones(d))` beside
an encoder's posterior gets the encoder's device. A table written to with indices a loop takes from
device tensors (`confusion[t.long(), p.long()] += 1` for `t, p in zip(classes.view(-1), preds.view(-1))`)
is made where those are: each loop element lives where the value it iterates does (`for pred,
target in zip(outputs, targets)` meeting `joint_weights` made before `targets = targets.to(device)`
→ `device=device`). A name rebound from itself after the factory (`sim = sim - torch.eye(n) * 1e9`)
is where it was before. A helper whose
returned factories this pass already places where its parameters are (`smooth_one_hot(labels, k)`'s
`torch.zeros(..., device=labels.device)`) needs no move where it is used.

A factory a function returns beside a tensor it computed from its parameters, where every caller
of the file unpacks the two and gives them to one call or operator (SimCLR's `info_nce_loss`:
`labels = torch.zeros(logits.shape[0], dtype=torch.long)`, `return logits / temperature, labels`,
then `criterion(logits, labels)`), is made where its partner is: `device=logits.device`
(`analysis.returned_pairs`).

A value made from factories before anything names the device (`x = torch.randn(8, 5)` above
`model = Net()` and `if use_cuda: model = model.cuda()`) moves where it is fed instead:
`model(x.to(next(model.parameters()).device))`, `criterion(out, y.to(out.device))`.

A factory in the item of a comprehension meets the comprehension's variable there: `[delta *
torch.bernoulli(torch.full(delta.shape, p)) for delta in deltas]` → `device=delta.device`, where
every call gives `deltas` a list of tensors (`Kind.TENSOR_LIST`). A table the scope built on the host
(`host_made`: also a list only ever filled with host tensors, then joined) that no device can be
named for where it is made, never written into, and read in a function by an index bound later (yolov7's
`from_which_layer[fg_mask_inboxes]`) moves where it is read: `from_which_layer.to(fg_mask_inboxes.device)[fg_mask_inboxes]`;
not for an index that may be 0-dim (a loop's element, an item read by a number), which CUDA reads as a number.

A token drawn from probabilities brought to the host (`next_id = torch.multinomial(probs.cpu(), 1)`)
has no factory to make elsewhere: joined to ids proven on a device (or a parameter every call in
the file gives one), it moves where it is joined, `torch.cat([ids, next_id.to(ids.device)], dim=1)`.
A copy brought to the host where it is used (`(predicted.cpu() == labels)`, the CIFAR tutorial's
accuracy) beside a name proven on a device (the loop moved the labels too), or a value read by a
string key from one (`batch["labels"]` of `batch = {k: v.to(device) for k, v in batch.items()}`),
takes it to the host as well: `labels.cpu()`; not beside a copy that may be 0-dim, which meets
device tensors.

A factory that draws from a `generator=` (a CPU generator, for reproducible numbers) is moved
after the call instead, `torch.randn(n, generator=g).to(x.device)`: `device=` would not match
the generator, and the moved values are the ones the CPU run draws.

A factory that writes into a CUDA-only legacy tensor (`torch.arange(0, n, out=torch.cuda.LongTensor(n))`,
Tacotron's length mask) is made with that type's dtype where the tensor it meets lives instead:
`torch.arange(0, n, dtype=torch.int64, device=lengths.device)`.

Refuses: calls that already have `device=` or write into another `out=` tensor, calls in the `else`
of `if torch.cuda.is_available():` (that branch runs on the CPU only, in a file naming no `mps`),
factories in a file that sets a global default device (`torch.set_default_device(device)` places them),
`*_like`/`new_*`/legacy constructors (already correct, or DF009's), 0-dim
literals such as `torch.tensor(0.0)` in pointwise ops (allowed next to CUDA tensors), tensors
handed to `torch.nn.utils.rnn` (lengths must stay on the CPU), the lengths given to a CTC loss
(`nn.CTCLoss` takes them on either device, warp-ctc's on the CPU), an integer tensor made from sizes
(`torch.IntTensor([spect.size(3)])`) given to a model whose `forward` devfix cannot read (it may pack
them, or bring them back with `.cpu()`), values only used on the host, a
model name read before it was rebound to the model that is moved (`model = Net()` trained on the
CPU, then `model = Net()` again and `model.to(device)`: the first one stays on the CPU), and
programs that place nothing on a device, nor do the modules of the project they import (they run
on the CPU: there is nothing to align, and an added `device=x.device` would make the next pass
take the script for one that uses a GPU).
A tensor to align with must not be a value the analysis proves to be a list, a number or a numpy
array (`idss.append(...)` of an annotated list, an image converted by `torch.from_numpy(image)`).
"""

from __future__ import annotations

import re

import libcst as cst

from devfix.analysis.call_sites import argument_for, file_functions
from devfix.analysis.cst_bindings import (
    calls_in,
    comprehension_targets,
    names_in,
    parameter_names,
    return_values,
    variables_in,
)
from devfix.analysis.cst_metadata import ParentProvider, PositionProvider
from devfix.analysis.dataset_items import index_of
from devfix.analysis.host_helpers import HelperSummary
from devfix.analysis.host_made import HostContext, host_made
from devfix.analysis.kinds import TENSOR_TO_TENSOR_METHODS, Kind
from devfix.analysis.method_inputs import MethodInputs, parameters_fed_to_models, parameters_given_with_models
from devfix.analysis.module_classes import is_self_attribute, tensor_layer_attributes, top_level_class
from devfix.analysis.parameter_meetings import FunctionMeetings, meeting_pairs
from devfix.analysis.placement import Move, PlacementFacts, as_move, copies_to_the_host, device_code, is_cast
from devfix.analysis.scopes import ScopeTracker
from devfix.analysis.tensor_methods import TENSOR_METHODS
from devfix.analysis.tensors import (
    chain_root,
    is_factory_call,
    is_number_expression,
    is_tensor_expression,
    is_whole_reduction,
    is_zero_dim_value,
    tensor_evidence,
    without_tensor_methods,
)
from devfix.analysis.token_ids import grows, reads_take_device_tensors
from devfix.analysis.torch_api import (
    CHAIN_STOPS,
    DATA_CONVERTERS,
    DATA_FACTORIES,
    DEVICE_CHANGING_METHODS,
    ENCODING_TENSOR_FIELDS,
    FACTORY_FUNCTIONS,
    FIRST_OPERAND_ONLY,
    HOST_SIDE_PREFIXES,
    JOINS,
    LEGACY_CPU_CONSTRUCTORS,
    LEGACY_DTYPES,
    LIST_JOINS,
    MEETING_FUNCTIONS,
    MODULE_COMPILERS,
    MOVED_AFTER,
    NON_TENSOR_METHODS,
    NOT_COMBINING_METHODS,
    TENSOR_ENCODERS,
    is_source_wrapper,
    is_torch_tensor_function,
)
from devfix.analysis.torch_names import holds_state, keyword, spreads_keywords
from devfix.codemods.base import DevfixRule
from devfix.codemods.edits import add_keyword, items_moved_to, moved_to
from devfix.findings import Safety

HOST_VALUES = frozenset({"tolist", "item", "numpy"})  # methods whose result is no tensor
# (`.type_as(src)` among DEVICE_CHANGING_METHODS: it takes `src`'s type, device included)

EXPRESSION_ROOTS = re.compile(r"(?<![\w.])[A-Za-z_][A-Za-z0-9_]*")  # names not after a dot: what an expression reads
DEVICE_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*")  # `device`, `args.device`: no call in it
OWN_DEVICE = re.compile(r"next\(([A-Za-z_][A-Za-z0-9_]*)\.parameters\(\)\)\.device")  # a model's own device
NOT_TENSOR_LITERALS = (cst.SimpleString, cst.FormattedString, cst.List, cst.Dict, cst.Tuple, cst.Integer, cst.Float, cst.ListComp, type(None))


# binary element-wise torch functions: a 0-dim CPU tensor joins a CUDA tensor there (`torch.max(r, EPSILON)`
# with two tensors is the element-wise maximum)
POINTWISE_FUNCTIONS = frozenset({
    "where", "add", "mul", "sub", "div", "maximum", "minimum", "clamp", "max", "min", "fmax", "fmin", "pow", "atan2",
    "remainder", "fmod", "hypot", "eq", "ne", "lt", "le", "gt", "ge",
})
CTC_LOSS_CLASSES = frozenset({"torch.nn.CTCLoss", "torch.nn.modules.loss.CTCLoss"})
CTC_LOSS_FUNCTIONS = frozenset({"torch.nn.functional.ctc_loss", "torch.ctc_loss"})
CTC_LENGTH_KEYWORDS = frozenset({"input_lengths", "target_lengths"})
INTEGER_CASTS = frozenset({"int", "long", "short"})


class ConstructorDevice(ScopeTracker, DevfixRule):
    CODE = "DF004"
    NAME = "constructor-device"
    SAFETY = Safety.SAFE
    DESCRIPTION = "Tensor created on the CPU next to a tensor that may be on a device"

    def visit_Module(self, node: cst.Module) -> None:
        super().visit_Module(node)
        self._aligned: dict[cst.Call, str] = {}
        # an argument, or an operand name (`preds == labels`) → (where it comes from, the device)
        self._moved_inputs: dict[cst.Arg | cst.Name, tuple[str, str]] = {}
        self._hosted_inputs: dict[cst.Name | cst.Subscript, str] = {}  # a device value beside a host copy → the copy's code
        self._moved_containers: dict[cst.Arg, str] = {}  # "tuple" or "dict": moved item by item
        self._moved_bindings: dict[cst.BaseExpression, tuple[str, str]] = {}  # `ids = tokenizer.encode(...)` grown in a loop
        self._helper_verdicts: dict[str, bool] = {}
        self._device_names: frozenset[str] | None = None
        self._method_inputs: dict[str, MethodInputs | None] = {}
        self._moved_model_parameters: dict[tuple[int, str], bool] = {}  # (function, parameter) → every caller moved it
        self._function_inputs: dict[str, tuple[list[str], str] | None] = {}
        self._parameter_models: dict[str, dict[str, set[str]]] = {}
        self._meetings: dict[str, list[tuple[str, str]]] = {}
        self._class_layers: dict[cst.ClassDef, frozenset[str]] = {}
        # the scopes the screen says a factory may meet a tensor in (by `def` line; None: anywhere)
        self._meeting_lines = self.facts.factory_meeting_lines if self.facts is not None else None
        self._collect(node, node.body)

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._collect(node, [node.body])

    def _collect(self, scope: cst.Module | cst.FunctionDef, statements) -> None:
        if self._meeting_lines is not None and (0 if isinstance(scope, cst.Module) else self.line_of(scope)) not in self._meeting_lines:
            return  # nothing meets there: the collection is most of the rule's cost
        finder = _Combinations(self, scope)
        for statement in statements:
            statement.visit(finder)
        aligned = finder.keeping_host_indices({**finder.placed_by_fed_models(), **finder.aligned})
        for call, device in aligned.items():
            self._aligned.setdefault(call, device)
        finder.move_late_tables(aligned)
        self._moved_inputs.update(finder.moved_inputs)
        self._hosted_inputs.update(finder.hosted_inputs)
        self._moved_containers.update(finder.moved_containers)
        self._moved_bindings.update(finder.moved_bindings)
        if isinstance(scope, cst.FunctionDef):
            self._align_returned_pairs(scope)

    def _align_returned_pairs(self, function: cst.FunctionDef) -> None:
        """SimCLR's `labels = torch.zeros(n, dtype=torch.long)` returned beside `logits`, which every
        caller gives to the loss with it: made on `logits.device` (`analysis.returned_pairs`)."""
        pairs = self.facts.returned_pairs.get(self.line_of(function), []) if self.facts is not None else []
        for pair in pairs:
            for statement in function.body.body:
                if not (isinstance(statement, cst.SimpleStatementLine) and self.line_of(statement) == pair.binding_line):
                    continue
                for small in statement.body:
                    if isinstance(small, cst.Assign) and isinstance(small.targets[0].target, cst.Name) \
                            and small.targets[0].target.value == pair.name:
                        self._aligned.setdefault(chain_root(small.value), f"{pair.partner}.device")  # `torch.full(...).long()`

    def returns_cpu_tensors(self, function: str) -> bool:
        """Is `function` a top-level function of this file whose every `return` builds a CPU
        tensor (`return torch.tensor(rows)`, or arithmetic and methods of locals built so)?
        Looked up for names fed to a moved model, and for names the value analysis proves tensors."""
        if function not in self._helper_verdicts:
            self._helper_verdicts[function] = False  # while it is judged: helpers that call each other
            definition = self._definition(function)
            if definition is None:  # `from utils import causal_mask`: a function of another file of the project
                summary = self._imported_helper(function)
                self._helper_verdicts[function] = summary is not None and summary.returns_host_tensors
                return self._helper_verdicts[function]
            values = return_values(definition)
            facts = self.scope_facts(definition.body)
            summary = self.facts.local_helper(function) if self.facts is not None else None
            if summary is None or not summary.returns_tensors:
                return False  # a numpy array, a list or a number made on the host has no `.to()`
            self._helper_verdicts[function] = bool(values) and all(
                _builds_cpu_tensor(value, self.qualified)
                or (value is not None and host_made(value, self.line_of(value), 0, self.host_context(facts)))
                for value in values
            )
        return self._helper_verdicts[function]

    def cpu_tensor_tuple_size(self, function: str, call: cst.Call | None = None, line: int = 0, facts: PlacementFacts | None = None) -> int:
        """n when `function` (of this file, or imported from the project) returns a tuple of n
        tensors made on the host at every `return` (`return x, y` of `get_batch()`), else 0; or,
        for `call` on `line` of the scope of `facts`, when it does so given host tensors and `call`
        gives it host tensors (`get_batch(data)` of `data = torch.tensor(ids)`)."""
        summary = self._helper_summary(function)
        if summary is None:
            return 0
        if summary.host_tuple_size or call is None or facts is None:
            return summary.host_tuple_size
        size, parameters = summary.given_host_tuple
        positional = self.function_parameters(function)
        where = self.host_context(facts)
        for _, parameter in parameters:
            value = argument_for(call, parameter, positional)
            if value is None or self.kind_of(value) is not Kind.TENSOR or not host_made(value, line, 0, where):
                return 0
        return size

    def cpu_tensor_container(self, function: str) -> str | None:
        """"tuple" or "dict" when every `return` of `function` (of this file, or imported from the
        project) is a tuple display (`return h, c`) or a dict display (`return {"input_ids": ids}`)
        of tensors made on the host; else None. Neither container has `.to()`."""
        summary = self._helper_summary(function)
        if summary is None:
            return None
        return "tuple" if summary.host_tuple_size else "dict" if summary.returns_host_dicts else None

    def _helper_summary(self, function: str) -> HelperSummary | None:
        if self._definition(function) is not None:
            return self.facts.local_helper(function) if self.facts is not None else None
        return self._imported_helper(function)

    def host_context(self, facts: PlacementFacts) -> HostContext:
        return HostContext(facts, self.qualified, self.returns_cpu_tensors, self._device_callables(), self.kind_of)

    def _device_callables(self) -> frozenset[str]:
        """Module-level names bound to something that makes device tensors (`Tensor =
        torch.cuda.FloatTensor if cuda else torch.FloatTensor`) or that the top level moves
        (`generator.cuda()`): what they return is no host value."""
        if self._device_names is None:
            finder = _CudaReferences(self.qualified)
            names = set(self.scope_facts(self.module).moved)
            for statement in self.module.body:
                if isinstance(statement, cst.SimpleStatementLine):
                    for small in statement.body:
                        if isinstance(small, cst.Assign) and len(small.targets) == 1 and isinstance(small.targets[0].target, cst.Name):
                            finder.found = False
                            small.value.visit(finder)
                            if finder.found:
                                names.add(small.targets[0].target.value)
            self._device_names = frozenset(names)
        return self._device_names

    def may_return_a_scalar_tensor(self, function: str) -> bool:
        """May a `return` of the top-level `function` be 0-dim: `torch.tensor(v)` of anything but a
        list, or a whole-tensor reduction (`.sum()`)? CUDA tensors accept a 0-dim CPU tensor in
        pointwise operations, so such a result needs no move there. (Asked of helpers that
        `returns_cpu_tensors` accepts: a single top-level definition.)"""
        definition = self._definition(function)
        if definition is None:
            summary = self._imported_helper(function)
            return summary is None or summary.may_return_a_scalar
        values = [value for value in return_values(definition) if value is not None]
        return any(self._may_be_zero_dim(call) for value in values for call in calls_in(value))

    def _may_be_zero_dim(self, call: cst.Call) -> bool:
        if self.qualified(call.func) & DATA_FACTORIES:
            data = call.args[0].value if call.args else None
            return not isinstance(data, (cst.List, cst.Tuple, cst.ListComp))
        return is_whole_reduction(call)

    def _imported_helper(self, function: str) -> HelperSummary | None:
        """The summary of a function the file imports from a local module (`analysis.host_helpers`)."""
        qualified = self.facts.imports.names.get(function) if self.facts is not None else None
        return self.project.imported_helper(self.context.filename, qualified) if qualified else None

    def _definition(self, function: str) -> cst.FunctionDef | None:
        """The top-level `def function`, when the file defines it exactly once."""
        return file_functions(self.module).get(function)

    def layers_of_method(self, scope: cst.Module | cst.FunctionDef) -> frozenset[str]:
        """For a method, the attributes its class's `__init__` assigns a single-tensor torch.nn layer."""
        owner = self.class_of_method(scope) if isinstance(scope, cst.FunctionDef) else None
        if owner is None:
            return frozenset()
        if owner not in self._class_layers:  # once a class, not once a method
            self._class_layers[owner] = tensor_layer_attributes(owner, self.qualified)
        return self._class_layers[owner]

    def method_inputs(self, class_name: str | None) -> MethodInputs | None:
        """The summary of a class the file defines once at its top level, or imports from a file of
        the project (`analysis.method_inputs`)."""
        if class_name is None:
            return None
        if class_name not in self._method_inputs:
            classes = [statement for statement in self.module.body if isinstance(statement, cst.ClassDef) and statement.name.value == class_name]
            self._method_inputs[class_name] = MethodInputs(classes[0], self.qualified) if len(classes) == 1 else self._imported_method_inputs(class_name)
        return self._method_inputs[class_name]

    def _imported_method_inputs(self, class_name: str) -> MethodInputs | None:
        """The summary of a class the file imports from a file of the project (`from model import VAE`)."""
        if self.facts is None or class_name not in self.facts.imports.names:
            return None
        return self.project.imported_method_inputs(self.context.filename or "<memory>", self.facts.imports.names[class_name])

    def function_model_inputs(self, function: str) -> tuple[list[str], str] | None:
        """For a top-level function of the file: the parameters it hands to models the top level
        moved, all to one device, and that device's code (`analysis.method_inputs`); else None."""
        if function not in self._function_inputs:
            self._function_inputs[function] = None
            definition = self._definition(function)
            if definition is not None:
                models = self.scope_facts(definition.body).modules_on_device
                top = self.scope_facts(self.module).moved
                fed = parameters_fed_to_models(definition, models, self.qualified) if models else {}
                devices = {device_code(top[model].device) for reached in fed.values() for model in reached if model in top}
                if fed and len(devices) == 1 and None not in devices:
                    self._function_inputs[function] = (list(fed), devices.pop())
        return self._function_inputs[function]

    def parameters_given_with_models(self, function: str) -> dict[str, set[str]]:
        """For a top-level function of the file, or one it imports from a file of the project: each
        parameter it hands to a model it is given as another parameter, or puts with that model's
        output (`analysis.method_inputs.parameters_given_with_models`)."""
        if function not in self._parameter_models:
            definition = self._definition(function)
            if definition is None:
                imported = self._imported_meetings(function)
                self._parameter_models[function] = imported.fed if imported is not None else {}
                return self._parameter_models[function]
            losses = frozenset(self.module_parameters(definition, self.scope_facts(definition.body)))
            self._parameter_models[function] = parameters_given_with_models(definition, self.qualified, losses)
        return self._parameter_models[function]

    def function_parameters(self, function: str) -> list[str]:
        """The positional parameters of a top-level function of the file (or imported from a file of
        the project), in order."""
        definition = self._definition(function)
        if definition is None:
            imported = self._imported_meetings(function)
            return imported.parameters if imported is not None else []
        return [param.name.value for param in (*definition.params.posonly_params, *definition.params.params)]

    def meeting_parameters(self, function: str) -> list[tuple[str, str]]:
        """The pairs of parameters a top-level function of the file, or one it imports from a file
        of the project (`from metrics import accuracy`), puts into one tensor operation."""
        if function not in self._meetings:
            definition = self._definition(function)
            if definition is None:
                imported = self._imported_meetings(function)
                self._meetings[function] = imported.pairs if imported is not None else []
                return self._meetings[function]
            names = parameter_names(definition)
            self._meetings[function] = meeting_pairs(definition, names, self.qualified) if len(names) <= 12 else []
        return self._meetings[function]

    def _imported_meetings(self, function: str) -> FunctionMeetings | None:
        if self.facts is None or function not in self.facts.imports.names:
            return None
        return self.project.imported_meetings(self.context.filename or "<memory>", self.facts.imports.names[function])

    def module_parameters(self, scope: cst.Module | cst.FunctionDef, facts: PlacementFacts) -> set[str]:
        """The parameters of a top-level function of the file, never rebound there, that every call
        of it in the file gives a torch.nn Module it builds in the call (`train_step(G, D, real,
        nn.BCEWithLogitsLoss())`): a loss, whose inputs must be on one device, as a local one's."""
        if not isinstance(scope, cst.FunctionDef) or scope not in self.module.body:
            return set()
        found = set()
        for name in parameter_names(scope):
            if name in facts.bindings:
                continue
            passed = self.call_index().arguments_for(scope, name)
            if passed and all(self._builds_module_at(value, call) for call, value in passed):
                found.add(name)
        return found

    def _builds_module_at(self, value: cst.BaseExpression, call: cst.Call) -> bool:
        """`nn.NLLLoss()` built in the call, or a name the caller's scope last bound to a torch.nn
        Module that holds no state before it (`criterion = nn.NLLLoss()`, then `train(...,
        criterion)`: no move of it in between can matter)."""
        if isinstance(value, cst.Name):
            binding = self.scope_facts(call)._binding_before(value.value, self.line_of(call))
            bound = binding.value if binding is not None and not binding.unpacked else None
            return isinstance(bound, cst.Call) and self.builds_module(bound) and not holds_state(bound, self.qualified)
        return isinstance(value, cst.Call) and self.builds_module(value)

    def callers_pass_moved_models(self, function: cst.FunctionDef, parameter: str) -> bool:
        """Every use of the top-level `function` in this file is a call, and each passes, for
        `parameter`, a name moved to a device earlier in the caller's scope (`model.to(device)`)."""
        key = (id(function), parameter)
        if key not in self._moved_model_parameters:
            self._moved_model_parameters[key] = self._callers_pass_moved_models(function, parameter)
        return self._moved_model_parameters[key]

    def _callers_pass_moved_models(self, function: cst.FunctionDef, parameter: str) -> bool:
        if parameter in self.scope_facts(function).hosted:
            return False  # `model.cpu()` in the function: it runs the model on the host (there, at least)
        passed = self.call_index().arguments_for(function, parameter)
        if passed is None:
            return self._moved_beside(function, parameter)
        for call, value in passed:
            if not isinstance(value, cst.Name):
                return False
            caller = self.scope_facts(call)
            move, line = caller.moved.get(value.value), self.line_of(call)
            if move is None or self.line_of(move.call) >= line or caller.brought_back_between(value.value, self.line_of(move.call), line):
                return False  # not moved yet, or `model.to('cpu')` since (Raschka's ch15 before `sample(model, ...)`)
        return True

    def _moved_beside(self, function: cst.FunctionDef, parameter: str) -> bool:
        """`def predict(model, image)` of a helper module that never uses it itself, where every
        call in the files beside it passes a moved model (`FileFacts.models_moved_beside`)."""
        if self.facts is None or not self.only_defined_here(function):
            return False
        positional = [param.name.value for param in (*function.params.posonly_params, *function.params.params)]
        return parameter in positional and self.facts.models_moved_beside(function.name.value, positional.index(parameter), parameter)

    def leave_Arg(self, original_node: cst.Arg, updated_node: cst.Arg) -> cst.Arg:
        """`model(ids)` where `ids = encode(...)` returns a CPU tensor and `model` was moved: the
        input moves where it is fed (the helper may serve CPU code too)."""
        planned = self._moved_inputs.get(original_node)
        if planned is None or not self._report_input(original_node.value, planned):
            return updated_node
        container = self._moved_containers.get(original_node)
        if container is not None:
            return updated_node.with_changes(value=items_moved_to(updated_node.value, planned[1], container))
        return updated_node.with_changes(value=moved_to(updated_node.value, planned[1]))

    def leave_Assign(self, original_node: cst.Assign, updated_node: cst.Assign) -> cst.Assign:
        """`ids = tokenizer.encode(text, return_tensors="pt")` that a generation loop grows with the
        model's output: the ids move where they are made."""
        planned = self._moved_bindings.get(original_node.value)
        if planned is None or not self._report_input(original_node.value, planned):
            return updated_node
        return updated_node.with_changes(value=moved_to(updated_node.value, planned[1]))

    def leave_Name(self, original_node: cst.Name, updated_node: cst.Name) -> cst.BaseExpression:
        """`(model(x).argmax(1) == labels)` where `labels` is unpacked from a helper's CPU tensors;
        `(predicted.cpu() == labels)` where `labels` is on a device."""
        if original_node in self._hosted_inputs:
            return self._brought_to_the_host(original_node, updated_node)
        planned = self._moved_inputs.get(original_node)
        if planned is None or not self._report_input(original_node, planned):
            return updated_node
        return moved_to(updated_node, planned[1])

    def leave_Subscript(self, original_node: cst.Subscript, updated_node: cst.Subscript) -> cst.BaseExpression:
        """`(predicted.cpu() == batch["labels"])` where `batch` is on a device."""
        if original_node in self._hosted_inputs:
            return self._brought_to_the_host(original_node, updated_node)
        return updated_node

    def _brought_to_the_host(self, original: cst.BaseExpression, updated: cst.BaseExpression) -> cst.BaseExpression:
        """A device value beside a host copy (`_meet_host_copy`), brought to the host too."""
        value = cst.Module([]).code_for_node(original)
        if not self.report(original, f"`{value}` is on a device and meets `{self._hosted_inputs[original]}`, a copy on the CPU",
                           fix_title=f"bring it to the host too: `{value}.cpu()`"):
            return updated
        return cst.Call(func=cst.Attribute(value=updated, attr=cst.Name("cpu")))

    def _report_input(self, value: cst.BaseExpression, planned: tuple[str, str]) -> bool:
        origin, device = planned
        name = cst.Module([]).code_for_node(value)
        meets = f"`{device[: -len('.device')]}`" if device.endswith(".device") else f"a model on `{device}`"
        return self.report(value, f"`{name}` comes from {origin}, and meets {meets}",
                           fix_title=f"move it to `{device}` where it is used")

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.BaseExpression:
        device = self._aligned.get(original_node)
        if device is None or self.made_where_everything_is(original_node):
            return updated_node
        factory = cst.Module([]).code_for_node(original_node.func)
        if keyword(original_node, "out") is not None:
            return self._without_a_cuda_output(original_node, updated_node, factory, device)
        if self._placed_inside(original_node):
            return updated_node
        if not is_factory_call(original_node, self.qualified) or keyword(original_node, "generator") is not None:
            # accepts no device=, or draws from a CPU generator that `device=` would not match: move the result
            made = ("draws from a CPU generator" if keyword(original_node, "generator") is not None
                    else "returns a CPU tensor" if self.qualified(original_node.func).isdisjoint(MOVED_AFTER) else "is on the CPU")
            if not self.report(original_node, f"`{factory}(...)` {made} but meets tensors that may be on a GPU",
                               fix_title=f"move it to `{device}`"):
                return updated_node
            return moved_to(updated_node, device)
        meets = device[: -len(".device")] if device.endswith(".device") else f"a model on `{device}`"
        apply = self.report(
            original_node,
            f"`{factory}(...)` is created on the CPU but meets {meets if meets.startswith('a ') else f'`{meets}`'}, which may be on a GPU",
            fix_title=f"create it on `{device}`",
        )
        return add_keyword(updated_node, "device", device) if apply else updated_node


    def _placed_inside(self, call: cst.Call) -> bool:
        """`smooth_one_hot(labels, 4)` of a helper of the file above whose every returned tensor this
        pass already places (`torch.zeros(n, k, device=labels.device)`, met with its parameter
        `labels` there): its result needs no move where it is used."""
        if not isinstance(call.func, cst.Name) or not self.returns_cpu_tensors(call.func.value):
            return False
        definition = self._definition(call.func.value)
        if definition is None:
            return False
        finder = _Combinations(self, definition)
        sources = [source for value in return_values(definition) if value is not None for source in finder._sources(value)]
        return bool(sources) and all(source in self._aligned for source in sources)

    def _without_a_cuda_output(self, original_node: cst.Call, updated_node: cst.Call, factory: str, device: str) -> cst.Call:
        """`torch.arange(0, n, out=torch.cuda.LongTensor(n))` (Tacotron's mask): the output buffer
        exists only on a GPU build; the call makes its tensor with that type's dtype where the tensor
        it meets lives instead. Any other `out=` decides the placement itself: left alone."""
        out = keyword(original_node, "out").value
        legacy = next((name for name in self.qualified(out.func) if name.startswith("torch.cuda.")), None) if isinstance(out, cst.Call) else None
        dtype = LEGACY_DTYPES.get(legacy.rsplit(".", 1)[1]) if legacy is not None else None
        if dtype is None or not is_factory_call(original_node, self.qualified):
            return updated_node
        if not self.report(original_node, f"`{factory}(...)` writes into a `{cst.Module([]).code_for_node(out.func)}`, which exists only "
                           "with a GPU, and meets tensors that may be on the CPU", fix_title=f"create it on `{device}`"):
            return updated_node
        args = [arg for arg in updated_node.args if not (arg.keyword is not None and arg.keyword.value == "out")]
        if not args:
            return updated_node
        args[-1] = args[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
        fixed = updated_node.with_changes(args=args)
        if keyword(original_node, "dtype") is None:
            fixed = add_keyword(fixed, "dtype", f"{self.torch_name()}.{dtype}")
        return add_keyword(fixed, "device", device)


class _Combinations(cst.CSTVisitor):
    """Factory calls of one function that meet a known tensor, with the tensor they meet."""

    def __init__(self, rule: ConstructorDevice, scope: cst.Module | cst.FunctionDef) -> None:
        self.rule = rule
        self.scope = scope
        self.qualified = rule.qualified
        anchor = scope.body if isinstance(scope, cst.FunctionDef) else scope
        self.vetoed = rule.non_tensors_in(scope)  # names the analysis saw hold lists, numbers, arrays
        used, evidenced = tensor_evidence(scope, rule.qualified)
        self.tensors, self.used_as_tensors = evidenced - self.vetoed, used - self.vetoed
        self.parameters = rule.scope_parameters(anchor)
        self.facts = rule.scope_facts(anchor)
        self.first_line = {name: min(b.line for b in bindings) for name, bindings in self.facts.bindings.items()}
        self.modules = set(rule.scope_modules(anchor)) | (self.facts.moved.keys() & self.facts.called)
        self.modules |= rule.module_parameters(scope, self.facts)  # `bce` of `train_step(..., nn.BCEWithLogitsLoss())`
        # models the top level moved (`policy = Net().to(device)`), called in a function that runs only
        # after the move: `_move_of` finds the move there
        self.global_models = rule.top_level_models_moved_before(anchor, through_methods=True)
        self.modules |= self.global_models
        self.layers = rule.layers_of_method(scope)  # `self.<layer>` attributes whose output is one tensor
        owner = rule.class_of_method(scope) if isinstance(scope, cst.FunctionDef) else None
        # a plain class's Modules on a device (`self.q = QNet().to(device)` in an agent's `__init__`):
        # what they return lives with their input; a Module class's own layers are DF016's
        self.object_modules = rule.object_modules(owner)[1] if owner is not None and not rule.is_module_classdef(owner) else frozenset()
        # … and all the Modules its `__init__` builds, on a device or not: what they return is where their input is
        self.object_callables = rule.object_modules(owner)[0] if owner is not None and not rule.is_module_classdef(owner) else frozenset()
        self.aligned: dict[cst.Call, str] = {}
        # torch functions where no operand names a device (`F.cross_entropy(model(xb), Y)`): placed
        # last, by the moved model (`placed_by_fed_models`)
        self.unnamed_meetings: list[tuple[list[cst.BaseExpression], bool, cst.Call]] = []
        self.host_indexings: list[tuple[cst.BaseExpression, list[cst.BaseExpression]]] = []  # `table[index]`, no tensor named
        self.late_tables: list[tuple[cst.Name, str]] = []  # `table[index]`, `index` a known tensor
        self.moved_inputs: dict[cst.Arg | cst.Name, tuple[str, str]] = {}
        self.hosted_inputs: dict[cst.Name | cst.Subscript, str] = {}  # `labels` of `predicted.cpu() == labels` → `predicted.cpu()`
        self.moved_containers: dict[cst.Arg, str] = {}  # of those, the tuples and dicts moved item by item
        self.moved_bindings: dict[cst.BaseExpression, tuple[str, str]] = {}  # a binding's value → (origin, device)
        self.meeting: cst.CSTNode | None = None

    @property
    def meeting_line(self) -> int | None:
        """The line of the node whose visit_ method is placing tensors: where its values meet."""
        return self.rule.line_of(self.meeting) if self.meeting is not None else None

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        return False

    def visit_ClassDef(self, node: cst.ClassDef) -> bool:
        return False

    def visit_BinaryOperation(self, node: cst.BinaryOperation) -> None:
        self.meeting = node
        self._meet([node.left, node.right], pointwise=not isinstance(node.operator, cst.MatrixMultiply), at=node)
        self._meet_host_copy([node.left, node.right])

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        """`correct += (model(x).argmax(1) == y).sum()`: an update in place stays on its target's
        device, so a target made on the CPU must be made where the value is (a 0-dim CPU target is
        no exception); a fresh value added to a device target is placed as in `a + b`. A tensor made
        here whose item is updated so (`correct[c] += (pred[y == c] == c).sum()`) is made where the
        value is too; a fresh value added to an item of a tensor that is not made here is left as it
        is (`output[i] += torch.from_numpy(row)` in a collate function fills a CPU batch)."""
        self.meeting = node
        item = isinstance(node.target, cst.Subscript)
        updated = node.target.value if item else node.target
        if not isinstance(updated, cst.Name):
            return
        reference = next(iter(self._references([node.value])), None)
        if reference is not None:
            for source in self._fresh(updated):
                device = self._device_at(reference, node, source)
                if device is not None:
                    self.aligned.setdefault(source, device)
        target = None if item else next(iter(self._references([updated])), None)
        if target is not None:
            self._align(self._fresh(node.value, pointwise=True), target)

    def _device_at(self, reference: str, node: cst.CSTNode, source: cst.Call) -> str | None:
        """Where `reference` lives at `node`, said with names that exist where `source` runs: the
        device it was last moved to (`x = x.to(device)` in the loop), else `_device_of`."""
        binding = self.facts._binding_before(reference, self.rule.line_of(node))
        move = as_move(binding.value, self.qualified) if binding is not None and binding.value is not None else None
        device = device_code(move.device) if move is not None else None
        if device is not None and self._device_defined_before(device, source):
            return device
        return self._device_of(reference, source)

    def visit_Comparison(self, node: cst.Comparison) -> None:
        self.meeting = node
        operands = [node.left, *(item.comparator for item in node.comparisons)]
        self._move_unpacked(node, [(operand, operand) for operand in operands])  # only names are planned
        self._meet(operands, pointwise=True)
        self._meet_host_copy(operands)

    def _meet_host_copy(self, operands: list[cst.BaseExpression]) -> None:
        """`(predicted.cpu() == labels)` where `labels` was moved to a device: the user brought one
        side to the host to compute there; the other side, a name proven on a device, goes there too
        (`labels.cpu()`, a no-op on the CPU). Not beside a 0-dim copy, which may meet a device tensor."""
        copies = [(operand, copied) for operand in operands if (copied := _inline_host_copy(operand, self.qualified)) is not None]
        if len(copies) != 1 or self._zero_dim(copies[0][0]) or self._zero_dim(copies[0][1]):
            return
        code = cst.Module([]).code_for_node(copies[0][0])
        for operand in operands:
            # a name, or a value read by key from one (`batch["labels"]` of a batch moved whole)
            named = isinstance(operand, cst.Name) or (isinstance(operand, cst.Subscript) and isinstance(operand.value, cst.Name)
                                                      and _read_by_string(operand))
            if named and self.facts.is_device_value(operand) and not self._zero_dim(operand):
                self.hosted_inputs.setdefault(operand, code)

    def visit_Subscript(self, node: cst.Subscript) -> None:
        statement = self.meeting
        stored = (isinstance(statement, cst.AugAssign) and statement.target is node) or (
            isinstance(statement, cst.Assign) and any(target.target is node for target in statement.targets))
        self.meeting = node
        indices = [element.slice.value for element in node.slice if isinstance(element.slice, cst.Index)]
        reference = next(iter(self._references(indices)), None)
        if reference is not None:
            # a CPU table indexed by device indices; one written to (`confusion[t, p] += 1`) cannot be
            # moved where it is indexed (DF012's `.to()` would write into a copy)
            self._align(self._fresh(node.value), reference, tables="stored" if stored else True)
            if isinstance(node.value, cst.Name) and not any(self._zero_dim(index) for index in indices):
                self.late_tables.append((node.value, reference))
        elif not stored:
            self.host_indexings.append((node.value, indices))

    def keeping_host_indices(self, aligned: dict[cst.Call, str]) -> dict[cst.Call, str]:
        """`aligned` without the factories of an index that a table made here and left on the CPU
        reads (catalyst's WARP loss: `msk[j] = False` with `j` of a device tensor, then
        `all_labels_idx[msk]`): moved, the mask could no longer index that table."""
        kept = dict(aligned)
        for table, indices in self.host_indexings:
            tables = self._sources(table)
            if tables and not any(call in aligned for call in tables):
                for index in indices:
                    for call in self._sources(index):
                        kept.pop(call, None)
        return kept

    def move_late_tables(self, aligned: dict[cst.Call, str]) -> None:
        """A table made here on the CPU whose factories no device could be named for where they
        run, indexed by a tensor bound only after them (`layer_of.append(torch.ones(n) * i)` in a
        loop, `layer_of = torch.cat(layer_of)`, then `layer_of[keep]` with `keep` computed later
        from the predictions): the table moves where it is indexed, `layer_of.to(keep.device)[keep]`."""
        if isinstance(self.scope, cst.Module):
            return  # a table of the top level is DF012's (`class_weights[y]` in a training loop)
        where = self.rule.host_context(self.facts)
        for table, reference in self.late_tables:
            if table.value in self.facts.items_changed or self._may_be_an_item(reference, self.rule.line_of(table)):
                continue  # written into anywhere (`picked[i] = True`, `table[keep] = 0`): a copy would take the writes; a 0-dim index is read as a number
            sources = self._sources(table)
            if sources and not any(call in aligned for call in sources) and host_made(table, self.rule.line_of(table), 0, where):
                self.moved_inputs.setdefault(table, ("a tensor made on the CPU", f"{reference}.device"))

    def _may_be_an_item(self, name: str, line: int) -> bool:
        """An index that may be 0-dim, which real CUDA reads as a number: a loop's element (`for k in
        torch.arange(n)[counts > 0]`), or an item read by a number (`edge = chosen_edge[0]`)."""
        binding = self.facts._binding_before(name, line)
        if binding is None or binding.value is None:
            return binding is not None
        value = binding.value
        return isinstance(value, cst.Subscript) and any(
            isinstance(element.slice, cst.Index) and isinstance(element.slice.value, (cst.Integer, cst.UnaryOperation, cst.Name))
            for element in value.slice)

    def visit_Call(self, node: cst.Call) -> None:
        self.meeting = node
        names = self.qualified(node.func)
        if any(name.startswith(HOST_SIDE_PREFIXES) for name in names):
            return
        values = [arg.value for arg in node.args if arg.value not in self._ctc_lengths(node)]
        if is_torch_tensor_function(names) and not any(name.endswith(".einsum") for name in names):
            # a display after a torch function's first argument is a size or dims (`F.interpolate(x,
            # (w, n))` of speechbrain's warping, `F.pad(x, (1, 1))`), not tensors
            values = [value for index, value in enumerate(values) if index == 0 or not isinstance(value, (cst.List, cst.Tuple))]
        values += [element.value for value in values if isinstance(value, (cst.List, cst.Tuple)) for element in value.elements]  # `torch.cat([a, b])`, `lstm(x, (h, c))`
        if (isinstance(node.func, cst.Name) and node.func.value in self.modules) or (
                is_torch_tensor_function(names) and not is_factory_call(node, self.qualified)):
            self._move_unpacked_host_names(node)
        if isinstance(node.func, cst.Name) and node.func.value in self.modules:
            values = [value for value in values if value not in self._lengths_for(node)]
            self._feed_module(node, node.func.value, [value for value in values if not self._host_loop_element(value, node)])
            self._feed_host_tensors(node)
            self._feed_encodings(node, node.func.value)
        elif isinstance(node.func, cst.Name) and node.func.value in self.parameters:
            values = [value for value in values if value not in self._lengths_for(node)]
            # a model handed in by callers that moved it
            self._feed_module(node, node.func.value, [value for value in values if not self._host_loop_element(value, node)])
            self._feed_host_tensors(node)
            self._feed_encodings(node, node.func.value)
        elif isinstance(node.func, cst.Name) and (compiled := self._compiled_parameter(node.func.value, node)) is not None:
            self._feed_module(node, compiled, values)  # `mjit = torch.jit.script(model)`, then `mjit(test_input)`
        elif isinstance(node.func, cst.Attribute) and isinstance(node.func.value, cst.Name) and node.func.value.value in self.parameters:
            self._feed_encodings(node, node.func.value.value)  # `model.generate(**inputs)`, `model` handed in moved
            self._feed_method(node, node.func.value.value, node.func.attr.value)  # `model.decode(z)`, `model.dec(z)`
        elif isinstance(node.func, cst.Call) and self.rule.builds_module(node.func):
            self._feed_module(node, None, values)  # `nn.CrossEntropyLoss()(out, targets)`: built where it is called
        elif isinstance(node.func, cst.Attribute) and isinstance(node.func.value, cst.Name) and self._move_of(node.func.value.value, node):
            self._feed_encodings(node, node.func.value.value)  # `model.generate(**inputs)`
            self._feed_method(node, node.func.value.value, node.func.attr.value)
        elif isinstance(node.func, cst.Name) and self.rule.function_model_inputs(node.func.value):
            self._feed_function(node, node.func.value)  # `select_action(state)` runs `policy_net(state)`
        elif isinstance(node.func, cst.Name) and self.rule.meeting_parameters(node.func.value):
            self._meet_in_function(node, node.func.value)  # `train_step(x.to(device), weights)`
        if isinstance(node.func, cst.Name) and self.rule.parameters_given_with_models(node.func.value):
            self._feed_model_argument(node, node.func.value)  # `evaluate(model, xs)` runs `model(xs)`
        elif names & MEETING_FUNCTIONS:
            # `autograd.grad(d_out, x, grad_outputs=torch.ones(d_out.size()))`, `kl_divergence(q, prior)`
            self._meet(values, pointwise=False)
        elif is_torch_tensor_function(names) and not is_factory_call(node, self.qualified):
            if names & JOINS:
                self._join_host_copies(node)
            if any(name.rsplit(".", 1)[1] in FIRST_OPERAND_ONLY for name in names):
                values = values[:1]  # `torch.multinomial(weights, n)`: the rest are counts and dims
            pointwise = any(name.rsplit(".", 1)[1] in POINTWISE_FUNCTIONS for name in names)
            self._meet(values, pointwise=pointwise)
            self.unnamed_meetings.append((values, pointwise, node))
        elif isinstance(node.func, cst.Attribute) and node.func.attr.value not in NOT_COMBINING_METHODS:
            # only a tensor's own method meets what it is given (torchio's `image.set_data(data)` of an `Image`)
            tensor_method = node.func.attr.value in TENSOR_METHODS
            reference = next(iter(self._references([node.func.value])), None) if tensor_method else None
            if reference is not None:
                for value in values:
                    self._align(self._fresh(value, pointwise=True), reference)
            elif tensor_method and (moved_to := self._device_of_a_layer_weight(node.func.value, node)) is not None:
                for value in values:  # `encoder.token_embedding.weight.index_select(0, ids)`
                    for source in self._fresh(value, pointwise=True):
                        self.aligned.setdefault(source, moved_to)
            else:  # `true_dist.scatter_(1, target.unsqueeze(1), v)`: a fresh receiver meets a tensor
                argument_references = self._references(values)
                if argument_references:
                    self._align(self._fresh(node.func.value), argument_references[0])

    def _join_host_copies(self, call: cst.Call) -> None:
        """`idx = torch.cat([idx, next_id], dim=1)` with `next_id = torch.multinomial(probs.cpu(), 1)`:
        a join takes tensors of one device only. A name bound to what copies a tensor to the host
        (`.cpu()`, `.to("cpu")`), proven made on the host with no factory to make elsewhere, beside
        a name proven on a device (or a parameter every call gives one), moves where it is joined:
        `next_id.to(idx.device)`."""
        display = call.args[0].value if call.args and call.args[0].keyword is None and not call.args[0].star else None
        if not isinstance(display, (cst.List, cst.Tuple)) or not all(isinstance(element, cst.Element) for element in display.elements):
            return
        names = [element.value for element in display.elements if isinstance(element.value, cst.Name)]
        line, where = self.rule.line_of(call), self.rule.host_context(self.facts)
        placed = next((name.value for name in names if self.facts.is_device_value(name) or self._given_device_values(name.value, line)), None)
        if placed is None:
            return
        for name in names:
            binding = self.facts._binding_before(name.value, line)
            copied = binding is not None and binding.value is not None and any(
                copies_to_the_host(inner, self.qualified) for inner in calls_in(binding.value))
            if name.value != placed and copied and not self._sources(name) and host_made(name, line, 0, where):
                self.moved_inputs.setdefault(name, ("a tensor copied to the CPU", f"{placed}.device"))

    def _given_device_values(self, name: str, line: int) -> bool:
        """`ids` of `def sample(model, ids, steps)`, not rebound before `line`, where every call of
        the function in the file passes a value proven on a device."""
        if not (name in self.parameters and isinstance(self.scope, cst.FunctionDef) and self.facts._binding_before(name, line) is None):
            return False
        passed = self.rule.call_index().arguments_for(self.scope, name)
        return bool(passed) and all(self.rule.scope_facts(caller).is_device_value(value) for caller, value in passed)

    def _feed_module(self, call: cst.Call, module: str | None, values: list[cst.BaseExpression]) -> None:
        """`criterion(D(real), torch.ones(8, 1))`, `G(torch.randn(8, 2))`: inputs of a Module go
        where its other inputs are, or where the Module was moved (for a parameter every caller
        passes a moved model, the model's own device). A Module built where it is called (`module`
        None) was moved nowhere: its inputs go where a model whose output it is given was moved."""
        references = self._references(values)
        moved_to = None
        if module is not None:
            move = self._move_of(module, call)
            moved_to = self._moved_to(module, move, call) if move is not None else self._device_of_a_moved_argument(module)
        # a helper's CPU tensor is moved where it is fed (`_feed_host_tensors`: the helper may serve CPU
        # code too) when the Module has a device of its own; given to a loss that holds no parameters
        # (`bce(D(real), make_targets(n))`), it goes where the other inputs are
        helpers_placed_here = moved_to is None and (module is None or not self._may_hold_parameters(module, call))
        if moved_to is None:
            moved_to = self._device_of_a_fed_model(values, call)
        for value in values:
            fresh = self._fresh(value)
            unplaced = 0
            for source in fresh:
                if self._is_helper_call(source) and not helpers_placed_here:
                    continue
                device = self._device_of(references[0], source) if references else None
                if device is not None:
                    self.aligned.setdefault(source, device)
                elif moved_to is not None and self._device_defined_before(moved_to, source):
                    self.aligned.setdefault(source, moved_to)
                else:
                    unplaced += 1
            if fresh and unplaced == len(fresh) and isinstance(value, cst.Name):
                self._move_where_fed(call, value, references, moved_to)
        if moved_to is not None and (DEVICE_NAME.fullmatch(moved_to) or self._own_device_of_a_kept_model(moved_to)):
            # what the loop binds after the call reaches it on the next pass: made where the Module was
            # moved, a device name or the device of a model the scope never rebinds (a tensor's
            # `.device` there may be another binding's than at the call)
            for value in values:
                for source in self._loop_carried_sources(value) if isinstance(value, cst.Name) else ():
                    if not self._is_helper_call(source) and self._device_defined_before(moved_to, source):
                        self.aligned.setdefault(source, moved_to)

    def _move_where_fed(self, call: cst.Call, value: cst.Name, references: list[str], moved_to: str | None) -> None:
        """`x = torch.randn(8, 5)` made before the model exists, then `if use_cuda: model =
        model.cuda()` and `out = model(x)`: no device can be named where `x` is made, so `x` moves
        where it is fed, to what names the device there (`model(x.to(next(model.parameters()).device))`,
        `criterion(out, y.to(out.device))`)."""
        arg = next((arg for arg in call.args if arg.value is value and arg.keyword is None and not arg.star), None)
        if arg is None:
            return
        others = [reference for reference in references if reference != value.value]
        device = self._device_of(others[0], call) if others else None
        if device is None and moved_to is not None and self._device_defined_before(moved_to, call):
            device = moved_to
        if device is not None:
            self.moved_inputs.setdefault(arg, ("a tensor made on the CPU before the device is known", device))

    def _feed_method(self, call: cst.Call, model: str, method: str) -> None:
        """`m.generate(context)` for a model moved here, of a class of the file whose `generate`
        hands that parameter to one of its layers (`analysis.method_inputs`): the factories
        `context` is built from go where the model was moved. So do the inputs of one of its
        layers called directly (`model.embed(idx)`, `self.embed = nn.Embedding(...)` in `__init__`)."""
        inputs = self.rule.method_inputs(self._class_of(model, self.rule.line_of(call)))
        if inputs is None and method == "generate" and self._holds_a_pretrained_model(model, call):
            # transformers' `generate(inputs, attention_mask=...)` runs the model on what it is given
            fed = [arg.value for index, arg in enumerate(call.args)
                   if not arg.star and (arg.keyword is None and index == 0 or arg.keyword is not None and arg.keyword.value in GENERATE_INPUTS)]
            self._feed_module(call, model, fed)
            return
        if inputs is None:
            return
        if method in inputs.layers and method not in inputs.methods:  # `model.embed(idx)`: one of its layers
            self._feed_module(call, model, [arg.value for arg in call.args if arg.keyword is None and not arg.star])
            return
        fed = list(_passed(call, inputs.reaching(method), inputs.positional(method)).values())
        if fed:
            self._feed_module(call, model, fed)

    def _compiled_parameter(self, name: str, call: cst.Call) -> str | None:
        """The model parameter that the binding of `name` reaching `call` compiles or scripts
        (`mjit = torch.jit.script(model)`, `torch.compile(model)`): the same Module, on its device."""
        binding = self.facts._binding_before(name, self.rule.line_of(call))
        value = binding.value if binding is not None else None
        if not (isinstance(value, cst.Call) and value.args and isinstance(value.args[0].value, cst.Name)
                and self.qualified(value.func) & MODULE_COMPILERS):
            return None
        model = value.args[0].value.value
        return model if model in self.parameters and model not in self.facts.bindings else None

    def _holds_a_pretrained_model(self, name: str, call: cst.Call) -> bool:
        """`model = AutoModelForCausalLM.from_pretrained(...)` (a class of transformers), where
        `call` reads `name`, through rebindings (`model = model.to(device)`)."""
        value = _value_held(cst.Name(name), self.rule.line_of(call), self.facts)
        return isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) and value.func.attr.value == "from_pretrained" \
            and any(qualified.startswith("transformers.") for qualified in self.qualified(value.func.value))

    def _feed_function(self, call: cst.Call, function: str) -> None:
        """`select_action(state)` where the top-level function hands that parameter to a model the
        top level moved (`policy_net = DQN().to(device)`): the factories `state` is built from,
        or a local proven a tensor made on the host, go to that model's device."""
        reaching, device = self.rule.function_model_inputs(function)
        if not self._device_defined_before(device, call):
            return
        for fed in _passed(call, reaching, self.rule.function_parameters(function)).values():
            fresh = self._fresh(fed)
            for source in fresh:
                if not self._is_helper_call(source) and self._device_defined_before(device, source):
                    self.aligned.setdefault(source, device)
            if fresh or not isinstance(fed, cst.Name) or fed.value in self.facts.moved:
                continue
            binding = self.facts._binding_before(fed.value, self.rule.line_of(call))
            if binding is not None and binding.value is not None and not self._factory_sources(fed) and self._made_on_the_host(fed, binding.value, binding.line):
                arg = next(arg for arg in call.args if arg.value is fed)
                self.moved_inputs[arg] = ("a tensor made on the CPU", device)

    def _feed_model_argument(self, call: cst.Call, function: str) -> None:
        """`evaluate(model, xs, ys)` where the function hands its parameter `xs` to its parameter
        `model` (`model(xs)`) or puts `ys` with its output, and the model given was moved here
        before the call: the factories `xs` and `ys` are built from go where the model was moved."""
        fed = self.rule.parameters_given_with_models(function)
        positional = self.rule.function_parameters(function)
        passed = _passed(call, set(fed) | {model for models in fed.values() for model in models}, positional)
        for parameter, models in fed.items():
            if parameter not in passed:
                continue
            for model in sorted(models):
                given = passed.get(model)
                move = self._move_of(given.value, call) if isinstance(given, cst.Name) else None
                device = self._moved_to(given.value, move, call) if move is not None else None
                if device is None:
                    continue
                for source in self._fresh(passed[parameter]):
                    if not self._is_helper_call(source) and self._device_defined_before(device, source):
                        self.aligned.setdefault(source, device)
                self._move_host_helper_argument(call, passed[parameter], device)

    def _move_host_helper_argument(self, call: cst.Call, value: cst.BaseExpression, device: str) -> None:
        """`train(encode(src), encoder)` where `train` feeds its first parameter to the moved model
        it is given, and every `return` of `encode` builds a CPU tensor: the helper's result moves
        where it is passed (its other callers keep their CPU tensors), as it does fed to the model
        itself; so does a name bound once to such a call and not moved since."""
        arg = next((arg for arg in call.args if arg.value is value and not arg.star), None)
        if arg is None or not self._device_defined_before(device, call):
            return
        made = value
        if isinstance(value, cst.Name) and value.value not in self.facts.moved:
            binding = self.facts._binding_before(value.value, self.rule.line_of(call))
            made = binding.value if binding is not None and not binding.unpacked else None
        if isinstance(made, cst.Call) and isinstance(made.func, cst.Name) and made not in self.aligned \
                and self.rule.returns_cpu_tensors(made.func.value):  # (not one placed where it is made already)
            self.moved_inputs.setdefault(arg, (f"`{made.func.value}(...)`, a CPU tensor", device))

    def _meet_in_function(self, call: cst.Call, function: str) -> None:
        """`train_step(model, masks.to(device), weights)` where `train_step` puts its parameters
        `masks` and `weights` into one tensor operation (`analysis.parameter_meetings`): what
        `weights` is built from on the CPU goes where the placed argument is."""
        meetings = self.rule.meeting_parameters(function)
        passed = _passed(call, {name for pair in meetings for name in pair}, self.rule.function_parameters(function))
        for first, second in meetings:
            for placed, other in ((first, second), (second, first)):
                if placed in passed and other in passed:
                    devices = self._placed_devices(passed[placed], call)
                    for source in self._fresh(passed[other]):
                        # the device must be nameable where the factory runs, often before the call
                        device = next((device for device in devices if self._device_defined_before(device, source)), None)
                        if device is not None and not self.rule.is_scalar_tensor(source):  # `torch.tensor(0.5)` may join CUDA tensors
                            self.aligned.setdefault(source, device)
            # `accuracy(out, y)` of a model's output and `x, y = load_data()`'s CPU labels: the labels move there
            pair = [(arg, arg.value) for arg in call.args if not arg.star and any(arg.value is passed.get(name) for name in (first, second))]
            if len(pair) == 2:
                self._move_unpacked(call, pair)

    def _placed_devices(self, value: cst.BaseExpression, call: cst.Call) -> list[str]:
        """Where an argument is certainly placed, said with names that exist at `call`, best first:
        `masks.to(device)` → `device`; a local the scope moved or computed on a device → the device
        it was moved to (`t = t.to(device)` → `device`), then `t.device`."""
        move = as_move(value, self.qualified)
        if move is not None:
            device = device_code(move.device)
            return [device] if device is not None and self._device_defined_before(device, call) else []
        if isinstance(value, cst.Name) and self._object_module_output(value, call) and self._defined_before(value.value, call):
            device = self._device_of_moved_operands(self.facts._binding_before(value.value, self.rule.line_of(call)))
            return [device] if device is not None else []
        if isinstance(value, cst.Name) and self.facts.is_device_value(value) and self._defined_before(value.value, call):
            binding = self.facts._binding_before(value.value, self.rule.line_of(call))
            move = as_move(binding.value, self.qualified) if binding is not None and binding.value is not None else None
            moved_to = device_code(move.device) if move is not None else self._device_of_a_model_output(binding, call)
            if moved_to is None and binding is not None:
                moved_to = self._device_of_moved_operands(binding)
            return ([moved_to] if moved_to is not None else []) + [f"{value.value}.device"]
        return []

    def _object_module_output(self, value: cst.Name, call: cst.Call) -> bool:
        """`outputs = self.model(inputs)` in a method of a plain class whose `__init__` builds the
        Module (`self.object_callables`), given a device value: on that value's device."""
        binding = self.facts._binding_before(value.value, self.rule.line_of(call))
        built = binding.value if binding is not None and not binding.unpacked else None
        return (
            isinstance(built, cst.Call) and is_self_attribute(built.func) and built.func.attr.value in self.object_callables
            and any(self.facts.is_device_value(arg.value) for arg in built.args if not arg.star)
        )

    def _device_of_moved_operands(self, binding) -> str | None:
        """`outputs = self.model(inputs)` or `scores = inputs @ w` (proven on a device) where
        `inputs = x.to(device)`: what the value is computed with was moved to one device, so the
        value is there (or the program fails before, at that operation): `device` names that place
        also before `outputs` exists. Two devices named, or none, give nothing."""
        devices: set[str | None] = set()
        for name in sorted(variables_in(binding.value)):  # not `model` of `self.model(inputs)`
            earlier = self.facts._binding_before(name, binding.line)
            move = as_move(earlier.value, self.qualified) if earlier is not None and earlier.value is not None else None
            if move is not None:
                devices.add(device_code(move.device))
        for found in calls_in(binding.value):
            move = as_move(found, self.qualified)
            if move is not None:
                devices.add(device_code(move.device))
        return devices.pop() if len(devices) == 1 else None

    def _device_of_a_model_output(self, binding, call: cst.Call) -> str | None:
        """`pred = model(images.to(device))` with `model` moved to `device`: that device, which
        names a place also before `pred` exists (`dice(pred, masks)`, `masks` made earlier)."""
        value = binding.value if binding is not None else None
        if not (isinstance(value, cst.Call) and isinstance(value.func, cst.Name) and value.func.value in self.modules):
            return None
        move = self._move_of(value.func.value, value)
        return device_code(move.device) if move is not None else None

    def _ctc_lengths(self, call: cst.Call) -> list[cst.BaseExpression]:
        """The length arguments of a CTC loss (`criterion(log_probs, targets, input_lengths,
        target_lengths)`, `F.ctc_loss(...)`): PyTorch takes them on the CPU or on the device, and
        other CTC implementations (warp-ctc) want them on the CPU; they stay where they are made. The
        callee is a CTC loss when it builds `nn.CTCLoss` itself, when a binding of its name in the scope
        does, or, for a parameter, when a value a caller in the file gives it does."""
        if not (self.qualified(call.func) & CTC_LOSS_FUNCTIONS or self._may_be_ctc_loss(call.func)):
            return []
        positional = [arg.value for arg in call.args if arg.keyword is None][2:4]
        return positional + [arg.value for arg in call.args if arg.keyword is not None and arg.keyword.value in CTC_LENGTH_KEYWORDS]

    def _may_be_ctc_loss(self, callee: cst.BaseExpression) -> bool:
        if isinstance(_built(callee), cst.Call):  # `nn.CTCLoss()(log_probs, ...)`
            return bool(self.qualified(_built(callee).func) & CTC_LOSS_CLASSES)
        if not isinstance(callee, cst.Name):
            return False
        values = [binding.value for binding in self.facts.bindings.get(callee.value, ())]
        if callee.value in self.parameters and isinstance(self.scope, cst.FunctionDef) and not values:
            for caller, value in self.rule.call_index().arguments_for(self.scope, callee.value) or ():
                bound = self.rule.scope_facts(caller).bindings.get(value.value, ()) if isinstance(value, cst.Name) else ()
                values += [value, *(binding.value for binding in bound)]
        return any(self.qualified(_built(value).func) & CTC_LOSS_CLASSES for value in values if isinstance(_built(value), cst.Call))

    def _lengths_for(self, call: cst.Call) -> list[cst.BaseExpression]:
        """The arguments of `model(...)`, for a model of a class of the file, that its `forward`
        hands to `torch.nn.utils.rnn` as lengths: they must stay on the CPU. For a model the
        function is given (`def predict_sentiment(text, model, ...)`), the classes its callers pass."""
        name = call.func.value
        if name in self.parameters and isinstance(self.scope, cst.FunctionDef) and self.facts._binding_before(name, self.rule.line_of(call)) is None:
            passed = self.rule.call_index().arguments_for(self.scope, name) or []
            classes = {_class_held(value, self.rule.line_of(caller), self.rule.scope_facts(caller)) for caller, value in passed}
        else:
            classes = {self._class_of(name, self.rule.line_of(call))}
        kept: list[cst.BaseExpression] = []
        for class_name in classes or {None}:  # no caller known: no class either
            inputs = self.rule.method_inputs(class_name) if class_name is not None else None
            if inputs is not None:
                kept += _passed(call, inputs.kept_on_the_host("forward"), inputs.positional("forward")).values()
            else:  # a `forward` devfix cannot read may pack lengths (or bring them back with `.cpu()`)
                kept += [arg.value for arg in call.args[1:] if self._holds_sizes(arg.value, self.rule.line_of(call))]
        return kept

    def _holds_sizes(self, value: cst.BaseExpression, line: int) -> bool:
        """An integer tensor made from sizes (`torch.IntTensor([spect.size(3)])`, `torch.tensor([len(s)
        for s in seqs])`), or a name bound to one: lengths, by how they are made."""
        if isinstance(value, cst.Name):
            binding = self.facts._binding_before(value.value, line)
            value = binding.value if binding is not None and not binding.unpacked else None
        return value is not None and _made_from_sizes(value, self.qualified)

    def _class_of(self, name: str, line: int) -> str | None:
        """The class of the file `name` holds where `line` reads it: `m = model.to(device)` after
        `model = Bigram(vocab)` → `Bigram`; for a parameter the function never rebinds, the one
        class every call of the function in the file gives it (`sample(model, 4)` with `model =
        VAE().to(device)`)."""
        if name not in self.parameters or name in self.facts.bindings:
            return _class_held(cst.Name(name), line, self.facts)
        passed = self.rule.call_index().arguments_for(self.scope, name) if isinstance(self.scope, cst.FunctionDef) else None
        classes = {_class_held(value, self.rule.line_of(call), self.rule.scope_facts(call)) for call, value in passed or ()}
        return classes.pop() if len(classes) == 1 else None

    def _feed_host_tensors(self, call: cst.Call) -> None:
        """Arguments of a model moved in this scope that hold tensors made here on the host: what a
        CPU-tensor helper of this file returns (`ids = encode(...)`), or a local the analysis proves
        to be a tensor and that nothing placed on a device (`img = transform(im).unsqueeze(0)`)."""
        move = self._move_of(call.func.value, call)
        moved_to = self._moved_to(call.func.value, move, call) if move is not None else None
        if moved_to is None:
            moved_to = self._device_of_a_moved_argument(call.func.value)
        elif not self._device_defined_before(moved_to, call):
            return
        if moved_to is None:
            return
        lengths = self._lengths_for(call)
        for arg in call.args:
            if arg.value in lengths or self._feed_host_container(call, arg, moved_to):
                continue
            if isinstance(arg.value, (cst.Tuple, cst.List)) and not arg.star:  # `lstm(x, (h, c))`, `h, c = init_state(n)`
                self._feed_unpacked_items(call, arg.value, moved_to)
                continue
            made = arg.value
            if not arg.star and isinstance(made, cst.Call) and isinstance(made.func, cst.Name) and self.rule.returns_cpu_tensors(made.func.value):
                self.moved_inputs[arg] = (f"`{made.func.value}(...)`, a CPU tensor", moved_to)  # `lm(ids, mask=causal_mask(7))`
                continue
            fed = arg.value.value if isinstance(arg.value, cst.Subscript) else _method_receiver(arg.value) or arg.value  # `ids`, `ids[i]`, `x.unsqueeze(0)`
            if arg.keyword is not None or arg.star or not isinstance(fed, cst.Name) or fed.value in self.facts.moved:
                continue
            binding = self.facts._binding_before(fed.value, self.rule.line_of(call))
            value = binding.value if binding is not None else None
            if binding is not None and value is None and self._loop_over_host_tensors(fed, binding.line, call):
                self.moved_inputs[arg] = ("a list of tensors made on the CPU", moved_to)
                continue
            if isinstance(value, cst.Call) and isinstance(value.func, cst.Name) and self.rule.returns_cpu_tensors(value.func.value):
                self.moved_inputs[arg] = (f"`{value.func.value}(...)`, a CPU tensor", moved_to)
            elif isinstance(value, cst.Call) and isinstance(value.func, cst.Name) and binding.unpacked \
                    and self.rule.cpu_tensor_tuple_size(value.func.value, value, binding.line, self.facts) == binding.unpacked:
                self.moved_inputs[arg] = (f"`{value.func.value}(...)`, which returns CPU tensors", moved_to)
            elif value is not None and not self._factory_sources(fed) and self._made_on_the_host(fed, value, binding.line):
                # (values built from factories of this scope are placed where they are created)
                self.moved_inputs[arg] = ("a tensor made on the CPU", moved_to)

    def _feed_unpacked_items(self, call: cst.Call, display: cst.Tuple | cst.List, device: str) -> None:
        """`h, c = init_state(4, 24)` then `lstm(x, (h, c))`: each name of the display unpacked from a
        helper whose every `return` is a tuple of tensors made on the host moves where it is written."""
        line = self.rule.line_of(call)
        for element in display.elements:
            item = element.value
            if isinstance(element, cst.StarredElement) or not isinstance(item, cst.Name) or item.value in self.facts.moved:
                continue
            helper = self._host_helper_unpacked(item.value, line)
            if helper is not None:
                self.moved_inputs.setdefault(item, (f"`{helper}(...)`, which returns CPU tensors", device))

    def _feed_host_container(self, call: cst.Call, arg: cst.Arg, device: str) -> bool:
        """`state = init_state(4, 24)` then `lstm(x, state)`, or `batch = encode(rows)` then
        `model(**batch)`: a tuple or dict of tensors a helper made on the host (`cpu_tensor_container`)
        moves item by item where it is fed, also called there (`lstm(x, init_state(4, 24))`). Only
        when the name holds nothing else there: its other bindings in the scope are the call itself
        (`out, state = lstm(x, state)` in a loop)."""
        if arg.keyword is not None or arg.star == "*":
            return False
        if isinstance(arg.value, cst.Call) and isinstance(arg.value.func, cst.Name):
            value, binding = arg.value, None  # `lstm(x, init_state(4, 24))`
        elif isinstance(arg.value, cst.Name) and arg.value.value not in self.facts.moved:
            binding = self.facts._binding_before(arg.value.value, self.rule.line_of(call))
            value = binding.value if binding is not None and not binding.unpacked else None
        else:
            return False
        if not (isinstance(value, cst.Call) and isinstance(value.func, cst.Name)):
            return False
        container = self.rule.cpu_tensor_container(value.func.value)
        if container is None or (arg.star == "**" and container != "dict"):
            return False
        if binding is not None and any(other is not binding and other.value is not call for other in self.facts.bindings.get(arg.value.value, ())):
            return False
        self.moved_inputs[arg] = (f"`{value.func.value}(...)`, which returns a {container} of CPU tensors", device)
        self.moved_containers[arg] = container
        return True

    def _move_of(self, module: str, call: cst.Call) -> Move | None:
        """The move of `module` that acted on the value the name holds at `call`; for a model of the
        top level, its move there when the device it names is no local name of this function."""
        if module not in self.global_models:
            line = self.rule.line_of(call)
            move = self.facts.moved_at(module, line)
            # `z = net(torch.randn(2, 6))` then `net.to(device)`: the call ran the model on the CPU;
            # `model_cpu = model.cpu()` between the move and the call brought it back
            if move is None or self.rule.line_of(move.call) > line or self.facts.brought_back_between(module, self.rule.line_of(move.call), line):
                return None
            return move
        move = self.rule.scope_facts(self.rule.module).moved.get(module)
        device = device_code(move.device) if move is not None else None
        root = device.split(".")[0] if device is not None else None
        return move if root is None or (root not in self.parameters and root not in self.first_line) else None

    def _moved_to(self, module: str, move: Move, call: cst.Call) -> str | None:
        """Where the scope moved `module`: the device it names (`model.to(device)`), else, for
        `model.cuda()` (under `if use_cuda:`) or a device written inline, the model's own device;
        None for a torch.nn Module that holds no parameters (`bce = nn.BCELoss()`), whose
        `next(bce.parameters())` raises StopIteration."""
        code = device_code(move.device)
        if code is not None and self.rule.move_holds_where(move.call, code, call):  # not under `if use_gpu:` alone
            return code
        return f"next({module}.parameters()).device" if self._may_hold_parameters(module, call) else None

    def _may_hold_parameters(self, module: str, call: cst.Call) -> bool:
        """False when the value `module` holds at `call` was built by a torch.nn class known to hold
        no parameters (`nn.BCELoss()`, `nn.ReLU().cuda()`)."""
        binding = self.facts._binding_before(module, self.rule.line_of(call))
        value = binding.value if binding is not None else None
        while isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) and value.func.attr.value in ("to", "cuda"):
            value = value.func.value
        return not isinstance(value, cst.Call) or holds_state(value, self.qualified)

    def _move_unpacked_host_names(self, call: cst.Call) -> None:
        """`F.cross_entropy(model(x.to(device)), labels)` or `criterion(outputs, labels)` where
        `x, labels = load_split(...)` unpacks a helper that returns CPU tensors (`host_tuple_size`):
        `labels` meets the output of a model moved to `device`, so it moves there where it is used."""
        self._move_unpacked(call, [(arg, arg.value) for arg in call.args if not arg.star and arg.keyword is None])

    def _move_unpacked(self, at: cst.CSTNode, operands: list[tuple[cst.CSTNode, cst.BaseExpression]]) -> None:
        """Plans the move of each operand name unpacked from a helper's CPU tensors (or a tensor
        method of one, `y.reshape(-1)`), when another operand is the output of a model moved to a
        device that can be named at `at` (or a tensor method of it, `logits.reshape(-1, k)`)."""
        values = [value for _, value in operands]
        line = self.rule.line_of(at)
        roots = [without_tensor_methods(value) for value in values]  # `logits` of `logits.transpose(1, 2)`
        device = self._device_of_a_fed_model(values, at) or next(
            (found for value in roots if isinstance(value, cst.Name)
             and (found := self._device_of_a_model_output(self.facts._binding_before(value.value, line), at))),
            None,
        )
        if device is None or not self._device_defined_before(device, at):
            return
        for key, whole in operands:
            value = without_tensor_methods(whole)  # `y` of `y.reshape(-1)`: the move goes after the reshape
            if not isinstance(value, cst.Name):
                continue  # (a name moved elsewhere, `loss_fn(out, y.to(device))`, holds the CPU tensor still)
            helper = self._host_helper_unpacked(value.value, line)
            if helper is not None:
                self.moved_inputs.setdefault(key, (f"`{helper}(...)`, which returns CPU tensors", device))

    def _host_helper_unpacked(self, name: str, line: int) -> str | None:
        """The helper `name` is unpacked from where `line` reads it (`x, y = get_batch(split)`), when
        every `return` of the helper is a tuple of that many tensors made on the host."""
        binding = self.facts._binding_before(name, line)
        bound = binding.value if binding is not None else None
        if isinstance(bound, cst.Call) and isinstance(bound.func, cst.Name) and binding.unpacked \
                and self.rule.cpu_tensor_tuple_size(bound.func.value, bound, binding.line, self.facts) == binding.unpacked:
            return bound.func.value
        return None

    def _device_of_a_fed_model(self, values: list[cst.BaseExpression], call: cst.CSTNode) -> str | None:
        """`bce(D(x), torch.zeros(8, 1))` for a loss that holds no parameters: where the model whose
        output (or a tensor method of it: `model(x).argmax(1)`) meets the fresh tensor was moved."""
        for value in values:
            value = without_tensor_methods(value)
            if isinstance(value, cst.Call) and isinstance(value.func, cst.Name) and value.func.value in self.modules:
                move = self._move_of(value.func.value, call)
                moved_to = self._moved_to(value.func.value, move, call) if move is not None else None
                if moved_to is not None and self._device_defined_before(moved_to, call):
                    return moved_to
        return None

    def _device_of_a_layer_weight(self, receiver: cst.BaseExpression, call: cst.Call) -> str | None:
        """`encoder.token_embedding.weight` (or `.bias`) of a model moved here, whose class (of the
        file) builds `self.token_embedding` as a torch layer with parameters: where it was moved."""
        if not (isinstance(receiver, cst.Attribute) and receiver.attr.value in ("weight", "bias")):
            return None
        layer = receiver.value
        if not (isinstance(layer, cst.Attribute) and isinstance(layer.value, cst.Name)):
            return None
        model = layer.value.value
        inputs = self.rule.method_inputs(self._class_of(model, self.rule.line_of(call)))
        move = self._move_of(model, call)
        if inputs is None or layer.attr.value not in inputs.layers or move is None:
            return None
        moved_to = self._moved_to(model, move, call)
        return moved_to if moved_to is not None and self._device_defined_before(moved_to, call) else None

    def _device_of_a_moved_argument(self, name: str) -> str | None:
        """`def predict(model, rows): ... model(x)` where every call of `predict` in the file passes a
        model moved to a device: the model's own device, `next(model.parameters()).device`."""
        if not isinstance(self.scope, cst.FunctionDef) or name not in self.parameters:
            return None
        if not self.rule.callers_pass_moved_models(self.scope, name):
            return None
        return f"next({name}.parameters()).device"

    def _feed_encodings(self, call: cst.Call, model: str) -> None:
        """`inputs = tokenizer(text, return_tensors="pt")` then `model(**inputs)` for a model moved
        here: a tokenizer's or processor's tensors are always on the CPU, and its BatchEncoding has
        `.to()`, so `model(**inputs.to(device))`."""
        if model in self.parameters:  # every caller hands in a moved model: asked only where an encoding is given (dear)
            moved_to = self._device_of_a_moved_argument(model) if self._may_give_an_encoding(call) else None
        else:
            move = self._move_of(model, call)
            moved_to = device_code(move.device) if move is not None else None
        if moved_to is None or not self._device_defined_before(moved_to, call):
            return
        line = self.rule.line_of(call)
        for arg in call.args:
            if arg.star == "**" and isinstance(arg.value, cst.Name) and arg.value.value not in self.facts.moved:
                binding = self.facts._binding_before(arg.value.value, line)
                if binding is not None and _is_encoding_call(binding.value):
                    self.moved_inputs[arg] = ('a `return_tensors="pt"` encoding, on the CPU', moved_to)
            elif not arg.star and self._encoding_field(arg.value, line):
                self.moved_inputs[arg] = ('a field of a `return_tensors="pt"` encoding, on the CPU', moved_to)
            elif not arg.star and isinstance(arg.value, cst.Name):
                grown = self._grown_encoding(arg.value.value, line, moved_to)
                if grown is not None:
                    self.moved_bindings[grown] = ('token ids a tokenizer made on the CPU, grown by the model', moved_to)

    def _may_give_an_encoding(self, call: cst.Call) -> bool:
        """Some argument of `call` is an encoding, one of its fields, or a name once bound to token ids."""
        line = self.rule.line_of(call)
        for arg in call.args:
            bindings = self.facts.bindings.get(arg.value.value, []) if isinstance(arg.value, cst.Name) else []
            if arg.star == "**" and any(_is_encoding_call(binding.value) for binding in bindings):
                return True
            if not arg.star and (self._encoding_field(arg.value, line) or any(_is_encoded_tensor_call(binding.value) for binding in bindings)):
                return True
        return False

    def _grown_encoding(self, name: str, line: int, device: str) -> cst.BaseExpression | None:
        """`ids = tokenizer.encode(text, return_tensors="pt")` before `line`, then rebound only by
        joining it with more (`ids = torch.cat([ids, next_id], -1)`, a generation loop): the value of
        that first binding, which is where the ids must move (moved where read, the join would meet
        the model's output from the CPU), when every other read of `name` takes a device tensor as
        well (`analysis.token_ids`); None otherwise."""
        bindings = sorted(self.facts.bindings.get(name, []), key=lambda binding: binding.line)
        if name in self.facts.moved or len(bindings) < 2 or bindings[0].line >= line or bindings[0].value is None:
            return None
        first = bindings[0]
        if isinstance(first.value, cst.Name) or not self._encoding_field(first.value, first.line):
            return None
        if not all(grows(binding.value, name, self.qualified) for binding in bindings[1:]):
            return None
        if not self._device_defined_before(device, first.value):
            return None
        scope = self.rule.enclosing_scope(first.value)
        moved = set(self.facts.moved) | self.global_models
        return first.value if reads_take_device_tensors(scope, name, moved, self.qualified) else None

    def _encoding_field(self, value: cst.BaseExpression, line: int) -> bool:
        """`enc["input_ids"]`, `enc.attention_mask` or `tokenizer(text, return_tensors="pt").input_ids`
        read where `line` runs, of an encoding nothing moved; or a name bound once in the scope, before
        `line`, to such a read (`ids = enc.input_ids`): a CPU tensor."""
        if isinstance(value, cst.Name):
            bindings = self.facts.bindings.get(value.value, [])
            if value.value in self.facts.moved or len(bindings) != 1 or bindings[0].line >= line or bindings[0].value is None:
                return False
            value, line = bindings[0].value, bindings[0].line
            if isinstance(value, cst.Name):
                return False
            return self._encoding_field(value, line)
        if _is_encoded_tensor_call(value):
            return True  # `tokenizer.encode(text, return_tensors="pt")`: the ids themselves
        if isinstance(value, cst.Subscript):
            index = value.slice[0].slice if len(value.slice) == 1 else None
            if not (isinstance(index, cst.Index) and isinstance(index.value, cst.SimpleString)):
                return False
        elif not (isinstance(value, cst.Attribute) and value.attr.value in ENCODING_TENSOR_FIELDS):
            return False
        encoding = value.value
        if isinstance(encoding, cst.Name):
            bindings = self.facts.bindings.get(encoding.value, [])
            if encoding.value in self.facts.moved or len(bindings) != 1 or bindings[0].line >= line:
                return False
            encoding = bindings[0].value
        return _is_encoding_call(encoding)

    def _host_loop_element(self, value: cst.BaseExpression, call: cst.Call) -> bool:
        """`sample.unsqueeze(0)` of `for sample in samples`, a comprehension of host tensors, fed to
        a moved model: `_feed_host_tensors` moves it where it is fed, so its rows' factories are not
        placed as well."""
        fed = value.value if isinstance(value, cst.Subscript) else _method_receiver(value) or value
        if not isinstance(fed, cst.Name) or fed.value in self.facts.moved:
            return False
        binding = self.facts._binding_before(fed.value, self.rule.line_of(call))
        return binding is not None and binding.value is None and self._loop_over_host_tensors(fed, binding.line, call)

    def _loop_over_host_tensors(self, name: cst.Name, line: int, call: cst.Call) -> bool:
        """`for sample in samples:` (the loop bound `name` on `line`), where `samples` is a list of
        tensors made on the host: a comprehension of them (the name's one value, never appended
        to), or such a comprehension written in the loop."""
        loops = _LoopsBinding(name.value, line, self.rule.line_of)
        scope = self.rule.enclosing_scope(call)
        (scope.body if isinstance(scope, cst.FunctionDef) else scope).visit(loops)
        if len(loops.found) != 1:
            return False
        iterated = loops.found[0].iter
        listed = iterated
        if isinstance(listed, cst.Name):
            bound = self.facts._binding_before(listed.value, line)
            listed = bound.value if bound is not None else None
        if not (isinstance(listed, cst.ListComp) and is_tensor_expression(listed.elt, set(), self.qualified)):
            return False
        return host_made(iterated, line, 0, self.rule.host_context(self.facts))

    def _made_on_the_host(self, name: cst.Name, value: cst.BaseExpression, line: int) -> bool:
        """Proven a tensor where it is fed, and proven built on the host: every source is a literal,
        a numpy value or a CPU factory of this scope (a parameter, a loop variable or an updated
        value could be anywhere, and a move of something already there is noise)."""
        where = self.rule.host_context(self.facts)
        return self.rule.kind_of(name) is Kind.TENSOR and host_made(value, line, 0, where)

    def _device_defined_before(self, device: str, call: cst.Call) -> bool:
        """Every name the device expression reads (`device`, `args` of `args.device`, `model` of
        `next(model.parameters()).device`) exists where `call` runs: a parameter, a name of this
        scope bound on an earlier line, or one it does not bind (a global, a builtin)."""
        line = self.rule.line_of(call)
        return all(
            root in self.parameters or root not in self.first_line or self.first_line[root] < line
            for root in EXPRESSION_ROOTS.findall(device)
        )

    def _references(self, values: list[cst.BaseExpression]) -> list[str]:
        """Known tensor names in `values`: by the usage evidence first; names that only the value
        analysis proves to be tensors (a caller passes one) when nothing else is known."""
        for proven in (False, True):
            found = [reference for value in values if (reference := self._reference(value, proven))]
            if found:
                return found
        return []

    def _meet(self, operands: list[cst.BaseExpression], pointwise: bool, at: cst.CSTNode | None = None) -> None:
        """Fresh tensors among `operands` are made where a known tensor among them lives; else
        with a layer's input; else (for arithmetic `at` a node) where a moved model whose output
        is an operand was moved."""
        references = self._references(operands)
        if references:
            for operand in operands:
                fresh = self._fresh(operand, pointwise)
                self._align(fresh, references[0])
                device = self._moved_where_met(references[0], at) if at is not None else None
                if device is not None and not self._changed_in_place(operands, at):
                    self.aligned.update({call: device for call in fresh if call not in self.aligned and self._device_defined_before(device, call)})
        else:
            inputs = [name for operand in operands if (name := self._layer_input(operand)) is not None]
            if inputs:  # `self.emb(ids) + sinusoid(n, d)`; a factory made in a Module's method is DF016's
                for operand in operands:
                    self._align([call for call in self._fresh(operand, pointwise) if self._is_helper_call(call)], inputs[0])
                return
        if at is not None:
            self.aligned.update(self._placed_with_a_fed_model(operands, pointwise, at))

    def placed_by_fed_models(self) -> dict[cst.Call, str]:
        """After the scope's visit: fresh operands of torch functions that nothing placed, where a
        moved model whose output they meet was moved (a name made before that device exists, or
        for a model moved under an `if`, moves where it is given: `labels.to(next(model.parameters()).device)`).
        An operand that reads a name whose own factory was placed here (`critic(observations)`) is
        left to the next pass, where that name says where (`observations.device`)."""
        found: dict[cst.Call, str] = {}
        for values, pointwise, node in self.unnamed_meetings:
            if any(self._bound_to_a_placed_factory(name, node) for value in values for name in names_in(value)):
                continue
            device = self._device_of_a_fed_model(values, node)
            if device is None or self._changed_in_place(values, node):
                continue
            for value in values:
                fresh = [call for call in self._fresh(value, pointwise) if call not in self.aligned and call not in found]
                if fresh and DEVICE_NAME.fullmatch(device) and all(self._device_defined_before(device, call) for call in fresh):
                    found.update(dict.fromkeys(fresh, device))
                elif fresh and isinstance(value, cst.Name):
                    self._move_where_fed(node, value, [], device)
        return found

    def _bound_to_a_placed_factory(self, name: str, at: cst.CSTNode) -> bool:
        binding = self.facts._binding_before(name, self.rule.line_of(at))
        return binding is not None and binding.value in self.aligned

    def _placed_with_a_fed_model(self, operands: list[cst.BaseExpression], pointwise: bool, at: cst.CSTNode) -> dict[cst.Call, str]:
        """`model(x) * class_weights`: no name here says where, the moved model does, by a device
        name bound before the factory (at the factory, `next(model.parameters()).device` may not
        exist yet, or still be the CPU: the model moves later). The fresh operands not yet placed,
        each with that device."""
        unplaced = [call for operand in operands for call in self._fresh(operand, pointwise) if call not in self.aligned]
        device = self._device_of_a_fed_model(operands, at) if unplaced else None
        if device is not None and DEVICE_NAME.fullmatch(device) and not self._changed_in_place(operands, at):
            return {call: device for call in unplaced if self._device_defined_before(device, call)}
        device = self._device_of_a_given_models_output(operands, at) if unplaced else None
        return {call: device for call in unplaced} if device is not None else {}

    def _device_of_a_given_models_output(self, operands: list[cst.BaseExpression], at: cst.CSTNode) -> str | None:
        """`scores.unsqueeze(1) + logp` in `def beam_search(decoder, ...)`, with `logp, h =
        decoder.step(tokens, h)`: what a model every caller moved returns, called here by name or
        through a method, is on that model's device, which exists from the function's start:
        `next(decoder.parameters()).device`."""
        for operand in operands:
            root = without_tensor_methods(operand)
            if not isinstance(root, cst.Name):
                continue
            binding = self.facts._binding_before(root.value, self.rule.line_of(at))
            call = binding.value if binding is not None else None
            model = call.func if isinstance(call, cst.Call) else None
            if isinstance(model, cst.Attribute):  # a method of the file's Module class, not another library's (`encode`)
                method, model = model.attr.value, model.value
                if not isinstance(model, cst.Name) or not self._defines_method(model.value, method, binding.line):
                    continue
            if isinstance(model, cst.Name) and model.value not in self.facts.bindings:
                device = self._device_of_a_moved_argument(model.value)
                if device is not None:
                    return device
        return None

    def _defines_method(self, model: str, method: str, line: int) -> bool:
        """The one class of the file every caller gives `model` is a Module class defining `method`."""
        class_name = self._class_of(model, line)
        class_def = top_level_class(self.rule.module, class_name) if class_name is not None else None
        return class_def is not None and self.rule.is_module_classdef(class_def) and any(
            isinstance(item, cst.FunctionDef) and item.name.value == method for item in class_def.body.body
        )

    def _moved_where_met(self, reference: str, at: cst.CSTNode, through_loop: bool = False) -> str | None:
        """`images = images.to(device)` heading the statements of a loop body, then `images + v`
        with `v = torch.zeros(...)` made before the loop: the device named in the move, when the
        move is the last binding of `reference` before the meeting, in the block of the statement
        that meets (so every way into the meeting passes it). A loop's element (`for pred, target in
        zip(outputs, targets)`) is a row of what it iterates: the move of that before the loop."""
        binding = self.facts._binding_before(reference, self.rule.line_of(at))
        if binding is not None and binding.value is None and not through_loop:
            iterated = self.facts.elements.get((reference, binding.line))
            if isinstance(iterated, cst.Name) and iterated.value != reference:
                return self._moved_where_met(iterated.value, iterated, through_loop=True)
        move = as_move(binding.value, self.qualified) if binding is not None and binding.value is not None else None
        device = device_code(move.device) if move is not None else None
        if device is None or not DEVICE_NAME.fullmatch(device):
            return None
        moving, meeting = self.rule.statement_of(binding.value), self.rule.statement_of(at)
        met_by_line = isinstance(meeting, cst.For) if through_loop else isinstance(meeting, cst.SimpleStatementLine)
        if not met_by_line or moving is None or moving is meeting:
            return None
        block = self.rule.get_metadata(ParentProvider, moving, None)
        body = getattr(block, "body", None)
        if not (isinstance(body, (list, tuple)) and self.rule.get_metadata(ParentProvider, meeting, None) is block):
            return None
        return device if body.index(moving) < body.index(meeting) else None

    def _changed_in_place(self, operands: list[cst.BaseExpression], at: cst.CSTNode) -> bool:
        """Some operand name gets an attribute set in its scope (`bias.data = bias.data.to(device)`):
        it may live elsewhere than where its value was made."""
        names = {operand.value for operand in operands if isinstance(operand, cst.Name)}
        if not names:
            return False
        stores = _AttributeStores()
        self.rule.enclosing_scope(at).visit(stores)
        return bool(names & stores.receivers)

    def _layer_input(self, expression: cst.BaseExpression) -> str | None:
        """`ids` of `self.emb(ids)`, a single-tensor layer of the class: its output lives with it
        (a torch layer's input is a tensor)."""
        if not (isinstance(expression, cst.Call) and is_self_attribute(expression.func) and expression.func.attr.value in self.layers):
            return None
        first = expression.args[0].value if expression.args else None
        if isinstance(first, cst.Name) and first.value not in self.vetoed and not self._sources(first):
            return first.value
        return None

    def _align(self, calls: list[cst.Call], reference: str, tables: bool | str = False) -> None:
        for call in calls:
            device = self._device_of(reference, call, tables=tables)
            if device is not None:
                self.aligned.setdefault(call, device)

    def _device_of(self, reference: str, call: cst.Call, depth: int = 0, tables: bool | str = False, meeting: int | None = None) -> str | None:
        """Where `reference` lives, said with names that exist where `call` runs: its own device;
        else, for indices of a table (`tables`; "stored" for a table written to, whose indices first
        bound by a loop are followed to the value reaching the meeting), the device their first value was moved to
        (`y = labels.to(device)` → `device`), or that of what it is computed from (`weights = torch.ones(n)` before
        `loss = F.cross_entropy(logits, y)` → `logits.device`), or the device its Module was
        moved to (`prediction = model(inputs.to(device))` → `device`). `meeting` is the line where
        `reference` meets the new tensor (the visit's); the binding of `reference` read there is the
        one followed."""
        meeting = self.meeting_line if meeting is None else meeting
        if self._defined_before(reference, call, meeting):
            return f"{reference}.device"
        bindings = sorted(self.facts.bindings.get(reference, ()), key=lambda binding: binding.line)
        reaching = [binding for binding in bindings if meeting is None or binding.line < meeting]
        if tables and bindings and (bindings[0].value is not None or tables != "stored"):
            bindings = bindings[:1]  # indices: their first value (DF012 has the rest)
        else:  # or, first bound by a loop over a loader, the value that reaches the meeting (`classes = classes.to(device)`)
            bindings = reaching[-1:] or bindings[:1]
        if depth >= 3 or not bindings:
            return None
        # a loop's element lives where the value it iterates does (`for t, p in zip(ys, preds)`); as
        # an index it is 0-dim, which real CUDA reads as a number: no reason to move a table
        element = self.facts.elements.get((reference, bindings[0].line)) if not tables else None
        value = bindings[0].value if bindings[0].value is not None else element
        if value is None:
            return None
        move = as_move(value, self.qualified) if tables else None
        moved_to = device_code(move.device) if move is not None else None
        if moved_to is not None and self._device_defined_before(moved_to, call):
            return moved_to  # `weights[y]`, `y = labels.to(device)` bound after the table: `device`
        source = next(iter(self._references([value])), None)
        # `sim = sim - torch.eye(n) * 1e9` bound after the factory: computed from the `sim` before it
        from_source = source is not None and (source != reference or meeting is not None and bindings[0].line < meeting)
        found = self._device_of(source, call, depth + 1, tables, bindings[0].line) if from_source else None
        if found is not None:
            return found
        output = self._model_output_within(value)  # `preds = model(x).argmax(1)` lives where `model(x)` does
        if isinstance(output, cst.Call) and isinstance(output.func, cst.Name) and output.func.value in self.facts.moved:
            move = self.facts.moved[output.func.value]
            moved_to = device_code(move.device)
            moved_first = self.rule.line_of(move.call) < bindings[0].line  # not `z = net(x)` then `net.to(device)`
            # (its input's device, when it has one, was looked for first: the output is where the model is)
            if moved_to is not None and moved_first and self._device_defined_before(moved_to, call):
                return moved_to
            if moved_to is None and self.rule.line_of(move.call) < self.rule.line_of(call):
                # `out = model(data)` with `model.cuda()` under `if args.cuda:` before the call and
                # `data` moved only after it: the model's own device is where `out` will be
                return self._moved_to(output.func.value, move, call)
        called = output  # `model(x)` of `pred = model(x).argmax(1)`
        if isinstance(called, cst.Call) and isinstance(called.func, cst.Name) and not (from_source and self._made_here(source, bindings[0].line)):
            # `preds = model(images.to(device))` in `def get_all_preds(model, loader)`, bound after
            # `all_preds = torch.tensor([])` (or with `device` bound after it): every caller passes a
            # moved model, and `preds` is its output (an input made here is placed by this rule first)
            return self._device_of_a_moved_argument(called.func.value)
        return None

    def _model_output_within(self, value: cst.BaseExpression) -> cst.BaseExpression | None:
        """`model(x)` of `model(x).argmax(1)` or of `torch.tanh(model(x))`: tensor methods, and torch
        functions of one tensor that name no device, give a result where their first operand is."""
        while isinstance(value, cst.Call):
            names = self.qualified(value.func)
            if not is_torch_tensor_function(names):
                if not (isinstance(value.func, cst.Attribute) and value.func.attr.value in TENSOR_TO_TENSOR_METHODS):
                    break
                value = value.func.value  # a tensor method
                continue
            first = value.args[0] if value.args else None
            if first is None or first.keyword is not None or first.star or isinstance(first.value, (cst.List, cst.Tuple)) \
                    or is_factory_call(value, self.qualified) or names & (MOVED_AFTER | LIST_JOINS) or keyword(value, "device") is not None:
                break
            value = first.value
        return value

    def _made_here(self, name: str, line: int) -> bool:
        """`name`, read on `line`, holds a tensor a factory of this scope made (`z = torch.randn(n, k)`,
        given a `device=` by this rule or not)."""
        binding = self.facts._binding_before(name, line)
        value = binding.value if binding is not None else None
        return value is not None and (is_factory_call(without_tensor_methods(value), self.qualified) or bool(self._sources(value, binding.line)))

    def _reference(self, expression: cst.BaseExpression, proven: bool = False) -> str | None:
        """A known tensor name inside `expression` (`x0` in `alpha_bar.sqrt() * x0`, `ids[:, 1:]`)."""
        if isinstance(expression, cst.Name):
            by_analysis = proven and self.rule.kind_of(expression) is Kind.TENSOR and expression.value not in self.vetoed
            evidenced = expression.value in self.tensors and self._tensor_where_read(expression.value, self.rule.line_of(expression))
            known = (evidenced or by_analysis or self._holds_module_output(expression)) and not self._sources(expression)
            return expression.value if known and not self._bound_off_device(expression) else None
        if isinstance(expression, cst.BinaryOperation):
            return self._reference(expression.left, proven) or self._reference(expression.right, proven)
        if isinstance(expression, cst.Comparison):  # `(logits.argmax(1) == y)`
            operands = [expression.left, *(item.comparator for item in expression.comparisons)]
            return next((found for operand in operands if (found := self._reference(operand, proven))), None)
        if isinstance(expression, cst.Subscript):
            root = expression.value
            if _read_by_key(expression) and isinstance(root, cst.Name) and self._holds_a_whole_output(root):
                return None  # `losses[name]` of what a Module returned: a dict of tensors has no `.device`
            return self._reference(expression.value, proven)
        if isinstance(expression, cst.UnaryOperation) and not isinstance(expression.operator, cst.Not):  # `-dists`
            return self._reference(expression.expression, proven)
        if not isinstance(expression, cst.Call) or is_factory_call(expression, self.qualified):
            return None
        if self.qualified(expression.func) & MOVED_AFTER:
            return None  # `torch.from_numpy(array)`: a new CPU tensor; `array` is no tensor to follow
        if is_torch_tensor_function(self.qualified(expression.func)):
            first = expression.args[0].value if expression.args else None
            if isinstance(first, (cst.List, cst.Tuple)):  # torch.hstack([rs_pow * (rc - rs) ** -5, ...])
                items = [element.value for element in first.elements if isinstance(element, cst.Element)]
                return next((found for item in items if (found := self._reference(item, proven))), None)
            if self.qualified(expression.func) & LIST_JOINS:
                return None  # `torch.cat(target_nnz)`: the name holds a list of tensors, which has no `.device` (pykeen's collate)
            return self._reference(first, proven) if first is not None else None  # torch.exp(0.5 * logvar)
        if is_self_attribute(expression.func) and expression.func.attr.value in self.object_modules:
            return next((ref for arg in expression.args if (ref := self._reference(arg.value, proven))), None)  # self.q(states)
        if isinstance(expression.func, cst.Attribute):
            if expression.func.attr.value in NON_TENSOR_METHODS | DEVICE_CHANGING_METHODS and not is_cast(expression, self.qualified):
                return None  # `values.size(1)` is a number; `logits.cpu()` is somewhere else
            return self._reference(expression.func.value, proven)  # a tensor method: `fake.detach()`
        if isinstance(expression.func, cst.Name) and (
            expression.func.value in self.modules or self._device_of_a_moved_argument(expression.func.value) is not None
        ):  # D(real) lives with real, for a model moved here or one every caller moved
            return next((ref for arg in expression.args if (ref := self._reference(arg.value, proven))), None)
        return None

    def _tensor_where_read(self, name: str, line: int, depth: int = 0) -> bool:
        """A name some assignment of the scope computes with tensors holds one where read on `line`
        when its uses prove it, or the binding that reaches the read computes with names that hold
        tensors there (`s = a["scale"]`, `s = s * 1.25`, then `s * torch.randn(1)` reads a number,
        though `s = s * torch.randn(1)[0]` binds a tensor after it)."""
        if name in self.used_as_tensors or depth > 4:
            return True
        binding = self.facts._binding_before(name, line)
        if binding is None:
            # a parameter, read before the assignment that computes it with tensors: peft's `eps = eps *
            # 1 / torch.sqrt(...)` of `eps=1e-5`; only its uses could prove it a tensor, and they do not
            return name not in self.parameters
        if binding.value is None:
            return True  # a loop's element: the scope's evidence stands
        held = {read for read in variables_in(binding.value) if read in self.tensors and self._tensor_where_read(read, binding.line, depth + 1)}
        return is_tensor_expression(binding.value, held, self.qualified)

    def _holds_a_whole_output(self, name: cst.Name) -> bool:
        """`name` holds what a Module call returned, as returned (`_, losses = roi_heads(...)`, not
        `model(x).argmax(1)`), and nothing proves it a tensor: it may be a dict or a list."""
        if name.value in self.tensors or self.rule.kind_of(name) is Kind.TENSOR or not self._holds_module_output(name):
            return False
        binding = self.facts._binding_before(name.value, self.rule.line_of(name))
        value = binding.value if binding is not None else None
        return isinstance(value, cst.Call) and not isinstance(value.func, cst.Attribute)

    def _bound_off_device(self, name: cst.Name) -> bool:
        """The binding that reaches this read holds nothing on a device to align with: a tensor
        proven on the host (`host_q = self.q(s).detach().cpu()`), or a Python number, bound to a
        tensor only later (`emb = math.log(10000) / (half_dim - 1)` then `torch.arange(half_dim) * -emb`)."""
        binding = self.facts._binding_before(name.value, self.rule.line_of(name))
        if binding is None or binding.value is None:
            return False
        return is_number_expression(binding.value, self.tensors, self.qualified) or host_made(
            binding.value, binding.line, 0, self.rule.host_context(self.facts))

    def _inside(self, node: cst.CSTNode, ancestor: cst.CSTNode | None) -> bool:
        current = node
        while current is not None and current is not ancestor:
            current = self.rule.get_metadata(ParentProvider, current, None)
        return current is not None

    def _holds_module_output(self, name: cst.Name) -> bool:
        """`vectors = embedding(ids)`: what a Module returns is a tensor (on the Module's device), and
        so is a tensor method of it (`preds = model(x).argmax(1)`)."""
        binding = self.facts._binding_before(name.value, self.rule.line_of(name))
        value = binding.value if binding is not None else None
        value = without_tensor_methods(value)
        if isinstance(value, cst.Call) and is_self_attribute(value.func) and value.func.attr.value in self.layers | self.object_modules:
            # `logits = self.proj(x)` in a method of a class whose `__init__` builds `self.proj = nn.Linear(...)`;
            # `out = self.model(x)` of a plain class that keeps a moved model
            return True
        if isinstance(value, cst.Call) and isinstance(value.func, cst.Name) and value.func.value in self.parameters:
            # `def evaluate(model, X, y): preds = model(X).argmax(dim=1)`, every caller passing a moved model
            return self._device_of_a_moved_argument(value.func.value) is not None
        return isinstance(value, cst.Call) and isinstance(value.func, cst.Name) and value.func.value in self.modules

    def _fresh(self, expression: cst.BaseExpression, pointwise: bool = False) -> list[cst.Call]:
        if pointwise and self._zero_dim(expression):
            return []  # `mask >= mask_start` of `mask_start = min_value.long().squeeze()`: a 0-dim operand joins any device
        sources = self._sources(expression)
        if pointwise:
            sources = [call for call in sources if not self._is_scalar(call)]
        return sources

    def _bound_value(self, name: str, line: int) -> tuple[cst.BaseExpression | None, int]:
        binding = self.facts._binding_before(name, line)
        return (binding.value, binding.line) if binding is not None else (None, line)

    def _sources_skipped(self, name: str, binding, use_line: int) -> list[cst.Call]:
        """`if pad_values == 0: pad = torch.zeros(n)` / `else: pad = torch.ones(n) * v`, read after
        both: the binding read may be in a block that did not run, so the factories of the bindings
        before it that reach the read are its sources too (`PlacementFacts.reaching_past`; PyPOTS'
        ModernTCN `PaddingTwoEdge1d`)."""
        found: list[cst.Call] = []
        for earlier in self.facts.reaching_past(name, binding, use_line)[0]:
            if earlier.value is None:
                break
            found += self._sources(earlier.value, earlier.line)
        return found

    def _row_sources(self, rows: cst.BaseExpression, position: int | None, line: int) -> list[cst.Call]:
        """`for tokens, score in beams:` with `beams = [(torch.full((1, 1), sos), 0.0)]` bound before
        the loop (a beam search's start), or `for x, y in [(xs[i:i + 8], ys[i:i + 8]) for i in ...]`:
        the factories of the item at `position` of each tuple of that list display or comprehension
        (what the loop body binds to `beams` later is built from those rows). Position None: the
        whole row (`for bias in [torch.zeros(2, 3), torch.ones(2, 3)]`)."""
        if isinstance(rows, cst.Name):
            binding = self.facts._binding_before(rows.value, line)
            rows, line = (binding.value, binding.line) if binding is not None else (None, line)
        if isinstance(rows, cst.ListComp):
            if position is None and comprehension_targets(rows) & self.facts.bindings.keys():
                return []  # a name of the comprehension is bound in the scope too: its reads may resolve to that
            items = [rows.elt]
        elif isinstance(rows, cst.List) or (position is None and isinstance(rows, cst.Tuple)):
            items = [element.value for element in rows.elements if isinstance(element, cst.Element)]
        else:
            return []
        if position is None:
            return [call for item in items for call in self._sources(item, line)]
        if not items or not all(isinstance(item, cst.Tuple) and len(item.elements) > position for item in items):
            return []
        return [call for item in items for call in self._sources(item.elements[position].value, line)]

    def _sources(self, expression: cst.BaseExpression, before_line: int | None = None) -> list[cst.Call]:
        """The factory calls that an expression's value is built from."""
        if isinstance(expression, cst.Name):
            # what the name holds here: its latest assignment on an earlier line, unless the code
            # moves it in between (`mask.cuda()`, made effective by DF005)
            use_line = before_line if before_line is not None else self.rule.line_of(expression)
            binding = self.facts._binding_before(expression.value, use_line)
            if binding is not None and before_line is None and self._inside(expression, binding.value):
                # `x = torch.cat(\n    (x, torch.tensor([n])))`: the statement that rebinds `x` reads the one before it
                binding = self.facts._binding_before(expression.value, binding.line)
            if binding is not None and binding.value is None and (expression.value, binding.line) in self.facts.unpacked_elements:
                return self._row_sources(*self.facts.unpacked_elements[(expression.value, binding.line)], binding.line)
            if binding is None or binding.value is None:
                return []
            move = self.facts.moved.get(expression.value)
            if move is not None and binding.line < self.rule.line_of(move.call) < use_line:
                return []
            if self._is_helper_call(binding.value) and (
                self.rule.kind_of(expression) is Kind.TENSOR or self._bound_once_from_another_file(expression.value, binding.value)
            ):
                return [binding.value]  # `mask = subsequent_mask(n)`: a helper of the file returns a CPU tensor
            value = binding.value
            if isinstance(value, cst.List) and not value.elements:
                return self._appended_sources(expression.value, binding.line, use_line)
            if isinstance(value, cst.ListComp) and not comprehension_targets(value) & self.facts.bindings.keys():
                # `xs = [torch.randn(4, 3) for _ in range(5)]`: what each element is made from (the names
                # the comprehension binds are bound nowhere else here, so none resolves to another value)
                value = value.elt
            found = self._sources(value, binding.line)  # names in a value: before its line
            return found + self._sources_skipped(expression.value, binding, use_line) if found else found
        if isinstance(expression, cst.Call) and self.qualified(expression.func) & MOVED_AFTER:
            if self.qualified(expression.func) & LEGACY_CPU_CONSTRUCTORS and self._given_a_tensor(expression):
                return []  # `torch.Tensor(layer_ids + 1)`: the tensor itself on the CPU, an error on a GPU: no `.to()` after it helps
            return [] if _names_a_device(expression) else [expression]
        if self._is_helper_call(expression):
            return [expression]  # `x + positional_encoding(n, d)`: a helper of the file returns a CPU tensor
        if is_factory_call(expression, self.qualified):
            return [] if _names_a_device(expression) else [expression]
        if isinstance(expression, cst.Call):
            elements = _elements_kept(expression)
            if elements is not None:
                return self._sources(elements, before_line)  # `state = tuple(s.detach() for s in state)`
            names = self.qualified(expression.func)
            if any(is_source_wrapper(name) for name in names):
                return [call for arg in expression.args for call in self._sources(arg.value, before_line)]
            if any(name.startswith("torch.") for name in names):
                return []
            if isinstance(expression.func, cst.Attribute) and (
                expression.func.attr.value not in DEVICE_CHANGING_METHODS | HOST_VALUES or is_cast(expression, self.qualified)
            ):
                return self._sources(expression.func.value, before_line)  # a tensor method: `.bool()`, `.unsqueeze(0)`, a cast
            return []
        if isinstance(expression, cst.BinaryOperation):
            if isinstance(expression.operator, cst.MatrixMultiply):
                return self._sources(expression.left, before_line) + self._sources(expression.right, before_line)
            left, right = self._shaping_sources([expression.left, expression.right], before_line)
            return self._without_scalars(left, right) + self._without_scalars(right, left)
        if isinstance(expression, cst.UnaryOperation):
            return self._sources(expression.expression, before_line)
        if isinstance(expression, cst.Comparison):  # `torch.arange(n)[None] < lengths[:, None]` is a new tensor too
            operands = [expression.left, *(item.comparator for item in expression.comparisons)]
            return [call for sources in self._shaping_sources(operands, before_line) for call in sources]
        if isinstance(expression, (cst.List, cst.Tuple)):
            return [call for element in expression.elements for call in self._sources(element.value, before_line)]
        if isinstance(expression, cst.Subscript):
            row = expression.value
            position = index_of(expression)
            if position is not None and isinstance(row, cst.Subscript) and index_of(row) is not None:
                # `batches[0][0]` of `batches = [(torch.randn(8, 4), torch.randint(0, 3, (8,))) for _ in range(3)]`
                line = before_line if before_line is not None else self.rule.line_of(expression)
                return self._row_sources(row.value, position, line)
            return self._sources(expression.value, before_line)
        return []

    def _appended_sources(self, name: str, bound: int, used: int) -> list[cst.Call]:
        """The factory calls in what `name.append(v)` adds to the empty list `name = []` bound on line
        `bound`, before its read on line `used` (`layer_of.append(torch.ones(n) * i)` in a loop, then
        `torch.cat(layer_of)`)."""
        return [call for line, value in self.facts.appended.get(name, ()) if bound < line < used for call in self._sources(value, line)]

    def _shaping_sources(self, operands: list[cst.BaseExpression], before_line: int | None) -> list[list[cst.Call]]:
        """The sources of each operand of `a >= b` or `a + b`, none for an operand that gives the
        result no device: a 0-dim one (`mask_start = min_value.long().squeeze()`) joins the others
        wherever it lives, unless all are 0-dim."""
        zero_dim = [self._zero_dim(operand, before_line) for operand in operands]
        return [[] if flag and not all(zero_dim) else self._sources(operand, before_line) for operand, flag in zip(operands, zero_dim)]

    def _zero_dim(self, expression: cst.BaseExpression, before_line: int | None = None) -> bool:
        line = before_line if before_line is not None else self.rule.line_of(expression)
        return is_zero_dim_value(expression, self._bound_value, lambda name: name not in self.tensors, line)

    def _given_a_tensor(self, constructor: cst.Call) -> bool:
        """A legacy constructor's data is a tensor the scope proves one (torchtune's `torch.Tensor(layer_ids + 1)`)."""
        data = constructor.args[0].value if constructor.args and constructor.args[0].keyword is None else None
        return data is not None and is_tensor_expression(data, self.tensors, self.qualified)

    def _without_scalars(self, sources: list[cst.Call], other: list[cst.Call]) -> list[cst.Call]:
        """One operand's sources in `a * b`: a 0-dim CPU tensor (`torch.tensor(2.0)`) joins a tensor
        of any device, and the result lives where the other operand does, so it is no source of
        the result unless the other operand is 0-dim too."""
        if other and all(self._is_scalar(call) for call in other):
            return sources
        return [call for call in sources if not self._is_scalar(call)]

    def _is_scalar(self, call: cst.Call) -> bool:
        return self.rule.is_scalar_tensor(call) or self._may_be_a_scalar_from_a_helper(call)

    def _bound_once_from_another_file(self, name: str, value: cst.Call) -> bool:
        """`mask = causal_mask(n)`, the only binding of `mask` here, of a helper of another file: its
        summary proved the result a CPU tensor (the value analysis does not follow other files)."""
        helper = value.func.value
        return (
            len(self.facts.bindings.get(name, ())) == 1 and self.rule._definition(helper) is None
            and name not in self.vetoed and self.rule.returns_cpu_tensors(helper)
        )

    def _factory_sources(self, expression: cst.BaseExpression) -> list[cst.Call]:
        """The factory calls `expression` is built from, without the helpers' calls (moved where fed)."""
        return [source for source in self._sources(expression) if not self._is_helper_call(source)]

    def _may_be_a_scalar_from_a_helper(self, call: cst.Call) -> bool:
        return self._is_helper_call(call) and self.rule.may_return_a_scalar_tensor(call.func.value)

    def _is_helper_call(self, value: cst.BaseExpression) -> bool:
        """A call of a top-level function of this file whose every `return` builds a CPU tensor."""
        return isinstance(value, cst.Call) and isinstance(value.func, cst.Name) and self.rule.returns_cpu_tensors(value.func.value)

    def _own_device_of_a_kept_model(self, device: str) -> bool:
        """`next(model.parameters()).device` of a parameter the scope never binds: the same device
        wherever the scope evaluates it."""
        match = OWN_DEVICE.fullmatch(device)
        return match is not None and match.group(1) in self.parameters and match.group(1) not in self.facts.bindings

    def _loop_carried_sources(self, name: cst.Name) -> list[cst.Call]:
        """`masks = torch.FloatTensor(...)` at the end of a loop body, read by `policy.act(obs, h,
        masks)` above it: from the second pass on the read gets that value, when nothing in the loop
        binds the name before the read (the binding reaching it on the first pass is outside the
        loop). The factories of the loop's later bindings."""
        loop = self._enclosing_loop(name)
        if loop is None:
            return []
        use_line = self.rule.line_of(name)
        binding = self.facts._binding_before(name.value, use_line)
        position = self.rule.get_metadata(PositionProvider, loop)
        if binding is not None and binding.line >= position.start.line:
            return []  # bound again in the loop before the read: every pass reads that
        later = [later for later in self.facts.bindings.get(name.value, ())
                 if use_line < later.line <= position.end.line and later.value is not None]
        return [call for later in later for call in self._sources(later.value, later.line)]

    def _bound_by_a_comprehension_around(self, reference: str, call: cst.Call, meeting: int | None) -> bool:
        """`[delta * torch.full(delta.shape, p) for delta in deltas]`: the item of a comprehension
        whose `for` binds `reference` holds the call, and the meeting is inside that comprehension
        too (sd-mecha's TIES dropout): the name at the call is the one that meets."""
        child: cst.CSTNode = call
        parent = self.rule.get_metadata(ParentProvider, call, None)
        while parent is not None and not isinstance(parent, (cst.FunctionDef, cst.Module, cst.Lambda)):
            items = (parent.key, parent.value) if isinstance(parent, cst.DictComp) else (getattr(parent, "elt", None),)
            if isinstance(parent, cst.BaseComp) and any(child is item for item in items) and reference in comprehension_targets(parent):
                position = self.rule.get_metadata(PositionProvider, parent)
                return meeting is None or position.start.line <= meeting <= position.end.line
            child, parent = parent, self.rule.get_metadata(ParentProvider, parent, None)
        return False

    def _enclosing_loop(self, node: cst.CSTNode) -> cst.For | cst.While | None:
        """The innermost `for` or `while` of the scope around `node`."""
        parent = self.rule.get_metadata(ParentProvider, node, None)
        while parent is not None and not isinstance(parent, (cst.FunctionDef, cst.Module)):
            if isinstance(parent, (cst.For, cst.While)):
                return parent
            parent = self.rule.get_metadata(ParentProvider, parent, None)
        return None

    def _in_a_loop(self, node: cst.CSTNode) -> bool:
        """A `for` or `while` of the scope runs `node` again."""
        return self._enclosing_loop(node) is not None

    def _defined_before(self, reference: str, call: cst.Call, meeting: int | None = None) -> bool:
        """`reference` exists where `call` runs, holding what made devfix take it for a tensor: a
        parameter rebound later (`cmap.endswith("_r")` ... `cmap = torch.tensor(...)`) is still the
        argument at the call, whatever the later value is; a name moved later (`data =
        data.cuda()`) is not yet where it meets the new tensor; nor is a name bound again between the
        call and the meeting (`y = torch.tensor(...)`, then `a = torch.sigmoid(z)`, then
        `F.binary_cross_entropy(a, y)`: the `a` at the call is an older value, maybe elsewhere)."""
        line = self.rule.line_of(call)
        bindings = self.facts.bindings.get(reference, ())
        meeting = self.meeting_line if meeting is None else meeting
        if self._bound_by_a_comprehension_around(reference, call, meeting):
            return True
        if meeting is not None and any(line < binding.line < meeting for binding in bindings):
            return False
        earlier = [binding for binding in bindings if binding.line < line]
        later = [binding for binding in bindings if binding.line > line]
        if any(binding.value is not None and as_move(binding.value, self.qualified) is not None for binding in later):
            return False  # `data = data.cuda()` after the call: where `data` is at the call is not where it meets
        if later:
            if not earlier:  # the argument, rebound only after the call, and no loop brings that value back
                return reference in self.parameters and not self._in_a_loop(call)
            reaching = max(earlier, key=lambda binding: binding.line)
            return not isinstance(reaching.value, NOT_TENSOR_LITERALS)
        return reference in self.parameters or bool(earlier)



def _read_by_key(subscript: cst.Subscript) -> bool:
    """`losses[name]`, `outputs["logits"]`: one index, a name or a string, as a dict is read (a
    tensor's `x[i]` looks the same: the caller asks for proof that the value is one)."""
    if len(subscript.slice) != 1 or not isinstance(subscript.slice[0].slice, cst.Index):
        return False
    return isinstance(subscript.slice[0].slice.value, (cst.Name, cst.SimpleString, cst.ConcatenatedString, cst.FormattedString))


def _read_by_string(subscript: cst.Subscript) -> bool:
    """`batch["labels"]`: one index, a string (a dict's key; a tensor takes none)."""
    return _read_by_key(subscript) and isinstance(subscript.slice[0].slice.value, (cst.SimpleString, cst.ConcatenatedString))


def _made_from_sizes(value: cst.BaseExpression, qualified) -> bool:
    """`torch.IntTensor([x.size(3)]).int()`, `torch.tensor([len(s) for s in seqs])`, `torch.LongTensor([n] * b)`
    of `n = x.shape[1]` aside: a factory, under integer casts, whose data is a display or comprehension of
    sizes (`.size(...)`, `.shape[...]`, `len(...)`)."""
    while isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) and value.func.attr.value in INTEGER_CASTS and not value.args:
        value = value.func.value
    if not (isinstance(value, cst.Call) and qualified(value.func) & DATA_CONVERTERS and value.args and value.args[0].keyword is None):
        return False
    data = value.args[0].value
    if isinstance(data, cst.BinaryOperation) and isinstance(data.operator, cst.Multiply):
        data = data.left  # `[T] * batch`
    if isinstance(data, (cst.List, cst.Tuple)):
        return bool(data.elements) and all(_reads_a_size(element.value) for element in data.elements)
    return isinstance(data, (cst.ListComp, cst.GeneratorExp)) and _reads_a_size(data.elt)


def _reads_a_size(value: cst.BaseExpression) -> bool:
    if isinstance(value, cst.Subscript) and isinstance(value.value, cst.Attribute):
        return value.value.attr.value == "shape"  # `x.shape[1]`
    if isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute):
        return value.func.attr.value == "size"  # `x.size(3)`
    return isinstance(value, cst.Call) and isinstance(value.func, cst.Name) and value.func.value == "len"


def _built(value: cst.BaseExpression | None) -> cst.BaseExpression | None:
    """`nn.CTCLoss()` of `nn.CTCLoss().to(device)`: what a chain of moves started from."""
    while isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) and value.func.attr.value in ("to", "cuda"):
        value = value.func.value
    return value


GENERATE_INPUTS = frozenset({"inputs", "input_ids", "attention_mask", "pixel_values", "input_features"})


def _value_held(value: cst.BaseExpression | None, line: int, facts: PlacementFacts, depth: int = 0) -> cst.BaseExpression | None:
    """What `value` holds where `line` reads it, by the bindings of its scope (`facts`), moves
    unwrapped: `model.to(device)` after `model = LSTM(...)` → `LSTM(...)`."""
    value = _built(value)
    if isinstance(value, cst.Name) and depth < 5:
        binding = facts._binding_before(value.value, line)
        return _value_held(binding.value, binding.line, facts, depth + 1) if binding is not None else None
    return value


def _class_held(value: cst.BaseExpression | None, line: int, facts: PlacementFacts) -> str | None:
    """The class of the file `value` holds where `line` reads it (`_value_held`): `LSTM`."""
    value = _value_held(value, line, facts)
    return value.func.value if isinstance(value, cst.Call) and isinstance(value.func, cst.Name) else None


def _elements_kept(call: cst.Call) -> cst.BaseExpression | None:
    """`tuple(s.detach() for s in state)` (truncated backpropagation through an LSTM's `(h, c)`):
    a builtin `tuple`/`list` of one generator whose items are its loop variable or tensor methods of
    it that keep the device: the new container holds what the iterated one held, which is returned."""
    if not (isinstance(call.func, cst.Name) and call.func.value in ("tuple", "list") and len(call.args) == 1):
        return None
    generator = call.args[0].value
    if not isinstance(generator, (cst.GeneratorExp, cst.ListComp)) or generator.for_in.inner_for_in is not None \
            or generator.for_in.ifs or not isinstance(generator.for_in.target, cst.Name):
        return None
    item = generator.elt
    while isinstance(item, cst.Call) and isinstance(item.func, cst.Attribute) \
            and item.func.attr.value not in CHAIN_STOPS | HOST_VALUES:
        item = item.func.value
    return generator.for_in.iter if isinstance(item, cst.Name) and item.value == generator.for_in.target.value else None


def _passed(call: cst.Call, parameters, positional: list[str]) -> dict[str, cst.BaseExpression]:
    """What `call` passes for each of `parameters` it passes at all (`call_sites.argument_for`:
    nothing behind `*args`/`**kwargs`)."""
    passed = {parameter: argument_for(call, parameter, positional) for parameter in parameters}
    return {parameter: value for parameter, value in passed.items() if value is not None}


def _is_encoded_tensor_call(value: cst.BaseExpression | None) -> bool:
    """`tokenizer.encode(text, return_tensors="pt")`, `tokenizer.apply_chat_template(messages,
    return_tensors="pt")`: a CPU tensor of token ids, not an encoding."""
    return _is_encoding_call(value) and isinstance(value.func, cst.Attribute) and value.func.attr.value in TENSOR_ENCODERS


def _is_encoding_call(value: cst.BaseExpression | None) -> bool:
    """`tokenizer(text, return_tensors="pt")`, `processor(images=..., return_tensors="pt")`."""
    tensors = keyword(value, "return_tensors") if isinstance(value, cst.Call) else None
    return tensors is not None and isinstance(tensors.value, cst.SimpleString) and tensors.value.evaluated_value == "pt"


def _inline_host_copy(value: cst.BaseExpression, qualified) -> cst.BaseExpression | None:
    """`predicted.cpu()`, `out.argmax(1).cpu().long()`: a tensor copied to the host where it is
    used (tensor methods after the copy keep it there; `.numpy()` or `.item()` make no tensor):
    what is copied (`predicted`), else None."""
    while isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute):
        if copies_to_the_host(value, qualified):
            return value.func.value
        if value.func.attr.value in DEVICE_CHANGING_METHODS | HOST_VALUES or value.func.attr.value not in TENSOR_METHODS:
            return None
        value = value.func.value
    return None


def _names_a_device(call: cst.Call) -> bool:
    """`device=` given, and not `device=None` (the default device: the CPU, as without it); or
    `**tkwargs` spread, which may hold the device (botorch's `{"device": x.device, ...}`)."""
    device = keyword(call, "device")
    return device is not None and not (isinstance(device.value, cst.Name) and device.value.value == "None") or spreads_keywords(call)


def _builds_cpu_tensor(value: cst.BaseExpression | None, qualified) -> bool:
    if not isinstance(value, cst.Call) or _names_a_device(value):
        return False
    return bool(qualified(value.func) & (FACTORY_FUNCTIONS | MOVED_AFTER))


def _method_receiver(value: cst.BaseExpression) -> cst.Name | None:
    """`sample` of `sample.unsqueeze(0).float()`: the name a chain of methods that keep the device
    starts from; None for anything else (a move, `.item()`, a call of a function)."""
    if not isinstance(value, cst.Call):
        return None
    while isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) and value.func.attr.value not in CHAIN_STOPS:
        value = value.func.value
    return value if isinstance(value, cst.Name) else None


class _AttributeStores(cst.CSTVisitor):
    """Names that get an attribute assigned (`bias.data = ...`)."""

    def __init__(self) -> None:
        self.receivers: set[str] = set()

    def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
        if isinstance(node.target, cst.Attribute) and isinstance(node.target.value, cst.Name):
            self.receivers.add(node.target.value.value)


class _LoopsBinding(cst.CSTVisitor):
    """The `for` loops of a scope (not of the functions in it) that bind `name` on `line`."""

    def __init__(self, name: str, line: int, line_of) -> None:
        self.name, self.line, self.line_of = name, line, line_of
        self.found: list[cst.For] = []

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        return False

    def visit_For(self, node: cst.For) -> None:
        if isinstance(node.target, cst.Name) and node.target.value == self.name and self.line_of(node) == self.line:
            self.found.append(node)


class _CudaReferences(cst.CSTVisitor):
    """Does a value name something under `torch.cuda` (`torch.cuda.FloatTensor`)?"""

    def __init__(self, qualified) -> None:
        self.qualified, self.found = qualified, False

    def visit_Attribute(self, node: cst.Attribute) -> None:
        if any(name.startswith("torch.cuda.") for name in self.qualified(node)):
            self.found = True
