"""DF004 on a script guarded by `if cuda:`: inputs follow a model moved with `.cuda()`, but never
what a CUDA tensor-type alias or the moved model itself made (PyTorch-GAN's style, which the
simulator cannot run: these are read, not executed)."""

from __future__ import annotations

import pytest

from devfix.codemods import ConstructorDevice
from tests.conftest import run_devfix

GAN_HEAD = (
    "import numpy as np\nimport torch\nfrom torch import nn\nfrom torch.autograd import Variable\n\n"
    "cuda = True if torch.cuda.is_available() else False\n"
    "generator = nn.Linear(4, 6)\ndiscriminator = nn.Linear(6, 1)\n"
    "if cuda:\n    generator.cuda()\n    discriminator.cuda()\n"
    "Tensor = torch.cuda.FloatTensor if cuda else torch.FloatTensor\n\n\n"
)


def fixed(source: str) -> str:
    return run_devfix(source, rules=[ConstructorDevice]).fixed.decode()


def test_a_cuda_type_alias_and_the_moved_models_outputs_are_not_host_data():
    source = GAN_HEAD + (
        "def one_hot(y, n):\n    table = np.zeros((y.shape[0], n))\n    table[range(y.shape[0]), y] = 1.0\n"
        "    return Variable(Tensor(table))\n\n\n"
        "z = Variable(Tensor(np.random.normal(0, 1, (8, 4))))\n"
        "fake = generator(z).detach()\n"
        "score = torch.mean(discriminator(fake))\n"
        "labels = one_hot(np.arange(8) % 2, 6)\n"
        "score = score + torch.mean(discriminator(labels))\n"
    )
    assert fixed(source) == source


def test_an_input_made_on_the_host_follows_a_model_moved_with_cuda():
    source = GAN_HEAD + "z = torch.from_numpy(np.random.normal(0, 1, (8, 4))).float()\nfake = generator(z)\n"
    assert "z = torch.from_numpy(np.random.normal(0, 1, (8, 4))).to(next(generator.parameters()).device).float()" in fixed(source)


UTILS = (
    "import torch\n\n\ndef causal_mask(n):\n    return torch.triu(torch.ones(n, n), diagonal=1).bool()\n\n\n"
    "def placed_mask(n, device):\n    return torch.triu(torch.ones(n, n, device=device), diagonal=1).bool()\n"
)
ATTENTION = (
    "import torch\nfrom utils import {name}\n\n\ndef attend(scores):\n"
    "    return scores.masked_fill({name}(scores.size(-1){extra}), float('-inf')).softmax(-1)\n\n\n"
    "if __name__ == '__main__':\n    device = torch.device('cpu')\n    print(attend(torch.randn(2, 3, 3).to(device)))\n"
)


def _run_in_project(tmp_path, source):
    from devfix.analysis.project import ProjectIndex
    from devfix.engine import process
    from devfix.fix_policy import FixPolicy

    (tmp_path / "utils.py").write_text(UTILS)
    main = tmp_path / "main.py"
    main.write_text(source)
    return process(source.encode(), str(main), [ConstructorDevice], ProjectIndex(), FixPolicy(apply=True, unsafe=True))


def test_a_helper_of_another_file_that_returns_a_cpu_tensor_is_moved_where_it_meets(tmp_path):
    result = _run_in_project(tmp_path, ATTENTION.format(name="causal_mask", extra=""))
    assert b"scores.masked_fill(causal_mask(scores.size(-1)).to(scores.device), " in result.fixed


def test_a_helper_of_another_file_that_places_its_result_is_left_alone(tmp_path):
    result = _run_in_project(tmp_path, ATTENTION.format(name="placed_mask", extra=", scores.device"))
    assert result.fixed == result.source and not result.findings


BOUND = (
    "import torch\nfrom utils import causal_mask\n\n\ndef attend(scores):\n    mask = causal_mask(scores.size(-1))\n{use}\n\n\n"
    "if __name__ == '__main__':\n    device = torch.device('cpu')\n    print(attend(torch.randn(2, 3, 3).to(device)))\n"
)


def test_a_helper_of_another_file_bound_once_is_moved_where_it_is_bound(tmp_path):
    result = _run_in_project(tmp_path, BOUND.format(use="    return scores.masked_fill(mask, float('-inf'))"))
    assert b"    mask = causal_mask(scores.size(-1)).to(scores.device)\n" in result.fixed


def test_a_helper_of_another_file_whose_result_stays_on_the_host_is_left_alone(tmp_path):
    result = _run_in_project(tmp_path, BOUND.format(use="    print(int(mask.sum()))\n    return scores"))
    assert result.fixed == result.source and not result.findings


WEIGHTS_BEFORE_THE_MODEL = (
    "import torch\nfrom torch import nn\n\n"
    "{device_line}"
    "class_weights = torch.tensor([1.0, 2.0, 0.5])\n"
    "model = nn.Linear(5, 3)\n"
    "{move_model}"
    "x = torch.randn(4, 5)\n"
    "{move_input}"
    "loss = (model(x) * class_weights).mean()\n"
)


def test_weights_meeting_a_model_output_take_the_device_the_model_was_moved_to():
    source = WEIGHTS_BEFORE_THE_MODEL.format(
        device_line='device = torch.device("cuda" if torch.cuda.is_available() else "cpu")\n', move_model="model.to(device)\n",
        move_input="x = x.to(device)\n")
    assert "class_weights = torch.tensor([1.0, 2.0, 0.5], device=device)\n" in fixed(source)


def test_weights_made_before_the_model_never_name_the_model():
    """`model.cuda()` under a flag names no device variable: `next(model.parameters()).device` at the
    weights' line would raise NameError (the model is built after them), so they are left alone."""
    source = WEIGHTS_BEFORE_THE_MODEL.format(
        device_line="use_cuda = torch.cuda.is_available()\n", move_model="if use_cuda:\n    model.cuda()\n",
        move_input="if use_cuda:\n    x = x.cuda()\n")
    after = fixed(source)
    compile(after, "weights.py", "exec")
    assert "class_weights = torch.tensor([1.0, 2.0, 0.5])\n" in after


def test_an_input_made_before_the_model_is_not_placed_with_the_model():
    """`x = torch.randn(...)` on a line before `model = ...` (moved with `.cuda()` under a flag):
    `device=next(model.parameters()).device` there would raise NameError."""
    source = (
        "import torch\nfrom torch import nn\n\nuse_cuda = torch.cuda.is_available()\n"
        "x = torch.randn(4, 5)\nmodel = nn.Linear(5, 3)\nif use_cuda:\n    model.cuda()\nout = model(x)\n"
    )
    after = fixed(source)
    assert "x = torch.randn(4, 5)\n" in after
    assert "next(model.parameters())" not in after.split("model = nn.Linear")[0]


LOOP = (
    "import torch\n\ndevice = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"
    "use_cuda = torch.cuda.is_available()\nbatches = [torch.ones(2, 3)]\n\n"
    "offset = torch.zeros(3)\nfor x in batches:\n{body}\n"
)


def test_a_factory_before_the_loop_takes_the_device_the_batch_is_moved_to_before_they_meet():
    out = fixed(LOOP.format(body="    x = x.to(device)\n    print(torch.relu(x) + offset)"))
    assert "offset = torch.zeros(3, device=device)" in out


def test_a_move_that_may_not_run_or_runs_after_the_meeting_names_no_device():
    for body in ("    if use_cuda:\n        x = x.to(device)\n    print(torch.relu(x) + offset)",  # the CPU path meets it too
                 "    print(torch.relu(x) + offset)\n    x = x.to(device)",
                 "    x = x.cuda()\n    print(torch.relu(x) + offset)"):  # no device name to give the factory
        assert "offset = torch.zeros(3)\n" in fixed(LOOP.format(body=body))


def test_a_distribution_of_fresh_parameters_takes_the_device_of_what_it_scores():
    """`Normal(torch.zeros(d), torch.ones(d)).log_prob(z)`: the distribution's values are where its
    parameters are, so they are made where `z` is."""
    head = "import torch\nfrom torch.distributions import Normal\n\n\n"
    source = head + "def nll(z):\n    prior = Normal(torch.zeros(4), torch.ones(4))\n    return -prior.log_prob(z).sum()\n"
    program = source + "\n\ndevice = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\nprint(nll(torch.ones(2, 4).to(device)))\n"
    assert "prior = Normal(torch.zeros(4, device=z.device), torch.ones(4, device=z.device))" in fixed(program)


def test_an_input_of_a_model_that_moves_after_the_call_stays_on_the_cpu():
    """`z = net(torch.randn(2, 6))` runs the model before `net.to(device)`: on the CPU."""
    source = ("import torch\n\ndevice = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"
              "net = torch.nn.Linear(6, 4)\nz = net(torch.randn(2, 6))\nnet.to(device)\nprint(z)\n")
    assert fixed(source) == source


HANDED = (
    "import argparse\n\nimport torch\nfrom torch import nn\n\n\n{builder}"
    "def evaluate(model, xs):\n    with torch.no_grad():\n        return model(xs).mean().item()\n\n\n"
    "def main(args):\n    model = {model}\n    xs = torch.randn(10, 4)\n    return evaluate(model, xs)\n\n\n"
    "if __name__ == '__main__':\n    parser = argparse.ArgumentParser()\n    parser.add_argument(\"--device\", default=\"cuda\")\n    main(parser.parse_args())\n"
)


def test_input_handed_with_a_moved_model_to_a_function_that_runs_it_follows_the_model():
    for builder, model, device in (
        ("", "nn.Linear(4, 1).to(args.device)", "args.device"),
        ("def build(args):\n    model = nn.Linear(4, 1)\n    model.to(args.device)\n    return model\n\n\n", "build(args)", "args.device"),
        ("def build(device):\n    return nn.Linear(4, 1).to(device)\n\n\n", "build(args.gpu)", "args.gpu"),
    ):
        assert f"    xs = torch.randn(10, 4, device={device})\n" in fixed(HANDED.format(builder=builder, model=model)), model


def test_input_handed_with_a_model_that_stays_on_the_host_is_left_alone():
    for builder, model in (
        ("", "nn.Linear(4, 1)"),
        ("def build(device):\n    return nn.Linear(4, 1).to('cpu')\n\n\n", "build(args.device)"),
        ("def build(args):\n    model = nn.Linear(4, 1)\n    if args.gpu:\n        model.to(args.device)\n    return model\n\n\n", "build(args)"),
    ):
        source = HANDED.format(builder=builder, model=model)
        assert fixed(source) == source, model


HELPER_HANDED = (
    "import torch\nfrom torch import nn\n\ndevice = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n\n\n"
    "def encode(ids):\n    return torch.tensor(ids, dtype=torch.long)\n\n\n"
    "def step(ids, tags, model, criterion):\n{body}    return criterion(model(ids), tags)\n\n\n"
    "model = nn.Embedding(10, 3).to(device)\ncriterion = {loss}\n"
    "loss = step(encode([1, 2]), encode([0, 2]), model, criterion)\n"
)


def test_helper_tensors_handed_to_a_function_that_feeds_the_given_model_move_where_they_are_passed():
    result = fixed(HELPER_HANDED.format(body="", loss="nn.CrossEntropyLoss()"))
    # `ids` meets the model; `tags` meets its output in the parameter-free loss the caller built
    assert "loss = step(encode([1, 2]).to(device), encode([0, 2]).to(device), model, criterion)\n" in result
    assert "    return torch.tensor(ids, dtype=torch.long)\n" in result  # the helper's other callers keep CPU tensors


def test_helper_tensors_handed_to_a_function_that_places_them_or_to_an_unknown_loss_stay():
    placed = HELPER_HANDED.format(body="    ids, tags = ids.to(device), tags.to(device)\n", loss="nn.CrossEntropyLoss()")
    assert fixed(placed) == placed
    # a callable of the user's may bring the output to the host: `tags` is left where it is made
    custom = HELPER_HANDED.format(body="", loss="lambda out, y: (out.cpu().argmax(-1) == y).float().mean()")
    assert "loss = step(encode([1, 2]).to(device), encode([0, 2]), model, criterion)\n" in fixed(custom)


FLAGGED = (
    "import torch\nfrom torch import nn\n\nuse_cuda = torch.cuda.is_available()\n"
    "x = torch.randn(8, 5)\ny = torch.randint(0, 3, (8,))\nmodel = nn.Linear(5, 3)\n"
    "if use_cuda:\n    model = model.cuda()\n{moves}criterion = nn.CrossEntropyLoss()\n"
    "for epoch in range(3):\n    out = model(x)\n    loss = criterion(out, y)\n"
)


def test_inputs_made_before_the_model_exists_move_where_they_are_fed():
    result = fixed(FLAGGED.format(moves=""))
    assert "    out = model(x.to(next(model.parameters()).device))\n" in result
    assert "    loss = criterion(out, y.to(out.device))\n" in result
    assert "x = torch.randn(8, 5)\n" in result  # where it is made, no device can be named yet


def test_inputs_moved_with_the_model_stay_as_they_are():
    source = FLAGGED.format(moves="    x, y = x.cuda(), y.cuda()\n")
    assert fixed(source) == source


LOSS_BUILT_IN_PLACE = (
    "import torch\nfrom torch import nn\n\n"
    'device = torch.device("cuda")\nmodel = nn.Linear(3, 2).to(device)\n'
    "targets = torch.tensor([0, 1])\nloss = {loss}(model(torch.ones(2, 3, device=device)), targets)\n"
)


def test_targets_fed_to_a_loss_built_where_it_is_called_go_where_the_model_was_moved():
    source = LOSS_BUILT_IN_PLACE.format(loss="nn.CrossEntropyLoss()")
    assert "targets = torch.tensor([0, 1], device=device)\n" in fixed(source)


def test_targets_fed_to_a_function_returned_by_a_call_are_left_alone():
    source = LOSS_BUILT_IN_PLACE.format(loss="make_loss()")  # not proven a Module
    assert fixed(source) == source


def test_a_negated_tensor_is_a_tensor_to_align_with_but_a_negated_truth_is_not():
    head = "import torch\nfrom torch import nn\n\n\ndef loss(dists):\n    labels = torch.arange(dists.size(0))\n"
    assert "labels = torch.arange(dists.size(0), device=dists.device)\n" in fixed(head + "    return nn.functional.cross_entropy(-dists, labels)\n" + "\n\nloss(torch.ones(2, 2).cuda())\n")
    source = head + "    return (not dists) == labels\n\n\nloss(torch.ones(2, 2).cuda())\n"
    assert fixed(source) == source


MASK = (
    "import torch\n\n\ndef mask(lengths):\n    ids = torch.arange(0, 4{out})\n    return ids < lengths.unsqueeze(1)\n\n\n"
    "mask(torch.tensor([4, 2]).cuda())\n"
)


def test_a_range_written_into_a_cuda_only_tensor_is_made_where_the_lengths_are():
    fixed_source = fixed(MASK.format(out=", out=torch.cuda.LongTensor(4)"))
    assert "ids = torch.arange(0, 4, dtype=torch.int64, device=lengths.device)\n" in fixed_source


def test_a_range_written_into_another_buffer_is_left_alone():
    source = MASK.format(out=", out=buffer").replace("def mask", "buffer = torch.empty(4, dtype=torch.long)\n\n\ndef mask")
    assert fixed(source) == source


def test_grad_outputs_are_made_where_the_outputs_are():
    source = (
        "import torch\nfrom torch import autograd\n\n\ndef penalty(d_out, x):\n"
        "    return autograd.grad(outputs=d_out, inputs=x, grad_outputs=torch.ones(d_out.size()))[0]\n\n\n"
        "x = torch.ones(2, requires_grad=True).cuda()\npenalty(x * 2, x)\n"
    )
    assert "grad_outputs=torch.ones(d_out.size(), device=d_out.device))" in fixed(source)



SINUSOIDAL_EMBEDDING = """import math
import torch
import torch.nn as nn

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")


class SinusoidalPosEmb(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.dim = dim

    def forward(self, x):
        half_dim = self.dim // 2
        emb = math.log(10000) / (half_dim - 1)
        emb = torch.exp(torch.arange(half_dim) * -emb)
        emb = x[:, None] * emb[None, :]
        return torch.cat((emb.sin(), emb.cos()), dim=-1)


class Denoiser(nn.Module):
    def __init__(self, dim=8):
        super().__init__()
        self.time_mlp = nn.Sequential(SinusoidalPosEmb(dim), nn.Linear(dim, dim), nn.GELU())
        self.net = nn.Linear(2 * dim, dim)

    def forward(self, x, time):
        t = self.time_mlp(time)
        return self.net(torch.cat([x, t], dim=-1))


torch.manual_seed(0)
model = Denoiser().to(device)
x = torch.randn(4, 8).to(device)
t = torch.randint(0, 100, (4,)).float().to(device)
print("RESULT", round(model(x, t).sum().item(), 4))
"""


def test_a_name_still_holding_a_number_is_no_tensor_to_align_with():
    """`emb` is a Python number where `-emb` is read, though the same line rebinds it to a tensor
    (a diffusion model's sinusoidal time embedding): `device=emb.device` would raise AttributeError.
    The range goes where `x` is, the input the Sequential holding the embedding is given."""
    result = fixed(SINUSOIDAL_EMBEDDING)
    assert "emb.device" not in result
    assert result == SINUSOIDAL_EMBEDDING.replace("torch.arange(half_dim)", "torch.arange(half_dim, device=x.device)")


ENCODER_HEAD = (
    "import torch\nfrom transformers import AutoModel, AutoTokenizer\n\n"
    "device = 'cuda' if torch.cuda.is_available() else 'cpu'\n"
    "tokenizer = AutoTokenizer.from_pretrained('gpt2')\nmodel = AutoModel.from_pretrained('gpt2').to(device)\n"
)


def test_an_encodings_fields_move_where_a_moved_model_reads_them():
    source = ENCODER_HEAD + (
        "enc = tokenizer(['a', 'b'], return_tensors='pt', padding=True)\n"
        "ids = enc['input_ids']\n"
        "out = model(ids, attention_mask=enc.attention_mask)\n"
    )
    assert "out = model(ids.to(device), attention_mask=enc.attention_mask.to(device))\n" in fixed(source)


def test_ids_a_generation_loop_grows_move_where_they_are_made():
    source = ENCODER_HEAD + (
        "ids = tokenizer.encode('a', return_tensors='pt')\n"
        "for _ in range(3):\n"
        "    logits = model(ids).logits\n"
        "    ids = torch.cat([ids, logits[:, -1:].argmax(-1)], 1)\n"
        "print(tokenizer.decode(ids[0]), ids.shape[-1], ids.sum())\n"
    )
    assert "ids = tokenizer.encode('a', return_tensors='pt').to(device)\n" in fixed(source)


@pytest.mark.parametrize("other_read", [
    "print(ids.numpy())\n",  # a CUDA tensor refuses numpy
    "print(ids + offsets)\n",  # meets something devfix cannot place
    "save(ids)\n",  # handed to code that may want it on the host
])
def test_grown_ids_read_by_host_code_are_left_alone(other_read):
    source = ENCODER_HEAD + (
        "ids = tokenizer.encode('a', return_tensors='pt')\n"
        "for _ in range(3):\n"
        "    ids = torch.cat([ids, model(ids).logits[:, -1:].argmax(-1)], 1)\n"
    ) + other_read
    assert fixed(source) == source


def test_encoding_fields_rebound_otherwise_or_of_a_rebound_encoding_are_left_alone():
    # `ids` rebound to something else than a join of itself; an encoding bound twice may be the moved one
    source = ENCODER_HEAD + (
        "ids = tokenizer('a', return_tensors='pt').input_ids\n"
        "for _ in range(3):\n"
        "    logits = model(ids).logits\n"
        "    ids = logits[:, -1:].argmax(-1)\n"
        "enc = tokenizer('b', return_tensors='pt')\n"
        "if len(enc['input_ids'][0]) > 1:\n"
        "    enc = tokenizer('b', return_tensors='pt').to(device)\n"
        "out = model(enc['input_ids'])\n"
    )
    assert fixed(source) == source


def test_encoding_fields_for_a_model_left_on_the_host_are_left_alone():
    source = (
        "import torch\nfrom transformers import AutoModel, AutoTokenizer\n\n"
        "tokenizer = AutoTokenizer.from_pretrained('gpt2')\nmodel = AutoModel.from_pretrained('gpt2')\n"
        "enc = tokenizer('a', return_tensors='pt')\nout = model(enc['input_ids'], attention_mask=enc.attention_mask)\n"
    )
    assert fixed(source) == source


HELPER_OF_A_MODEL_ARGUMENT = (
    "import torch\nfrom transformers import AutoModelForCausalLM, AutoTokenizer\n\n"
    "device = 'cuda' if torch.cuda.is_available() else 'cpu'\n"
    "tokenizer = AutoTokenizer.from_pretrained('gpt2')\n"
    "model = AutoModelForCausalLM.from_pretrained('gpt2').to(device)\n"
    "reference = AutoModelForCausalLM.from_pretrained('gpt2')\n\n"
    "def complete(model, prompt):\n"
    "    inputs = tokenizer(prompt, return_tensors='pt')\n"
    "    return model.generate(**inputs, max_new_tokens=5)\n\n"
)


def test_an_encoding_moves_to_the_device_of_a_model_every_caller_moved_and_handed_in():
    source = HELPER_OF_A_MODEL_ARGUMENT + "print(complete(model, 'a'))\nprint(complete(model, 'b'))\n"
    assert "    return model.generate(**inputs.to(next(model.parameters()).device), max_new_tokens=5)\n" in fixed(source)


@pytest.mark.parametrize("calls", [
    "print(complete(reference, 'a'))\n",  # the model it is given stays on the host
    "print(complete(model, 'a'), complete(reference, 'b'))\n",  # not every caller moved it
    "helpers = [complete]\n",  # handed around: its callers are unknown
])
def test_an_encoding_for_a_model_argument_not_proven_moved_is_left_alone(calls):
    source = HELPER_OF_A_MODEL_ARGUMENT + calls
    assert fixed(source) == source


def test_models_moved_in_one_statement_count_as_moved_for_a_helper_given_them():
    source = (
        "import torch\nfrom torch import nn\n\n"
        "device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n\n"
        "def step(encoder, decoder, x):\n"
        "    start = torch.zeros(1, 4)\n"
        "    return decoder(start) + encoder(x)\n\n"
        "encoder, decoder = nn.Linear(4, 4).to(device), nn.Linear(4, 4).to(device)\n"
        "print(step(encoder, decoder, torch.randn(1, 4).to(device)))\n"
    )
    assert "    start = torch.zeros(1, 4, device=next(decoder.parameters()).device)\n" in fixed(source)


@pytest.mark.parametrize("init", [
    "        self.q = nn.Linear(4, 2)\n",  # the agent's network stays on the host
    "        self.q = nn.Linear(4, 2).to(device)\n        self.q = nn.Linear(4, 2)\n",  # stored twice: not proven
])
def test_a_plain_classs_module_output_placed_only_when_proven(init):
    source = (
        "import torch\nfrom torch import nn\n\n"
        "device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n\n"
        "class Agent:\n    def __init__(self):\n" + init +
        "\n    def learn(self, states):\n"
        "        rewards = torch.ones(3)\n"
        "        return rewards + self.q(states).max(1)[0]\n\n"
        "print(Agent().learn(torch.randn(3, 4)))\n"
    )
    assert fixed(source) == source


LOADER = (
    "import torch\nimport torchvision.transforms as T\nfrom PIL import Image\nfrom torch import nn\n\n"
    "device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n\n\n"
    "def load_model():\n    model = nn.Sequential(nn.Conv2d(3, 4, 3), nn.Flatten())\n    model.to(device)\n    return model\n\n\n"
    "def predict(model, path):\n"
    "    transform = T.Compose([T.Resize((8, 8)), T.ToTensor()])\n"
    "    img = transform(Image.open(path).convert('RGB')).unsqueeze(0)\n"
    "    return model(img)\n\n\n"
)


def test_an_image_a_torchvision_transform_made_follows_a_model_a_loader_moved_to_the_global_device():
    result = fixed(LOADER + "m = load_model()\nprint(predict(m, 'a.png'))\n")
    assert "    return model(img.to(next(model.parameters()).device))\n" in result


def test_a_model_a_loader_moved_to_a_device_the_caller_rebinds_is_not_taken_for_moved():
    source = LOADER + "def main(device):\n    m = load_model()\n    return predict(m, 'a.png')\n"
    assert fixed(source) == source


def test_a_count_given_to_multinomial_is_no_tensor_to_meet():
    """vilt's `torch.multinomial(torch.ones(v).float(), max_image_length)`: the count may be an int
    or a 0-dim tensor; the weights meet nothing (`max_image_length.device` would raise on an int)."""
    source = (
        "import torch\nfrom torch import nn\n\n\nclass Embeddings(nn.Module):\n"
        "    def visual_embed(self, x_mask, max_image_length=200):\n"
        "        x_h = x_mask[:, 0].sum(dim=1)[:, 0]\n"
        "        x_w = x_mask[:, 0].sum(dim=2)[:, 0]\n"
        "        patch_index = torch.stack([x_h, x_w], dim=-1).to(device=x_mask.device)\n"
        "        if max_image_length < 0 or not isinstance(max_image_length, int):\n"
        "            effective_resolution = x_h * x_w\n"
        "            max_image_length = effective_resolution.max()\n"
        "        select = [torch.multinomial(torch.ones(v).float(), max_image_length) for v in (5, 3)]\n"
        "        return select, patch_index\n"
    )
    result = run_devfix(source, path="vision.py", rules=[ConstructorDevice])
    assert result.fixed.decode() == source


BEAM = """import torch
from torch import nn

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")


class Decoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.out = nn.Linear(4, 6)

    def step(self, h):
        return self.out(h).log_softmax(-1)


def search(decoder, h, beam=3):
    scores = torch.zeros(beam)
    logp = decoder.{method}(h)
    return scores.unsqueeze(1) + logp


decoder = {built}.to(device)
print(search(decoder, torch.zeros(3, 4, device=device)))
"""


@pytest.mark.parametrize(("method", "built", "fixed"), [
    ("step", "Decoder()", True),  # a method of the file's Module class
    ("encode", "Encoder()", False),  # another class's method may give anything (an array, a list)
])
def test_a_fresh_tensor_beside_what_a_given_models_method_returns(method, built, fixed):
    source = BEAM.format(method=method, built=built)
    if method == "encode":
        source = source.replace("class Decoder(nn.Module):", "from library import Encoder\n\n\nclass Decoder(nn.Module):")
    result = run_devfix(source, rules=[ConstructorDevice])
    assert ("torch.zeros(beam, device=next(decoder.parameters()).device)" in result.fixed.decode()) is fixed


def test_a_factory_in_the_else_of_a_cuda_test_is_on_the_cpu_with_everything_else():
    source = (
        "import torch\nimport torch.nn as nn\n\ndevice = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"
        "model = nn.Linear(2, 2).to(device)\nfor n in range(3):\n    if torch.cuda.is_available():\n"
        "        x = torch.randn(n, 2, device='cuda')\n    else:\n        x = torch.randn(n, 2)\n"
        "    y = torch.randn(n, 2)\n    print(model(x) + model(y))\n"
    )
    fixed = run_devfix(source, rules=[ConstructorDevice]).fixed.decode()
    assert fixed == source.replace("    y = torch.randn(n, 2)\n", "    y = torch.randn(n, 2, device=device)\n")


@pytest.mark.parametrize("line, other_accelerator", [
    ("samples = json.dumps([1, 2])", False),
    ("use_mps = torch.backends.mps.is_available()", True),
    ("parser.add_argument('--no-mps')  # args.no_mps", True),
    ("target = 'xpu:0'", True),
])
def test_the_else_of_a_cuda_test_may_pick_another_accelerator_only_where_the_file_names_one(line, other_accelerator):
    source = (
        f"import torch\n\n{line}\ndevice = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"
        "model = torch.nn.Linear(2, 2).to(device)\nif torch.cuda.is_available():\n"
        "    x = torch.randn(3, 2, device='cuda')\nelse:\n    x = torch.randn(3, 2)\nprint(model(x))\n"
    )
    fixed = run_devfix(source, rules=[ConstructorDevice]).fixed.decode()
    assert ("x = torch.randn(3, 2, device=device)" in fixed) is other_accelerator


@pytest.mark.parametrize("setter", [
    "torch.set_default_device(device)", "torch.set_default_tensor_type('torch.cuda.FloatTensor')",
    "torch.set_default_tensor_type(torch.cuda.FloatTensor if torch.cuda.is_available() else torch.FloatTensor)",
])
def test_factories_under_a_global_default_device_are_made_there(setter):
    source = (
        "import numpy as np\nimport torch\nimport torch.nn as nn\n\ndevice = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"
        f"{setter}\nmodel = nn.Linear(2, 2).to(device)\nfor n in range(3):\n    y = torch.randn(n, 2)\n"
        "    z = torch.Tensor(np.ones((n, 2)))\n    w = torch.from_numpy(np.ones((n, 2), dtype=np.float32))\n"
        "    print(model(y) + model(z) + model(w))\n"
    )
    fixed = run_devfix(source, rules=[ConstructorDevice]).fixed.decode()
    # `torch.from_numpy` shares the array's memory: no default places it
    assert fixed == source.replace("dtype=np.float32))\n", "dtype=np.float32)).to(device)\n")
    cpu_default = run_devfix(source.replace(setter, "torch.set_default_device('cpu')"), rules=[ConstructorDevice]).fixed.decode()
    assert "torch.randn(n, 2, device=device)" in cpu_default


def test_a_tensor_made_from_host_factories_and_parameters_annotated_as_numbers_is_on_the_host():
    source = (
        "import torch\n\n\ndef indices(n: int, scale: float, width: int):\n    x = torch.linspace(1, n, n)\n"
        "    left = torch.floor(x / scale - width / 2)\n    return left.view(n, 1) + torch.linspace(0, width - 1, width).view(1, width)\n\n\n"
        "def place(x, device):\n    return x.to(device)\n"
    )
    result = run_devfix(source, rules=[ConstructorDevice])
    assert not result.findings and result.fixed.decode() == source
    unannotated = source.replace("scale: float", "scale")  # `scale` may be a tensor anywhere
    assert "torch.linspace(0, width - 1, width, device=left.device)" in run_devfix(unannotated, rules=[ConstructorDevice]).fixed.decode()


def test_a_factory_given_device_none_is_made_on_the_default_device():
    head = "import torch\nimport torch.nn as nn\n\ndevice = torch.device('cuda')\nmodel = nn.Linear(3, 3).to(device)\n"
    made = "a = torch.tensor([1.0, 2.0, 3.0], device=None)\nb = torch.tensor([1, 2, 3], dtype=torch.long)\nprint(a * b)\n"
    assert run_devfix(head + made, rules=[ConstructorDevice]).fixed.decode() == head + made  # both on the CPU
    met = "x = torch.randn(2, 3, device=device)\nbias = torch.zeros(3, device=None)\nprint(model(x) + bias)\n"
    assert "bias = torch.zeros(3, device=x.device)\n" in run_devfix(head + met, rules=[ConstructorDevice]).fixed.decode()


CTC = (
    "import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n\ndevice = torch.device('cuda')\n"
    "model = nn.Linear(4, 5).to(device)\n{criterion}\n\n\ndef step(criterion, x, targets, lengths):\n"
    "    log_probs = model(x).log_softmax(2)\n    preds_size = torch.IntTensor([log_probs.size(0)] * log_probs.size(1))\n"
    "    return {loss}\n\n\nprint(step(criterion, torch.randn(6, 2, 4, device=device), torch.randint(1, 5, (2, 3)), torch.tensor([3, 3])))\n"
)


@pytest.mark.parametrize(("criterion", "loss"), [
    ("criterion = nn.CTCLoss(zero_infinity=True).to(device)", "criterion(log_probs, targets, preds_size, lengths)"),
    ("criterion = nn.CTCLoss()", "criterion(log_probs, targets, input_lengths=preds_size, target_lengths=lengths)"),
    ("criterion = None", "F.ctc_loss(log_probs, targets, preds_size, lengths)"),
])
def test_the_lengths_given_to_a_ctc_loss_stay_where_they_are_made(criterion, loss):
    # PyTorch takes them on either device; warp-ctc's loss, often swapped in, wants them on the CPU
    source = CTC.format(criterion=criterion, loss=loss)
    assert "    preds_size = torch.IntTensor([log_probs.size(0)] * log_probs.size(1))\n" in run_devfix(source, rules=[ConstructorDevice]).fixed.decode()
    other = CTC.format(criterion="criterion = nn.MSELoss()", loss="criterion(log_probs.sum(2).float(), preds_size.float())")
    assert "torch.IntTensor([log_probs.size(0)] * log_probs.size(1)).to(" in run_devfix(other, rules=[ConstructorDevice]).fixed.decode()


def test_a_helper_that_returns_a_torch_device_gives_no_tensor_to_place():
    # d2l's `try_gpu()`, handed to a training function with the model: `device = try_gpu().to(net.device)`
    # would call `.to` on a torch.device
    source = (
        "import torch\nimport torch.nn as nn\n\nnet = nn.Sequential(nn.Linear(2, 2))\n\n\n"
        "def try_gpu():\n    if torch.cuda.is_available():\n        device = torch.device('cuda:0')\n"
        "    else:\n        device = torch.device('cpu')\n    return device\n\n\ndevice = try_gpu()\n\n\n"
        "def train(net, data, device):\n    net.to(device)\n    total = torch.tensor([0.0], device=device)\n"
        "    for X, y in data:\n        X, y = X.to(device), y.to(device)\n        total += (net(X) - y).sum()\n    return total\n\n\n"
        "net = net.to(device)\nprint(train(net, [(torch.randn(3, 2), torch.randn(3, 2))], device))\n"
    )
    result = run_devfix(source, rules=[ConstructorDevice])
    assert not result.findings and result.fixed.decode() == source


@pytest.mark.parametrize(("built", "moved"), [
    ("model = nn.Linear(3, 2).to(device)", True),
    ("model = nn.Linear(3, 2)", False),  # every caller keeps the model on the CPU: the helper's batch too
])
def test_a_helper_module_that_places_nothing_follows_the_models_its_callers_move(tmp_path, built, moved):
    (tmp_path / "main.py").write_text(
        "import torch\nimport torch.nn as nn\n\nfrom helpers import show\n\n"
        f"device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n{built}\nprint(show(model, 4))\n"
    )
    source = "import numpy as np\nimport torch\n\nnp.random.seed(0)\n\n\ndef show(model, n):\n    x = torch.from_numpy(np.ones((n, 3), dtype=np.float32))\n    return model(x)\n"
    fixed = run_devfix(source, path=str(tmp_path / "helpers.py"), rules=[ConstructorDevice]).fixed.decode()
    moved_source = source.replace("dtype=np.float32))\n", "dtype=np.float32)).to(next(model.parameters()).device)\n")
    assert fixed == (moved_source if moved else source)



SIZES_TO_A_MODEL = (
    "import torch\nfrom torch import nn\n{model_import}\n{model_class}\n"
    "def run(model, chunks, device):\n    outs = []\n    for spect in chunks:\n        spect = spect.to(device)\n"
    "        sizes = torch.IntTensor([spect.size(1)]).int()\n        outs.append(model(spect, sizes))\n    return outs\n\n\n"
    "def main(use_cuda):\n    device = torch.device('cuda' if use_cuda else 'cpu')\n    model = {model}\n"
    "    return run(model=model, chunks=[torch.randn(2, 5, 3)], device=device)\n"
)
MASKING_MODEL = (
    "\n\nclass Masked(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.fc = nn.Linear(3, 1)\n\n"
    "    def forward(self, x, lengths):\n        mask = torch.arange(x.size(1), device=x.device)[None] < lengths[:, None]\n"
    "        return self.fc(x) * mask[..., None]\n\n"
)


@pytest.mark.parametrize("model_import, model_class, model, moved", [
    ("from speech import load_model", "", "load_model(device=device)", False),  # a forward devfix cannot read
    ("", MASKING_MODEL, "Masked().to(device)", True),  # read: it masks with the lengths on the input's device
])
def test_lengths_made_from_sizes_follow_a_model_only_where_its_forward_is_read(model_import, model_class, model, moved):
    # deepspeech.pytorch's `run_transcribe`: `input_sizes = torch.IntTensor([spect.size(3)]).int()`
    # for a model whose `forward` starts with `lengths = lengths.cpu().int()`, in another file
    source = SIZES_TO_A_MODEL.format(model_import=model_import, model_class=model_class, model=model)
    fixed = run_devfix(source, rules=[ConstructorDevice]).fixed.decode()
    assert ("torch.IntTensor([spect.size(1)]).to(spect.device).int()" in fixed) is moved
    assert moved or fixed == source


def test_a_value_read_by_key_from_a_module_output_is_no_device_reference():
    # detectron2's test_roi_heads: `_, detector_losses = roi_heads(...)` is a dict of losses;
    # `device=detector_losses.device` raised AttributeError
    source = (
        "import torch\nfrom torch import nn\n\n\nclass Heads(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
        "        self.fc = nn.Linear(2, 1)\n\n    def forward(self, x):\n        return x, {'loss_cls': self.fc(x).mean()}\n\n\n"
        "def check(images):\n    heads = Heads()\n    _, losses = heads(images)\n    expected = {'loss_cls': 4.5}\n"
        "    return all(torch.allclose(losses[name], torch.tensor(expected.get(name, 0.0))) for name in losses.keys())\n"
    )
    assert run_devfix(source, rules=[ConstructorDevice]).fixed.decode() == source


@pytest.mark.parametrize("between, moved", [("model_cpu = model.cpu()\n", False), ("model.to('cpu')\n", False), ("", True)])
def test_a_model_brought_back_to_the_cpu_in_place_takes_host_inputs(between, moved):
    # Raschka's ch14: `model = model.to(device)`, training, then `model_cpu = model.cpu()` (in
    # place: a Module's `.cpu()` returns itself) and `model(img.unsqueeze(0))` of dataset images
    source = (
        "import torch\nfrom torch import nn\n\ndevice = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"
        "model = nn.Linear(4, 2)\nmodel = model.to(device)\nprint(model(torch.randn(3, 4).to(device)))\n"
        f"{between}for i in range(3):\n    img = torch.from_numpy(torch.randn(4).numpy())\n    pred = model(img.unsqueeze(0))\n"
    )
    fixed = run_devfix(source, rules=[ConstructorDevice]).fixed.decode()
    assert (fixed != source) is moved


@pytest.mark.parametrize("between, moved", [("model.to('cpu')\n", False), ("", True)])
def test_a_function_given_a_model_brought_back_to_the_cpu_takes_host_inputs(between, moved):
    # Raschka's ch15: `model.to('cpu')`, then `sample(model, starting_str='The island')`
    source = (
        "import torch\nfrom torch import nn\n\ndevice = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n\n\n"
        "def sample(model, ids):\n    encoded = torch.tensor(ids)\n    return model(encoded)\n\n\n"
        "model = nn.Embedding(5, 2)\nmodel = model.to(device)\n"
        f"{between}print(sample(model, [1, 2]))\n"
    )
    fixed = run_devfix(source, rules=[ConstructorDevice]).fixed.decode()
    assert ("torch.tensor(ids, device=next(model.parameters()).device)" in fixed) is moved


@pytest.mark.parametrize("rebound, moved", [
    ("model = model.to(device)\n", True),  # the same Module, moved in place
    ("model = model.to(device)\nmodel = nn.Linear(4, 2)\n", False),  # a new model, left on the CPU
])
def test_a_global_model_rebound_only_to_its_own_move_is_one_moved_model(rebound, moved):
    source = (
        "import numpy as np\nimport torch\nfrom torch import nn\n\ndevice = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"
        f"model = nn.Linear(4, 2)\n{rebound}\n\ndef predict(row):\n    x = torch.from_numpy(row)\n    return model(x)\n\n\n"
        "print(predict(np.ones(4, dtype=np.float32)))\n"
    )
    fixed = run_devfix(source, rules=[ConstructorDevice]).fixed.decode()
    assert ("torch.from_numpy(row).to(device)" in fixed) is moved


QUANTILE = """import numpy as np
import torch


def quantile_loss(pred, target, q):
    if isinstance(pred, np.ndarray):
        pred = torch.from_numpy(pred)
{convert_target}    return 2 * torch.sum(torch.abs((pred - target) * ((target <= pred) * 1.0 - q)))


def crps(pred, target):
    if isinstance(pred, np.ndarray):
        pred = torch.from_numpy(pred)
    if isinstance(target, np.ndarray):
        target = torch.from_numpy(target)
    denominator = torch.sum(torch.abs(target))
    total = torch.tensor(0.0)
    for q in (0.25, 0.5, 0.75):
        q_pred = torch.quantile(pred, q, dim=1)
        loss = quantile_loss(q_pred, target, q)
        total += loss / denominator
    return total.item()
"""


def test_a_helper_converting_numpy_arguments_only_when_given_them_is_no_cpu_helper():
    # PyPOTS' calc_quantile_loss: tensors given pass through untouched, on their device
    convert = "    if isinstance(target, np.ndarray):\n        target = torch.from_numpy(target)\n"
    source = QUANTILE.format(convert_target=convert)
    assert fixed(source) == source.replace("torch.tensor(0.0)", "torch.tensor(0.0, device=denominator.device)")



PAD = """import numpy as np
import torch


def pad_nan(arr, left=0, right=0):
{body}    return arr
"""


def test_a_parameter_rebound_after_the_factory_is_still_where_the_factory_meets_it():
    # PyPOTS' torch_pad_nan before 59211b80: both pads rebind `arr`
    body = ("    if left > 0:\n        arr = torch.cat((torch.full((left,), np.nan), arr))\n"
            "    if right > 0:\n        arr = torch.cat((arr, torch.full((right,), np.nan)))\n")
    fixed_source = fixed(PAD.format(body=body))
    assert "torch.full((left,), np.nan, device=arr.device)" in fixed_source
    assert "torch.full((right,), np.nan, device=arr.device)" in fixed_source


def test_a_parameter_a_loop_rebinds_after_the_factory_may_be_another_value_there():
    body = ("    for _ in range(left):\n        padded = torch.cat((torch.zeros(1), arr))\n        arr = padded.tolist()\n")
    source = PAD.format(body=body)
    assert fixed(source) == source


def test_a_number_parameter_rebound_under_an_if_keeps_its_values_on_the_host():
    # SRGAN-PyTorch's `_calculate_weights_indices`: `kernel_width` divided under `if scale < 1`
    source = (
        "import torch\n\n\ndef weights(out_length: int, scale: float, kernel_width: int):\n"
        "    if scale < 1:\n        kernel_width = kernel_width / scale\n"
        "    x = torch.linspace(1, out_length, out_length)\n    left = torch.floor(x / scale - kernel_width / 2)\n"
        "    return left.view(out_length, 1) + torch.linspace(0, 3, 4).view(1, 4)\n"
    )
    assert fixed(source) == source


def test_a_zero_dim_cpu_tensor_given_to_an_element_wise_maximum_is_left_alone():
    # deepspeech.pytorch's `phi`: `torch.max(r, EPSILON)` with `EPSILON = torch.tensor(1e-10)`
    source = (
        "import torch\n\n\ndef phi(r, order):\n    EPSILON = torch.tensor(1e-10)\n    if order == 1:\n"
        "        r = torch.max(r, EPSILON)\n        return torch.sqrt(r)\n    return 0.5 * r * torch.log(torch.max(r, EPSILON))\n"
    )
    assert fixed(source) == source


def test_factories_of_both_branches_reach_the_meeting_after_them():
    # PyPOTS' ModernTCN `PaddingTwoEdge1d`: the pad is made one way or the other, then meets `x`
    source = (
        "import torch\n\n\ndef pad(x, n, value=0):\n    if value == 0:\n        left = torch.zeros(x.size(0), n)\n"
        "    else:\n        left = torch.ones(x.size(0), n) * value\n    return torch.cat([left, x], dim=-1)\n"
    )
    fixed_source = fixed(source)
    assert "torch.zeros(x.size(0), n, device=x.device)" in fixed_source
    assert "torch.ones(x.size(0), n, device=x.device) * value" in fixed_source


def test_a_tensor_of_one_dimensions_length_is_a_zero_dim_number():
    # transformers' NEFTune hook: `dims` is 0-dim, and `output` is rebound only after it
    source = (
        "import torch\n\n\ndef neftune(module, output, alpha):\n    if module.training:\n"
        "        dims = torch.tensor(output.size(1) * output.size(2))\n        mag_norm = alpha / torch.sqrt(dims)\n"
        "        output = output + torch.zeros_like(output).uniform_(-mag_norm, mag_norm)\n    return output\n"
    )
    assert fixed(source) == source


def test_labels_compared_with_a_method_of_a_moved_models_output_are_placed():
    source = (
        "import torch\nfrom torch import nn\n\ndevice = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"
        "X = torch.randn(40, 5)\ny = torch.randint(0, 3, (40,))\nmodel = nn.Linear(5, 3).to(device)\n"
        "{use}"
    )
    top_level = "preds = model(X.to(device)).argmax(1)\nprint((preds == y).float().mean())\n"
    helper = (
        "\n\ndef evaluate(model, X, y):\n    preds = model(X.to(device)).argmax(1)\n    return (preds == y).float().mean()\n\n\n"
        "print(evaluate(model, X, y))\n"
    )
    for use in (top_level, helper):
        assert "y = torch.randint(0, 3, (40,), device=device)\n" in fixed(source.format(use=use))


def test_a_helper_that_moves_what_it_unpacks_from_a_parameter_places_it_itself():
    source = (
        "import torch\nfrom torch import nn\n\n\ndef step(model, batch, device):\n    inputs, labels = batch\n"
        "    inputs, labels = inputs.to(device), labels.to(device)\n    logits = model(inputs)\n"
        "    return nn.functional.cross_entropy(logits, labels)\n\n\n"
        "device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\nmodel = nn.Linear(4, 3).to(device)\n"
        "batch = (torch.randn(6, 4), torch.tensor([0, 1, 2, 0, 1, 2]))\nprint(step(model, batch, device))\n"
    )
    assert fixed(source) == source


def test_a_number_rebound_to_a_tensor_after_it_meets_a_draw_is_no_reference():
    # Fast_Human_Pose_Estimation's MPII dataset: `s` is a float where `torch.randn(1)` meets it
    source = (
        "import torch\n\n\ndef jitter(a, sf):\n    s = a['scale']\n    if a['person']:\n        s = s * 1.25\n"
        "    s = s * torch.randn(1).mul_(sf).add_(1)[0]\n    return s\n"
    )
    assert fixed(source) == source
    moved = source.replace("    s = a['scale']\n", "    s = torch.as_tensor(a['scale'], device=a['device'])\n")  # a tensor there
    assert "torch.randn(1, device=s.device)" in fixed(moved)


LOOP_CARRIED = (
    "import torch\nfrom torch import nn\n\ndevice = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"
    "net = nn.Linear(2, 2).to(device)\nmasks = torch.ones(3, 2, device=device)\nfor step in range(4):\n"
    "{before}    out = net(masks)\n    masks = torch.FloatTensor([[0.0, 1.0]] * 3)\n"
)


def test_a_value_the_loop_rebuilds_after_feeding_it_to_a_moved_model_is_made_where_the_model_is():
    # pytorch-a2c-ppo-acktr-gail's evaluation: `eval_masks = torch.FloatTensor([...])` after `actor_critic.act(...)`
    assert "    masks = torch.FloatTensor([[0.0, 1.0]] * 3).to(device)\n" in fixed(LOOP_CARRIED.format(before=""))
    rebound_first = LOOP_CARRIED.format(before="    masks = masks.to(device)\n")  # each pass moves it before the call
    assert fixed(rebound_first) == rebound_first


MODEL_MODULE = (
    "import torch\nfrom torch import nn\n\n\nclass VAE(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
    "        self.dec = nn.Linear(3, 12)\n\n    def decode(self, z):\n        return torch.sigmoid(self.dec(z))\n\n"
    "    def describe(self, z):\n        return z.shape\n"
)


def test_a_latent_batch_given_to_a_method_of_a_moved_model_of_another_file_is_made_where_the_model_is(tmp_path):
    from devfix.analysis.project import ProjectIndex
    from devfix.engine import process
    from devfix.fix_policy import FixPolicy

    (tmp_path / "model.py").write_text(MODEL_MODULE)
    main = tmp_path / "main.py"
    for method, placed in (("decode", True), ("describe", False)):  # `describe` hands `z` to no layer
        source = (
            "import torch\nfrom model import VAE\n\ndevice = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"
            f"model = VAE().to(device)\nz = torch.randn(4, 3)\nprint(model.{method}(z))\n"
        )
        main.write_text(source)
        result = process(source.encode(), str(main), [ConstructorDevice], ProjectIndex(), FixPolicy(apply=True, unsafe=True))
        assert ("z = torch.randn(4, 3, device=device)\n" in result.fixed.decode()) is placed


def test_a_table_scaled_in_place_by_a_stack_of_parameter_tensors_is_made_where_they_are():
    source = (
        "import torch\n\n\ndef coefficients(rs: torch.Tensor, rc: torch.Tensor):\n"
        "    c_n = torch.tensor([[6.0, 15.0], [1.0, 2.0]])\n"
        "    c_n *= torch.hstack([(rc - rs).view(1, 1) ** -5, (rc - rs).view(1, 1) ** -4])\n"
        "    return c_n\n"
    )
    result = run_devfix(source, path="switching.py", rules=[ConstructorDevice])
    assert "torch.tensor([[6.0, 15.0], [1.0, 2.0]], device=rc.device)" in result.fixed.decode()
    numbers = source.replace("(rc - rs).view(1, 1) ** -5, (rc - rs).view(1, 1) ** -4", "[1.0, 2.0]")
    assert run_devfix(numbers, path="switching.py", rules=[ConstructorDevice]).fixed.decode() == numbers


SERVER = """import torch
from torch import nn
from flask import Flask

app = Flask(__name__)


@app.route("/")
def route():
    return str(classify([1, 2]))


def classify(tokens):
    seq = torch.tensor(tokens).unsqueeze(0)
    return model(seq).item()


if __name__ == "__main__":
    if torch.cuda.is_available():
        model = nn.EmbeddingBag(8, 1)
    else:
        model = nn.EmbeddingBag(4, 1)
{between}    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model = model.to(device)
    app.run()
"""


@pytest.mark.parametrize("between, moved", [
    ("    model.eval()\n", True),  # set-up only: nothing runs the route before the move
    ("    app.test_client().get('/')\n", False),  # a request served before the move: its ids are right on the CPU
])
def test_a_route_reading_a_model_the_main_block_chose_and_moved_gets_its_inputs_there(between, moved):
    source = SERVER.format(between=between)
    fixed = run_devfix(source, path="server.py", rules=[ConstructorDevice]).fixed.decode()
    assert ("torch.tensor(tokens, device=next(model.parameters()).device)" in fixed) is moved


def test_a_handler_a_ui_is_given_gets_its_inputs_where_the_model_was_moved():
    source = (
        "import gradio as gr\nimport torch\nfrom torch import nn\n\n"
        "model = nn.Linear(2, 3)\nmodel.load_state_dict(torch.load('w.pt', map_location='cpu'))\n"
        "model = model.to('cuda' if torch.cuda.is_available() else 'cpu')\n\n\n"
        "def predict(a, b):\n    x = torch.tensor([[a, b]])\n    return model(x).argmax().item()\n\n\n"
        "gr.Interface(fn=predict, inputs=['number', 'number'], outputs='label').launch()\n"
    )
    fixed = run_devfix(source, path="app.py", rules=[ConstructorDevice]).fixed.decode()
    assert "torch.tensor([[a, b]], device=next(model.parameters()).device)" in fixed


def test_a_library_module_that_runs_its_doctests_is_no_program_that_places_nothing():
    source = (
        "import torch\n\n\ndef at_risk(counts: torch.Tensor) -> torch.Tensor:\n"
        "    return len(counts) - torch.cumsum(torch.cat([torch.tensor([0]), counts]), dim=0)\n\n\n"
        "if __name__ == '__main__':\n    import doctest\n\n    doctest.testmod()\n"
    )
    fixed = run_devfix(source, path="kaplan_meier.py", rules=[ConstructorDevice]).fixed.decode()
    assert "torch.tensor([0], device=counts.device)" in fixed


GENERATION = """import torch
from transformers import AutoModelForCausalLM, AutoTokenizer

device = "cuda" if torch.cuda.is_available() else "cpu"
tokenizer = AutoTokenizer.from_pretrained("gpt2")
model = AutoModelForCausalLM.from_pretrained("gpt2")
{move}
input_ids = torch.tensor([tokenizer.encode("Hello, my dog is")])
out = model.generate(input_ids, max_new_tokens=5)
"""


@pytest.mark.parametrize("move, moved", [("model.to(device)\n", True), ("", False)])
def test_ids_given_to_generate_of_a_moved_pretrained_model_are_made_where_it_is(move, moved):
    fixed = run_devfix(GENERATION.format(move=move), path="generate.py", rules=[ConstructorDevice]).fixed.decode()
    assert ('torch.tensor([tokenizer.encode("Hello, my dog is")], device=device)' in fixed) is moved


SCRIPTED = """import torch
import torch.nn as nn


def jit_compile(model):
    test_input = torch.ones(1, 3, 8, 8)
    scripted = torch.jit.script(model)
    scripted(test_input)
    return scripted


def load(device):
    model = nn.Sequential(nn.Conv2d(3, 4, 3), nn.Flatten())
{move}    return jit_compile(model)
"""


@pytest.mark.parametrize("move, moved", [("    model.to(device)\n", True), ("", False)])
def test_a_warm_up_input_of_a_scripted_model_every_caller_moved_is_made_on_its_device(move, moved):
    # wsinfer's jit_compile before its 0277ddf (scripting under the simulator is not run by the fixtures)
    fixed = run_devfix(SCRIPTED.format(move=move), path="inference.py", rules=[ConstructorDevice]).fixed.decode()
    assert ("torch.ones(1, 3, 8, 8, device=next(model.parameters()).device)" in fixed) is moved



STATIC_EMBEDDING = """import numpy as np
import torch
from torch import nn


class Sinusoidal(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.weights = Sinusoidal.get_embedding(16, dim)

    @staticmethod
    def get_embedding(num_embeddings, embedding_dim, div_half_dim=False):
        half_dim = embedding_dim // 2
        if not div_half_dim:
            emb = {log}(10000) / (half_dim - 1)
        else:
            emb = {log}(1e4) / half_dim
        emb = torch.exp(torch.arange(half_dim, dtype=torch.float) * -emb)
        emb = torch.arange(num_embeddings, dtype=torch.float).unsqueeze(1) * emb.unsqueeze(0)
        return torch.cat([torch.sin(emb), torch.cos(emb)], dim=1).view(num_embeddings, -1)

    def forward(self, x):
        return x + self.weights.to(x.device)[: x.size(1)]


device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
print(Sinusoidal(8).to(device)(torch.zeros(2, 16, 8, device=device)).sum())
"""


@pytest.mark.parametrize("log", ["np.log", "math.log"])
def test_a_name_still_holding_a_numpy_number_is_no_tensor_to_align_with(log):
    """CMT's `emb = np.log(1e4) / half_dim`: a numpy scalar, whose `.device` is "cpu" under numpy 2
    and an AttributeError before; the ranges (all made on the host here) stay as they are."""
    source = STATIC_EMBEDDING.format(log=log).replace("import numpy as np\n", "import math\nimport numpy as np\n")
    result = run_devfix(source, rules=[ConstructorDevice])
    assert result.fixed.decode() == source and not result.findings


SPREAD_KEYWORDS = """import torch


def pivot_rows(pivot, size):
    tkwargs = {{"device": pivot.device, "dtype": pivot.dtype}}
    rows = torch.arange(size, size * 4, size{spread})
    return rows + pivot
"""


def test_a_factory_spreading_keywords_may_be_given_its_device_there():
    """botorch's `torch.arange(..., **tkwargs)` with `tkwargs = {"device": pivot.device, ...}`: an
    added `device=` would raise "got multiple values for keyword argument 'device'"."""
    spread = SPREAD_KEYWORDS.format(spread=", **tkwargs")
    result = run_devfix(spread, rules=[ConstructorDevice])
    assert result.fixed.decode() == spread and not result.findings
    plain = run_devfix(SPREAD_KEYWORDS.format(spread=""), rules=[ConstructorDevice])
    assert "torch.arange(size, size * 4, size, device=pivot.device)" in plain.fixed.decode()


COPY_OF_A_PLACED_TENSOR = """import torch
import torch.nn.functional as F
from torch import Tensor, nn


class PMSNLoss(nn.Module):
    def forward(self, probs: Tensor) -> Tensor:
        power_dist = _power_law_distribution(size=probs.shape[0], exponent=0.25, device=probs.device)
        return F.kl_div(input=probs.log(), target=power_dist, reduction="sum")


def _power_law_distribution(size: int, exponent: float, device: torch.device) -> Tensor:
    k = torch.arange(1, size + 1{placed})
    power_dist = torch.tensor(k ** (-exponent))
    return power_dist / power_dist.sum()
"""


def test_a_helper_copying_a_tensor_it_made_on_a_device_returns_it_there():
    """lightly's `_power_law_distribution`: `torch.tensor(data)` of a tensor keeps the tensor's
    device, so the helper's result needs no `.to(probs.device)` where it is used."""
    placed = COPY_OF_A_PLACED_TENSOR.format(placed=", device=device")
    result = run_devfix(placed, rules=[ConstructorDevice])
    assert result.fixed.decode() == placed and not result.findings
    on_the_host = run_devfix(COPY_OF_A_PLACED_TENSOR.format(placed=""), rules=[ConstructorDevice])
    assert "exponent=0.25, device=probs.device).to(probs.device)" in on_the_host.fixed.decode()



PARAMETER_REBOUND_FROM_TENSORS = """import torch


class OFTLayer(torch.nn.Module):
    def __init__(self, r):
        super().__init__()
        self.oft_r = torch.nn.Parameter(torch.zeros(r, 4, 4))

    def _project_batch(self, oft_r, eps=1e-5):
        eps = eps * 1 / torch.sqrt(torch.tensor(oft_r.shape[0]))
        I = torch.zeros((oft_r.size(1), oft_r.size(1)), device=oft_r.device, dtype=oft_r.dtype).unsqueeze(0)
        diff = oft_r - I
        norm_diff = torch.norm(oft_r - I, dim=(1, 2), keepdim=True)
        mask = (norm_diff <= eps).bool()
        return torch.where(mask, oft_r, I + eps * (diff / norm_diff))
"""


def test_a_number_parameter_rebound_to_a_tensor_is_no_tensor_where_its_binding_reads_it():
    """peft's `eps = eps * 1 / torch.sqrt(torch.tensor(n))` of `eps=1e-5`: the read on the right is the
    float argument, whose `.device` does not exist."""
    fixed = run_devfix(PARAMETER_REBOUND_FROM_TENSORS, rules=[ConstructorDevice]).fixed.decode()
    assert "eps.device" not in fixed


MASK_ALONG_AXIS = (
    "import torch\n\n\ndef mask_along_axis(specgram, mask_param, axis):\n"
    "    value = torch.rand(1) * mask_param\n"
    "    min_value = torch.rand(1) * (specgram.size(axis) - value)\n"
    "    mask_start = (min_value.long()).squeeze()\n"
    "    mask_end = (min_value.long() + value.long()).squeeze()\n"
    "    mask = torch.arange(0, specgram.shape[axis], device=specgram.device)\n"
    "    mask = {meeting}\n"
    "    return specgram.masked_fill(mask, 0.0)\n"
)


@pytest.mark.parametrize("meeting", ["(mask >= mask_start) & (mask < mask_end)", "mask >= mask_start", "mask - mask_end.float()"])
def test_a_squeezed_one_element_draw_is_0_dim_and_meets_a_device_tensor_as_it_is(meeting):
    """torchaudio's `mask_along_axis`: a CUDA tensor accepts a 0-dim CPU tensor beside it, so the
    draws stay on the CPU generator (moving them changes a seeded run's numbers)."""
    source = MASK_ALONG_AXIS.format(meeting=meeting)
    result = run_devfix(source, rules=[ConstructorDevice])
    assert result.fixed.decode() == source and not result.findings


@pytest.mark.parametrize("meeting", ["mask >= min_value", "mask - value.long().view(1)", "(mask >= min_value.long().squeeze(0))"])
def test_a_one_element_draw_that_keeps_its_dimension_is_still_aligned(meeting):
    """A 1-element tensor of one dimension is no 0-dim tensor: CUDA refuses it beside a CUDA tensor."""
    source = MASK_ALONG_AXIS.format(meeting=meeting)
    assert "torch.rand(1, device=specgram.device)" in fixed(source)


def test_a_mask_written_at_a_device_index_that_indexes_a_host_table_stays_on_the_host():
    """catalyst's WARP loss: `msk[j] = False` with `j` read from a device tensor works on the CPU (a
    0-dim index is read as a number); made on the device, `msk` could no longer index the CPU
    `all_labels_idx`."""
    source = (
        "import torch\n\n\ndef sample_negatives(outputs, targets):\n"
        "    all_labels_idx = torch.arange(targets.size(1))\n"
        "    nonzero = torch.nonzero(targets)\n"
        "    picked = []\n"
        "    for i in range(targets.size(0)):\n"
        "        msk = torch.ones(targets.size(1), dtype=torch.bool)\n"
        "        j = nonzero[i, 1]\n"
        "        msk[j] = False\n"
        "        picked.append(all_labels_idx[msk])\n"
        "    return picked\n"
    )
    assert fixed(source) == source


@pytest.mark.parametrize(("call", "met"), [("image.set_data(data)", False), ("image.copy_(data)", False), ("image.add_(data)", True)])
def test_only_a_tensor_method_meets_what_it_is_given(call, met):
    """torchio's `_flip_image`: `image.set_data(data)` of an `Image` (which has `.numpy()`, no device)
    is no tensor method; `image.add_(data)` is, and needs `data` where `image` is."""
    source = (
        "import numpy as np\nimport torch\n\n\ndef flip(image, axes):\n    data = image.numpy()\n"
        "    data = np.ascontiguousarray(np.flip(data, axis=axes))\n    data = torch.as_tensor(data)\n"
        f"    {call}\n    return image\n"
    )
    assert ("device=image.device" in fixed(source)) is met


@pytest.mark.parametrize(("data", "moved"), [("layer_ids + 1", False), ("[1.0, 2.0, 3.0]", True)])
def test_a_legacy_constructor_given_a_tensor_gets_no_move_after_it(data, moved):
    """torchtune's `torch.Tensor(layer_ids + 1)`: given a tensor, the constructor is that tensor on the
    CPU and raises on a GPU; a `.to(layer_ids.device)` after it would fix nothing."""
    source = (
        "import torch\n\n\ndef linear_scale(layer_ids: torch.Tensor, n_layers: int) -> torch.Tensor:\n"
        f"    scales = torch.Tensor({data})\n"
        "    scales = scales * torch.where(layer_ids < n_layers - 1, 0.5, 1.0)\n    return scales / torch.sum(scales)\n"
    )
    assert (".to(layer_ids.device)" in fixed(source)) is moved


@pytest.mark.parametrize(("given", "aligned"), [("lengths.to(device)", True), ("[10, 7, 5]", False)])
def test_a_helper_of_another_file_takes_the_kinds_its_callers_pass(tmp_path, given, aligned):
    """`make_mask(lengths, n)` in `model.py`, never called there, is given a device tensor by
    `train.py`: its `torch.arange(n)` goes where `lengths` is. Given a list, nothing is a tensor."""
    source = "import torch\n\n\ndef make_mask(lengths, max_len):\n    return torch.arange(max_len)[None, :] < lengths[:, None]\n"
    (tmp_path / "train.py").write_text(
        "import torch\n\nfrom model import make_mask\n\ndevice = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"
        f"lengths = torch.tensor([10, 7, 5])\nmask = make_mask({given}, 10)\nprint(mask.sum())\n"
    )
    result = run_devfix(source, str(tmp_path / "model.py"), rules=[ConstructorDevice])
    assert ("torch.arange(max_len, device=lengths.device)" in result.fixed.decode()) is aligned


POOLER = (
    "import torch\nimport torch.nn as nn\n{helper}\n\nclass Pooler(nn.Module):\n"
    "    def __init__(self):\n        super().__init__()\n        self.embed = nn.Embedding(30, 8)\n\n"
    "    def forward(self, ids, lengths):\n        mask = sequence_mask(lengths, ids.size(1))\n"
    "        return (self.embed(ids) * mask.unsqueeze(-1)).sum(1)\n"
)
SEQUENCE_MASK = "def sequence_mask(lengths, max_len):\n    return torch.arange(max_len)[None, :] < lengths[:, None]\n"
POOLER_TRAIN = (
    "import torch\n\nfrom model import Pooler\n\ndevice = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"
    "model = Pooler().to(device)\nids = torch.randint(0, 30, (2, 4))\n{use}\n"
)


@pytest.mark.parametrize(("use", "aligned"), [
    ("out = model(ids.to(device), torch.tensor([4, 2]).to(device))", True),
    ("out = model(ids.to(device), [4, 2])", False),  # a list: nothing is a tensor
    ("run = model\nout = run(ids, torch.tensor([4, 2]))", False),  # an instance handed on: its calls are not all known
])
def test_a_helper_a_model_file_calls_in_forward_takes_the_kinds_the_program_gives_the_model(tmp_path, use, aligned):
    """`Pooler.forward` of `model.py` hands `lengths` to `sequence_mask`; only `train.py` builds and
    calls the model: its calls give `forward`'s parameters their kinds, and so the helper's."""
    (tmp_path / "train.py").write_text(POOLER_TRAIN.format(use=use))
    result = run_devfix(POOLER.format(helper="\n\n" + SEQUENCE_MASK), str(tmp_path / "model.py"), rules=[ConstructorDevice])
    assert ("torch.arange(max_len, device=lengths.device)" in result.fixed.decode()) is aligned


def test_a_helper_of_a_third_file_called_by_a_model_file_takes_the_kinds_the_program_gives(tmp_path):
    """`utils.sequence_mask` ← `model.Pooler.forward` ← `train.py`: two files away from the call."""
    (tmp_path / "train.py").write_text(POOLER_TRAIN.format(use="out = model(ids.to(device), torch.tensor([4, 2]).to(device))"))
    (tmp_path / "model.py").write_text(POOLER.format(helper="\nfrom utils import sequence_mask\n"))
    result = run_devfix("import torch\n\n\n" + SEQUENCE_MASK, str(tmp_path / "utils.py"), rules=[ConstructorDevice])
    assert "torch.arange(max_len, device=lengths.device)" in result.fixed.decode()


def test_an_item_of_a_row_of_a_batch_list_given_to_a_moved_models_helper_is_made_on_its_device():
    """`predict(model, batches[0][0])` with `batches = [(torch.randn(8, 4), ...) for _ in range(3)]`
    and `model` moved: the first item of each row is what `predict` feeds the model."""
    source = (
        "import torch\nimport torch.nn as nn\n\n\ndef predict(model, images):\n    with torch.no_grad():\n"
        "        return model(images).argmax(dim=1)\n\n\n"
        "device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\nmodel = nn.Linear(4, 3).to(device)\n"
        "batches = [(torch.randn(8, 4), torch.randint(0, 3, (8,))) for _ in range(3)]\n"
        "print(predict(model, batches[0][0]))\n"
    )
    assert "(torch.randn(8, 4, device=device), torch.randint(0, 3, (8,)))" in fixed(source)


@pytest.mark.parametrize(("computed", "moved"), [
    ("self.model(inputs)", True),  # a Module the object's `__init__` builds, given a moved input
    ("inputs * 2", True),  # an operation of a moved tensor
    ("self.model(features)", False),  # given the numpy array: nothing says where its output is
])
def test_a_value_given_beside_the_output_of_a_moved_input_to_a_helper_goes_to_that_inputs_device(computed, moved):
    """wrench's meta-weight net: `cross_entropy_with_probs(outputs, meta_target)` puts its two
    parameters together; `outputs` is computed from `inputs = ....to(device)` in a plain class's
    method, so `meta_target = torch.from_numpy(soft_labels)` goes to `device`, named before it."""
    source = (
        "import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n\n\n"
        "def cross_entropy_with_probs(input, target):\n    return (target * F.log_softmax(input, dim=1)).sum(1).mean()\n\n\n"
        "class MetaNet:\n    def __init__(self):\n        self.model = nn.Linear(6, 3)\n\n"
        "    def fit(self, features, soft_labels, device):\n        self.model.to(device)\n"
        "        inputs = torch.tensor(features, dtype=torch.float32).to(device)\n"
        "        meta_target = torch.from_numpy(soft_labels)\n"
        f"        outputs = {computed}\n"
        "        return cross_entropy_with_probs(outputs, meta_target).item()\n"
    )
    assert ("meta_target = torch.from_numpy(soft_labels).to(device)" in fixed(source)) is moved


@pytest.mark.parametrize(("given", "aligned"), [("nn.BCEWithLogitsLoss()", True), ("my_loss", False)])
def test_a_loss_every_caller_builds_in_the_call_puts_its_inputs_together(given, aligned):
    """`train_step(G, D, real, ..., nn.BCEWithLogitsLoss())`: `bce(D(real), torch.ones(n, 1))` meets
    a moved discriminator's output in a torch.nn loss, as with a local `bce = nn.BCEWithLogitsLoss()`;
    a function of the file given instead is no Module."""
    source = (
        "import torch\nimport torch.nn as nn\n\n\ndef my_loss(a, b):\n    return ((a - b) ** 2).mean()\n\n\n"
        "def train_step(D, real, bce):\n    n = real.size(0)\n    return bce(D(real), torch.ones(n, 1))\n\n\n"
        "device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\nD = nn.Linear(4, 1).to(device)\n"
        f"print(train_step(D, torch.randn(8, 4).to(device), {given}))\n"
    )
    assert ("torch.ones(n, 1, device=real.device)" in fixed(source)) is aligned


LISTS_OF_BATCHES = """import torch
from torch import nn


def train(model, xs, ys):
    for x, y in zip(xs, ys):
        loss = nn.functional.mse_loss(model(x), y)
    return loss


device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
model = nn.Linear(3, 1).to(device)
{lists}
train(model, xs, ys)
"""


@pytest.mark.parametrize(("lists", "made_there"), [
    ("xs = [torch.randn(4, 3) for _ in range(5)]\nys = [torch.randn(4, 1) for _ in range(5)]", True),
    # `x` is bound here too: the comprehension's own `x` must not be read as it
    ("x = torch.ones(2)\nxs = [x.float() for x in (torch.randn(4, 3),)]\nys = [torch.randn(4, 1)]", False),
])
def test_lists_of_factories_whose_elements_a_function_feeds_its_moved_model(lists, made_there):
    """`train(model, xs, ys)` running `model(x)` for `x, y in zip(xs, ys)`: the factories each list
    is made of go where the model was moved."""
    result = fixed(LISTS_OF_BATCHES.format(lists=lists))
    assert ("xs = [torch.randn(4, 3, device=device) for _ in range(5)]" in result) is made_there
    assert ("ys = [torch.randn(4, 1, device=device) for _ in range(5)]" in result) is made_there
    if not made_there:
        assert "x = torch.ones(2)\n" in result


SAMPLED_FROM_A_GIVEN_TENSOR = """import torch
from torch import nn


def get_batch(split_data, n=4):
    ix = torch.randint(len(split_data) - 3, (n,))
    x = torch.stack([split_data[i:i + 3] for i in ix])
    y = torch.stack([split_data[i + 1:i + 4] for i in ix])
    return x, y


device = "cuda" if torch.cuda.is_available() else "cpu"
model = nn.Embedding(10, 10).to(device)
data = {data}
xb, yb = get_batch(data)
loss = nn.functional.cross_entropy(model(xb).view(-1, 10), yb.view(-1))
"""


@pytest.mark.parametrize(("data", "moved"), [
    ("torch.tensor([1, 2, 3, 4, 5, 6, 7, 8, 9], dtype=torch.long)", True),
    ("torch.tensor([1, 2, 3, 4, 5, 6, 7, 8, 9], dtype=torch.long).to(device)", False),  # sampled on the device
])
def test_batches_a_helper_samples_from_the_host_tensor_it_is_given_move_where_they_meet_the_model(data, moved):
    """nanoGPT's `get_batch` without its `.to(device)`, given `data = torch.tensor(ids)`: slices of a
    host tensor, stacked on the host."""
    result = fixed(SAMPLED_FROM_A_GIVEN_TENSOR.format(data=data))
    assert ("model(xb.to(device))" in result and "yb.view(-1).to(device)" in result) is moved


SAMPLED_IN_A_FUNCTION = SAMPLED_FROM_A_GIVEN_TENSOR.replace(
    "xb, yb = get_batch(data)\nloss = nn.functional.cross_entropy(model(xb).view(-1, 10), yb.view(-1))\n",
    "{rebinding}\n\ndef train():\n    xb, yb = get_batch(data)\n"
    "    return nn.functional.cross_entropy(model(xb).view(-1, 10), yb.view(-1))\n\n\nprint(train())\n",
)


@pytest.mark.parametrize(("data", "rebinding", "moved"), [
    ("torch.tensor([1, 2, 3, 4, 5, 6, 7, 8, 9], dtype=torch.long)", "", True),
    ("torch.tensor([1, 2, 3, 4, 5, 6, 7, 8, 9], dtype=torch.long).to(device)", "", False),
    ("torch.tensor([1, 2, 3, 4, 5, 6, 7, 8, 9], dtype=torch.long)", "data = data.to(device)", False),
    ("torch.tensor([1, 2, 3, 4, 5, 6, 7, 8, 9], dtype=torch.long)",
     "\ndef place():\n    global data\n    data = data.to(device)\n", False),
])
def test_a_global_host_tensor_a_function_hands_to_the_sampler_is_on_the_host(data, rebinding, moved):
    """`get_batch(data)` in `def train():`, `data` a tensor the top level makes once on the host:
    the batches are on the host there too; not when the top level (or a function declaring it
    `global`) may rebind it on the device."""
    result = fixed(SAMPLED_IN_A_FUNCTION.format(data=data, rebinding=rebinding))
    assert ("model(xb.to(" in result and "yb.view(-1).to(" in result) is moved


SCORED_BY_A_HELPER = """import torch
from torch import nn


def load_data():
    x = torch.randn(8, 5)
    return x, (x[:, 0] > 0).long()


def accuracy(out, y):
    return (out.argmax(1) == y).float().mean().item()


device = "cuda" if torch.cuda.is_available() else "cpu"
model = nn.Linear(5, 2).to(device)
x, y = load_data()
out = model(x.to(device))
loss = nn.functional.cross_entropy(out, y.to(device))
print(accuracy(out, y))
"""


def test_labels_a_helper_returns_on_the_host_move_where_a_scoring_function_meets_them_with_the_output():
    """`accuracy(out, y)` puts its two parameters together; `y` of `x, y = load_data()` is a CPU
    tensor even though the loss was given `y.to(device)` (that moved a copy)."""
    assert "print(accuracy(out, y.to(device)))" in fixed(SCORED_BY_A_HELPER)


DECODED_BY_A_FUNCTION = """import torch
from torch import nn


def generate(model, start, steps):
    idx = torch.tensor([[start]])
    out = []
    for _ in range(steps):
        nxt = model(idx).argmax(-1).item()
        out.append(nxt)
        idx = torch.tensor([[nxt]])
    {rebinding}return out


device = "cuda" if torch.cuda.is_available() else "cpu"
model = nn.Embedding(10, 10).to(device)
print(generate(model, 3, 4))
"""


@pytest.mark.parametrize(("rebinding", "both"), [("", True), ("model = None\n    ", False)])
def test_a_token_a_decoding_loop_makes_after_feeding_the_model_it_was_given_is_made_on_its_device(rebinding, both):
    """`idx = torch.tensor([[nxt]])` at the end of the loop is what `model(idx)` reads from the
    second pass on: made on the model's own device too, when the function never rebinds `model`
    (then `next(model.parameters()).device` may name another model's device there)."""
    result = fixed(DECODED_BY_A_FUNCTION.format(rebinding=rebinding))
    assert "idx = torch.tensor([[start]], device=next(model.parameters()).device)" in result
    assert ("idx = torch.tensor([[nxt]], device=next(model.parameters()).device)" in result) is both


ENSEMBLE = """import torch
from torch import nn

device = "cuda" if torch.cuda.is_available() else "cpu"
members = [nn.Linear(5, 3).to(device) for _ in range(3)]
{change}x = torch.randn(8, 5)
{use}
"""


@pytest.mark.parametrize("use", ["logits = [m(x) for m in members]", "for m in members:\n    print(m(x))"])
@pytest.mark.parametrize(("change", "aligned"), [
    ("", True),
    ("members.append(nn.Linear(5, 3))\n", False),
    ("members[0] = nn.Linear(5, 3)\n", False),
    ("members = [nn.Linear(5, 3), members[0]]\n", False),
])
def test_a_batch_fed_to_each_member_of_a_list_of_moved_models_is_made_on_their_device(use, change, aligned):
    """`m` of `for m in members` (a loop or a comprehension) holds a moved model when the list the
    name holds there was built of moves and nothing changes it in place."""
    result = fixed(ENSEMBLE.format(change=change, use=use))
    assert ("x = torch.randn(8, 5, device=device)" in result) is aligned


def test_members_read_before_the_list_is_rebound_to_moves_stay_where_they_were():
    """`outs = [m(x) for m in models]` before `models = [m.to(device) for m in models]` runs the
    unmoved models."""
    source = ("import torch\nfrom torch import nn\n\ndevice = 'cuda' if torch.cuda.is_available() else 'cpu'\n"
              "models = [nn.Linear(5, 3) for _ in range(2)]\nx = torch.randn(8, 5)\nouts = [m(x) for m in models]\n"
              "models = [m.to(device) for m in models]\nprint([m(x.to(device)) for m in models], outs)\n")
    assert "x = torch.randn(8, 5)\n" in fixed(source)


LATE_TABLE = (
    "import torch\n\n\n"
    "def pick_layers(preds):\n"
    "    layer_of = []\n"
    "    for i, p in enumerate(preds):\n"
    "        layer_of.append({appended})\n"
    "    layer_of = torch.cat(layer_of, dim=0){moved}\n"
    "    scores = torch.cat([p.mean(1) for p in preds], dim=0)\n"
    "    keep = {index}\n"
    "    {use}\n"
    "    return layer_of\n"
)


@pytest.mark.parametrize(("appended", "moved", "index", "use", "expected"), [
    ("torch.ones(p.shape[0]) * i", "", "scores > scores.median()", "layer_of = layer_of[keep]",
     "    layer_of = layer_of.to(keep.device)[keep]\n"),
    ("torch.full((p.shape[0],), i)", "", "scores > scores.median()", "layer_of = layer_of[keep]",
     "    layer_of = layer_of.to(keep.device)[keep]\n"),
    # a table moved already, written to, read by a 0-dim index, or of the predictions themselves: left alone
    ("torch.ones(p.shape[0]) * i", ".to(preds[0].device)", "scores > scores.median()", "layer_of = layer_of[keep]", None),
    ("torch.ones(p.shape[0]) * i", "", "scores > scores.median()", "layer_of[keep] = 0", None),
    ("torch.ones(p.shape[0]) * i", "", "scores.sum().long()", "layer_of = layer_of[keep]", None),
    ("p.argmax(1)", "", "scores > scores.median()", "layer_of = layer_of[keep]", None),
    # written into after the read (pykeen's `edge_picked[edge_number] = True`): a copy would take the writes
    ("torch.ones(p.shape[0]) * i", "", "scores > scores.median()", "layer_of = layer_of[keep]\n    layer_of[0] = 2", None),
    # an index that may be 0-dim: a loop's element (speechbrain's `for k in ...: counts[k]`), an item read by a number
    ("torch.ones(p.shape[0]) * i", "", "scores.argsort()", "for k in keep:\n        print(layer_of[k])", None),
    ("torch.ones(p.shape[0]) * i", "", "scores.argsort()", "top = keep[0]\n    print(layer_of[top])", None),
    # appended with something not made on the host
    ("torch.ones(p.shape[0]) * p.sum()", "", "scores > scores.median()", "layer_of = layer_of[keep]", None),
])
def test_a_table_a_loop_appends_fresh_tensors_to_moves_where_a_later_index_reads_it(appended, moved, index, use, expected):
    """yolov7's `from_which_layer.append(torch.ones(size=(len(b),)) * i)`, concatenated, then
    indexed by `fg_mask_inboxes` computed from the predictions: no device can be named where the
    ones are made, so the table moves where the index reads it."""
    source = LATE_TABLE.format(appended=appended, moved=moved, index=index, use=use)
    result = fixed(source)
    if expected is None:
        assert result == source
    else:
        assert result == source.replace(f"    {use}\n", expected)


def test_a_table_that_may_come_from_elsewhere_is_not_moved_where_it_is_indexed():
    """gliner's `logits`: made by `torch.as_tensor` only when the argument was no tensor."""
    source = (
        "import torch\n\n\ndef pick(layer_of, preds):\n    if not isinstance(layer_of, torch.Tensor):\n"
        "        layer_of = torch.as_tensor(layer_of)\n    scores = torch.cat([p.mean(1) for p in preds], dim=0)\n"
        "    keep = scores > scores.median()\n    return layer_of[keep]\n"
    )
    assert fixed(source) == source
    always = source.replace("    if not isinstance(layer_of, torch.Tensor):\n    ", "")
    assert fixed(always) == always.replace("layer_of[keep]", "layer_of.to(keep.device)[keep]")


def test_a_list_given_to_a_join_is_no_tensor_to_name_a_device_with():
    """pykeen's collate: `target_nnz` is a list of tensors until `torch.cat(target_nnz)` rebinds it;
    the ones made before that cannot be placed with `target_nnz.device`."""
    source = (
        "import torch\n\n\ndef collate(target_nnz):\n    batch_ids = []\n"
        "    for batch_id, size in enumerate(map(len, target_nnz)):\n"
        "        batch_ids.append(torch.full(size=(size,), fill_value=batch_id, dtype=torch.long))\n"
        "    batch_ids = torch.cat(batch_ids)\n    target_nnz = torch.cat(target_nnz)\n"
        "    return torch.stack([batch_ids, target_nnz], dim=-1)\n"
    )
    assert "target_nnz.device" not in fixed(source)


@pytest.mark.parametrize(("draw", "expected"), [
    ("torch.full(delta.shape, 1 - p)", "torch.full(delta.shape, 1 - p, device=delta.device)"),
    ("torch.bernoulli(torch.full(delta.shape, 1 - p))", "torch.bernoulli(torch.full(delta.shape, 1 - p, device=delta.device))"),
])
@pytest.mark.parametrize("loop", ["comprehension", "statement"])
def test_a_factory_meeting_the_item_of_a_list_of_tensors_every_call_gives_is_made_on_its_device(draw, expected, loop):
    """sd-mecha's TIES dropout, `[delta * torch.bernoulli(torch.full(delta.shape, 1 - p)) for delta in
    deltas]`, with `deltas` a list of device tensors at every call."""
    if loop == "comprehension":
        body = f"    return [delta * {draw} for delta in deltas]\n"
    else:
        body = f"    out = []\n    for delta in deltas:\n        out.append(delta * {draw})\n    return out\n"
    source = (
        "import torch\n\ndevice = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n\n\n"
        f"def dropout(deltas, p):\n{body}\n\nx = torch.randn(3, 4, device=device)\ndropout([x, x * 2], 0.1)\n"
    )
    assert fixed(source) == source.replace(draw, expected)


def test_a_comprehension_variable_names_no_device_outside_its_comprehension():
    source = (
        "import torch\n\ndevice = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n\n\n"
        "def scaled(deltas, p):\n    masks = [torch.full(d.shape, p) for d in deltas]\n    return [m * d for m, d in zip(masks, deltas)]\n"
        "\n\nx = torch.randn(3, 4, device=device)\nscaled([x, x * 2], 0.1)\n"
    )
    assert "device=d.device" not in fixed(source)


LOOP_OVER_ROWS = """import torch
import torch.nn as nn

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
model = nn.Linear(4, 3).to(device)
x = torch.randn(2, 4).to(device)
{rows}
for bias in {iterated}:
    print((model(x) + bias).sum().item())
"""


@pytest.mark.parametrize(("rows", "iterated", "made"), [
    ("", "[torch.zeros(2, 3), torch.ones(2, 3)]", "[torch.zeros(2, 3, device=x.device), torch.ones(2, 3, device=x.device)]"),
    ("", "(torch.zeros(2, 3), torch.ones(2, 3))", "(torch.zeros(2, 3, device=x.device), torch.ones(2, 3, device=x.device))"),
    ("biases = [torch.full((2, 3), 0.5), torch.rand(2, 3)]", "biases",
     "biases = [torch.full((2, 3), 0.5, device=x.device), torch.rand(2, 3, device=x.device)]"),
    ("biases = [torch.ones(2, 3) * k for k in range(3)]", "biases", "biases = [torch.ones(2, 3, device=x.device) * k for k in range(3)]"),
])
def test_each_row_a_loop_iterates_is_made_where_the_element_meets_a_device_value(rows, iterated, made):
    """`for bias in [torch.zeros(2, 3), torch.ones(2, 3)]: model(x) + bias`: the loop's element is
    each item of the display (or of the list bound to it, or the comprehension's item) in turn."""
    assert made in fixed(LOOP_OVER_ROWS.format(rows=rows, iterated=iterated))


@pytest.mark.parametrize(("rows", "iterated"), [
    ("", "[torch.zeros(2, 3).to(device), torch.ones(2, 3, device=device)]"),  # placed already
    ("", "[torch.tensor(0.5), torch.tensor(2.0)]"),  # 0-dim: arithmetic takes them on the CPU
    ("k = 2\nbiases = [torch.ones(2, 3) * k for k in range(3)]", "biases"),  # `k` is bound in the scope too: not followed
])
def test_rows_placed_or_that_need_no_device_are_left_alone(rows, iterated):
    source = LOOP_OVER_ROWS.format(rows=rows, iterated=iterated)
    assert fixed(source) == source


SAMPLING = """import torch
import torch.nn as nn

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
model = nn.Sequential(nn.Embedding(50, 16), nn.Linear(16, 50)).to(device)
idx = {start}
for _ in range(5):
    probs = torch.softmax(model(idx)[:, -1, :], dim=-1)
    next_id = {draw}
    idx = torch.cat([idx, next_id], dim=1)
"""


@pytest.mark.parametrize(("start", "draw", "joined"), [
    ("torch.zeros((1, 1), dtype=torch.long, device=device)", "torch.multinomial(probs.cpu(), num_samples=1)",
     "torch.cat([idx, next_id.to(idx.device)], dim=1)"),
    ("torch.zeros((1, 1), dtype=torch.long).to(device)", "probs.cpu().argmax(-1, keepdim=True)", "torch.cat([idx, next_id.to(idx.device)], dim=1)"),
    ("torch.zeros((1, 1), dtype=torch.long, device=device)", "torch.multinomial(probs, num_samples=1)", None),  # on the device already
    ("torch.zeros((1, 1), dtype=torch.long).cpu()", "torch.multinomial(probs.cpu(), num_samples=1)", None),  # both on the host
])
def test_a_token_copied_to_the_host_moves_where_it_is_joined_to_device_ids(start, draw, joined):
    """A sampling loop draws the next token from `probs.cpu()` and grows ids that live on the
    GPU: `torch.cat` takes tensors of one device only, and there is no factory to make elsewhere."""
    source = SAMPLING.format(start=start, draw=draw)
    assert f"    idx = {joined or 'torch.cat([idx, next_id], dim=1)'}\n" in fixed(source)


@pytest.mark.parametrize(("start", "moved"), [("torch.zeros((1, 1), dtype=torch.long, device=device)", True),
                                              ("torch.zeros((1, 1), dtype=torch.long)", False)])
def test_a_token_copied_to_the_host_follows_ids_every_caller_gives_on_a_device(start, moved):
    """`ids` of `def extend(ids, probs, steps)`: on a device where every call passes device ids; a
    caller's host ids (joined on the host, fine) leave the join alone."""
    source = (
        "import torch\nimport torch.nn as nn\n\ndevice = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"
        "model = nn.Linear(4, 50).to(device)\n\n\n"
        "def extend(ids, probs, steps):\n    for _ in range(steps):\n"
        "        next_id = torch.multinomial(probs.cpu(), 1)\n"
        "        ids = torch.cat([ids, next_id], dim=1)\n    return ids\n\n\n"
        f"print(extend({start}, torch.softmax(model(torch.randn(1, 4, device=device)), -1), 3))\n"
    )
    assert ("torch.cat([ids, next_id.to(ids.device)], dim=1)" in fixed(source)) is moved


BUILDER = """import torch
import torch.nn as nn

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")


def build_ensemble(n, dim):
{body}


ensemble = build_ensemble(3, 4)
x = torch.randn(5, 4)
print([member(x) for member in ensemble])
"""


@pytest.mark.parametrize(("body", "placed"), [
    ("    return [nn.Linear(dim, 1).to(device) for _ in range(n)]", True),
    ("    members = []\n    for _ in range(n):\n        members.append(nn.Linear(dim, 1).to(device))\n    return members", True),
    ("    return [nn.Linear(dim, 1).to(device), nn.Linear(dim, 1)]", False),  # one member stays on the CPU
    ("    members = [nn.Linear(dim, 1).to(device)]\n    members.append(nn.Linear(dim, 1))\n    return members", False),
])
def test_members_of_an_ensemble_a_builder_gives_back_moved_are_on_its_device(body, placed):
    """`ensemble = build_ensemble(3, 4)` where every `return` of the file's function is a list of
    moves to one device: `member` of `[member(x) for member in ensemble]` is on that device."""
    assert ("x = torch.randn(5, 4, device=device)" in fixed(BUILDER.format(body=body))) is placed


ACCURACY = """import torch
import torch.nn as nn

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
model = nn.Linear(4, 3).to(device)
correct = 0
for images, labels in [(torch.randn(5, 4), torch.randint(0, 3, (5,)))]:
    images = images.to(device)
{moved}    _, predicted = torch.max(model(images).data, 1)
    correct += {compared}.sum().item()
"""


@pytest.mark.parametrize(("moved", "compared", "fixed_compared"), [
    ("    labels = labels.to(device)\n", "(predicted.cpu() == labels)", "(predicted.cpu() == labels.cpu())"),
    ("    labels = labels.to(device)\n", "(predicted.cpu().long() - labels)", "(predicted.cpu().long() - labels.cpu())"),
    ("", "(predicted.cpu() == labels)", None),  # the labels never left the host: the tutorials' right code
    ("    labels = labels.to(device)\n", "(predicted.cpu().numpy() == labels)", None),  # numpy: DF008's
    ("    labels = labels.to(device)\n", "(predicted.sum().cpu() + labels)", None),  # a 0-dim copy may meet a device tensor
])
def test_a_device_name_compared_with_a_host_copy_is_brought_to_the_host(moved, compared, fixed_compared):
    """`correct += (predicted.cpu() == labels).sum()` is the CIFAR tutorial's accuracy with the
    labels left on the CPU; once the loop moves the labels too, the comparison fails on a GPU."""
    source = ACCURACY.format(moved=moved, compared=compared)
    assert f"    correct += {fixed_compared or compared}.sum().item()\n" in fixed(source)


TARGETS = """import torch
import torch.nn as nn


def ones_for(batch_size):
    return torch.full((batch_size, 1), 1.0)


device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
discriminator = nn.Linear(4, 1).to(device)
probe = nn.Linear(4, 1)
{loss}
samples = torch.randn(16, 4, device=device)
{scored}
"""


@pytest.mark.parametrize(("loss", "scored", "fixed_scored"), [
    ("criterion = nn.BCEWithLogitsLoss()", "loss = criterion(discriminator(samples), ones_for(16))",
     "loss = criterion(discriminator(samples), ones_for(16).to(samples.device))"),
    ("criterion = nn.BCEWithLogitsLoss()", "out = discriminator(samples)\nloss = criterion(out, ones_for(16))",
     "out = discriminator(samples)\nloss = criterion(out, ones_for(16).to(out.device))"),
    ("", "loss = nn.BCEWithLogitsLoss()(discriminator(samples), ones_for(16))",
     "loss = nn.BCEWithLogitsLoss()(discriminator(samples), ones_for(16).to(samples.device))"),
    ("criterion = nn.BCEWithLogitsLoss()", "loss = criterion(probe(samples.cpu()), ones_for(16))", None),  # on the host
    ("criterion = nn.Bilinear(1, 1, 1)", "loss = criterion(discriminator(samples), ones_for(16))", None),  # holds parameters
])
def test_a_helpers_cpu_targets_given_to_a_loss_go_where_its_other_input_is(loss, scored, fixed_scored):
    """`criterion(discriminator(real), adversarial_targets(n))`: a loss that holds no parameters
    has no device of its own, so the CPU tensor a helper returns goes where the other input is;
    a Module that holds parameters and was not moved is no place to infer one from."""
    source = TARGETS.format(loss=loss, scored=scored)
    assert fixed(source).endswith(f"{fixed_scored or scored}\n")


SQUASHED = """import torch
import torch.nn as nn


def train(loader, device):
    net = nn.Linear(5, 4).to(device)
    codes = torch.randn(8, 4)
    for data, targets in loader:
        data, targets = data.to(device), targets.to(device)
        features = {output}
        loss = (features @ codes.t()).mean()
"""


@pytest.mark.parametrize(("output", "placed"), [
    ("torch.tanh(net(data))", True),
    ("torch.sigmoid(net(data).float()).detach()", True),
    ("net(data)", True),
    ('torch.zeros_like(net(data), device="cpu")', False),  # names its own device: the CPU
])
def test_a_factory_made_before_it_meets_a_torch_function_of_a_model_output_is_made_where_the_model_is(output, placed):
    """`features = torch.tanh(net(data))` is where `net` was moved, as `net(data).argmax(1)` is:
    `codes`, drawn before `features` exists, is drawn on that device."""
    assert ("codes = torch.randn(8, 4, device=device)" in fixed(SQUASHED.format(output=output))) is placed


DICT_BATCH = """import torch
import torch.nn as nn

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
model = nn.Linear(4, 3).to(device)
correct = 0
for batch in [{{"pixels": torch.randn(5, 4), "labels": torch.randint(0, 3, (5,))}}]:
{moved}    predicted = model(batch["pixels"].to(device)).argmax(1)
    correct += {compared}.sum().item()
"""


@pytest.mark.parametrize(("moved", "compared", "fixed_compared"), [
    ("    batch = {k: v.to(device) for k, v in batch.items()}\n", '(predicted.cpu() == batch["labels"])',
     '(predicted.cpu() == batch["labels"].cpu())'),
    ("", '(predicted.cpu() == batch["labels"])', None),  # the labels stayed on the host
    ("    batch = {k: v for k, v in batch.items()}\n", '(predicted.cpu() == batch["labels"])', None),  # copied, not moved
])
def test_a_value_of_a_moved_batch_dict_compared_with_a_host_copy_is_brought_to_the_host(moved, compared, fixed_compared):
    """`batch = {k: v.to(device) for k, v in batch.items()}` then `predicted.cpu() == batch["labels"]`:
    the value read by key is on the device, beside a copy the user brought to the host."""
    source = DICT_BATCH.format(moved=moved, compared=compared)
    assert f"    correct += {fixed_compared or compared}.sum().item()\n" in fixed(source)


INLINE_STATE = (
    "import torch\nimport torch.nn as nn\n{helper}\n"
    "device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"
    "lstm = nn.LSTM(4, 8, batch_first=True).to(device)\nx = torch.randn(6, 5, 4).to(device)\n"
    "out, _ = lstm(x, init_state(6, 8))\n"
)
STATE_HELPER = "def init_state(batch, hidden):\n    return torch.zeros(1, batch, hidden), torch.zeros(1, batch, hidden)\n"


@pytest.mark.parametrize("in_another_file", [False, True])
def test_a_tuple_of_host_tensors_a_helper_returns_moves_item_by_item_where_it_is_given_inline(tmp_path, in_another_file):
    """`lstm(x, init_state(6, 8))`: a tuple has no `.to()`; each of its tensors goes to the device."""
    if in_another_file:
        (tmp_path / "states.py").write_text("import torch\n\n\n" + STATE_HELPER)
        source = INLINE_STATE.format(helper="\nfrom states import init_state\n")
    else:
        source = INLINE_STATE.format(helper="\n\n" + STATE_HELPER + "\n")
    result = run_devfix(source, str(tmp_path / "train.py"), rules=[ConstructorDevice]).fixed.decode()
    assert "out, _ = lstm(x, tuple(value.to(device) for value in init_state(6, 8)))\n" in result


@pytest.mark.parametrize(("member", "placed"), [("nn.Linear(4, 2).to(device)", True), ("nn.Linear(4, 2)", False)])
def test_members_of_an_ensemble_a_builder_of_another_file_moved_take_the_batch_there(tmp_path, member, placed):
    (tmp_path / "ensembles.py").write_text(f"import torch.nn as nn\n\n\ndef build(n, device):\n    return [{member} for _ in range(n)]\n")
    source = (
        "import torch\n\nfrom ensembles import build\n\ndevice = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"
        "members = build(3, device)\nx = torch.randn(5, 4)\nouts = [m(x) for m in members]\n"
    )
    result = run_devfix(source, str(tmp_path / "run.py"), rules=[ConstructorDevice]).fixed.decode()
    assert ("x = torch.randn(5, 4, device=device)\n" in result) is placed


WINDOW = """import torch
import torch.nn.functional as F


def gaussian(k, sigma):
    g = torch.tensor([float(x - k // 2) ** 2 / sigma for x in range(k)])
    return g / g.sum()


def create_window(k, channel):
    w = gaussian(k, 1.5).unsqueeze(1)
    return {window}


def blur(img, k):
    channel = img.size(1)
    window = create_window(k, channel)
    return F.conv2d(img, window, padding=k // 2, groups=channel)


device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
out = blur(torch.rand(1, 3, 8, 8).to(device), config["kernel"])
"""


@pytest.mark.parametrize(("window", "moved"), [
    ("w.mm(w.t()).float().unsqueeze(0).unsqueeze(0).expand(channel, 1, k, k).contiguous()", True),  # sizes of a shape method
    ("torch.ones(channel, 1, k, k) / k ** 2", True),  # sizes of a factory: a number it is divided by
    ("torch.ones(channel, 1, 5, 5) / k ** 2", False),  # `k` may be a tensor on any device
    ("torch.ones(channel, 1, 5, 5).to(k.device) / 25", False),  # placed where its parameter is
])
def test_a_helpers_window_built_with_its_size_parameters_moves_where_it_meets_the_image(window, moved):
    """SSIM's `create_window(window_size, channel)`: a parameter given as one of several sizes to a
    torch factory or a shape method is an integer, so what the helper builds with it (`/ k ** 2`),
    and with what another helper of the file returns (`gaussian(k, 1.5)`), is made on the host and
    moves where it meets the image; a parameter never used as a size, which the calls give a value
    of unknown kind, is not proven a number."""
    result = fixed(WINDOW.format(window=window))
    assert ("    window = create_window(k, channel).to(img.device)\n" in result) is moved


ANCHORS = """import torch
import torch.nn as nn


def generate_anchors(h, w, stride=8, sizes=(16, 32)):
    ys, xs = torch.meshgrid(torch.arange(h), torch.arange(w), indexing="ij")
    centers = torch.stack([(xs + 0.5) * stride, (ys + 0.5) * stride], dim=-1).reshape(-1, 2)
    anchors = []
    for s in sizes:
        wh = torch.full_like(centers, float(s))
        anchors.append(torch.cat([centers - wh / 2, centers + wh / 2], dim=-1))
    return torch.cat(anchors, dim=0)


def decode(deltas, anchors):
    return anchors[:, :2] + deltas * (anchors[:, 2:] - anchors[:, :2])


device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
head = nn.Linear(4, 2).to(device)
out = head(torch.randn(18, 4).to(device))
anchors = {anchors}
boxes = decode(out, anchors)
"""


@pytest.mark.parametrize(("anchors", "moved"), [
    ("generate_anchors(3, 3)", True),  # stride and sizes left at their number defaults
    ("generate_anchors(3, 3, 4)", True),  # a number given
    ("generate_anchors(3, 3, stride=out.new_tensor(8.0))", False),  # a tensor of the output's device
])
def test_anchors_a_helper_builds_from_numbers_move_where_they_meet_the_head_output(anchors, moved):
    """A parameter a call leaves at its literal default is that number (`stride=8`), `float(s)` is a
    number whatever `s` is, and a list the helper fills with host tensors is a host list: the
    anchors are made on the host and move where `decode` puts them with the head's output."""
    result = fixed(ANCHORS.format(anchors=anchors))
    assert (f"anchors = {anchors}.to(device)\n" in result) is moved
