# memfmt.Trainer: a ResNet-18 training step compiled from Python
# (memfmt.compile(..., train=True)); its state_dict loads into torchvision's
# resnet18 (strict); one step's loss and SGD update (momentum, weight decay)
# against torch.optim.SGD on the same weights and data; a DataLoader whose
# collate_fn yields channels-last batches feeds it without a conversion;
# save() and memfmt.load(weights=) resume where it stopped; state-dict
# errors; SGD with dampening (its step count saved and resumed); the
# mixed-precision step (precision="bf16") keeps an f32 state_dict.
#
# REQUIRES: python-package, pytest, torch, memfmt-compile
# UNSUPPORTED: sanitizer
# RUN: env PYTHONPATH=%memfmt_python MEMFMT_BIN=%memfmt_bin %python -m pytest -q -p no:cacheprovider %s
import copy

import numpy as np
import pytest
import torch
import torchvision

import memfmt
from conftest import rel_error

LR, MOMENTUM, WEIGHT_DECAY = 0.01, 0.9, 1e-4
N, H, W = 2, 64, 64


@pytest.fixture(scope="module")
def trainer():
    t = memfmt.compile("resnet18", train=True, batch=N, height=H, width=W,
                       weights="synthetic:1", lr=LR, momentum=MOMENTUM,
                       weight_decay=WEIGHT_DECAY)
    yield t
    t.close()


def data(seed):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(N, 3, H, W, generator=g)
    y = torch.randint(0, 1000, (N,), generator=g)
    return x, y


def channels_last_collate(samples):
    x = torch.stack([s[0] for s in samples])
    y = torch.stack([s[1] for s in samples])
    return x.contiguous(memory_format=torch.channels_last), y


def test_step_matches_torch_sgd(trainer):
    torch_model = torchvision.models.resnet18()
    torch_model.load_state_dict(trainer.state_dict(), strict=True)
    torch_model.train()
    optimizer = torch.optim.SGD(torch_model.parameters(), lr=LR,
                                momentum=MOMENTUM, weight_decay=WEIGHT_DECAY)
    x, y = data(0)
    loader = torch.utils.data.DataLoader(
        list(zip(x, y)), batch_size=N, collate_fn=channels_last_collate)
    for xb, yb in loader:
        loss = trainer.step(xb, yb)
        # The batch entered the channels-last step as it is.
        assert trainer.last_run.conversions == 0
        assert trainer.last_run.input_addresses[0] == xb.data_ptr()
        optimizer.zero_grad()
        reference = torch.nn.functional.cross_entropy(torch_model(xb), yb)
        reference.backward()
        optimizer.step()
    assert abs(loss - reference.item()) <= 1e-4 * abs(reference.item())
    state = trainer.state_dict()
    assert trainer.steps == 1
    assert int(state["bn1.num_batches_tracked"]) == 1
    for name, want in torch_model.state_dict().items():
        if name.endswith("num_batches_tracked"):
            continue
        assert rel_error(state[name].numpy(), want.numpy()) <= 1e-3, name


def test_save_and_resume(trainer, tmp_path):
    path = tmp_path / "checkpoint.safetensors"
    trainer.save(path)
    resumed = memfmt.load(trainer.directory, weights=str(path))
    assert isinstance(resumed, memfmt.Trainer)
    assert resumed.steps == trainer.steps
    before = trainer.state_dict(numpy=True)
    for name, value in resumed.state_dict(numpy=True).items():
        np.testing.assert_array_equal(value, before[name], err_msg=name)
    # The momentum buffers came along: the next steps agree too.
    x, y = data(1)
    a, b = trainer.step(x, y), resumed.step(x, y)
    assert a == pytest.approx(b, rel=1e-6)
    resumed.close()


def test_state_dict_errors(trainer):
    state = trainer.state_dict()
    state.pop("fc.bias")
    state["extra"] = torch.zeros(1)
    with pytest.raises(KeyError, match=r"missing \['fc.bias'\], unexpected "
                       r"\['extra'\]"):
        trainer.load_state_dict(state)
    good = copy.deepcopy(trainer.state_dict())
    good["fc.weight"] = torch.zeros(3, 3)
    with pytest.raises(ValueError, match="parameter 'fc.weight' has shape "
                       r"\[1000, 512\], got \[3, 3\]"):
        trainer.load_state_dict(good)


def test_wrong_targets(trainer):
    x, y = data(2)
    with pytest.raises(TypeError, match=r"input 1 \('input_1'\) has dtype "
                       "float32; the model takes int64"):
        trainer.step(x, y.float())


def test_dampening_counts_steps_and_resumes(tmp_path):
    # dampening with momentum: the step count is optimizer state, saved
    # beside the momentum buffers and out of the state dict; a resumed
    # trainer's next step is a later step, bit for bit the uninterrupted
    # one's; the damped steps match torch.optim.SGD.
    damped = memfmt.compile("resnet18", train=True, batch=N, height=H,
                            width=W, weights="synthetic:2", lr=LR,
                            momentum=MOMENTUM, dampening=0.25,
                            weight_decay=WEIGHT_DECAY)
    info = {p.name: p for p in damped.parameters()}["optimizer.step"]
    assert (info.dtype, info.shape, info.zero_init) == ("i64", (), True)
    torch_model = torchvision.models.resnet18()
    torch_model.load_state_dict(damped.state_dict(), strict=True)
    torch_model.train()
    optimizer = torch.optim.SGD(torch_model.parameters(), lr=LR,
                                momentum=MOMENTUM, dampening=0.25,
                                weight_decay=WEIGHT_DECAY)
    # Data on which the step is well conditioned: with data(3), one of
    # layer1.0's relus sits within f32 rounding of zero, and torch's own
    # gradient of layer1.0.bn1.bias moves by 3e-3 when its weights are
    # scaled by 1 + 1e-6 noise (memfmt's on AVX2 by as much); with data(4)
    # and data(6) such noise moves no gradient by more than 2.1e-5.
    batches = [data(4), data(6)]
    damped.step(*batches[0])
    assert damped.read_parameter("optimizer.step") == 1
    path = tmp_path / "damped.safetensors"
    damped.save(path)
    resumed = memfmt.load(damped.directory, weights=str(path))
    assert resumed.read_parameter("optimizer.step") == 1
    for x, y in batches:
        optimizer.zero_grad()
        torch.nn.functional.cross_entropy(torch_model(x), y).backward()
        optimizer.step()
    damped.step(*batches[1])
    resumed.step(*batches[1])
    assert damped.read_parameter("optimizer.step") == 2
    state, again = damped.state_dict(numpy=True), resumed.state_dict(
        numpy=True)
    for name, want in torch_model.state_dict().items():
        np.testing.assert_array_equal(again[name], state[name], err_msg=name)
        if not name.endswith("num_batches_tracked"):
            assert rel_error(state[name], want.numpy()) <= 1e-3, name
    names = {p: n for n, p in torch_model.named_parameters()}
    for p, s in optimizer.state.items():
        got = damped.read_parameter(names[p] + ".momentum_buffer")
        assert rel_error(got, s["momentum_buffer"].numpy()) <= 1e-3, names[p]
    # The checkpoint (optimizer state included) compiles for inference: the
    # inference model ignores the momentum buffers and the step count.
    inference = memfmt.compile("resnet18", batch=N, height=H, width=W,
                               weights=str(path))
    assert inference.run(batches[0][0]).shape == (N, 1000)
    inference.close()
    resumed.close()
    damped.close()


def test_grad_scaler(tmp_path):
    # grad_scaler=: GradScaler's state is optimizer state (out of the state
    # dict); in f32 a power-of-two scale changes no bit of the step; the
    # scale grows after growth_interval finite steps; bad arguments are
    # refused before anything is compiled.
    kwargs = dict(train=True, batch=N, height=H, width=W,
                  weights="synthetic:5", lr=LR, momentum=MOMENTUM,
                  weight_decay=WEIGHT_DECAY)
    plain = memfmt.compile("resnet18", **kwargs)
    scaled = memfmt.compile("resnet18", grad_scaler={"init_scale": 1024.0,
                                                     "growth_interval": 2},
                            **kwargs)
    info = {p.name: p for p in scaled.parameters()}
    assert (info["grad_scaler.scale"].dtype, info["grad_scaler.scale"].shape,
            info["grad_scaler.scale"].zero_init) == ("f32", (), True)
    assert info["grad_scaler.growth_tracker"].dtype == "i64"
    for seed in (4, 6):
        plain.step(*data(seed))
        scaled.step(*data(seed))
    assert scaled.read_parameter("grad_scaler.scale") == 2048.0
    assert scaled.loss_scale == 2048.0 and plain.loss_scale is None
    assert scaled.read_parameter("grad_scaler.growth_tracker") == 0
    state = scaled.state_dict(numpy=True)
    assert not any(name.startswith("grad_scaler") for name in state)
    for name, want in plain.state_dict(numpy=True).items():
        np.testing.assert_array_equal(state[name], want, err_msg=name)
    scaled.close()
    plain.close()
    with pytest.raises(ValueError, match="unknown argument"):
        memfmt.compile("resnet18", grad_scaler={"scale": 2.0}, **kwargs)
    with pytest.raises(memfmt.CompileError, match="must be > 1"):
        memfmt.compile("resnet18", grad_scaler={"growth_factor": 0.5},
                       **kwargs)


def test_safetensors_round_trip_and_errors(tmp_path):
    """Trainer.save writes with the runtime's encoder (memfmt._memfmt):
    float32 and int64 tensors, 0-d ones included, come back exactly; any
    other dtype and an unreadable file raise."""
    from memfmt._memfmt import read_safetensors, write_safetensors
    path = str(tmp_path / "t.safetensors")
    tensors = {"w": np.arange(6, dtype=np.float32).reshape(2, 3).T,
               "optimizer.step": np.array(2**40 + 3, np.int64),
               "b": np.float32([1.5, -0.0])}
    write_safetensors(path, tensors)
    back = read_safetensors(path)
    assert sorted(back) == sorted(tensors)
    for name, value in tensors.items():
        assert back[name].dtype == value.dtype
        assert back[name].shape == value.shape
        np.testing.assert_array_equal(back[name], value)
    with pytest.raises(ValueError, match="'w' is float64|w is float64"):
        write_safetensors(path, {"w": np.zeros(2)})
    with pytest.raises(RuntimeError, match="missing.safetensors"):
        read_safetensors(str(tmp_path / "missing.safetensors"))


def test_allow_bf16(tmp_path):
    """allow_bf16=True: mixed precision where the CPU has bf16 instructions
    (the device says whether it applies); the first step's loss (the
    forward pass, before any update) stays within 1e-2 of the f32 step's,
    and the keyword reaches load() too."""
    directory = tmp_path / "r18"
    x, y = data(3)
    x = x.contiguous(memory_format=torch.channels_last)
    losses, devices = [], []
    for allow in (False, True):
        t = memfmt.compile("resnet18", train=True, batch=N, height=H,
                           width=W, weights="synthetic:1",
                           out_dir=directory, allow_bf16=allow)
        losses.append(t.step(x, y))
        devices.append(t.device)
        t.close()
    assert "bf16" not in devices[0]
    assert ("f32 convolutions in bf16" in devices[1] or
            "no bf16 instructions" in devices[1]), devices[1]
    assert abs(losses[1] - losses[0]) <= 1e-2 * abs(losses[0]), losses
    t = memfmt.load(directory, allow_bf16=True)
    assert t.device == devices[1]
    t.close()


def test_precision_bf16(tmp_path):
    """precision="bf16" with train=True: a mixed-precision step (bf16
    activations, f32 master weights). Its first loss stays within 1e-2 of
    the f32 step's; after a step its state_dict is still f32 torchvision
    names and loads into resnet18 (strict), and the parameters moved by
    about the f32 step's update."""
    x, y = data(4)
    x = x.contiguous(memory_format=torch.channels_last)
    results = []
    for precision in ("f32", "bf16"):
        t = memfmt.compile("resnet18", train=True, batch=N, height=H,
                           width=W, weights="synthetic:1", lr=LR,
                           momentum=MOMENTUM, weight_decay=WEIGHT_DECAY,
                           precision=precision,
                           out_dir=tmp_path / precision)
        before = {k: v.clone() for k, v in t.state_dict().items()}
        loss = t.step(x, y)
        after = {k: v.clone() for k, v in t.state_dict().items()}
        results.append((loss, before, after))
        t.close()
    (loss32, before, after32), (loss16, before16, after16) = results
    assert abs(loss16 - loss32) <= 1e-2 * abs(loss32), (loss16, loss32)
    model = torchvision.models.resnet18()
    model.load_state_dict(after16, strict=True)
    for name, value in after16.items():
        assert value.dtype == before16[name].dtype, name
        if name.endswith("fc.weight"):
            step32 = after32[name] - before[name]
            step16 = value - before16[name]
            assert rel_error(step16, step32) < 0.1, name
