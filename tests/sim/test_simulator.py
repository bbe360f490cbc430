"""The simulated CUDA device against real CUDA's behaviour: devices, moves, rules, numbers."""

from __future__ import annotations

import io
import os

os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np  # noqa: E402
import pytest  # noqa: E402
import torch  # noqa: E402
from torch import nn  # noqa: E402
from torch.utils.data import DataLoader, TensorDataset  # noqa: E402

from devfix.sim import SimulatorUnsupported, simulated_cuda  # noqa: E402

SAME_DEVICE = r"Expected all tensors to be on the same device, but found at least two devices, (cuda:0 and cpu|cpu and cuda:0)!"


@pytest.fixture
def cuda():
    with simulated_cuda(device_count=2) as state:
        yield state


def test_availability_and_devices(cuda):
    assert torch.cuda.is_available() and torch.cuda.device_count() == 2
    x = torch.ones(2, device="cuda")
    y = torch.ones(2, device=torch.device("cuda:1"))
    assert x.device == torch.device("cuda:0") and x.is_cuda and x.get_device() == 0
    assert x.device != torch.device("cuda")  # as on real CUDA: an indexed device differs from "cuda"
    assert y.device == torch.device("cuda:1")
    assert repr(x) == "tensor([1., 1.], device='cuda:0')"
    assert "device='cuda:0', requires_grad=True" in repr(torch.ones(1, device="cuda", requires_grad=True))


def test_a_with_block_selects_a_gpu_and_a_negative_index_selects_none(cuda):
    """`with torch.cuda.device(1):` makes "cuda" mean GPU 1 inside the block, as real CUDA does."""
    with torch.cuda.device(1):
        assert torch.cuda.current_device() == 1 and torch.ones(1, device="cuda").device == torch.device("cuda:1")
    assert torch.cuda.current_device() == 0
    with torch.cuda.device(-1):
        assert torch.cuda.current_device() == 0


def test_leaving_the_context_restores_a_cpu_only_torch():
    with simulated_cuda():
        pass
    assert not torch.cuda.is_available()
    with pytest.raises((AssertionError, RuntimeError)):
        torch.ones(1).cuda()


@pytest.mark.parametrize(
    "move",
    [
        lambda t: t.to("cuda"),
        lambda t: t.to(torch.device("cuda", 0)),
        lambda t: t.to(device="cuda:0"),
        lambda t: t.to("cuda", torch.float64),
        lambda t: t.to(torch.ones(1, device="cuda")),
        lambda t: t.to("cuda", non_blocking=True),
        lambda t: t.cuda(),
        lambda t: t.cuda(0),
        lambda t: t.cuda(non_blocking=True),
    ],
)
def test_every_to_signature_lands_on_cuda(cuda, move):
    moved = move(torch.arange(3.0))
    assert moved.device == torch.device("cuda:0")
    assert moved.cpu().tolist() == [0.0, 1.0, 2.0]


def test_to_with_copy_makes_a_copy_on_the_device(cuda):
    x = torch.ones(2, device="cuda")
    copied = x.to(device="cuda:0", non_blocking=True, copy=True)  # what GradScaler does
    assert copied.device == torch.device("cuda:0") and copied is not x
    copied.add_(1)
    assert x.cpu().tolist() == [1.0, 1.0]


def test_grad_scaler_steps_an_optimizer(cuda):
    torch.manual_seed(0)
    model = nn.Linear(2, 1).cuda()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    scaler = torch.amp.GradScaler(enabled=True)
    before = model.weight.detach().cpu().clone()
    scaler.scale(model(torch.ones(3, 2, device="cuda")).sum()).backward()
    scaler.step(optimizer)
    scaler.update()
    assert not torch.equal(model.weight.detach().cpu(), before)


def test_dtype_only_to_keeps_the_device(cuda):
    x = torch.ones(2, device="cuda").to(torch.float16)
    assert x.device.type == "cuda" and x.dtype == torch.float16
    assert x.to("cuda:0") is x


def test_cpu_and_item_and_tolist(cuda):
    x = torch.tensor([1.5, 2.5], device="cuda")
    back = x.cpu()
    assert back.device.type == "cpu" and type(back) is torch.Tensor
    assert x.sum().item() == 4.0 and x.tolist() == [1.5, 2.5]


def test_numpy_raises_the_real_type_error(cuda):
    x = torch.ones(2, device="cuda")
    message = "can't convert cuda:0 device type tensor to numpy. Use Tensor.cpu() to copy the tensor to host memory first."
    with pytest.raises(TypeError) as error:
        x.numpy()
    assert str(error.value) == message
    with pytest.raises(TypeError, match="can't convert cuda:0"):
        np.asarray(x)
    assert x.cpu().numpy().tolist() == [1.0, 1.0]


def test_mixing_devices_raises_the_real_message(cuda):
    with pytest.raises(RuntimeError, match=SAME_DEVICE):
        torch.ones(2, device="cuda") + torch.ones(2)
    with pytest.raises(RuntimeError, match="cuda:0 and cuda:1"):
        torch.ones(2, device="cuda:0") * torch.ones(2, device="cuda:1")


def test_zero_dim_cpu_tensors_join_cuda_tensors_but_not_the_reverse(cuda):
    x = torch.ones(3, device="cuda")
    assert (x * torch.tensor(2.0)).device.type == "cuda"
    assert torch.where(x > 0, x, torch.tensor(0.0)).device.type == "cuda"
    with pytest.raises(RuntimeError, match=SAME_DEVICE):
        torch.ones(3) * torch.tensor(2.0, device="cuda")
    with pytest.raises(RuntimeError, match=SAME_DEVICE):
        torch.tensor(1.0).add_(torch.ones(3, device="cuda"))


def test_non_pointwise_ops_have_no_zero_dim_exemption(cuda):
    with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device"):
        torch.mm(torch.ones(2, 2, device="cuda"), torch.ones(2, 2))
    with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device"):
        torch.cat([torch.ones(1, device="cuda"), torch.ones(1)])


def test_indexing_rules(cuda):
    table = torch.arange(5.0)
    assert torch.arange(5.0, device="cuda")[torch.tensor([1, 2])].tolist() == [1.0, 2.0]
    assert torch.arange(5.0, device="cuda")[torch.tensor([True, False, True, False, True])].device.type == "cuda"
    with pytest.raises(RuntimeError) as error:
        table[torch.tensor([1, 2], device="cuda")]
    assert str(error.value) == "indices should be either on cpu or on the same device as the indexed tensor (cpu)"


def test_assignment_rules(cuda):
    """`x[i] = v` with ints and slices copies across devices; with a tensor index it is
    `index_put_`, whose values must be on `x`'s device unless 0-dim."""
    target, mask = torch.zeros(4, device="cuda"), torch.tensor([True, False, True, False])
    target[0:2] = torch.ones(2)
    target[mask] = torch.tensor(3.0)
    target[mask] = torch.ones(2, device="cuda")
    assert target.tolist() == [1.0, 1.0, 1.0, 0.0]
    host = torch.zeros(4)
    host[1:3] = torch.ones(2, device="cuda")
    with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device"):
        host[mask] = torch.ones(2, device="cuda")
    with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device"):
        target[mask] = torch.ones(2)


def test_conv_input_and_weight_message(cuda):
    conv = nn.Conv2d(1, 1, 3).cuda()
    with pytest.raises(RuntimeError) as error:
        conv(torch.ones(1, 1, 5, 5))
    assert str(error.value).startswith("Input type (torch.FloatTensor) and weight type (torch.cuda.FloatTensor) should be the same")
    cpu_conv = nn.Conv2d(1, 1, 3)
    with pytest.raises(RuntimeError, match=r"Input type \(torch.cuda.FloatTensor\) and weight type \(torch.FloatTensor\)"):
        cpu_conv(torch.ones(1, 1, 5, 5, device="cuda"))


def test_rnn_hidden_state_and_parameters(cuda):
    lstm = nn.LSTM(4, 8).cuda()
    x = torch.randn(5, 2, 4, device="cuda")
    with pytest.raises(RuntimeError) as error:
        lstm(x, (torch.zeros(1, 2, 8), torch.zeros(1, 2, 8)))
    assert str(error.value) == "Input and hidden tensors are not at the same device, found input tensor at cuda:0 and hidden tensor at cpu"
    with pytest.raises(RuntimeError, match="Input and parameter tensors are not at the same device, found input tensor at cpu"):
        lstm(torch.randn(5, 2, 4))
    assert lstm(x)[0].device.type == "cuda"


def test_pack_padded_sequence_lengths_must_stay_on_cpu(cuda):
    x = torch.randn(5, 2, 4, device="cuda")
    packed = nn.utils.rnn.pack_padded_sequence(x, torch.tensor([5, 3]), enforce_sorted=False)
    assert packed.data.device.type == "cuda" and packed.batch_sizes.device.type == "cpu"
    padded, lengths = nn.utils.rnn.pad_packed_sequence(nn.LSTM(4, 3).cuda()(packed)[0])
    assert padded.device.type == "cuda" and lengths.device.type == "cpu"
    with pytest.raises(RuntimeError) as error:
        nn.utils.rnn.pack_padded_sequence(x, torch.tensor([5, 3], device="cuda"), enforce_sorted=False)
    assert str(error.value) == "'lengths' argument should be a 1D CPU int64 tensor, but got 1D cuda:0 Long tensor"


def test_ctc_loss_takes_targets_and_lengths_from_the_cpu(cuda):
    """Real CUDA builds copy CTC targets and lengths where they need them."""
    log_probs = torch.randn(6, 2, 4, device="cuda").log_softmax(2)
    targets, lengths = torch.randint(1, 4, (2, 3)), torch.full((2,), 6, dtype=torch.long)
    loss = nn.CTCLoss()(log_probs, targets, lengths, torch.full((2,), 3, dtype=torch.long))
    assert loss.device.type == "cuda"
    on_the_cpu = nn.CTCLoss()(log_probs.cpu(), targets, lengths, torch.full((2,), 3, dtype=torch.long))
    assert torch.equal(loss.cpu(), on_the_cpu)


def test_a_causal_mask_the_attention_drops_may_stay_on_the_cpu(cuda):
    """As on an H200 (torch 2.11): nn.TransformerEncoder finds a CPU mask causal and tells the
    attention, which hands SDPA the causal flag and never reads the mask. A mask it does read (here
    merged with a key padding mask on the GPU) must be on the GPU."""
    torch.manual_seed(0)
    encoder = nn.TransformerEncoder(nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, batch_first=True), 1).to("cuda")
    tokens = torch.randn(2, 5, 8, device="cuda")
    causal = nn.Transformer.generate_square_subsequent_mask(5)
    assert encoder(tokens, mask=causal).device.type == "cuda"
    assert torch.equal(encoder(tokens, mask=causal).cpu(), encoder(tokens, mask=causal.to("cuda")).cpu())
    padding = torch.tensor([[False] * 5, [False] * 4 + [True]], device="cuda")
    with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device"):
        encoder(tokens, mask=causal, src_key_padding_mask=padding)
    attention = nn.MultiheadAttention(8, 2, batch_first=True).to("cuda")
    with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device"):
        attention(tokens, tokens, tokens, attn_mask=causal)  # need_weights: the mask is read


def test_pinned_memory_works_on_the_simulated_gpu(cuda):
    """A CPU build has no pinned-memory allocator; a machine with a GPU has one."""
    buffer = torch.zeros(3, pin_memory=True)
    assert torch.equal(buffer, torch.zeros(3)) and torch.equal(torch.ones(2).pin_memory(), torch.ones(2))


def test_a_legacy_variable_of_a_cuda_tensor_is_a_detached_alias_on_the_gpu(cuda):
    """`Variable(t)` of pre-0.4 code, which torch builds in C++, out of the simulator's reach."""
    from torch.autograd import Variable

    weights = Variable(torch.randn(3).cuda(), requires_grad=True)
    (weights * 2).sum().backward()
    assert weights.device.type == "cuda" and isinstance(weights, Variable) and torch.equal(weights.grad.cpu(), torch.full((3,), 2.0))
    plain = Variable(torch.ones(2))
    assert plain.device.type == "cpu" and not plain.requires_grad and isinstance(plain, Variable)


def test_type_with_a_cpu_tensor_type_copies_to_the_cpu(cuda):
    """`x.type(torch.FloatTensor)` of a CUDA tensor is a CPU tensor; a dtype keeps the device."""
    x = torch.ones(2, device="cuda")
    assert x.type() == "torch.cuda.FloatTensor"
    assert x.type(torch.FloatTensor).device.type == "cpu" and x.type("torch.LongTensor").dtype == torch.int64
    assert x.type(torch.float64).device.type == "cuda" and torch.ones(1).type("torch.cuda.FloatTensor").device.type == "cuda"
    assert torch.ones(1, dtype=torch.long).type(torch.cuda.FloatTensor).device.type == "cuda"
    with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device"):
        nn.Linear(2, 1).to("cuda")(x.type(torch.FloatTensor))


def test_loss_weight_on_cpu(cuda):
    logits, target = torch.randn(2, 3, device="cuda"), torch.tensor([0, 1], device="cuda")
    with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device"):
        nn.CrossEntropyLoss(weight=torch.ones(3))(logits, target)
    assert nn.CrossEntropyLoss(weight=torch.ones(3)).to("cuda")(logits, target).device.type == "cuda"


def test_cpu_generator_with_cuda_factory(cuda):
    with pytest.raises(RuntimeError, match="Expected a 'cuda' device type for generator but found 'cpu'"):
        torch.randn(2, generator=torch.Generator().manual_seed(0), device="cuda")


def test_module_to_keeps_parameter_objects_and_moves_buffers(cuda):
    model = nn.Sequential(nn.Linear(3, 3), nn.BatchNorm1d(3))
    model[1].register_buffer("extra", torch.zeros(3))
    weight = model[0].weight
    model.to("cuda")
    assert model[0].weight is weight and isinstance(weight, nn.Parameter)
    assert weight.device.type == "cuda" and weight.requires_grad and weight.is_leaf
    assert all(buffer.device.type == "cuda" for buffer in model.buffers())
    model.cpu()
    assert model[0].weight is weight and weight.device.type == "cpu" and isinstance(weight, nn.Parameter)
    model.cuda()
    assert next(model.parameters()).device.type == "cuda"


def _train(device: str, optimizer_class, build_optimizer_first: bool) -> tuple[float, nn.Module]:
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 3))
    optimizer = optimizer_class(model.parameters(), lr=0.05) if build_optimizer_first else None
    model.to(device)
    optimizer = optimizer or optimizer_class(model.parameters(), lr=0.05)
    data = TensorDataset(torch.randn(32, 6), torch.randint(0, 3, (32,)))
    total = 0.0
    for x, y in DataLoader(data, batch_size=8, pin_memory=True):
        x, y = x.to(device, non_blocking=True), y.to(device)
        optimizer.zero_grad()
        loss = nn.functional.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
        total += loss.item()
    return total, model


@pytest.mark.parametrize("optimizer_class", [torch.optim.SGD, torch.optim.Adam, torch.optim.AdamW])
@pytest.mark.parametrize("build_optimizer_first", [True, False])
def test_training_gives_bit_identical_numbers(optimizer_class, build_optimizer_first):
    expected, _ = _train("cpu", optimizer_class, build_optimizer_first)
    with simulated_cuda():
        got, model = _train("cuda", optimizer_class, build_optimizer_first)
        parameter = next(model.parameters())
        assert parameter.device.type == "cuda" and parameter.grad.device.type == "cuda"
    assert got == expected


def test_optimizer_state_lives_on_the_device(cuda):
    _, model = _train("cuda", torch.optim.Adam, False)
    optimizer = torch.optim.Adam(model.parameters())
    nn.functional.mse_loss(model(torch.ones(1, 6, device="cuda")), torch.zeros(1, 3, device="cuda")).backward()
    optimizer.step()
    state = optimizer.state[next(model.parameters())]
    assert state["exp_avg"].device.type == "cuda" and state["step"].device.type == "cpu"


def test_autograd_and_no_grad(cuda):
    w = torch.ones(3, device="cuda", requires_grad=True)
    (w * 2).sum().backward()
    assert w.grad.device.type == "cuda" and w.grad.tolist() == [2.0, 2.0, 2.0]
    with torch.no_grad():
        assert not (w * 2).requires_grad
    leaf = torch.ones(2, requires_grad=True)
    (leaf.cuda() * 3).sum().backward()
    assert leaf.grad.tolist() == [3.0, 3.0]


def test_save_and_load_with_every_map_location(cuda):
    buffer = io.BytesIO()
    torch.save({"w": torch.arange(3.0, device="cuda"), "c": torch.ones(1)}, buffer)
    cases = [
        (None, "cuda", "cpu"),
        ("cpu", "cpu", "cpu"),
        ("cuda", "cuda", "cuda"),  # a device map_location moves every storage, CPU ones too
        (torch.device("cuda:0"), "cuda", "cuda"),
        (lambda storage, location: storage.cuda(0), "cuda", "cuda"),  # a hook that moves each storage
        (lambda storage, location: storage, "cpu", "cpu"),
        ({"cuda:0": "cpu"}, "cpu", "cpu"),
    ]
    for map_location, expected_w, expected_c in cases:
        buffer.seek(0)
        loaded = torch.load(buffer, map_location=map_location)
        assert loaded["w"].device.type == expected_w and loaded["w"].tolist() == [0.0, 1.0, 2.0]
        assert loaded["c"].device.type == expected_c


def test_cuda_checkpoint_fails_on_a_cpu_only_machine_without_map_location():
    buffer = io.BytesIO()
    with simulated_cuda():
        torch.save(nn.Linear(2, 2).cuda().state_dict(), buffer)
    buffer.seek(0)
    with pytest.raises(RuntimeError, match="Attempting to deserialize object on a CUDA device"):
        torch.load(buffer)
    buffer.seek(0)
    assert torch.load(buffer, map_location="cpu")["weight"].device.type == "cpu"


def test_load_state_dict_into_a_moved_model(cuda):
    source = nn.Linear(2, 2)
    target = nn.Linear(2, 2).cuda()
    target.load_state_dict(source.state_dict())
    assert target.weight.device.type == "cuda" and torch.equal(target.weight.cpu(), source.weight.detach())


def test_unsupported_features_say_so(cuda):
    with pytest.raises(SimulatorUnsupported, match="torch.cuda.Stream"):
        torch.cuda.Stream()
    with pytest.raises(SimulatorUnsupported, match="torch.cuda.FloatTensor"):
        torch.cuda.FloatTensor(torch.ones(1))
    with pytest.raises(SimulatorUnsupported, match="set_default_device"):
        torch.set_default_device("cuda")
    for cuda_type in ("torch.cuda.FloatTensor", torch.cuda.FloatTensor):
        with pytest.raises(SimulatorUnsupported, match=r"set_default_tensor_type\(torch\.cuda\.FloatTensor\)"):
            torch.set_default_tensor_type(cuda_type)
    with pytest.raises(RuntimeError, match="invalid device ordinal"):
        torch.ones(1, device="cuda:5")


def test_parameter_built_from_a_cuda_tensor_trains_on_the_cpu_data(cuda):
    class Scale(nn.Module):
        def __init__(self):
            super().__init__()
            self.weight = nn.Parameter(torch.ones(3, device="cuda"))

    model = Scale()
    assert [name for name, _ in model.named_parameters()] == ["weight"]
    (model.weight * torch.full((3,), 2.0, device="cuda")).sum().backward()
    assert model.weight.grad.tolist() == [2.0, 2.0, 2.0]
    torch.optim.SGD(model.parameters(), lr=1.0).step()
    assert model.weight.device.type == "cuda" and model.weight.tolist() == [-1.0, -1.0, -1.0]


def test_deepcopy_of_a_moved_module(cuda):
    import copy

    model = nn.Linear(2, 2).cuda()
    twin = copy.deepcopy(model)
    assert twin.weight is not model.weight and twin.weight.device.type == "cuda"
    assert isinstance(twin.weight, nn.Parameter) and torch.equal(twin.weight.cpu(), model.weight.cpu())


def test_zero_dim_gpu_indices_index_a_cpu_tensor(cuda):
    """As on an H200 (torch 2.11): the forum's `confusion[t, p] += 1` with `t, p` elements of GPU tensors."""
    confusion = torch.zeros(3, 3)
    t, p = torch.tensor([2], device="cuda")[0], torch.tensor([1], device="cuda")[0]
    confusion[t.long(), p.long()] += 1
    assert confusion[2, 1].item() == 1.0 and confusion.device.type == "cpu"
    with pytest.raises(RuntimeError, match="indices should be either on cpu"):
        confusion[torch.tensor([2], device="cuda"), torch.tensor([1], device="cuda")] += 1


def test_legacy_cuda_constructors_build_on_the_simulated_gpu(cuda):
    filled = torch.cuda.FloatTensor(8, 1).fill_(1.0)
    assert filled.device.type == "cuda" and filled.dtype == torch.float32 and filled.shape == (8, 1)
    drawn = torch.cuda.FloatTensor(np.ones((2, 3)))  # float64 data made float32, as the legacy type does
    assert drawn.device.type == "cuda" and drawn.dtype == torch.float32 and torch.equal(drawn.cpu(), torch.ones(2, 3))
    assert torch.cuda.LongTensor([1, 2]).dtype == torch.int64
    assert torch.ones(1).type(torch.cuda.FloatTensor).device.type == "cuda"


class _MovedItems(torch.utils.data.Dataset):
    def __len__(self):
        return 4

    def __getitem__(self, i):
        return torch.full((2,), float(i)).to("cuda")


def test_a_worker_forked_after_the_program_used_the_gpu_cannot_use_cuda(cuda):
    items = DataLoader(_MovedItems(), batch_size=2, num_workers=1)
    assert [batch.sum().item() for batch in DataLoader(_MovedItems(), batch_size=2)] == [2.0, 10.0]  # no workers
    with pytest.raises(RuntimeError, match="Cannot re-initialize CUDA in forked subprocess"):
        list(items)  # the batches above placed tensors on the GPU before the workers forked


def test_a_worker_forked_before_any_gpu_use_may_place_items(cuda):
    pid = os.fork()
    if pid == 0:  # the child: CUDA was never used before the fork
        os._exit(0 if torch.ones(1).to("cuda").is_cuda else 1)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0


def test_a_0_dim_cpu_tensor_in_a_size_is_read_as_an_int(cuda):
    """speechbrain's warping: `F.interpolate(x, (w, n))` with `w` a 0-dim CPU tensor runs on real
    CUDA (an int list reads `__index__`); a list of tensors (`torch.cat`) still meets devices."""
    x = torch.rand(2, 1, 40, 8, device="cuda")
    w = torch.randint(5, 30, (1,))[0]
    out = torch.nn.functional.interpolate(x, (w, 8), mode="bilinear", align_corners=True)
    assert out.device == torch.device("cuda:0") and out.shape == (2, 1, int(w), 8)
    with pytest.raises(RuntimeError, match=SAME_DEVICE):
        torch.cat([torch.ones(2, device="cuda"), torch.ones(2)])


def test_factories_read_gpu_numbers_and_make_cpu_tensors(cuda):
    """TTS's guided attention mask: `torch.arange(olen)` with `olen` an element of a GPU tensor is
    on the CPU on real CUDA (a factory reads a number; only `device=` places it), and then meets
    the 0-dim GPU `olen` in `grid / olen`."""
    olen = torch.tensor([4, 3], device="cuda")[0]
    for made in (torch.arange(olen), torch.zeros(olen), torch.full((2,), olen), torch.linspace(0, olen, 3), torch.randperm(olen)):
        assert made.device.type == "cpu"
    assert torch.arange(olen).tolist() == [0, 1, 2, 3] and torch.full((2,), olen).tolist() == [4, 4]
    assert torch.arange(olen, device="cuda").device.type == "cuda"
    with pytest.raises(RuntimeError, match=SAME_DEVICE):
        torch.arange(olen).float() / olen


def test_slice_bounds_on_the_gpu_are_read_as_ints(cuda):
    """`masks[i, :olen, :ilen] = mask` on a CPU tensor, with GPU lengths: a slice reads its bounds."""
    masks = torch.zeros(2, 5, 5)
    ilen, olen = torch.tensor([3], device="cuda")[0], torch.tensor([4], device="cuda")[0]
    masks[0, :olen, :ilen] = torch.ones(4, 3)
    assert masks.sum().item() == 12.0 and masks.device.type == "cpu"
    assert torch.ones(6, device="cuda")[:olen].shape == (4,)
