#!/usr/bin/env python3
"""What the Python package costs on top of the runtime (issue 17's target:
under 5% on ResNet-50 at batch 8).

One compiled model (memfmt.compile of the zoo's ResNet-50, channels-last,
synthetic weights) is timed, interleaved round by round, four ways:
  * memfmt-run DIR --bench N (the C++ runner: median ms per run);
  * model.benchmark(iters=N) (the same loop, driven from Python);
  * model(x) in a Python loop, x a torch.channels_last tensor (the whole
    per-call path: wrapping, layout check, GIL release, result tensor; no
    copy), median of N calls;
  * model(x) with x an NCHW numpy array (the same, plus the one conversion
    into the model's channels-last input layout).
Each row prints its median over rounds and its ratio to memfmt-run's.

Usage: PYTHONPATH=build/python bench/cpu/python.py [--model resnet50]
       [--batch 8] [--threads 2] [--rounds 3] [--iters 10]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "build", "python"))

import numpy as np  # noqa: E402
import torch  # noqa: E402

import memfmt  # noqa: E402


def python_loop(model, x, iters):
    model(x)
    times = []
    for _ in range(iters):
        t = time.perf_counter()
        model(x)
        times.append((time.perf_counter() - t) * 1e3)
    return statistics.median(times)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--model", default="resnet50")
    p.add_argument("--batch", type=int, default=8)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--iters", type=int, default=10)
    a = p.parse_args()
    with tempfile.TemporaryDirectory() as work:
        out = os.path.join(work, "model")
        model = memfmt.compile(a.model, batch=a.batch, out_dir=out,
                               threads=a.threads)
        shape = model.inputs[0].shape
        nchw = np.random.default_rng(0).standard_normal(shape).astype(
            np.float32)
        channels_last = torch.from_numpy(nchw).to(
            memory_format=torch.channels_last)
        npy = os.path.join(work, "x.npy")
        np.save(npy, nchw)
        rows = {"memfmt-run --bench": [], "model.benchmark": [],
                "model(x) channels-last tensor": [],
                "model(x) NCHW array (1 conversion)": []}
        for r in range(a.rounds):
            run = subprocess.run(
                [os.path.join(ROOT, "build/bin/memfmt-run"), out, "--input",
                 npy, "--bench", str(a.iters), "--json", "--threads",
                 str(a.threads)], check=True, capture_output=True, text=True)
            rows["memfmt-run --bench"].append(
                json.loads(run.stdout)["bench"]["median_ms"])
            rows["model.benchmark"].append(
                model.benchmark(iters=a.iters)["median_ms"])
            rows["model(x) channels-last tensor"].append(
                python_loop(model, channels_last, a.iters))
            assert model.last_run.conversions == 0
            rows["model(x) NCHW array (1 conversion)"].append(
                python_loop(model, nchw, a.iters))
            assert model.last_run.conversions == 1
            print(f"round {r + 1}/{a.rounds} done", file=sys.stderr)
        base = statistics.median(rows["memfmt-run --bench"])
        print(f"{a.model} batch {a.batch}, {a.threads} threads, "
              f"{model.device}; median of {a.rounds} rounds of {a.iters}")
        print(f"{'configuration':40s} {'ms/batch':>9s} {'vs memfmt-run':>14s}")
        for name, values in rows.items():
            ms = statistics.median(values)
            print(f"{name:40s} {ms:9.2f} {ms / base:13.3f}x")
        model.close()


if __name__ == "__main__":
    main()
