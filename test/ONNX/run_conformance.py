#!/usr/bin/python3
# ONNX conformance: ONNX's own test cases through memfmt.
#
# For every case of libonnx-testdata's `node` and `pytorch-converted` suites
# (model.onnx + test_data_set_*/{input,output}_N.pb) that uses an operator
# of the importer's core set (SUPPORTED_OPS: Conv ... Split, docs/onnx.md)
# and the activations, arithmetic, data movement and normalisation beyond
# it (Sigmoid ... LayerNormalization, Softmax, Gather),
# this script
#
#   1. decides from the model alone whether the case is in scope: all its
#      ops are in the set, its data is f32 tensors, its convolutions and pools
#      are 1-D or 2-D, it is an inference graph (no training mode), and
#      every shape is known when compiling. Anything else is skipped with
#      the reason; memfmt's own verdict is never used to skip a case, so
#      an importer error on an in-scope case is a failure;
#   2. compiles the model with memfmt-compile in both memory formats
#      (--memory-format channels-last and contiguous), once per format;
#   3. converts each test data set's inputs to .npy (onnx.numpy_helper),
#      runs memfmt-run on them and compares every output with the expected
#      one: max|actual - expected| <= RTOL * max|expected| + ATOL, with
#      RTOL = 1e-4 and ATOL = 1e-5 (f32 with a different summation order).
#
# It prints one summary line
#
#   onnx conformance: P passed, F failed, S skipped (reason: count, ...)
#
# then the tolerance, then the Reshape, Split, Clip, Slice and Gather cases
# whose shape, bounds, slice or indices input is a graph input (skipped
# above: memfmt takes them as constants) run once more with that input frozen to its test value
# (unless a result is empty or a step negative), and the LayerNormalization
# cases once more without their Mean and InvStdDev outputs (training
# statistics), on a line of their own - they check the 0 and -1 of Reshape,
# unequal Split sizes, Clip's bounds, Slice's clamping and LayerNorm from
# every axis against ONNX's expected outputs - then one line per skipped
# case and its reason, and one
# per failure with the command or the error. Exit status 1 if any case
# failed. A case passes when every output of every data set matches in both
# formats.
#
# usage: run_conformance.py --bin BUILD/bin --work DIR [--data DIR]
#                           [--jobs N] [CASE_SUBSTRING...]
#
# The counts below are those of Debian's libonnx-testdata 1.12; every case
# that is in scope passes.
# REQUIRES: python-onnx, onnx-testdata, memfmt-compile, memfmt-run, memfmt-import
# RUN: %python %s --bin %memfmt_bin --work %t | FileCheck %s
# CHECK: onnx conformance: 152 passed, 0 failed, 201 skipped (out-of-scope ops: 110, 3-D conv/pool: 15, non-f32 data: 10, shapes or bounds given at run time: 37, training mode: 27, non-tensor types: 2)
# CHECK: with run-time shapes and bounds frozen to their test values (and LayerNormalization's statistics outputs dropped): 48 passed, 0 failed
# CHECK-NOT: FAILED
import argparse
import concurrent.futures
import glob
import os
import shutil
import subprocess
import sys

import numpy as np
import onnx
from onnx import numpy_helper

RTOL = 1e-4
ATOL = 1e-5
SUITES = ("node", "pytorch-converted")
FORMATS = ("channels-last", "contiguous")

SUPPORTED_OPS = {
    "Conv", "BatchNormalization", "Relu", "Add", "MaxPool", "AveragePool",
    "GlobalAveragePool", "Flatten", "Reshape", "Gemm", "MatMul", "Identity",
    "Dropout", "Constant", "Concat", "Split",
    # Beyond the core set: the activations and arithmetic of MobileNet,
    # EfficientNet and RegNetY.
    "Sigmoid", "HardSigmoid", "HardSwish", "Clip", "Mul", "Sub", "Div",
    "Gelu",
    # ShuffleNet's and ConvNeXt's data movement and normalisation.
    "Transpose", "Slice", "LayerNormalization",
    # ViT's attention and class token.
    "Softmax", "Gather",
}
SPATIAL_OPS = {"Conv", "MaxPool", "AveragePool", "GlobalAveragePool"}
FLOAT = onnx.TensorProto.FLOAT

# Skip categories, in the order the summary lists them.
SKIP_OPS = "out-of-scope ops"
SKIP_3D = "3-D conv/pool"
SKIP_DTYPE = "non-f32 data"
SKIP_RUNTIME_SHAPE = "shapes or bounds given at run time"
# The inputs memfmt takes as constants: Reshape's shape, Split's sizes,
# Clip's bounds, Slice's starts, ends, axes and steps.
CONSTANT_INPUTS = {"Reshape": (1,), "Split": (1,), "Clip": (1, 2),
                   "Slice": (1, 2, 3, 4), "Gather": (1,)}
SKIP_TRAINING = "training mode"
SKIP_TYPES = "non-tensor types"
SKIP_ORDER = (SKIP_OPS, SKIP_3D, SKIP_DTYPE, SKIP_RUNTIME_SHAPE,
              SKIP_TRAINING, SKIP_TYPES)


def dtype_name(elem_type):
    return onnx.TensorProto.DataType.Name(elem_type).lower()


def rank_of(value_info):
    t = value_info.type.tensor_type
    return len(t.shape.dim) if t.HasField("shape") else None


def classify(model):
    """(category, reason) if the case is out of scope, else None."""
    graph = model.graph
    ops = sorted({n.op_type for n in graph.node
                  if n.domain in ("", "ai.onnx")} |
                 {f"{n.domain}.{n.op_type}" for n in graph.node
                  if n.domain not in ("", "ai.onnx")})
    unsupported = [op for op in ops if op not in SUPPORTED_OPS]
    if unsupported:
        return SKIP_OPS, "uses " + ", ".join(unsupported)
    inits = {i.name for i in graph.initializer}
    inputs = [i for i in graph.input if i.name not in inits]
    for value in list(inputs) + list(graph.output):
        if not value.type.HasField("tensor_type"):
            return SKIP_TYPES, f"'{value.name}' is a sequence or optional"
    # Inputs that decide shapes or modes (Reshape's shape, Split's sizes,
    # Dropout's training_mode) must be constants to compile.
    input_names = {i.name: i for i in inputs}
    for node in graph.node:
        if node.op_type == "Dropout" and len(node.input) > 2 and \
                node.input[2] in input_names:
            return SKIP_TRAINING, ("Dropout's training_mode is a graph input "
                                   "(known only at run time)")
        for i in CONSTANT_INPUTS.get(node.op_type, ()):
            if len(node.input) > i and node.input[i] in input_names:
                return SKIP_RUNTIME_SHAPE, (
                    f"{node.op_type} input '{node.input[i]}' is a graph "
                    "input (known only at run time)")
    for value in list(inputs) + list(graph.output):
        elem = value.type.tensor_type.elem_type
        if elem != FLOAT:
            return SKIP_DTYPE, f"'{value.name}' is {dtype_name(elem)}"
    for init in graph.initializer:
        if init.data_type != FLOAT:
            return SKIP_DTYPE, f"initializer '{init.name}' is " + \
                dtype_name(init.data_type)
    # Ranks of the inputs of spatial ops, from the graph inputs (the test
    # models apply them to graph inputs).
    ranks = {i.name: rank_of(i) for i in inputs}
    for node in graph.node:
        if node.op_type in SPATIAL_OPS and node.input and \
                ranks.get(node.input[0]) == 5:
            return SKIP_3D, f"3-D {node.op_type}"
        if node.op_type == "BatchNormalization":
            training = any(a.name == "training_mode" and a.i for a in
                           node.attribute)
            if training or len([o for o in node.output if o]) > 1:
                return SKIP_TRAINING, "BatchNormalization in training mode"
        if node.op_type == "LayerNormalization" and \
                len([o for o in node.output if o]) > 1:
            return SKIP_TRAINING, ("LayerNormalization's Mean and InvStdDev "
                                   "outputs")
    return None


def load_tensor(path):
    tensor = onnx.TensorProto()
    with open(path, "rb") as f:
        tensor.ParseFromString(f.read())
    return tensor


def run(cmd):
    result = subprocess.run(cmd, capture_output=True, text=True)
    return result.returncode, result.stdout + result.stderr


def frozen_variant(args, suite, name):
    """A Reshape, Split or Clip case whose shape or bounds input is made an
    initializer with its test value (memfmt takes them as constants), written
    to the work directory; None if the case has empty tensors, data other
    than f32 or several data sets."""
    case_dir = os.path.join(args.data, suite, name)
    data_sets = glob.glob(os.path.join(case_dir, "test_data_set_*"))
    if len(data_sets) != 1:
        return None
    model = onnx.load(os.path.join(case_dir, "model.onnx"))
    tensors = {}
    for path in glob.glob(os.path.join(data_sets[0], "input_*.pb")):
        tensor = load_tensor(path)
        tensors[tensor.name] = tensor
    frozen = {n.input[i] for n in model.graph.node
              for i in CONSTANT_INPUTS.get(n.op_type, ())
              if len(n.input) > i and n.input[i]}
    for value in model.graph.input:
        if value.name not in tensors:
            return None
        if value.name not in frozen and \
                0 in numpy_helper.to_array(tensors[value.name]).shape:
            return None  # An empty tensor: out of scope.
    for path in glob.glob(os.path.join(data_sets[0], "output_*.pb")):
        if 0 in numpy_helper.to_array(load_tensor(path)).shape:
            return None  # An empty result: out of scope.
    for node in model.graph.node:
        if node.op_type == "Slice" and len(node.input) > 4 and \
                node.input[4] in tensors and \
                (numpy_helper.to_array(tensors[node.input[4]]) < 0).any():
            return None  # Negative steps on run-time data: out of scope.
    kept = [v for v in model.graph.input if v.name not in frozen]
    if any(v.type.tensor_type.elem_type != FLOAT
           for v in kept + list(model.graph.output)):
        return None  # Data other than f32: out of scope.
    for name_ in frozen:
        model.graph.initializer.append(tensors[name_])
    del model.graph.input[:]
    model.graph.input.extend(kept)
    work = os.path.join(args.work, "frozen", suite, name)
    os.makedirs(work, exist_ok=True)
    path = os.path.join(work, "model.onnx")
    onnx.save(model, path)
    return path


def statistics_dropped(args, suite, name):
    """A LayerNormalization case whose Mean and InvStdDev outputs (the
    statistics a training step saves) are dropped, so that Y is checked,
    written to the work directory; None for other training-mode cases."""
    case_dir = os.path.join(args.data, suite, name)
    model = onnx.load(os.path.join(case_dir, "model.onnx"))
    nodes = list(model.graph.node)
    if len(nodes) != 1 or nodes[0].op_type != "LayerNormalization":
        return None
    kept = nodes[0].output[0]
    del nodes[0].output[1:]
    outputs = [o for o in model.graph.output if o.name == kept]
    del model.graph.output[:]
    model.graph.output.extend(outputs)
    work = os.path.join(args.work, "frozen", suite, name)
    os.makedirs(work, exist_ok=True)
    path = os.path.join(work, "model.onnx")
    onnx.save(model, path)
    return path


def check_case(args, suite, name, model_path=None):
    """Compiles and runs one in-scope case; returns None or a failure."""
    case_dir = os.path.join(args.data, suite, name)
    model_path = model_path or os.path.join(case_dir, "model.onnx")
    model = onnx.load(model_path, load_external_data=False)
    inits = {i.name for i in model.graph.initializer}
    input_names = [i.name for i in model.graph.input if i.name not in inits]
    work = os.path.join(args.work, "frozen" if "frozen" in model_path else "",
                        suite, name, "run")
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    data_sets = sorted(glob.glob(os.path.join(case_dir, "test_data_set_*")))
    if not data_sets:
        return "no test data sets"
    # The inputs and expected outputs of each data set, as .npy.
    prepared = []
    for index, data_set in enumerate(data_sets):
        files = [None] * len(input_names)
        for i, path in enumerate(sorted(
                glob.glob(os.path.join(data_set, "input_*.pb")),
                key=lambda p: int(p.rsplit("_", 1)[1][:-3]))):
            tensor = load_tensor(path)
            if tensor.name in inits:
                continue  # Frozen into the model.
            slot = input_names.index(tensor.name) \
                if tensor.name in input_names else i
            if slot >= len(files):
                return f"{path}: more inputs than the model has"
            files[slot] = os.path.join(work, f"set{index}.input{slot}.npy")
            np.save(files[slot],
                    numpy_helper.to_array(tensor).astype(np.float32))
        if any(f is None for f in files):
            return f"{data_set}: an input is missing"
        expected = [numpy_helper.to_array(load_tensor(p)) for p in sorted(
            glob.glob(os.path.join(data_set, "output_*.pb")),
            key=lambda p: int(p.rsplit("_", 1)[1][:-3]))]
        # Outputs a variant dropped are the last ones.
        expected = expected[:len(model.graph.output)]
        prepared.append((files, expected))
    for fmt in FORMATS:
        out_dir = os.path.join(work, fmt)
        code, log = run([os.path.join(args.bin, "memfmt-compile"),
                         model_path, "--memory-format", fmt, "-o", out_dir])
        if code != 0:
            return f"memfmt-compile --memory-format {fmt} failed:\n" + log
        for index, (files, expected) in enumerate(prepared):
            out = os.path.join(work, f"{fmt}.set{index}.out.npy")
            cmd = [os.path.join(args.bin, "memfmt-run"), out_dir]
            for f in files:
                cmd += ["--input", f]
            cmd += ["--output", out]
            code, log = run(cmd)
            if code != 0:
                return f"memfmt-run ({fmt}) failed:\n" + log
            for k, want in enumerate(expected):
                path = out if len(expected) == 1 else \
                    out[:-4] + f".output_{k}.npy"
                got = np.load(path)
                if got.shape != want.shape:
                    return (f"{fmt}, data set {index}, output {k}: shape "
                            f"{got.shape}, expected {want.shape}")
                err = float(np.max(np.abs(got - want))) if got.size else 0.0
                scale = float(np.max(np.abs(want))) if want.size else 0.0
                limit = RTOL * scale + ATOL
                if not err <= limit:
                    return (f"{fmt}, data set {index}, output {k}: max abs "
                            f"error {err:.3g} > {limit:.3g} (max|expected| "
                            f"{scale:.3g})")
    shutil.rmtree(work, ignore_errors=True)
    return None


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin", required=True)
    parser.add_argument("--work", required=True)
    parser.add_argument("--data", default="/usr/share/libonnx-testdata/data")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("filters", nargs="*")
    args = parser.parse_args()
    os.makedirs(args.work, exist_ok=True)

    cases, skipped = [], []
    for suite in SUITES:
        suite_dir = os.path.join(args.data, suite)
        if not os.path.isdir(suite_dir):
            sys.exit(f"no ONNX test data at {suite_dir} (libonnx-testdata)")
        for name in sorted(os.listdir(suite_dir)):
            if args.filters and not any(f in name for f in args.filters):
                continue
            path = os.path.join(suite_dir, name, "model.onnx")
            if not os.path.exists(path):
                continue
            model = onnx.load(path, load_external_data=False)
            ops = {n.op_type for n in model.graph.node}
            if not ops & SUPPORTED_OPS:
                continue  # Not a test of these operators.
            verdict = classify(model)
            if verdict:
                skipped.append((suite, name) + verdict)
            else:
                cases.append((suite, name))

    # Cases with a shape given at run time also run with that shape frozen
    # to its test value, for the 0 and -1 of Reshape and Split's sizes.
    variants = []
    for suite, name, category, _ in skipped:
        if category == SKIP_RUNTIME_SHAPE:
            path = frozen_variant(args, suite, name)
            if path:
                variants.append((suite, name, path))
        elif category == SKIP_TRAINING:
            path = statistics_dropped(args, suite, name)
            if path:
                variants.append((suite, name, path))

    failures, variant_failures = [], []
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        results = pool.map(lambda c: (c, check_case(args, *c)), cases)
        for (suite, name), failure in results:
            if failure:
                failures.append((suite, name, failure))
        results = pool.map(lambda c: (c, check_case(args, *c)), variants)
        for (suite, name, _), failure in results:
            if failure:
                variant_failures.append((suite, name, failure))

    counts = {}
    for _, _, category, _ in skipped:
        counts[category] = counts.get(category, 0) + 1
    reasons = ", ".join(f"{c}: {counts[c]}" for c in SKIP_ORDER if c in counts)
    passed = len(cases) - len(failures)
    print(f"onnx conformance: {passed} passed, {len(failures)} failed, "
          f"{len(skipped)} skipped" + (f" ({reasons})" if reasons else ""))
    print(f"(tolerance: max|actual - expected| <= {RTOL:g} * max|expected| "
          f"+ {ATOL:g}; both memory formats)")
    print(f"with run-time shapes and bounds frozen to their test values "
          f"(and LayerNormalization's statistics outputs dropped): "
          f"{len(variants) - len(variant_failures)} passed, "
          f"{len(variant_failures)} failed")
    for suite, name, category, reason in skipped:
        print(f"skipped {suite}/{name}: {category}: {reason}")
    for suite, name, failure in failures:
        print(f"FAILED {suite}/{name}: {failure}")
    for suite, name, failure in variant_failures:
        print(f"FAILED {suite}/{name} (frozen shapes): {failure}")
    return 1 if failures or variant_failures else 0


if __name__ == "__main__":
    sys.exit(main())
