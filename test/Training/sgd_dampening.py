# torch.optim.SGD's dampening with momentum, through memfmt-compile --train
# --dampening and memfmt-train.
#
# torch's first step sets each momentum buffer to the gradient, undamped,
# and later steps damp it, so the step carries a step count in its model
# state (memfmt-apply-sgd's `optimizer.step`). For a seeded ResNet-18 (10
# classes, batch 4 at 64x64), in both memory formats:
#   1. 3 steps against torch.optim.SGD(momentum=0.9, dampening=0.3) in
#      float64: every parameter, running statistic and momentum buffer within
#      the 1e-3 of max |torch|; the checkpoint's optimizer file holds
#      the step count 3 as I64;
#   2. 1 step, --save, then --resume for 2 more: the same checkpoint, bit for
#      bit, as 3 steps in one run (the resumed count makes step 2 a later
#      step, not a first one);
#   3. dampening changes the result: the same 3 steps without it do not
#      match torch's damped run (the test would see a dropped option).
# The seed and data are chosen so that the problem is well-conditioned:
# torch's own f32 run is within 6e-6 of float64 here (other seeds put
# batch-norm channels of 16 values in layer4 at 0.1-0.5 even for torch f32,
# as test/Training/torch_training_step.py explains).
#
# REQUIRES: torch, memfmt-compile, memfmt-train
# UNSUPPORTED: sanitizer
# RUN: %python %s --bin %memfmt_bin --work %t | FileCheck %s
# What a passing run wrote (full-size weights and checkpoints) goes.
# RUN: rm -rf %t
# CHECK: channels-last 3 steps vs torch.optim.SGD(dampening=0.3): PASS
# CHECK: channels-last resumed after 1 step = 3 steps in one run: PASS
# CHECK: contiguous 3 steps vs torch.optim.SGD(dampening=0.3): PASS
# CHECK: contiguous resumed after 1 step = 3 steps in one run: PASS
# CHECK: without --dampening the state differs from torch's damped run: PASS
# CHECK: all 5 checks passed
import argparse
import copy
import os
import sys

import numpy as np
import torch
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "scripts"))
from torchref import (Tally, read_safetensors, rel_error, run,  # noqa: E402
                      seeded_model, torch_sgd_steps, train_checkpoint,
                      write_safetensors)

LR, MOMENTUM, DAMPENING, WEIGHT_DECAY = 1e-3, 0.9, 0.3, 1e-4
BATCH, SIZE, CLASSES, STEPS = 4, 64, 10, 3
TOLERANCE = 1e-3


def torch_state(model, batches):
    """float64 state_dict and momentum buffers after damped SGD."""
    model = copy.deepcopy(model).to(torch.float64)
    _, momenta = torch_sgd_steps(model, [(x.astype(np.float64), y)
                                         for x, y in batches],
                                 LR, MOMENTUM, WEIGHT_DECAY, nesterov=False,
                                 dampening=DAMPENING)
    state = {n: t.detach().numpy() for n, t in model.state_dict().items()}
    state.update({n + ".momentum_buffer": m for n, m in momenta.items()})
    return state


def memfmt_train(args, model_dir, data, ckpt, steps, resume=None):
    return train_checkpoint(args.bin, model_dir, data, ckpt, steps, resume)


def compile_step(args, fmt, weights, out_dir, dampening):
    run([os.path.join(args.bin, "memfmt-compile"), "--model", "resnet18",
         "--train", "--batch", str(BATCH), "--height", str(SIZE), "--width",
         str(SIZE), "--num-classes", str(CLASSES), "--memory-format", fmt,
         "--weights", weights, "--lr", str(LR), "--momentum", str(MOMENTUM),
         "--dampening", str(dampening), "--weight-decay", str(WEIGHT_DECAY),
         "-o", out_dir])


def worst(state, truth):
    """The tensor of `truth` furthest from `state`, and its error."""
    errors = {n: (0.0 if np.array_equal(state[n], t) else float("inf"))
              if t.dtype == np.int64 else rel_error(state[n], t)
              for n, t in truth.items()}
    name = max(errors, key=errors.get)
    return name, errors[name]


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
    rng = np.random.default_rng(7)
    xs = rng.standard_normal((BATCH * STEPS, 3, SIZE, SIZE), dtype=np.float32)
    ys = rng.integers(0, CLASSES, size=BATCH * STEPS, dtype=np.int64)
    data = os.path.join(args.work, "data.npz")
    np.savez(data, x=xs, y=ys)
    truth = torch_state(model, [(xs[i:i + BATCH], ys[i:i + BATCH])
                                for i in range(0, BATCH * STEPS, BATCH)])

    tally = Tally()
    for fmt in ("channels-last", "contiguous"):
        step_dir = os.path.join(args.work, fmt)
        compile_step(args, fmt, weights, step_dir, DAMPENING)
        ckpt = os.path.join(args.work, f"{fmt}.3.safetensors")
        state, optimizer = memfmt_train(args, step_dir, data, ckpt, STEPS)
        count = optimizer.pop("optimizer.step")
        state.update(optimizer)
        name, error = worst(state, truth)
        ok = error <= TOLERANCE and count.dtype == np.int64 and count == STEPS
        tally.check(f"{fmt} {STEPS} steps vs torch.optim.SGD(dampening="
                    f"{DAMPENING})", ok,
                    f"worst {name} {error:.2e}, optimizer.step {count}")

        first = os.path.join(args.work, f"{fmt}.1.safetensors")
        memfmt_train(args, step_dir, data, first, 1)
        again = os.path.join(args.work, f"{fmt}.1+2.safetensors")
        resumed, resumed_opt = memfmt_train(args, step_dir, data, again,
                                            STEPS - 1, resume=first)
        resumed.update(resumed_opt)
        straight_opt, _ = read_safetensors(
            ckpt.replace(".safetensors", ".optimizer.safetensors"))
        straight = dict(read_safetensors(ckpt)[0], **straight_opt)
        differ = sorted(n for n in straight
                        if not np.array_equal(straight[n], resumed[n]))
        tally.check(f"{fmt} resumed after 1 step = {STEPS} steps in one run",
                    set(resumed) == set(straight) and not differ,
                    f"{len(differ)} tensors differ {differ[:3]}")

    plain_dir = os.path.join(args.work, "undamped")
    compile_step(args, "channels-last", weights, plain_dir, 0.0)
    state, optimizer = memfmt_train(
        args, plain_dir, data, os.path.join(args.work, "undamped.safetensors"),
        STEPS)
    state.update(optimizer)
    name, error = worst(state, truth)
    tally.check("without --dampening the state differs from torch's damped "
                "run",
                error > 100 * TOLERANCE and "optimizer.step" not in optimizer,
                f"worst {name} {error:.2e}")

    return tally.finish("checks")


if __name__ == "__main__":
    sys.exit(main())
