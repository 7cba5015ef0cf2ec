#!/usr/bin/env python3
# ===- compare_runs.py - Two memfmt-train runs of one step agree ----------=== #
#
# Part of the memfmt project.
#
# ===----------------------------------------------------------------------=== #
"""compare_runs.py A B TOL: the runs whose --json output is A.json and B.json
and whose --save checkpoints are A.safetensors (+ .optimizer.safetensors)
and B.safetensors agree: the same number of steps, every loss within TOL of
the other's (relative to max(1, |loss|)), and every saved tensor
(parameters, running statistics, num_batches_tracked, momentum buffers)
within TOL relative to its largest magnitude. Prints "OK: ..." or the
first differences, and exits 1 on a difference."""

import json
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "..", "..", "scripts"))
from torchref import read_safetensors  # noqa: E402


def state(prefix):
    tensors, _ = read_safetensors(prefix + ".safetensors")
    optimizer, _ = read_safetensors(prefix + ".optimizer.safetensors")
    tensors.update(optimizer)
    return tensors


def main():
    a, b, tol = sys.argv[1], sys.argv[2], float(sys.argv[3])
    la = json.load(open(a + ".json"))["losses"]
    lb = json.load(open(b + ".json"))["losses"]
    problems = []
    if len(la) != len(lb):
        problems.append(f"{len(la)} losses against {len(lb)}")
    for i, (x, y) in enumerate(zip(la, lb)):
        if not abs(x - y) <= tol * max(1.0, abs(y)):
            problems.append(f"step {i + 1}: loss {x} against {y}")
    sa, sb = state(a), state(b)
    if sorted(sa) != sorted(sb):
        problems.append(f"tensors {sorted(set(sa) ^ set(sb))} in one only")
    for name in sorted(set(sa) & set(sb)):
        x = sa[name].astype(np.float64)
        y = sb[name].astype(np.float64)
        scale = max(1e-12, float(np.max(np.abs(y))) if y.size else 0.0)
        err = float(np.max(np.abs(x - y))) / scale if y.size else 0.0
        if x.shape != y.shape or not err <= tol:
            problems.append(f"{name}: relative difference {err:.3g}")
    if problems:
        print("\n".join(problems[:10]))
        return 1
    print(f"OK: {len(la)} losses, {len(sa)} state tensors within {tol:g}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
