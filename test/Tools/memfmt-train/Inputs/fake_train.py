#!/usr/bin/env python3
"""Model directories, data and a reference for memfmt-train's tests.

The model is runtime/test/loader/FakeTrainModel.c (a softmax regression
trained by SGD with momentum, N=4 rows of [2,2,2] images, 3 classes); this
script writes its manifests, data files and initial weights, and checks
memfmt-train's --json output and checkpoints against a numpy
re-implementation of the same step and of the documented shuffle order.

  fake_train.py dir DIR SO [--input-format channels-last] [--weights FILE]
      [--set KEY=JSON]            a training model in DIR, its eval model
                                  in DIR/eval
  fake_train.py weights FILE [--seed S]
      initial weights (momentum buffers absent: they start as zeros)
  fake_train.py data FILE --rows M [--seed S] [--channels-last]
      [--compressed] [--bad-label ROW] [--x-dtype D] [--y-dtype D]
      [--x-shape A,B,C,D] [--drop NAME]
  fake_train.py check RESULT.json DATA WEIGHTS [--channels-last]
      the losses of RESULT.json (from its start_step, with its shuffle
      seed) against the reference, within 1e-5
  fake_train.py checkpoint FILE STEPS DATA WEIGHTS [--shuffle SEED]
      the state_dict and optimizer files of --save after STEPS steps
      against the reference
  fake_train.py eval RESULT.json DATA WEIGHTS EVAL
      the eval accuracy of RESULT.json against the reference's
  fake_train.py torch FILE
      load_state_dict(strict=True) of the checkpoint FILE into a torch
      module with the fake model's state (torch.nn.Linear fc, and bn with
      BatchNorm's running_mean and num_batches_tracked buffers)
"""
import json
import os
import shutil
import struct
import sys

import numpy as np

N, C, H, W, K = 4, 2, 2, 2, 3
F = C * H * W
PARAMS = [("fc.weight", [K, F], 0), ("fc.bias", [K], 128),
          ("bn.running_mean", [C], 192)]
STATE = [("fc.weight.momentum_buffer", [K, F], 256),
         ("fc.bias.momentum_buffer", [K], 384)]
MASK = (1 << 64) - 1


def tensor(name, shape, offset, zero_init=False, updated=False):
    strides, s = [], 1
    for d in reversed(shape):
        strides.insert(0, s)
        s *= d
    t = {"name": name, "dtype": "f32", "shape": shape, "strides": strides,
         "offset": offset, "bytes": 4 * s}
    if zero_init:
        t["init"] = "zeros"
    if updated:  # State the training step updates (memfmt.assign_weight).
        t["updated"] = True
    return t


def write_dir(args):
    d, so = args[0], args[1]
    cl = "--input-format" in args and \
        args[args.index("--input-format") + 1] == "channels-last"
    source = "synthetic:0"
    if "--weights" in args:
        source = "safetensors:" + os.path.abspath(
            args[args.index("--weights") + 1])
    x_strides = [F, 1, W * C, C] if cl else [F, H * W, W, 1]
    train = {
        "format_version": 2, "model": "fake_train", "target": "cpu",
        "precision": "f32", "memory_format": "contiguous",
        "input_format": "channels-last" if cl else "contiguous",
        "library": "model.so",
        "entry": "fake_train_step_cl" if cl else "memfmt_forward_packed",
        "arena_bytes": 64, "peak_live_bytes": 64, "weights_bytes": 448,
        "weights_source": source,
        "parameters": [tensor(*p, updated=True) for p in PARAMS] +
                      [tensor(*s, zero_init=True, updated=True)
                       for s in STATE],
        "inputs": [{"name": "x", "dtype": "f32", "shape": [N, C, H, W],
                    "strides": x_strides},
                   {"name": "y", "dtype": "i64", "shape": [N],
                    "strides": [1]}],
        "outputs": [{"name": "loss", "dtype": "f32", "shape": [],
                     "strides": []}],
        "nodes": ["memfmt.cross_entropy_loss at loc(\"fake.mlir\":1:1)"],
    }
    for a in [a for i, a in enumerate(args) if i and args[i - 1] == "--set"]:
        key, value = a.split("=", 1)
        train[key] = json.loads(value)
    evalm = dict(train, entry="fake_train_eval", weights_bytes=256,
                 input_format="contiguous", weights_source="synthetic:0",
                 parameters=[tensor(*p) for p in PARAMS],
                 inputs=[{"name": "input_0", "dtype": "f32",
                          "shape": [N, C, H, W],
                          "strides": [F, H * W, W, 1]}],
                 outputs=[{"name": "output_0", "dtype": "f32",
                           "shape": [N, K], "strides": [K, 1]}])
    for path, m in ((d, train), (os.path.join(d, "eval"), evalm)):
        os.makedirs(path, exist_ok=True)
        shutil.copy(so, os.path.join(path, "model.so"))
        with open(os.path.join(path, "manifest.json"), "w") as f:
            json.dump(m, f, indent=2)


def write_safetensors(path, tensors, metadata=None):
    header, blobs, offset = {}, [], 0
    if metadata:
        header["__metadata__"] = metadata
    for name, array in tensors.items():
        b = array.tobytes()
        dtype = {"float32": "F32", "int64": "I64"}[str(array.dtype)]
        header[name] = {"dtype": dtype, "shape": list(array.shape),
                        "data_offsets": [offset, offset + len(b)]}
        blobs.append(b)
        offset += len(b)
    h = json.dumps(header).encode()
    h += b" " * (-len(h) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h + b"".join(blobs))


def read_safetensors(path):
    with open(path, "rb") as f:
        data = f.read()
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + n])
    meta = header.pop("__metadata__", {})
    out = {}
    for name, t in header.items():
        a, b = t["data_offsets"]
        dtype = {"F32": np.float32, "I64": np.int64}[t["dtype"]]
        out[name] = np.frombuffer(data[8 + n + a:8 + n + b],
                                  dtype=dtype).reshape(t["shape"])
    return out, meta


def initial(seed):
    rng = np.random.default_rng(seed)
    return {"fc.weight": rng.normal(0, 0.5, (K, F)).astype(np.float32),
            "fc.bias": rng.normal(0, 0.1, (K,)).astype(np.float32),
            "bn.running_mean": np.zeros(C, np.float32)}


def write_data(args):
    path = args[0]
    opt = lambda name, default: args[args.index(name) + 1] \
        if name in args else default
    rows = int(opt("--rows", "12"))
    rng = np.random.default_rng(int(opt("--seed", "1")))
    y = rng.integers(0, K, rows).astype(np.int64)
    # Images whose class shows in channel 0, so the model can learn it.
    x = rng.normal(0, 1, (rows, C, H, W)).astype(np.float32)
    x[:, 0] += (y[:, None, None] - 1).astype(np.float32)
    if "--bad-label" in args:
        y[int(opt("--bad-label", "0"))] = K
    if "--channels-last" in args:
        x = np.ascontiguousarray(x.transpose(0, 2, 3, 1))
    x = x.astype(opt("--x-dtype", "float32"))
    y = y.astype(opt("--y-dtype", "int64"))
    if "--x-shape" in args:
        x = np.zeros([int(d) for d in opt("--x-shape", "").split(",")],
                     np.float32)
    arrays = {"x": x, "y": y}
    if "--drop" in args:
        del arrays[opt("--drop", "")]
    (np.savez_compressed if "--compressed" in args else np.savez)(path,
                                                                 **arrays)


class SplitMix64:
    def __init__(self, seed):
        self.state = seed & MASK

    def next(self):
        self.state = (self.state + 0x9E3779B97F4A7C15) & MASK
        z = self.state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
        return z ^ (z >> 31)


def perm(m, rng):
    p = list(range(m))
    for i in range(m - 1, 0, -1):
        j = rng.next() % (i + 1)
        p[i], p[j] = p[j], p[i]
    return p


def reference(data, weights, steps, shuffle=None, channels_last=False):
    """Losses and final state of `steps` steps, as FakeTrainModel.c."""
    arrays = np.load(data)
    x, y = arrays["x"], arrays["y"]
    if channels_last:
        x = x.transpose(0, 3, 1, 2)
    state = {k: v.astype(np.float64) for k, v in weights.items()}
    state["fc.weight.momentum_buffer"] = np.zeros((K, F))
    state["fc.bias.momentum_buffer"] = np.zeros(K)
    per_epoch = len(y) // N
    rng = SplitMix64(shuffle) if shuffle is not None else None
    order, epoch, losses = list(range(len(y))), -1, []
    for s in range(steps):
        while rng and epoch < s // per_epoch:
            order, epoch = perm(len(y), rng), epoch + 1
        rows = order[(s % per_epoch) * N:(s % per_epoch) * N + N]
        f = x[rows].reshape(N, F).astype(np.float64)
        t = y[rows]
        logits = f @ state["fc.weight"].T + state["fc.bias"]
        m = logits.max(1, keepdims=True)
        e = np.exp(logits - m)
        sm = e / e.sum(1, keepdims=True)
        losses.append(float(np.mean(m[:, 0] + np.log(e.sum(1)) -
                                    logits[np.arange(N), t])))
        g = (sm - np.eye(K)[t]) / N
        for p, grad in (("fc.weight", g.T @ f), ("fc.bias", g.sum(0))):
            buf = p + ".momentum_buffer"
            state[buf] = np.float32(0.9) * state[buf] + grad
            state[p] = state[p] - np.float32(0.1) * state[buf]
        mean = f.reshape(N, C, H * W).mean((0, 2))
        state["bn.running_mean"] = 0.9 * state["bn.running_mean"] + \
            0.1 * mean
    return losses, state


def fail(message):
    print("FAIL: " + message)
    sys.exit(1)


def check(args):
    result = json.load(open(args[0]))
    weights, _ = read_safetensors(args[2])
    start, steps = result["start_step"], result["steps"]
    losses, _ = reference(args[1], weights, start + steps, result["shuffle"],
                          "--channels-last" in args)
    diff = max(abs(a - b) for a, b in zip(result["losses"], losses[start:]))
    if len(result["losses"]) != steps or diff > 1e-5:
        fail("losses %s, reference %s" % (result["losses"], losses[start:]))
    print("OK: %d losses match (max diff %.1e)" % (steps, diff))


def checkpoint(args):
    path, steps, data, init = args[0], int(args[1]), args[2], args[3]
    shuffle = int(args[args.index("--shuffle") + 1]) \
        if "--shuffle" in args else None
    weights, meta = read_safetensors(path)
    opt, opt_meta = read_safetensors(
        path[:-len(".safetensors")] + ".optimizer.safetensors")
    _, state = reference(data, read_safetensors(init)[0], steps, shuffle)
    expected = {"fc.weight", "fc.bias", "bn.running_mean",
                "bn.num_batches_tracked"}
    if set(weights) != expected:
        fail("weights hold %s" % sorted(weights))
    nbt = weights["bn.num_batches_tracked"]
    if nbt.dtype != np.int64 or nbt.shape != () or int(nbt) != steps:
        fail("bn.num_batches_tracked is %r" % nbt)
    if set(opt) != {"fc.weight.momentum_buffer", "fc.bias.momentum_buffer"} \
            or opt_meta.get("step") != str(steps):
        fail("optimizer file holds %s, %s" % (sorted(opt), opt_meta))
    for name, value in list(weights.items()) + list(opt.items()):
        if name.endswith("num_batches_tracked"):
            continue
        diff = float(np.abs(value - state[name]).max())
        if diff > 1e-5:
            fail("%s differs by %g" % (name, diff))
    print("OK: checkpoint after %d steps matches" % steps)


def evaluate(args):
    result = json.load(open(args[0]))
    weights, _ = read_safetensors(args[2])
    _, state = reference(args[1], weights,
                         result["start_step"] + result["steps"],
                         result["shuffle"])
    arrays = np.load(args[3])
    f = arrays["x"].reshape(len(arrays["y"]), F).astype(np.float64)
    predicted = (f @ state["fc.weight"].T + state["fc.bias"]).argmax(1)
    correct = int((predicted == arrays["y"]).sum())
    if result["eval"]["correct"] != correct or \
            result["eval"]["images"] != len(arrays["y"]):
        fail("eval %s, reference %d of %d" % (result["eval"], correct,
                                              len(arrays["y"])))
    print("OK: eval %d of %d" % (correct, len(arrays["y"])))


def load_into_torch(args):
    import torch

    class RunningStats(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.register_buffer("running_mean", torch.zeros(C))
            self.register_buffer("num_batches_tracked",
                                 torch.tensor(0, dtype=torch.long))

    class Fake(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = torch.nn.Linear(F, K)
            self.bn = RunningStats()

    weights, _ = read_safetensors(args[0])
    model = Fake()
    model.load_state_dict({k: torch.from_numpy(v.copy())
                           for k, v in weights.items()}, strict=True)
    print("OK: load_state_dict(strict=True), num_batches_tracked %d" %
          int(model.bn.num_batches_tracked))


if __name__ == "__main__":
    command, rest = sys.argv[1], sys.argv[2:]
    if command == "dir":
        write_dir(rest)
    elif command == "weights":
        seed = int(rest[rest.index("--seed") + 1]) if "--seed" in rest else 0
        write_safetensors(rest[0], initial(seed))
    elif command == "data":
        write_data(rest)
    elif command == "check":
        check(rest)
    elif command == "checkpoint":
        checkpoint(rest)
    elif command == "eval":
        evaluate(rest)
    elif command == "torch":
        load_into_torch(rest)
    else:
        fail("unknown command " + command)
