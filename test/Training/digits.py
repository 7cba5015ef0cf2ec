# memfmt learns: ResNet-18 (10 classes) trained from a seeded initialisation
# on scikit-learn's bundled digits (1797 8x8 images, no download), each image
# upsampled (bilinear) to 32x32 and repeated over three channels, with
# memfmt-compile --train and memfmt-train, and with PyTorch from the same initialisation,
# the same batches in the same order and the same SGD settings.
#
# Checks: memfmt's held-out top-1 accuracy is >= 95%; the first step's loss
# agrees with PyTorch's (NCHW, 2 threads) to 1e-4; and every epoch's mean
# loss lies where PyTorch's own runs of the same training put it. From a
# random initialisation, float rounding sends trajectories apart within a
# few steps, so step-by-step agreement is not a property any two
# implementations have: PyTorch's own runs, which differ only in the order
# of their sums (NCHW or channels-last, 1 or 2 threads), end an epoch with
# mean losses up to ~25% apart. Those runs are the yardstick. An epoch's
# mean must lie within [min - R, max + R] of the yardstick runs' means, R
# their range (at least 25% of PyTorch NCHW's mean): with four runs, a
# tolerance interval of about +-3 standard deviations of the spread the
# runs show.
#
# The same model trained again with memfmt-train --allow-bf16 (mixed
# precision: convolutions multiply in bf16 where the CPU has bf16
# instructions, f32 elsewhere; on other CPUs its first epoch must be the
# f32 run's, bit for bit, and the f32 checks stand for it) must learn as
# well: held-out accuracy >= 95%, the first step's loss within 1e-2 of
# torch's, and epoch losses within the yardstick of PyTorch's f32 runs and
# its bf16 autocast runs (both formats, 1 and 2 threads) together: bf16
# rounding spreads trajectories further than f32 rounding. So must the step
# compiled with --precision bf16 (mixed precision in the IR: bf16
# activations and gradients, f32 master weights, statistics, loss and SGD),
# where the CPU has bf16 instructions (elsewhere its bf16 kernels would be
# emulated: the run is skipped and says so, and so are the autocast runs).
#
# REQUIRES: torch, sklearn, memfmt-compile, memfmt-train
# The sanitizer build runs the kernels under ASan in its GoogleTests; a
# whole training run there would take too long (and ctypes cannot load an
# ASan library into Python).
# UNSUPPORTED: sanitizer
# RUN: %python %s --bin %memfmt_bin --work %t | FileCheck %s
# CHECK: first step's loss matches torch: PASS
# CHECK: epoch losses track torch: PASS
# CHECK: held-out accuracy >= 95%: PASS
# CHECK: --allow-bf16 first step's loss within 1e-2 of torch: {{PASS|the f32 run's}}
# CHECK: --allow-bf16 epoch losses track torch: {{PASS|the f32 run's}}
# CHECK: --allow-bf16 held-out accuracy >= 95%: {{PASS|the f32 run's}}
# CHECK: --precision bf16 first step's loss within 1e-2 of torch: {{PASS|skipped}}
# CHECK: --precision bf16 epoch losses track torch: {{PASS|skipped}}
# CHECK: --precision bf16 held-out accuracy >= 95%: {{PASS|skipped}}
import argparse
import copy
import json
import os
import subprocess
import sys

import numpy as np
import torch
import torchvision
from sklearn.datasets import load_digits
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "scripts"))
from torchref import run, write_safetensors  # noqa: E402

BATCH, SIZE, EPOCHS, TRAIN_ROWS = 32, 32, 5, 1536
LR, MOMENTUM, WEIGHT_DECAY = 0.01, 0.9, 1e-4


def digits():
    """Images [1797, 3, 32, 32] (standardised, bilinear upsampling)
    and labels, in a seeded random order."""
    data = load_digits()
    x = data.images.astype(np.float32) / 16.0
    x = (x - x.mean()) / x.std()
    # Bilinear, not nearest-neighbour, upsampling: blocks of equal pixels
    # make exact ties in max pooling and relu, where each implementation's
    # rounding picks a different subgradient (torch NCHW and channels-last
    # gradients then differ by ~8% in the first step) and trajectories part
    # by chance.
    x = torch.nn.functional.interpolate(
        torch.from_numpy(x[:, None]), size=(SIZE, SIZE), mode="bilinear",
        align_corners=False).numpy()
    x = np.repeat(x, 3, axis=1)
    y = data.target.astype(np.int64)
    order = np.random.default_rng(0).permutation(len(x))
    return np.ascontiguousarray(x[order]), y[order]


def torch_training(model, x, y, ex, ey, channels_last=False, bf16=False):
    """Losses per step and held-out accuracy of PyTorch's SGD on the same
    batches; bf16 runs the forward under CPU autocast (bf16 convolutions
    and matmuls, f32 batch norms and loss), as PyTorch users train in mixed
    precision."""
    if channels_last:
        model = model.to(memory_format=torch.channels_last)
    optimizer = torch.optim.SGD(model.parameters(), lr=LR, momentum=MOMENTUM,
                                weight_decay=WEIGHT_DECAY)
    losses = []
    for _ in range(EPOCHS):
        model.train()
        for i in range(0, len(x) - BATCH + 1, BATCH):
            optimizer.zero_grad()
            with torch.autocast("cpu", dtype=torch.bfloat16, enabled=bf16):
                logits = model(torch.from_numpy(x[i:i + BATCH]))
            loss = torch.nn.functional.cross_entropy(
                logits.float(), torch.from_numpy(y[i:i + BATCH]))
            loss.backward()
            optimizer.step()
            losses.append(float(loss))
    model.eval()
    with torch.no_grad():
        predicted = model(torch.from_numpy(ex)).argmax(1).numpy()
    return losses, float(np.mean(predicted == ey))


def yardstick_runs(init, x, y, ex, ey, bf16):
    """PyTorch's runs of the same training that differ from one another
    only in the order of their sums, by (threads, channels_last): both
    memory formats, 1 and 2 threads."""
    runs = {}
    for threads in (1, 2):
        torch.set_num_threads(threads)
        for channels_last in (False, True):
            runs[threads, channels_last] = torch_training(
                copy.deepcopy(init), x, y, ex, ey, channels_last, bf16)
    torch.set_num_threads(2)
    return runs


def has_bf16_instructions():
    """True where the CPU multiplies bf16 natively (AVX-512 BF16 or AMX),
    as memfmt's bf16 kernels and the device line assume."""
    with open("/proc/cpuinfo") as f:
        flags = f.read()
    return "avx512_bf16" in flags or "amx_bf16" in flags


def report(what, ok, detail):
    print(f"{what}: {'PASS' if ok else 'FAIL'} ({detail})")
    return ok


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin", required=True)
    parser.add_argument("--work", required=True)
    args = parser.parse_args()
    torch.set_num_threads(2)
    os.makedirs(args.work, exist_ok=True)
    x, y = digits()
    tx, ty, ex, ey = x[:TRAIN_ROWS], y[:TRAIN_ROWS], x[TRAIN_ROWS:], y[TRAIN_ROWS:]
    train_npz = os.path.join(args.work, "train.npz")
    eval_npz = os.path.join(args.work, "eval.npz")
    np.savez(train_npz, x=tx, y=ty)
    np.savez(eval_npz, x=ex, y=ey)

    torch.manual_seed(0)
    model = torchvision.models.resnet18(num_classes=10)
    weights = os.path.join(args.work, "init.safetensors")
    write_safetensors(weights, model.state_dict())

    def compile_step(name, *flags):
        model_dir = os.path.join(args.work, name)
        run([os.path.join(args.bin, "memfmt-compile"), "--model", "resnet18",
             "--num-classes", "10", "--train", "--batch", str(BATCH),
             "--height", str(SIZE), "--width", str(SIZE), "--weights",
             weights, "--lr", str(LR), "--momentum", str(MOMENTUM),
             "--weight-decay", str(WEIGHT_DECAY), *flags, "-o", model_dir])
        return model_dir

    def train(model_dir, *flags, epochs=EPOCHS):
        result = json.loads(run([os.path.join(args.bin, "memfmt-train"),
                                 model_dir, "--data", train_npz, "--epochs",
                                 str(epochs), "--no-shuffle", "--eval",
                                 eval_npz, "--json", *flags]))
        return ([float(loss) for loss in result["losses"]],
                float(result["eval"]["top1"]), result["device"])

    model_dir = compile_step("resnet18.train")
    ours, accuracy, _ = train(model_dir)
    runs = [("", ours, accuracy, 1e-4, "")]
    if has_bf16_instructions():
        mixed, mixed_accuracy, device = train(model_dir, "--allow-bf16")
        runs.append(("--allow-bf16 ", mixed, mixed_accuracy, 1e-2, device))
    else:
        # Without bf16 instructions --allow-bf16 trains in f32: one epoch
        # shows it is the f32 run, bit for bit, whose checks follow.
        mixed, _, device = train(model_dir, "--allow-bf16", epochs=1)
        f32_run = mixed == ours[:len(mixed)]
        print(f"--allow-bf16 without bf16 instructions: "
              f"{'PASS' if f32_run else 'FAIL'} (its first epoch's "
              f"{len(mixed)} losses {'are' if f32_run else 'are not'} the "
              f"f32 run's; {device})")
    if has_bf16_instructions():
        bf16_dir = compile_step("resnet18.bf16.train", "--precision", "bf16")
        bf16, bf16_accuracy, bf16_device = train(bf16_dir)
        runs.append(("--precision bf16 ", bf16, bf16_accuracy, 1e-2,
                     bf16_device))

    f32_yardstick = yardstick_runs(model, tx, ty, ex, ey, bf16=False)
    theirs, torch_accuracy = f32_yardstick[2, False]
    f32_runs = [losses for losses, _ in f32_yardstick.values()]
    bf16_runs = ([losses for losses, _ in
                  yardstick_runs(model, tx, ty, ex, ey, bf16=True).values()]
                 if has_bf16_instructions() else [])
    print(f"memfmt: {len(ours)} steps, loss {ours[0]:.4f} -> {ours[-1]:.4f}, "
          f"accuracy {accuracy:.4f}; torch: loss {theirs[0]:.4f} -> "
          f"{theirs[-1]:.4f}, accuracy {torch_accuracy:.4f}")
    steps = len(ours) // EPOCHS
    mean = lambda losses, e: float(np.mean(losses[e * steps:(e + 1) * steps]))
    ok = True
    for prefix, losses, acc, first_limit, where in runs:
        if len(losses) != len(theirs):
            raise SystemExit(f"memfmt {prefix}ran {len(losses)} steps, "
                             f"torch {len(theirs)}")
        first = abs(losses[0] - theirs[0]) / abs(theirs[0])
        yardstick = f32_runs + (bf16_runs if prefix else [])
        epochs = []
        for e in range(EPOCHS):
            means = [mean(curve, e) for curve in yardstick]
            spread = max(max(means) - min(means), 0.25 * mean(theirs, e))
            epochs.append((mean(losses, e), min(means) - spread,
                           max(means) + spread))
        matches = "within 1e-2 of" if prefix else "matches"
        ok &= report(f"{prefix}first step's loss {matches} torch",
                     first <= first_limit, f"relative difference {first:.1e}")
        ok &= report(f"{prefix}epoch losses track torch",
                     all(low <= a <= high for a, low, high in epochs),
                     f"memfmt [torch's {len(yardstick)} runs -+ their range]"
                     ": " + ", ".join(f"{a:.4f} [{low:.4f}, {high:.4f}]"
                                      for a, low, high in epochs))
        ok &= report(f"{prefix}held-out accuracy >= 95%", acc >= 0.95,
                     f"{acc:.4f} over {len(ey)} images; torch "
                     f"{torch_accuracy:.4f}" + (f"; {where}" if where else ""))
    if not has_bf16_instructions():
        ok &= f32_run
        checks = ("first step's loss within 1e-2 of torch",
                  "epoch losses track torch", "held-out accuracy >= 95%")
        for what in checks:
            print(f"--allow-bf16 {what}: the f32 run's (no bf16 "
                  "instructions on this CPU)")
        for what in checks:
            print(f"--precision bf16 {what}: skipped (no bf16 instructions "
                  "on this CPU)")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
