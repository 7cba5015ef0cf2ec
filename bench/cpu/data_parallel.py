#!/usr/bin/env python3
"""memfmt's data-parallel training on one machine: R replicas x T/R threads
against one process x T threads, at the same global batch.

For each model and global batch G, one run measures, interleaved round by
round so that a noisy machine hurts both alike:
  * one process: memfmt-compile --train at batch G, memfmt-train --threads T;
  * R replicas: the same model compiled at batch G/R, started by
    `mpirun -np R memfmt-train --threads T/R` (Open MPI, shared memory);
both channels-last, from the same seeded torchvision weights (synthetic),
on the same random data. memfmt-train --json --profile gives every step's
time (the first step, which creates oneDNN's primitives, is left out) and
the kernels' time per step, among them the gradient all-reduce
(memfmt_all_reduce_f32: the time rank 0 spends in the collectives,
waiting for the other replica included). The bytes all-reduced per step are
the parameters' (one f32 gradient each, summed in place).
Results are printed and appended to bench/RESULTS.md with the machine, the
commit and the command.

Usage: bench/cpu/data_parallel.py [--models resnet18,resnet50]
                                  [--global-batch 16] [--size 224]
                                  [--replicas 2] [--threads 2]
                                  [--rounds 3] [--steps 3] [--no-record]
"""
import argparse
import datetime
import json
import os
import platform
import subprocess
import sys
import tempfile

import numpy as np

import machine  # bench/cpu/machine.py, beside this script

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def median(values):
    values = sorted(values)
    n = len(values)
    return values[n // 2] if n % 2 else 0.5 * (values[n // 2 - 1] + values[n // 2])


def mpirun(replicas):
    return ["mpirun", "--allow-run-as-root", "--oversubscribe", "--bind-to",
            "none", "-np", str(replicas)]


def train(directory, data, steps, threads, replicas):
    """memfmt-train's JSON report of `steps` + 1 steps."""
    command = [os.path.join(ROOT, "build/bin/memfmt-train"), directory,
               "--data", data, "--steps", str(steps + 1), "--no-shuffle",
               "--json", "--profile", "--threads", str(threads)]
    if replicas > 1:
        command = mpirun(replicas) + command
    env = dict(os.environ, OMPI_MCA_btl_vader_single_copy_mechanism="none")
    out = subprocess.run(command, check=True, capture_output=True, text=True,
                         env=env).stdout
    return json.loads(out[out.index("{"):])


def all_reduce_ms(report):
    return sum(k["ms_per_step"] for k in report["profile"]["kernels"]
               if k["kernel"].startswith("memfmt_all_reduce"))


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--models", default="resnet18,resnet50")
    p.add_argument("--global-batch", type=int, default=16)
    p.add_argument("--size", type=int, default=224)
    p.add_argument("--replicas", type=int, default=2)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--steps", type=int, default=3)
    p.add_argument("--no-record", action="store_true")
    args = p.parse_args()
    if args.global_batch % args.replicas or args.threads % args.replicas:
        raise SystemExit("--global-batch and --threads must be multiples of "
                         "--replicas")
    subprocess.run([os.path.join(ROOT, "scripts/build.sh"), "memfmt-compile",
                    "memfmt-train"], check=True, stdout=subprocess.DEVNULL)
    work = tempfile.mkdtemp(prefix="memfmt-dp-")
    rng = np.random.default_rng(0)
    rows = args.global_batch * (args.steps + 1)
    data = os.path.join(work, "data.npz")
    np.savez(data, x=rng.standard_normal((rows, 3, args.size, args.size),
                                         dtype=np.float32),
             y=rng.integers(0, 1000, size=rows, dtype=np.int64))
    per_replica = args.global_batch // args.replicas
    configs = [("1 process", args.global_batch, args.threads, 1),
               (f"{args.replicas} replicas", per_replica,
                args.threads // args.replicas, args.replicas)]
    lines = []
    for model in args.models.split(","):
        dirs = {}
        for label, batch, threads, replicas in configs:
            d = os.path.join(work, f"{model}.{batch}")
            if d not in dirs.values():
                subprocess.run(
                    [os.path.join(ROOT, "build/bin/memfmt-compile"), "--model",
                     model, "--train", "--batch", str(batch), "--height",
                     str(args.size), "--width", str(args.size), "--weights",
                     "synthetic:0", "-o", d], check=True,
                    stdout=subprocess.DEVNULL)
            dirs[label] = d
        with open(os.path.join(dirs[configs[0][0]], "manifest.json")) as f:
            manifest = json.load(f)
        gradient_bytes = 4 * sum(
            int(np.prod(t["shape"])) for t in manifest["parameters"]
            if t.get("init") != "zeros" and "running_" not in t["name"]
            and not t["name"].endswith("num_batches_tracked"))
        step_ms = {c[0]: [] for c in configs}
        reduce_ms = {c[0]: [] for c in configs}
        for r in range(args.rounds):
            for label, batch, threads, replicas in configs:
                report = train(dirs[label], data, args.steps, threads,
                               replicas)
                step_ms[label].append(median(report["step_ms"][1:]))
                reduce_ms[label].append(all_reduce_ms(report))
                log(f"{model} round {r + 1} {label}: "
                    f"{step_ms[label][-1]:.1f} ms/step, all-reduce "
                    f"{reduce_ms[label][-1]:.1f} ms")
        base = median(step_ms[configs[0][0]])
        for label, batch, threads, replicas in configs:
            ms = median(step_ms[label])
            lines.append(
                f"| {model} | {args.global_batch} | {label} x {threads} "
                f"thread{'s' if threads > 1 else ''} (batch {batch}"
                f"{' each' if replicas > 1 else ''}) | "
                f"{ms:.0f} | {args.global_batch * 1e3 / ms:.1f} | "
                f"{base / ms:.2f}x | {median(reduce_ms[label]):.1f} | "
                f"{gradient_bytes / 2**20:.1f} |")
    table = ("| model | global batch | configuration | ms / step | images/s "
             "| vs 1 process | all-reduce ms / step | MiB all-reduced / step "
             "|\n|---|---|---|---|---|---|---|---|\n" + "\n".join(lines))
    print(table)
    if not args.no_record:
        commit = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short",
                                 "HEAD"], capture_output=True,
                                text=True).stdout.strip()
        cpu = machine.cpu_line()
        mpi = subprocess.run(["mpirun", "--version"], capture_output=True,
                             text=True).stdout.splitlines()[0]
        with open(os.path.join(ROOT, "bench", "RESULTS.md"), "a") as f:
            f.write(f"\n## Data-parallel training, {datetime.date.today()}, "
                    f"commit {commit}\n\nMachine: {cpu}, {os.cpu_count()} "
                    f"vCPUs, {platform.system()}; {mpi}, shared memory. "
                    f"Command: `bench/cpu/data_parallel.py "
                    f"{' '.join(sys.argv[1:])}`. Step times are medians over "
                    f"{args.rounds} interleaved rounds of the per-round "
                    f"median of {args.steps} steps (after one warm-up step); "
                    f"the all-reduce time is rank 0's, from memfmt-train "
                    f"--profile.\n\n{table}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
