#!/usr/bin/env python3
"""torchvision's CNN zoo through PyTorch 2.x's default ONNX exporter, checked.

Debian's torch (1.13) has no dynamo exporter, so the test suite can only
hold small committed files written by it (test/ONNX/torch2-export.test).
This script does the whole zoo as a new user of PyTorch 2.x would: each
model is exported by `torch.onnx.export(..., dynamo=True)` (ai.onnx opset
20 or later, IR version 10, weights in an external file) with a *dynamic*
batch dimension, compiled by memfmt-compile with `--batch` pinning it, run
by memfmt-run in both memory formats, and compared with torch:
max |memfmt - torch| / max |torch| <= 1e-4 (the conformance tolerance of
issue 16). ONNX Runtime runs the same file beside it, and its own error
against torch is printed as the model's conditioning: a randomly
initialised deep network whose outputs reach the hundreds can differ by
more than 1e-4 between any two correct implementations, and the line says
so instead of hiding it.

Weights come from scripts/torchref.py (seeded, non-trivial batch-norm
statistics, calibrated on a random batch so activations stay O(1)); the
seed of each model is derived from its name, so a model's line does not
depend on which other models run.

Needs bench/.venv (PyTorch 2.x, onnxscript, onnxruntime from PyPI; never
used by the build or the tests):

  bench/.venv/bin/pip install onnxscript
  bench/.venv/bin/python bench/cpu/torch2_exports.py [--models a,b,...]
      [--size 64] [--batch 3] [--export-batch 2] [--work DIR]
"""
import argparse
import os
import subprocess
import sys
import tempfile
import zlib

import numpy as np

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(
    __file__))))
sys.path.insert(0, os.path.join(REPO, "scripts"))
from torchref import Tally, calibrated, rel_error, seeded_model  # noqa: E402

MODELS = ("resnet18,resnet50,resnext50_32x4d,wide_resnet50_2,alexnet,"
          "vgg11_bn,squeezenet1_1,densenet121,googlenet,inception_v3,"
          "mnasnet0_5,mnasnet1_0,regnet_x_400mf,regnet_y_400mf,mobilenet_v2,"
          "mobilenet_v3_small,mobilenet_v3_large,efficientnet_b0,"
          "efficientnet_b1,shufflenet_v2_x0_5,shufflenet_v2_x1_0,"
          "convnext_tiny,vit_b_16")
# Models whose torchvision definition fixes the input size (their adaptive
# pooling or position embeddings), and the constructor arguments some need.
FIXED_SIZE = {"alexnet": 224, "vgg11_bn": 224, "vit_b_16": 224,
              "inception_v3": 299}
KWARGS = {"googlenet": {"aux_logits": False, "init_weights": True},
          "inception_v3": {"aux_logits": False, "init_weights": True}}
TOLERANCE = 1e-4


def run(cmd):
    """Runs a tool; returns None on success, else its last output lines."""
    result = subprocess.run(cmd, capture_output=True, text=True)
    if result.returncode == 0:
        return None
    lines = (result.stdout + result.stderr).strip().splitlines()
    return " | ".join(lines[-3:])


def check_model(tally, args, name):
    import onnxruntime
    import torch
    seed = zlib.crc32(name.encode()) % 10000
    rng = np.random.default_rng(seed)
    size = FIXED_SIZE.get(name, args.size)
    shape = (3, size, size)
    model = calibrated(
        seeded_model(name, seed=seed, **KWARGS.get(name, {})),
        torch.from_numpy(rng.standard_normal((4,) + shape, dtype=np.float32)))
    x = rng.standard_normal((args.batch,) + shape, dtype=np.float32)
    path = os.path.join(args.work, f"{name}.onnx")
    batch = torch.export.Dim("batch", min=1, max=64)
    torch.onnx.export(model, (torch.from_numpy(x[:args.export_batch]),),
                      path, dynamic_shapes={"x": {0: batch}}, dynamo=True)
    with torch.no_grad():
        reference = model(torch.from_numpy(x)).numpy()
    session = onnxruntime.InferenceSession(
        path, providers=["CPUExecutionProvider"])
    ort_error = rel_error(
        session.run(None, {session.get_inputs()[0].name: x})[0], reference)
    input_path = os.path.join(args.work, f"{name}.input.npy")
    np.save(input_path, x)
    dims = "x".join(str(d) for d in x.shape)
    for fmt in ("channels-last", "contiguous"):
        out = os.path.join(args.work, f"{name}.{fmt}")
        failure = run([os.path.join(args.bin, "memfmt-compile"), path,
                       "--batch", str(args.batch), "--memory-format", fmt,
                       "-o", out]) or \
            run([os.path.join(args.bin, "memfmt-run"), out, "--input",
                 input_path, "--output", out + ".npy"])
        if failure:
            tally.check(f"{name} {dims} {fmt}", False, failure)
            continue
        ours = np.load(out + ".npy")
        error = rel_error(ours, reference) if ours.shape == reference.shape \
            else float("inf")
        tally.check(f"{name} {dims} {fmt}", error <= TOLERANCE,
                    f"rel err {error:.2e} vs torch, limit {TOLERANCE:.0e}; "
                    f"max |torch| {np.abs(reference).max():.3g}, "
                    f"onnxruntime vs torch {ort_error:.2e}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--models", default=MODELS)
    parser.add_argument("--size", type=int, default=64,
                        help="input height and width where the model allows")
    parser.add_argument("--batch", type=int, default=3,
                        help="batch compiled with --batch and run")
    parser.add_argument("--export-batch", type=int, default=2,
                        help="batch of the example input of the export")
    parser.add_argument("--bin", default=os.path.join(REPO, "build", "bin"))
    parser.add_argument("--work", default=None)
    args = parser.parse_args()
    import torch
    torch.set_num_threads(2)
    print(f"torch {torch.__version__}: torch.onnx.export(dynamo=True), "
          f"dynamic batch, compiled with --batch {args.batch}", flush=True)
    tally = Tally()
    with tempfile.TemporaryDirectory() as scratch:
        args.work = args.work or scratch
        os.makedirs(args.work, exist_ok=True)
        for name in args.models.split(","):
            try:
                check_model(tally, args, name)
            except Exception as error:  # an export failure is not memfmt's
                print(f"{name}: export failed: {type(error).__name__}: "
                      f"{str(error)[:300]}", flush=True)
            sys.stdout.flush()
    return tally.finish()


if __name__ == "__main__":
    sys.exit(main())
