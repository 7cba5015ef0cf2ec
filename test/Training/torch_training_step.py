# memfmt's training step against torch.autograd and torch.optim.SGD.
#
# For each torchvision model, from the same seeded weights (batch norm in
# train mode) and the same data, in both memory formats:
#   1. gradients: memfmt-compile --train --gradients compiles a step that
#      returns the loss and every parameter's gradient; it runs once through
#      the memfmt Python package (memfmt-run takes no i64 inputs);
#   2. SGD: memfmt-compile --train (lr 1e-3, momentum 0.9, weight decay 1e-4)
#      and memfmt-train --steps 3 --save; the checkpoint's parameters,
#      running statistics, num_batches_tracked and momentum buffers (and it
#      loads into the torchvision model with load_state_dict(strict=True));
#   3. L8: memfmt's channels-last and NCHW gradients agree.
# A model named onnx:NAME goes through ONNX instead of the zoo: torch.onnx
# exports it (batch norm kept) and memfmt-compile FILE.onnx --train
# compiles the file, whose initializers carry the weights and the names of
# the checkpoint.
#
# The truth is PyTorch in float64. Every tensor must be within the issue's
# limit of it (gradients 1e-4, SGD state 1e-3, relative to max |truth|) or,
# where the problem is so ill-conditioned that PyTorch's own f32 runs are
# not, within twice the largest error of three PyTorch f32 runs on that
# tensor (NCHW, channels-last, and NCHW on images one rounding away, which
# shows how far one differently rounded sum moves the step); a tensor f32
# cannot resolve at all (torch f32 more than 1% off) only within twice
# torch f32's largest error on any tensor. Measured here: a ResNet-18 step is well-conditioned
# (memfmt 2e-5 from float64, as torch f32), but a ResNet-50 step at batch
# 4-16 from a random initialisation is not — torch 1.13's own f32 gradients
# are 10-30% from float64 on some layer3/layer4 tensors (max |diff| over
# max |truth|; batch-norm channels that barely vary amplify rounding), and
# after a few SGD steps trajectories part further. MobileNet and
# EfficientNet have batch-norm biases whose exact gradient is 0 (each is
# followed by a convolution and another batch norm, which removes any
# shift), so f32 gives noise there. Every line prints the tensor closest
# to its limit, its error and PyTorch f32's.
#
# REQUIRES: torch, memfmt-compile, memfmt-train, python-package
# The sanitizer build runs the kernels under ASan in its GoogleTests; a
# whole training run there would take too long (and its Python extension
# cannot be loaded into python3).
# UNSUPPORTED: sanitizer
# RUN: %python %s --bin %memfmt_bin --python %memfmt_python --work %t resnet18 resnet50 resnext50_32x4d onnx:resnet18 | FileCheck %s
# CHECK: resnet18 channels-last gradients vs torch.autograd: PASS
# CHECK: resnet18 channels-last 3 SGD steps vs torch.optim.SGD: PASS
# CHECK: resnet18 contiguous gradients vs torch.autograd: PASS
# CHECK: resnet18 contiguous 3 SGD steps vs torch.optim.SGD: PASS
# CHECK: resnet18 channels-last vs contiguous (L8): PASS
# CHECK: resnet50 channels-last gradients vs torch.autograd: PASS
# CHECK: resnet50 contiguous 3 SGD steps vs torch.optim.SGD: PASS
# CHECK: resnext50_32x4d channels-last gradients vs torch.autograd: PASS
# CHECK: resnext50_32x4d contiguous 3 SGD steps vs torch.optim.SGD: PASS
# CHECK: onnx:resnet18 channels-last gradients vs torch.autograd: PASS
# CHECK: onnx:resnet18 channels-last 3 SGD steps vs torch.optim.SGD: PASS
# CHECK: onnx:resnet18 contiguous gradients vs torch.autograd: PASS
# CHECK: onnx:resnet18 contiguous 3 SGD steps vs torch.optim.SGD: PASS
# CHECK: onnx:resnet18 channels-last vs contiguous (L8): PASS
# CHECK: all {{[0-9]+}} comparisons passed
import argparse
import collections
import copy
import json
import os
import sys
import zipfile

import numpy as np
import torch
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "scripts"))
from torchref import (read_safetensors, rel_error,  # noqa: E402
                      remove_large_files_if_passed, run, seeded_model,
                      torch_sgd_steps, train_mode, write_safetensors)

GRAD_TOLERANCE = 1e-4
STEP_TOLERANCE = 1e-3
# A relative error of torch f32 from float64 beyond which f32 cannot resolve
# a tensor (its limit is then the largest such error on any tensor).
CHAOTIC = 0.01
LR, MOMENTUM, WEIGHT_DECAY = 1e-3, 0.9, 1e-4
FORMATS = ("channels-last", "contiguous")


class Checks:
    def __init__(self):
        self.passed = self.failed = 0

    def report(self, what, ours, torch32, tolerance, against="float64"):
        """ours, torch32: {tensor name: relative error from float64}. Each
        tensor passes when within `tolerance` or within twice torch f32's
        error on that same tensor (an ill-conditioned one). Where torch
        f32 itself is more than CHAOTIC off (a batch-norm bias whose
        gradient is 0 in exact arithmetic, since the next batch norm removes
        any shift; momenta after steps that amplify rounding), f32 cannot
        resolve the tensor at all, and the limit is twice torch f32's
        largest error on any tensor."""
        torch_worst = max(torch32.values())
        limits = {n: max(tolerance, 2 * (torch32[n] if torch32[n] <= CHAOTIC
                                         else torch_worst))
                  for n in ours}
        worst = max(ours, key=lambda n: ours[n] / limits[n])
        ok = all(ours[n] <= limits[n] for n in ours)
        self.passed += ok
        self.failed += not ok
        print(f"{what}: {'PASS' if ok else 'FAIL'} ({len(ours)} tensors; "
              f"closest to its limit: {worst} {ours[worst]:.2e} from "
              f"{against} (torch f32 {torch32[worst]:.2e}; limit "
              f"{limits[worst]:.2e}))")
        failing = sorted((n for n in ours if ours[n] > limits[n]),
                         key=lambda n: ours[n] / limits[n], reverse=True)
        for n in failing[:8]:
            print(f"  over its limit: {n} {ours[n]:.2e} (torch f32 "
                  f"{torch32[n]:.2e}; limit {limits[n]:.2e})")
        sys.stdout.flush()


# Small vision transformers (torchvision's VisionTransformer) by name, at the
# run's image size (--size): patch embedding, class token, multi-head
# attention (softmax and matmuls of activations), layer norms and GELU.
VISION_TRANSFORMERS = {
    "vit_l2_h64": dict(patch_size=16, num_layers=2, num_heads=4,
                       hidden_dim=64, mlp_dim=128),
}


def focus_net():
    """A small CNN around YOLOv5's Focus (space to depth by strided slices:
    the four pixel phases x[..., i::2, j::2] concatenated along the
    channels) on a convolution's output, so the slices' gradients (steps 2,
    along H and W) reach trainable weights, and a channel slice with step 3
    before the classifier."""
    import torch
    from torch import nn

    class Focus(nn.Module):
        def __init__(self):
            super().__init__()
            self.stem = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1, bias=False),
                                      nn.BatchNorm2d(8), nn.ReLU())
            self.conv = nn.Sequential(nn.Conv2d(32, 24, 3, padding=1,
                                                bias=False),
                                      nn.BatchNorm2d(24), nn.SiLU())
            self.fc = nn.Linear(8, 1000)

        def forward(self, x):
            x = self.stem(x)
            x = torch.cat([x[..., ::2, ::2], x[..., 1::2, ::2],
                           x[..., ::2, 1::2], x[..., 1::2, 1::2]], 1)
            x = self.conv(x)[:, 1::3]
            return self.fc(torch.flatten(nn.functional.adaptive_avg_pool2d(
                x, 1), 1))
    return Focus()


# Small models built here rather than by torchvision, by name.
CUSTOM_MODELS = {"focus_net": focus_net}


def make_model(name, seed, size):
    """The seeded model `name`: a torchvision zoo name, one of
    VISION_TRANSFORMERS or one of CUSTOM_MODELS (seeded as seeded_model
    seeds torchvision's)."""
    if name in VISION_TRANSFORMERS:
        return seeded_model("VisionTransformer", seed=seed, image_size=size,
                            **VISION_TRANSFORMERS[name])
    if name in CUSTOM_MODELS:
        return seeded_model(CUSTOM_MODELS[name], seed=seed)
    return seeded_model(name, seed=seed)


def manifest_outputs(model_dir):
    with open(os.path.join(model_dir, "manifest.json")) as f:
        return [o["name"] for o in json.load(f)["outputs"]]


def compile_step(args, name, fmt, weights, out_dir, extra):
    """memfmt-compile --train of the zoo's `name` with `weights`, or, for
    "onnx:NAME", of the ONNX file that main() exported (its initializers are
    the weights)."""
    if name.startswith("onnx:"):
        source = [onnx_path(args, name)]
    else:
        source = ["--model", name, "--batch", str(args.batch),
                  "--height", str(args.size), "--width", str(args.size),
                  "--weights", weights]
    run([os.path.join(args.bin, "memfmt-compile")] + source +
        ["--train", "--memory-format", fmt, "-o", out_dir] + extra)


def onnx_path(args, name):
    return os.path.join(args.work, name.replace(":", "-") + ".onnx")


def export_onnx(args, name, model):
    """The model as torch.onnx exports it for training: batch norm kept
    (PRESERVE, no constant folding), the initializers named as the
    state_dict, at the test's batch and size."""
    x = torch.zeros(args.batch, 3, args.size, args.size)
    torch.onnx.export(copy.deepcopy(model).eval(), x, onnx_path(args, name),
                      opset_version=13,
                      training=torch.onnx.TrainingMode.PRESERVE,
                      do_constant_folding=False)


def memfmt_gradients(args, name, fmt, weights, x, y):
    """Loss and {param name: gradient} of one memfmt step (run through the
    Python package: memfmt-run takes no i64 inputs)."""
    out_dir = os.path.join(args.work, f"{name}.{fmt}.gradients".replace(":", "-"))
    compile_step(args, name, fmt, weights, out_dir, ["--gradients"])
    import memfmt
    model = memfmt.load(out_dir)
    outputs = model.run(x.astype(np.float32), y.astype(np.int64))
    result = {info.name: v for info, v in zip(model.outputs, outputs)}
    model.close()
    loss = result.pop("loss")
    return loss, {n[len("grad."):]: g for n, g in result.items()}


def torch_gradients(model, x, y, dtype=torch.float32, channels_last=False):
    model = train_mode(copy.deepcopy(model).to(dtype))
    inputs = torch.from_numpy(x).to(dtype)
    if channels_last:
        model = model.to(memory_format=torch.channels_last)
        inputs = inputs.to(memory_format=torch.channels_last)
    loss = torch.nn.functional.cross_entropy(model(inputs),
                                             torch.from_numpy(y))
    loss.backward()
    grads = {n: p.grad.double().numpy() for n, p in model.named_parameters()}
    return float(loss), grads


def torch_sgd(model, batches, dtype=torch.float32, channels_last=False):
    """State (state_dict and momentum buffers, float64 numpy) after SGD."""
    model = copy.deepcopy(model).to(dtype)
    if channels_last:
        model = model.to(memory_format=torch.channels_last)
    cast = np.float64 if dtype == torch.float64 else np.float32
    _, momenta = torch_sgd_steps(model, [(x.astype(cast), y)
                                         for x, y in batches],
                                 LR, MOMENTUM, WEIGHT_DECAY, nesterov=False)
    state = {n: t.detach().contiguous().numpy()
             for n, t in model.state_dict().items()}
    state.update({n + ".momentum_buffer": np.asarray(m, np.float64)
                  for n, m in momenta.items()})
    return state


def state_errors(state, truth):
    """{name: relative error} of a state against the float64 run (integer
    counters: 0 when equal, infinity otherwise)."""
    return {n: (0.0 if np.array_equal(state[n], t) else float("inf"))
            if t.dtype == np.int64 else rel_error(state[n], t)
            for n, t in truth.items()}


def memfmt_sgd(args, name, fmt, weights, data_path, steps):
    out_dir = os.path.join(args.work, f"{name}.{fmt}.train".replace(":", "-"))
    compile_step(args, name, fmt, weights, out_dir,
                 ["--lr", str(LR), "--momentum", str(MOMENTUM),
                  "--weight-decay", str(WEIGHT_DECAY)])
    ckpt = os.path.join(args.work,
                        f"{name}.{fmt}.ckpt.safetensors".replace(":", "-"))
    run([os.path.join(args.bin, "memfmt-train"), out_dir, "--data", data_path,
         "--steps", str(steps), "--no-shuffle", "--save", ckpt])
    state, _ = read_safetensors(ckpt)
    momenta, _ = read_safetensors(ckpt.replace(".safetensors",
                                               ".optimizer.safetensors"))
    return state, momenta


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin", required=True)
    parser.add_argument("--python", required=True)
    parser.add_argument("--work", required=True)
    parser.add_argument("--batch", type=int, default=4)
    parser.add_argument("--size", type=int, default=64)
    parser.add_argument("--steps", type=int, default=3)
    parser.add_argument("models", nargs="+")
    args = parser.parse_args()
    sys.path.insert(0, args.python)  # for memfmt_gradients' import memfmt
    torch.set_num_threads(2)
    os.makedirs(args.work, exist_ok=True)
    checks = Checks()
    for index, name in enumerate(args.models):
        failed_before = checks.failed
        model = make_model(name.split(":")[-1], index + 1, args.size)
        if name.startswith("onnx:"):
            export_onnx(args, name, model)
        weights = os.path.join(args.work,
                               f"{name}.safetensors".replace(":", "-"))
        write_safetensors(weights, model.state_dict())
        rng = np.random.default_rng(index + 11)
        rows = args.batch * args.steps
        xs = rng.standard_normal((rows, 3, args.size, args.size),
                                 dtype=np.float32)
        ys = rng.integers(0, 1000, size=rows, dtype=np.int64)
        data_path = os.path.join(args.work,
                                 f"{name}.data.npz".replace(":", "-"))
        np.savez(data_path, x=xs, y=ys)
        x0, y0 = xs[:args.batch], ys[:args.batch]

        batches = [(xs[i:i + args.batch], ys[i:i + args.batch])
                   for i in range(0, rows, args.batch)]
        # PyTorch: float64 (the truth), f32 NCHW and f32 channels-last, and
        # f32 NCHW on images one rounding away (each element times 1 +-
        # 2^-24): how far an f32 step moves when one rounding differs
        # (another summation order in a pooling window, say), which the
        # two formats, sharing most of PyTorch's kernels, may not show.
        true_loss, true_grads = torch_gradients(model, x0, y0, torch.float64)
        nudge = 1 + np.where(rng.random(xs.shape) < 0.5, -1.0, 1.0) * 2.0**-24
        nudged = (xs * nudge).astype(np.float32)
        torch_grads = [torch_gradients(model, x0, y0, channels_last=cl)[1]
                       for cl in (False, True)]
        torch_grads.append(
            torch_gradients(model, nudged[:args.batch], y0)[1])
        grad_yardstick = {n: max(rel_error(g[n], t) for g in torch_grads)
                          for n, t in true_grads.items()}
        grad_yardstick["loss"] = 0.0
        true_state = torch_sgd(model, batches, torch.float64)
        torch_states = [torch_sgd(model, batches, channels_last=cl)
                        for cl in (False, True)]
        torch_states.append(torch_sgd(
            model, [(nudged[i:i + args.batch], ys[i:i + args.batch])
                    for i in range(0, rows, args.batch)]))
        torch_state_errors = [state_errors(s, true_state)
                              for s in torch_states]
        state_yardstick = {n: max(e[n] for e in torch_state_errors)
                           for n in true_state}

        grads_by_format = {}
        for fmt in FORMATS:
            loss, grads = memfmt_gradients(args, name, fmt, weights, x0, y0)
            grads_by_format[fmt] = grads
            if set(grads) != set(true_grads):
                raise SystemExit(f"{name} {fmt}: gradients differ in names: "
                                 f"{sorted(set(grads) ^ set(true_grads))[:5]}")
            errors = {n: rel_error(g, true_grads[n]) for n, g in grads.items()}
            errors["loss"] = abs(float(loss) - true_loss) / abs(true_loss)
            checks.report(f"{name} {fmt} gradients vs torch.autograd", errors,
                          grad_yardstick, GRAD_TOLERANCE)

            state, momenta = memfmt_sgd(args, name, fmt, weights, data_path,
                                        args.steps)
            names = set(n for n in true_state if
                        not n.endswith(".momentum_buffer"))
            if set(state) != names:
                raise SystemExit(f"{name} {fmt}: checkpoint names differ from "
                                 f"the state_dict: "
                                 f"{sorted(set(state) ^ names)[:5]}")
            loaded = copy.deepcopy(model)
            checkpoint = collections.OrderedDict(
                (n, torch.from_numpy(t)) for n, t in state.items())
            # Module versions live in the Python state_dict, not in any
            # safetensors file (MNASNet refuses a state_dict without them).
            checkpoint._metadata = model.state_dict()._metadata
            loaded.load_state_dict(checkpoint, strict=True)
            state.update(momenta)
            checks.report(f"{name} {fmt} {args.steps} SGD steps vs "
                          "torch.optim.SGD", state_errors(state, true_state),
                          state_yardstick, STEP_TOLERANCE)
        # L8: memfmt's two formats against each other. The yardstick is
        # torch's two formats' difference or, where larger, the sum of
        # torch's distances from float64 on the tensor: the gradient
        # checks above allow each memfmt format twice that distance, so two
        # formats that pass them may differ by twice the sum. (On a tensor
        # f32 resolves only to 1%, two runs a few % apart are both as right
        # as f32 can be: on AVX2 oneDNN's grouped convolutions sum in other
        # orders in each format, and ResNeXt's layer3 batch-norm gradients
        # were 5% apart where torch's formats were 1%.)
        errors = {n: rel_error(g, grads_by_format["contiguous"][n])
                  for n, g in grads_by_format["channels-last"].items()}
        torch_l8 = {n: max(rel_error(torch_grads[1][n], torch_grads[0][n]),
                           2 * grad_yardstick[n])
                    for n in errors}
        checks.report(f"{name} channels-last vs contiguous (L8)", errors,
                      torch_l8, GRAD_TOLERANCE, against="memfmt NCHW")
        remove_large_files_if_passed(checks.failed == failed_before,
                                     args.work, name.replace(":", "-") + ".")
    total = checks.passed + checks.failed
    if checks.failed:
        print(f"{checks.failed} of {total} comparisons failed")
        return 1
    print(f"all {total} comparisons passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
