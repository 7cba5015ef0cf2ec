#!/usr/bin/env python3
"""memfmt on a GPU against PyTorch: correctness checks and the benchmark.

Called by bench/gpu/run.sh on the GPU server, after the kernel tests, with
the artifacts of bench/gpu/prepare.sh (memfmt-run and compiled ResNet-50
models for target cuda: NCHW and channels-last, f32 and bf16, batch 1, 32 and
256). Needs PyTorch 2.x with torchvision, safetensors and numpy; no network.

Checks (exit status 1 when one fails):
  * torch: a seeded torchvision ResNet-50 (non-trivial batch-norm statistics)
    is exported to safetensors; memfmt runs it on 32 images with those
    weights (memfmt-run --weights, one CUDA graph) and is compared with torch
    f32 NCHW with TF32 off: max |a - b| / max |b| <= 1e-3 for f32, and for
    bf16 <= 6e-2 with at least 90% top-1 agreement (AMP's own error against
    f32 is printed beside it);
  * CPU reference: the batch-1 models run memfmt-run --check (the CPU
    reference kernels on the same weights and input).
Training (bench/gpu/training.py): memfmt-train's steps on the GPU against
the same steps on the CPU, and ResNet-50 training steps against PyTorch's.
Benchmark: per batch size, PyTorch eager NCHW f32, channels-last f32,
channels-last + AMP bf16 and torch.compile (channels-last + AMP), and the
memfmt models with a CUDA graph (and one without); each the median of many
iterations, each timed with CUDA events; images/s and ratios. f32 runs with
TF32 off on both sides (PyTorch's cuDNN default would use TF32).

Writes WORK/summary.json, WORK/table.md and WORK/memfmt.log, and appends a
dated section to --results (bench/RESULTS.md).

--cpu-smoke runs the same plumbing on a machine without a GPU (torch on the
CPU, memfmt-run --cpu, batch 1, a few iterations), to test this script.
"""
import argparse
import datetime
import json
import os
import platform
import statistics
import subprocess
import sys
import time

import numpy as np

# The model and weights helpers the CPU tests use (the GPU run starts from a
# copy of the repository, so scripts/ is there).
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "scripts"))
from torchref import seeded_model, write_safetensors  # noqa: E402
import torch
import torchvision

import training  # bench/gpu/training.py, beside this script

BATCHES = (1, 32, 256)
ITERATIONS = {1: 200, 32: 50, 256: 20}
WARMUP = {1: 20, 32: 5, 256: 3}
F32_TOLERANCE = 1e-3
BF16_TOLERANCE = 6e-2
# bf16 top-1 agreement with torch f32: 90%, or torch AMP's own agreement
# less 10 points where that is lower. A seeded ResNet-50 on noise has top-2
# logit gaps of a few hundredths of a standard deviation, so bf16 rounding
# flips some argmaxes whoever computes it (on the CPU: 2 of 32 images for
# torch AMP and for memfmt bf16, commit d28a882).
BF16_TOP1 = 0.9
BF16_TOP1_BELOW_AMP = 0.1
VARIANTS = [("nchw", "f32"), ("cl", "f32"), ("nchw", "bf16"), ("cl", "bf16")]
NAMES = {"nchw": "NCHW", "cl": "channels-last"}


# --cpu-smoke: everything on the CPU, small.
SMOKE = False
DEVICE = "cuda"


def sync():
    if not SMOKE:
        torch.cuda.synchronize()


class Runner:
    """Runs memfmt-run with a deadline and logs everything."""

    def __init__(self, artifacts, work, deadline, bin_dir=None):
        self.bin = os.path.join(bin_dir or os.path.join(artifacts, "bin"),
                                "memfmt-run")
        self.models = os.path.join(artifacts, "models")
        self.deadline = deadline
        self.log = open(os.path.join(work, "memfmt.log"), "a")

    def left(self):
        return self.deadline - time.time()

    def model(self, fmt, prec, batch):
        return os.path.join(self.models, f"resnet50-{fmt}-{prec}-b{batch}")

    def run(self, args, limit=180, env=None):
        timeout = max(5.0, min(limit, self.left() - 5))
        cmd = [self.bin] + args + ["--json"] + (["--cpu"] if SMOKE else [])
        self.log.write("$ " + " ".join(cmd) + "\n")
        self.log.flush()
        try:
            p = subprocess.run(cmd, capture_output=True, text=True,
                               timeout=timeout,
                               env=dict(os.environ, **(env or {})))
        except subprocess.TimeoutExpired:
            self.log.write(f"timed out after {timeout:.0f} s\n")
            return {"error": f"timed out after {timeout:.0f} s"}
        self.log.write(p.stdout + p.stderr + f"exit {p.returncode}\n")
        self.log.flush()
        try:
            result = json.loads(p.stdout.strip().splitlines()[-1])
        except (ValueError, IndexError):
            result = {"error": (p.stderr or p.stdout).strip()[-500:]}
        result["exit_code"] = p.returncode
        return result


def rel_error(a, b):
    return float(np.max(np.abs(a - b)) / max(float(np.max(np.abs(b))), 1e-30))


def top1(a, b):
    return float(np.mean(np.argmax(a, axis=1) == np.argmax(b, axis=1)))


def exact_f32():
    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cuda.matmul.allow_tf32 = False


#===----------------------------------------------------------------------===#
# Checks
#===----------------------------------------------------------------------===#

def check(runner, work, model):
    """memfmt against torch (batch 32) and the CPU reference (batch 1)."""
    results = {"torch": [], "reference": []}
    check_batch = 1 if SMOKE else 32
    weights = os.path.join(work, "resnet50.safetensors")
    write_safetensors(weights, model.state_dict())
    gen = torch.Generator().manual_seed(7)
    x = torch.randn(check_batch, 3, 224, 224, generator=gen)
    x_path = os.path.join(work, f"x{check_batch}.npy")
    np.save(x_path, x.numpy())
    exact_f32()
    with torch.no_grad():
        m = model.to(DEVICE)
        ref = m(x.to(DEVICE)).float().cpu().numpy()
        m_cl = m.to(memory_format=torch.channels_last)
        x_cl = x.to(DEVICE).to(memory_format=torch.channels_last)
        ref_cl = m_cl(x_cl).float().cpu().numpy()
        with torch.autocast(DEVICE, dtype=torch.bfloat16):
            amp = m_cl(x_cl).float().cpu().numpy()
    results["torch_cl_vs_nchw"] = rel_error(ref_cl, ref)
    results["torch_amp_vs_f32"] = {"rel": rel_error(amp, ref),
                                   "top1": top1(amp, ref)}
    print(f"torch: channels-last vs NCHW rel err {rel_error(ref_cl, ref):.2e};"
          f" AMP bf16 vs f32 rel err {rel_error(amp, ref):.2e}, top-1 "
          f"{top1(amp, ref):.0%}", flush=True)
    ok = True
    for fmt, prec in VARIANTS:
        out = os.path.join(work, f"out-{fmt}-{prec}.npy")
        r = runner.run([runner.model(fmt, prec, check_batch), "--weights",
                        weights, "--input", x_path, "--output", out,
                        "--cuda-graph"])
        entry = {"format": fmt, "precision": prec, "batch": check_batch}
        if r.get("exit_code") != 0 or not os.path.exists(out):
            entry.update(passed=False, error=r.get("error", "no output"))
        else:
            y = np.load(out)
            err, agree = rel_error(y, ref), top1(y, ref)
            limit = F32_TOLERANCE if prec == "f32" else BF16_TOLERANCE
            top1_limit = min(BF16_TOP1, results["torch_amp_vs_f32"]["top1"]
                             - BF16_TOP1_BELOW_AMP)
            passed = err <= limit and (prec == "f32" or agree >= top1_limit)
            entry.update(rel_error=err, top1=agree, limit=limit,
                         passed=passed, device=r.get("device", ""))
        ok &= entry["passed"]
        results["torch"].append(entry)
        print(f"check vs torch f32: memfmt {NAMES[fmt]} {prec} batch "
              f"{check_batch}: "
              f"{'PASS' if entry['passed'] else 'FAIL'} "
              + (f"(rel err {entry['rel_error']:.2e}, limit "
                 f"{entry['limit']:.0e}, top-1 {entry['top1']:.0%})"
                 if "rel_error" in entry else entry.get("error", "")),
              flush=True)
    x1_path = os.path.join(work, "x1.npy")
    np.save(x1_path, x[:1].numpy())
    for fmt, prec in VARIANTS:
        if runner.left() < 60:
            print("check vs CPU reference: skipped (time)", flush=True)
            break
        for graph in ([False, True] if (fmt, prec) == ("cl", "bf16")
                      else [False]):
            args = [runner.model(fmt, prec, 1), "--weights", weights,
                    "--input", x1_path, "--check"]
            if graph:
                args.append("--cuda-graph")
            r = runner.run(args, limit=150)
            c = r.get("check", {})
            entry = {"format": fmt, "precision": prec, "batch": 1,
                     "cuda_graph": graph, "passed": bool(c.get("pass")),
                     "max_rel_error": c.get("max_rel_error"),
                     "tolerance": c.get("tolerance"),
                     "error": r.get("error")}
            ok &= entry["passed"]
            results["reference"].append(entry)
            print(f"check vs CPU reference: memfmt {NAMES[fmt]} {prec} "
                  f"batch 1{' (CUDA graph)' if graph else ''}: "
                  f"{'PASS' if entry['passed'] else 'FAIL'} "
                  + (f"(max rel err {entry['max_rel_error']:.2e}, tolerance "
                     f"{entry['tolerance']:.0e})"
                     if entry["max_rel_error"] is not None
                     else str(entry["error"])), flush=True)
    results["passed"] = ok
    return results


#===----------------------------------------------------------------------===#
# Benchmark
#===----------------------------------------------------------------------===#

def time_torch(fn, batch):
    """Median ms of ITERATIONS[batch] calls, each between two CUDA events."""
    with torch.no_grad():
        for _ in range(WARMUP[batch]):
            fn()
        sync()
        times = []
        for _ in range(ITERATIONS[batch]):
            if SMOKE:
                t0 = time.perf_counter()
                fn()
                times.append((time.perf_counter() - t0) * 1e3)
                continue
            start = torch.cuda.Event(enable_timing=True)
            end = torch.cuda.Event(enable_timing=True)
            start.record()
            fn()
            end.record()
            end.synchronize()
            times.append(start.elapsed_time(end))
    return statistics.median(times)


def bench(runner, model):
    """rows[name][batch] = median ms (or None)."""
    exact_f32()
    torch.backends.cudnn.benchmark = True
    m = model.to(DEVICE).eval()
    m_cl = seeded_model("resnet50", 1).to(DEVICE).eval().to(
        memory_format=torch.channels_last)
    compiled = None
    rows = {}

    def put(name, batch, ms):
        rows.setdefault(name, {})[batch] = ms
        print(f"bench {name} batch {batch}: "
              + (f"{ms:.3f} ms, {batch * 1000.0 / ms:.1f} images/s"
                 if ms else "skipped"), flush=True)

    for batch in BATCHES:
        if runner.left() < 30:
            print(f"bench batch {batch}: skipped (time)", flush=True)
            continue
        x = torch.randn(batch, 3, 224, 224, device=DEVICE)
        x_cl = x.to(memory_format=torch.channels_last)
        put("PyTorch eager NCHW f32", batch, time_torch(lambda: m(x), batch))
        put("PyTorch eager channels-last f32", batch,
            time_torch(lambda: m_cl(x_cl), batch))

        def amp():
            with torch.autocast(DEVICE, dtype=torch.bfloat16):
                return m_cl(x_cl)
        put("PyTorch eager channels-last + AMP bf16", batch,
            time_torch(amp, batch))
        # torch.compile compiles per batch size; skip it when time is short.
        if runner.left() > 150 and not SMOKE:
            try:
                if compiled is None:
                    compiled = torch.compile(m_cl)

                def comp():
                    with torch.autocast("cuda", dtype=torch.bfloat16):
                        return compiled(x_cl)
                put("torch.compile channels-last + AMP bf16", batch,
                    time_torch(comp, batch))
            except Exception as e:  # noqa: BLE001 - report and go on
                print(f"torch.compile failed: {e}", flush=True)
                put("torch.compile channels-last + AMP bf16", batch, None)
        else:
            put("torch.compile channels-last + AMP bf16", batch, None)
        for fmt, prec in VARIANTS:
            # channels-last bf16 also without the CUDA graph, and with the
            # convolutions' bias/residual/relu as a separate epilogue
            # (MEMFMT_CUDA_FUSED_CONV=0) instead of inside cuDNN.
            for graph, fused in ([(True, True), (False, True), (True, False)]
                                 if (fmt, prec) == ("cl", "bf16")
                                 else [(True, True)]):
                name = (f"memfmt {NAMES[fmt]} {prec}"
                        + ("" if graph else " (no CUDA graph)")
                        + ("" if fused else " (separate conv epilogue)"))
                if runner.left() < 20:
                    put(name, batch, None)
                    continue
                args = [runner.model(fmt, prec, batch), "--bench",
                        str(ITERATIONS[batch])]
                if graph:
                    args.append("--cuda-graph")
                r = runner.run(args, limit=120,
                               env=None if fused else
                               {"MEMFMT_CUDA_FUSED_CONV": "0"})
                ms = r.get("bench", {}).get("median_ms")
                if r.get("exit_code") != 0:
                    print(f"memfmt-run failed: {r.get('error')}", flush=True)
                    ms = None
                put(name, batch, ms)
        del x, x_cl
        if not SMOKE:
            torch.cuda.empty_cache()
    return rows


def table(rows):
    def cell(row, batch):
        ms = rows[row].get(batch)
        return f"{ms:.2f} ms / {batch * 1000.0 / ms:,.0f}" if ms else "-"

    def ratio(row, base, batch):
        a, b = rows[row].get(batch), rows.get(base, {}).get(batch)
        return f"{b / a:.2f}x" if a and b else "-"

    base = "PyTorch eager NCHW f32"
    amp = "PyTorch eager channels-last + AMP bf16"
    lines = ["| Implementation | " + " | ".join(
        f"batch {b}: median / images/s" for b in BATCHES) +
        " | speed-up vs PyTorch NCHW f32 (b1 / b32 / b256) "
        "| vs PyTorch channels-last + AMP (b1 / b32 / b256) |",
        "|---|" + "---|" * len(BATCHES) + "---|---|"]
    for row in rows:
        lines.append(f"| {row} | " + " | ".join(cell(row, b) for b in BATCHES)
                     + " | " + " / ".join(ratio(row, base, b) for b in BATCHES)
                     + " | " + " / ".join(ratio(row, amp, b) for b in BATCHES)
                     + " |")
    return "\n".join(lines)


#===----------------------------------------------------------------------===#
# Report
#===----------------------------------------------------------------------===#

def commit(artifacts):
    try:
        with open(os.path.join(artifacts, "COMMIT")) as f:
            lines = f.read().split()
        return lines[0][:12] + (" (dirty tree)" if "dirty" in lines else "")
    except OSError:
        return "unknown"


def driver():
    try:
        return subprocess.run(
            ["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
            capture_output=True, text=True).stdout.strip().splitlines()[0]
    except (OSError, IndexError):
        return "unknown"


def gpu_name():
    return "CPU (smoke test)" if SMOKE else torch.cuda.get_device_name()


def report(args, summary, bench_table):
    checks = summary.get("checks", {})
    device = next((e.get("device") for e in checks.get("torch", [])
                   if e.get("device")), "")
    lines = [
        "",
        f"## GPU: {gpu_name()}, "
        f"{datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC",
        "",
        f"- Command: `bench/gpu/run.sh` (artifacts of "
        f"`bench/gpu/prepare.sh`), commit {commit(args.artifacts)}",
        f"- GPU: {gpu_name()}, driver {driver()}; "
        f"memfmt runtime: {device or 'n/a'}",
        f"- PyTorch {torch.__version__} (CUDA {torch.version.cuda}, cuDNN "
        f"{torch.backends.cudnn.version()}), torchvision "
        f"{torchvision.__version__}, Python {platform.python_version()}",
        f"- Kernel tests (RuntimeCudaTests): {args.tests}",
    ]
    for e in checks.get("torch", []):
        lines.append(
            f"- ResNet-50 memfmt {NAMES[e['format']]} {e['precision']} vs "
            f"torch f32 (batch {e['batch']}, same weights): "
            + ("PASS" if e["passed"] else "FAIL")
            + (f", max rel err {e['rel_error']:.2e} (limit {e['limit']:.0e}),"
               f" top-1 agreement {e['top1']:.0%}" if "rel_error" in e
               else f" ({e.get('error')})"))
    if "torch_amp_vs_f32" in checks:
        a = checks["torch_amp_vs_f32"]
        lines.append(f"- For scale: torch AMP bf16 vs torch f32: max rel err "
                     f"{a['rel']:.2e}, top-1 agreement {a['top1']:.0%}")
    for e in checks.get("reference", []):
        lines.append(
            f"- memfmt-run --check (CPU reference kernels), "
            f"{NAMES[e['format']]} {e['precision']} batch 1"
            f"{', CUDA graph' if e['cuda_graph'] else ''}: "
            + ("PASS" if e["passed"] else "FAIL")
            + (f", max rel err {e['max_rel_error']:.2e}"
               if e["max_rel_error"] is not None else ""))
    for e in summary.get("training_checks", []):
        lines.append(
            f"- Training step {e['name']}, {e.get('steps', '?')} SGD steps, "
            f"memfmt-train on the GPU vs the CPU (same data and weights): "
            + ("PASS" if e["passed"] else "FAIL")
            + (f", max rel err {e['rel_error']:.2e} ({e['worst']})"
               if "rel_error" in e else f" ({e.get('error')})"))
    lines += [
        "",
        "Median over many iterations (200 / 50 / 20 for batch 1 / 32 / 256,"
        " after warm-up), each timed with CUDA events; ResNet-50 224x224;"
        " f32 with TF32 off on both sides; memfmt runs one CUDA graph per"
        " forward pass unless noted; memfmt channels-last models take"
        " channels-last input, as the PyTorch channels-last runs do.",
        "",
        bench_table,
        "",
    ]
    text = "\n".join(lines)
    if not os.path.exists(args.results):
        text = "# Benchmark results\n" + text
    with open(args.results, "a") as f:
        f.write(text)
    return text


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--artifacts", required=True)
    p.add_argument("--work", required=True)
    p.add_argument("--deadline", type=float, required=True)
    p.add_argument("--tests", default="not run")
    p.add_argument("--results", default="bench/RESULTS.md")
    p.add_argument("--bin", help="memfmt-run's directory (default: "
                   "ARTIFACTS/bin)")
    p.add_argument("--cpu-smoke", action="store_true",
                   help="test this script without a GPU (see the top)")
    args = p.parse_args()
    global SMOKE, DEVICE, BATCHES
    if args.cpu_smoke:
        SMOKE, DEVICE, BATCHES = True, "cpu", (1,)
        ITERATIONS[1], WARMUP[1] = 3, 1
        torch.set_num_threads(2)
    elif not torch.cuda.is_available():
        print("memfmt_gpu.py: torch sees no CUDA device", file=sys.stderr)
        return 1
    runner = Runner(args.artifacts, args.work, args.deadline, args.bin)
    summary = {"tests": args.tests}
    model = seeded_model("resnet50", 1)
    try:
        summary["checks"] = check(runner, args.work, model)
    except Exception as e:  # noqa: BLE001 - report, then benchmark anyway
        print(f"checks failed with {type(e).__name__}: {e}", flush=True)
        summary["checks"] = {"passed": False, "error": str(e)}
    if not SMOKE:
        try:
            summary["training_checks"] = training.check(
                runner, args.artifacts, args.work)
        except Exception as e:  # noqa: BLE001 - report, then benchmark
            print(f"training checks failed with {type(e).__name__}: {e}",
                  flush=True)
            summary["training_checks"] = [{"name": "all", "passed": False,
                                           "error": str(e)}]
    rows = bench(runner, seeded_model("resnet50", 1))
    summary["bench_ms"] = rows
    bench_table = table(rows)
    if not SMOKE:
        try:
            train_rows = training.bench(runner, args.artifacts, args.work)
            summary["training_bench_ms"] = train_rows
            bench_table += "\n\n" + training.table(train_rows)
        except Exception as e:  # noqa: BLE001 - report what there is
            print(f"training bench failed with {type(e).__name__}: {e}",
                  flush=True)
    with open(os.path.join(args.work, "table.md"), "w") as f:
        f.write(bench_table + "\n")
    with open(os.path.join(args.work, "summary.json"), "w") as f:
        json.dump(summary, f, indent=1)
    print(report(args, summary, bench_table), flush=True)
    passed = (summary["checks"].get("passed", False) and args.tests == "PASS"
              and all(e["passed"]
                      for e in summary.get("training_checks", [])))
    return 0 if passed else 1


if __name__ == "__main__":
    sys.exit(main())
