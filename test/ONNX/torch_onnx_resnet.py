# memfmt against PyTorch on torchvision ResNets exported to ONNX.
#
# For each model: build the torchvision model with seeded weights and
# non-trivial batch-norm statistics (as test/E2E/torch_resnet.py does),
# export it with Debian's torch.onnx twice - the default eval export, which
# folds every BatchNorm into its Conv, and a training-preserving export
# without constant folding, which keeps BatchNormalization nodes - compile
# each ONNX file with memfmt-compile in both memory formats (the weights
# come from the file), run memfmt-run on the same input and compare with
# torch in NCHW and in channels-last: max|a - b| / max|torch| <= 1e-4.
# resnet18 also runs at an odd size (batch 3, 67x75). Last, the
# channels-last ResNet-50 from ONNX must leave as many runtime layout
# conversions as the zoo's ResNet-50 (memfmt-compile --model resnet50).
# torch runs with 2 threads.
#
# REQUIRES: torch, python-onnx, memfmt-compile, memfmt-run, memfmt-import
# RUN: %python %s --bin %memfmt_bin --work %t | FileCheck %s
# CHECK: resnet18 2x3x64x64 bn-folded opset 13 channels-last vs torch NCHW: PASS
# CHECK: resnet18 2x3x64x64 bn-folded opset 13 channels-last vs torch channels-last: PASS
# CHECK: resnet18 2x3x64x64 bn-folded opset 13 contiguous vs torch NCHW: PASS
# CHECK: resnet18 2x3x64x64 bn-kept opset 13 channels-last vs torch NCHW: PASS
# CHECK: resnet18 2x3x64x64 bn-kept opset 13 channels-last vs torch channels-last: PASS
# CHECK: resnet18 2x3x64x64 bn-kept opset 13 contiguous vs torch NCHW: PASS
# CHECK: resnet18 3x3x67x75 bn-folded opset 15 channels-last vs torch NCHW: PASS
# CHECK: resnet18 3x3x67x75 bn-folded opset 15 channels-last vs torch channels-last: PASS
# CHECK: resnet18 3x3x67x75 bn-folded opset 15 contiguous vs torch NCHW: PASS
# CHECK: resnet50 2x3x64x64 bn-folded opset 17 channels-last vs torch NCHW: PASS
# CHECK: resnet50 2x3x64x64 bn-folded opset 17 channels-last vs torch channels-last: PASS
# CHECK: resnet50 2x3x64x64 bn-folded opset 17 contiguous vs torch NCHW: PASS
# CHECK: resnet50 2x3x64x64 bn-kept opset 17 channels-last vs torch NCHW: PASS
# CHECK: resnet50 2x3x64x64 bn-kept opset 17 channels-last vs torch channels-last: PASS
# CHECK: resnet50 2x3x64x64 bn-kept opset 17 contiguous vs torch NCHW: PASS
# CHECK: resnet50 channels-last runtime conversions: ONNX bn-folded 1, ONNX bn-kept 1, zoo 1: PASS
# CHECK: all 16 checks passed
import argparse
import json
import os
import subprocess
import sys

import numpy as np
import torch
import torchvision
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "scripts"))
from torchref import (rel_error, remove_if_passed, run, seeded_model,  # noqa: E402
                      write_safetensors)

TOLERANCE = 1e-4

# (model, batch, height, width, opset, exports)
RUNS = [
    ("resnet18", 2, 64, 64, 13, ("bn-folded", "bn-kept")),
    ("resnet18", 3, 67, 75, 15, ("bn-folded",)),
    ("resnet50", 2, 64, 64, 17, ("bn-folded", "bn-kept")),
]


def export(model, x, path, opset, kind):
    if kind == "bn-folded":
        torch.onnx.export(model, x, path, opset_version=opset)
    else:
        # PRESERVE keeps the model's mode (eval: inference batch norm);
        # without constant folding the BatchNormalization nodes stay.
        torch.onnx.export(model, x, path, opset_version=opset,
                          training=torch.onnx.TrainingMode.PRESERVE,
                          do_constant_folding=False)


def count_ops(path, op_type):
    import onnx
    return sum(n.op_type == op_type for n in onnx.load(path).graph.node)


def runtime_conversions(out_dir):
    with open(os.path.join(out_dir, "report.json")) as f:
        return json.load(f)["runtime_conversions"]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin", required=True)
    parser.add_argument("--work", required=True)
    args = parser.parse_args()
    torch.set_num_threads(2)
    os.makedirs(args.work, exist_ok=True)
    compile_tool = os.path.join(args.bin, "memfmt-compile")
    run_tool = os.path.join(args.bin, "memfmt-run")
    passed = failed = 0
    conversions = {}
    for index, (name, batch, height, width, opset, exports) in \
            enumerate(RUNS):
        model = seeded_model(name, seed=index + 1)
        rng = np.random.default_rng(index + 7)
        x = rng.standard_normal((batch, 3, height, width), dtype=np.float32)
        shape = f"{batch}x3x{height}x{width}"
        tag = f"{name}.{shape}"
        input_path = os.path.join(args.work, f"{tag}.input.npy")
        np.save(input_path, x)
        with torch.no_grad():
            ref_nchw = model(torch.from_numpy(x)).numpy()
            cl_model = model.to(memory_format=torch.channels_last)
            ref_cl = cl_model(torch.from_numpy(x).to(
                memory_format=torch.channels_last)).numpy()
            model = model.to(memory_format=torch.contiguous_format)
        for kind in exports:
            onnx_path = os.path.join(args.work, f"{tag}.{kind}.onnx")
            export(model, torch.from_numpy(x), onnx_path, opset, kind)
            bn_nodes = count_ops(onnx_path, "BatchNormalization")
            if (kind == "bn-kept") != (bn_nodes > 0):
                raise SystemExit(f"{onnx_path}: {bn_nodes} BatchNormalization "
                                 f"nodes in a {kind} export")
            outputs = {}
            for fmt in ("channels-last", "contiguous"):
                out_dir = os.path.join(args.work, f"{tag}.{kind}.{fmt}")
                run([compile_tool, onnx_path, "--memory-format", fmt,
                     "-o", out_dir])
                out_path = out_dir + ".out.npy"
                run([run_tool, out_dir, "--input", input_path, "--output",
                     out_path])
                outputs[fmt] = np.load(out_path)
                if name == "resnet50" and fmt == "channels-last":
                    conversions[f"ONNX {kind}"] = runtime_conversions(out_dir)
            checks = [
                ("channels-last", "torch NCHW", outputs["channels-last"],
                 ref_nchw),
                ("channels-last", "torch channels-last",
                 outputs["channels-last"], ref_cl),
                ("contiguous", "torch NCHW", outputs["contiguous"], ref_nchw)]
            export_ok = True
            for fmt, peer, ours, theirs in checks:
                err = rel_error(ours, theirs)
                ok = ours.shape == theirs.shape and err <= TOLERANCE
                passed += ok
                failed += not ok
                export_ok = export_ok and ok
                print(f"{name} {shape} {kind} opset {opset} {fmt} vs {peer}: "
                      f"{'PASS' if ok else 'FAIL'} (rel err {err:.2e}, limit "
                      f"{TOLERANCE:.0e})")
            remove_if_passed(export_ok, onnx_path, *(
                os.path.join(args.work, f"{tag}.{kind}.{fmt}{suffix}")
                for fmt in outputs for suffix in ("", ".out.npy")))

    # The same conversions as the zoo's ResNet-50 at the same size.
    zoo_dir = os.path.join(args.work, "zoo.resnet50.channels-last")
    run([compile_tool, "--model", "resnet50", "--batch", "2", "--height", "64",
         "--width", "64", "--memory-format", "channels-last", "-o", zoo_dir])
    conversions["zoo"] = runtime_conversions(zoo_dir)
    ok = len(set(conversions.values())) == 1
    passed += ok
    failed += not ok
    print("resnet50 channels-last runtime conversions: " +
          ", ".join(f"{k} {v}" for k, v in conversions.items()) +
          (": PASS" if ok else ": FAIL"))
    if failed:
        print(f"{failed} of {passed + failed} checks failed")
        return 1
    print(f"all {passed} checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
