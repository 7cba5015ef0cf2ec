# Dynamic loss scaling (memfmt-compile --train --grad-scaler, GradScaler's
# semantics) through memfmt-train, on a seeded ResNet-18 (10 classes, batch
# 4 at 64x64):
#   1. In f32, a power-of-two scale changes no bit: the loss times 2^16 and
#      every gradient divided by it again are exact, so 3 scaled steps give
#      the unscaled steps' parameters, running statistics and momentum
#      buffers bit for bit (both memory formats). The scaler's state in the
#      optimizer file follows GradScaler.update with growth_interval 2:
#      scale 65536 -> 131072 after the second step, growth tracker 1 after
#      the third.
#   2. Resuming restores the scaler: 1 step, --save, --resume for 2 = the 3
#      steps in one run, bit for bit (scale and tracker included).
#   3. memfmt-train reports the next step's scale (--json: loss_scale).
#   4. A scale that overflows (3e38: the gradients are inf) skips the step,
#      as GradScaler.step skips optimizer.step: the parameters are the
#      initial ones and the momentum buffers zero, while the forward's
#      running statistics move on as torch's do; the scale backs off to
#      1.5e38 and the tracker restarts at 0.
#
# REQUIRES: torch, memfmt-compile, memfmt-train
# UNSUPPORTED: sanitizer
# RUN: %python %s --bin %memfmt_bin --work %t | FileCheck %s
# RUN: rm -rf %t
# CHECK: channels-last 3 scaled steps = 3 unscaled steps, bit for bit: PASS
# CHECK: channels-last scaler state after 3 steps (scale 131072, tracker 1): PASS
# CHECK: channels-last resumed after 1 step = 3 steps in one run: PASS
# CHECK: contiguous 3 scaled steps = 3 unscaled steps, bit for bit: PASS
# CHECK: contiguous scaler state after 3 steps (scale 131072, tracker 1): PASS
# CHECK: contiguous resumed after 1 step = 3 steps in one run: PASS
# CHECK: memfmt-train reports the loss scale: PASS
# CHECK: an overflowing scale skips the update and backs off: PASS
# CHECK: all 8 checks passed
import argparse
import json
import os
import sys

import numpy as np
import torch
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "scripts"))
from torchref import (Tally, read_safetensors, run,  # noqa: E402
                      seeded_model, train_checkpoint, write_safetensors)

BATCH, SIZE, CLASSES, STEPS = 4, 64, 10, 3
SCALER = ["--grad-scaler", "--grad-scaler-growth-interval", "2"]


def compile_step(args, fmt, weights, out_dir, extra):
    run([os.path.join(args.bin, "memfmt-compile"), "--model", "resnet18",
         "--train", "--batch", str(BATCH), "--height", str(SIZE), "--width",
         str(SIZE), "--num-classes", str(CLASSES), "--memory-format", fmt,
         "--weights", weights, "--lr", "0.01", "-o", out_dir] + extra)


def train(args, model_dir, data, ckpt, steps, resume=None):
    return train_checkpoint(args.bin, model_dir, data, ckpt, steps, resume)


def differing(a, b):
    return sorted(n for n in set(a) | set(b)
                  if n not in a or n not in b or not np.array_equal(a[n], b[n]))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin", required=True)
    parser.add_argument("--work", required=True)
    args = parser.parse_args()
    torch.set_num_threads(2)
    os.makedirs(args.work, exist_ok=True)
    model = seeded_model("resnet18", seed=3, num_classes=CLASSES)
    weights = os.path.join(args.work, "resnet18.safetensors")
    write_safetensors(weights, model.state_dict())
    initial, _ = read_safetensors(weights)
    rng = np.random.default_rng(7)
    xs = rng.standard_normal((BATCH * STEPS, 3, SIZE, SIZE), dtype=np.float32)
    ys = rng.integers(0, CLASSES, size=BATCH * STEPS, dtype=np.int64)
    data = os.path.join(args.work, "data.npz")
    np.savez(data, x=xs, y=ys)

    tally = Tally()
    for fmt in ("channels-last", "contiguous"):
        plain_dir = os.path.join(args.work, fmt + ".plain")
        scaled_dir = os.path.join(args.work, fmt + ".scaled")
        compile_step(args, fmt, weights, plain_dir, [])
        compile_step(args, fmt, weights, scaled_dir, SCALER)
        ckpt = os.path.join(args.work, fmt + ".{}.safetensors")
        plain, plain_opt = train(args, plain_dir, data, ckpt.format("plain"),
                                 STEPS)
        scaled, scaled_opt = train(args, scaled_dir, data,
                                   ckpt.format("scaled"), STEPS)
        scale = scaled_opt.pop("grad_scaler.scale", None)
        tracker = scaled_opt.pop("grad_scaler.growth_tracker", None)
        differ = differing(dict(plain, **plain_opt),
                           dict(scaled, **scaled_opt))
        tally.check(f"{fmt} {STEPS} scaled steps = {STEPS} unscaled steps, "
                    "bit for bit", not differ,
                    f"{len(differ)} tensors differ {differ[:3]}")
        tally.check(f"{fmt} scaler state after {STEPS} steps (scale 131072, "
                    "tracker 1)",
                    scale is not None and scale.dtype == np.float32 and
                    scale.shape == () and scale == 131072.0 and
                    tracker is not None and tracker.dtype == np.int64 and
                    tracker == 1, f"scale {scale}, tracker {tracker}")

        first = ckpt.format("scaled.1")
        train(args, scaled_dir, data, first, 1)
        resumed, resumed_opt = train(args, scaled_dir, data,
                                     ckpt.format("scaled.1+2"), STEPS - 1,
                                     resume=first)
        straight_opt, _ = read_safetensors(ckpt.format("scaled").replace(
            ".safetensors", ".optimizer.safetensors"))
        differ = differing(dict(scaled, **straight_opt),
                           dict(resumed, **resumed_opt))
        tally.check(f"{fmt} resumed after 1 step = {STEPS} steps in one run",
                    not differ, f"{len(differ)} tensors differ {differ[:3]}")

    # memfmt-train reports the next step's scale (null without a scaler).
    reports = [json.loads(run([os.path.join(args.bin, "memfmt-train"), d,
                               "--data", data, "--steps", str(STEPS),
                               "--no-shuffle", "--json"]))["loss_scale"]
               for d in (scaled_dir, plain_dir)]
    tally.check("memfmt-train reports the loss scale",
                reports == [131072.0, None], f"{reports}")

    overflow_dir = os.path.join(args.work, "overflow")
    compile_step(args, "channels-last", weights, overflow_dir,
                 ["--grad-scaler", "--grad-scaler-init-scale", "3e38"])
    state, optimizer = train(args, overflow_dir, data,
                             os.path.join(args.work, "overflow.safetensors"),
                             1)
    params = [n for n in initial if not n.endswith(
        ("running_mean", "running_var", "num_batches_tracked"))]
    moved = [n for n in params if not np.array_equal(state[n], initial[n])]
    buffers = [n for n in optimizer if n.endswith(".momentum_buffer")]
    nonzero = [n for n in buffers if np.any(optimizer[n] != 0)]
    stats_moved = not np.array_equal(state["bn1.running_mean"],
                                     initial["bn1.running_mean"])
    scale = optimizer.get("grad_scaler.scale")
    tracker = optimizer.get("grad_scaler.growth_tracker")
    tally.check("an overflowing scale skips the update and backs off",
                not moved and len(buffers) == len(params) and not nonzero and
                stats_moved and scale == np.float32(1.5e38) and tracker == 0,
                f"{len(moved)} parameters moved {moved[:3]}, {len(nonzero)} "
                f"nonzero buffers, running mean moved {stats_moved}, scale "
                f"{scale}, tracker {tracker}")
    return tally.finish("checks")


if __name__ == "__main__":
    sys.exit(main())
