"""The training half of the GPU run: memfmt_gpu.py calls check() after the
inference checks and bench() after the inference benchmark.

check(): the training steps prepare.sh compiled for both targets (a tiny
conv-bn-relu-pool-fc network, 3 SGD steps, in f32, as a bf16
mixed-precision step, in f32 with dynamic loss scaling (--grad-scaler,
its scale and growth tracker saved and compared too) and as an f16 step
(loss scaled; CUDA only, against the CPU's scaled f32 step); ResNet-18 at
64x64, batch 4, one step) run with
memfmt-train on the same batches on the GPU and on the CPU (the bundle's
reference kernels); every loss and every saved tensor (parameters, running
statistics, momentum buffers, so every gradient of the first step) must
agree within 1e-3 relative to its largest magnitude in f32, and within
5e-2 in bf16 (the activations are rounded to bf16 after operations that
sum in different orders on the two devices, and cuDNN rounds a bf16 step's
convolution weight gradients to bf16 where the CPU keeps f32).
ResNet-18 is compared after one step only: random data makes its relu and
max-pool decisions flip after a few steps even between PyTorch's own f32
and f64 runs.

bench(): ResNet-50 training steps at 224x224, batch 32 and 256 (as time
allows): memfmt channels-last and NCHW f32 and channels-last bf16
(memfmt-train, one CUDA graph per step; the median of the steps after the first, which chooses the cuDNN
algorithms and captures the graph) against PyTorch eager NCHW f32 (TF32
off), eager channels-last + AMP bf16 and torch.compile of the channels-last +
AMP step; SGD with memfmt-compile --train's defaults (lr 0.1, momentum 0.9,
weight decay 1e-4) on both sides.
"""
import json
import os
import statistics
import subprocess
import time

import numpy as np
import torch
import torch.nn.functional as F

from torchref import read_safetensors, seeded_model

LR, MOMENTUM, WEIGHT_DECAY = 0.1, 0.9, 1e-4
# (name, the CPU step it is compared with, rows of data, image shape,
# classes, steps, tolerance) of the checks. An f16 step runs on CUDA only
# (the CPU has no f16 kernels): it is compared with the f32 step of the
# same loss scaling on the CPU, within f16's rounding of the activations.
CHECKS = [("tiny", "tiny", 6, (3, 8, 8), 10, 3, 1e-3),
          ("tiny-bf16", "tiny-bf16", 6, (3, 8, 8), 10, 3, 5e-2),
          ("tiny-scaled", "tiny-scaled", 6, (3, 8, 8), 10, 3, 1e-3),
          ("tiny-f16", "tiny-scaled", 6, (3, 8, 8), 10, 3, 2e-2),
          ("resnet18", "resnet18", 4, (3, 64, 64), 1000, 1, 1e-3)]
BENCH_BATCHES = (32, 256)
BENCH_STEPS = {32: 8, 256: 5}
TORCH_ITERATIONS = {32: 10, 256: 5}


def write_data(path, rows, shape, classes, channels_last=False, seed=0):
    r = np.random.default_rng(seed)
    x = r.standard_normal((rows,) + tuple(shape), dtype=np.float32)
    if channels_last:
        x = np.ascontiguousarray(x.transpose(0, 2, 3, 1))
    np.savez(path, x=x, y=r.integers(0, classes, rows))


def run_train(runner, model, data, steps, save=None, extra=()):
    """memfmt-train MODEL --data DATA --steps STEPS --json; the parsed JSON,
    or {"error": ...}."""
    cmd = [os.path.join(os.path.dirname(runner.bin), "memfmt-train"), model,
           "--data", data, "--steps", str(steps), "--json", *extra]
    if save:
        cmd += ["--save", save]
    timeout = max(5.0, min(300.0, runner.left() - 5))
    runner.log.write("$ " + " ".join(cmd) + "\n")
    runner.log.flush()
    try:
        p = subprocess.run(cmd, capture_output=True, text=True,
                           timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"error": f"timed out after {timeout:.0f} s"}
    runner.log.write(p.stdout[-2000:] + p.stderr + f"exit {p.returncode}\n")
    runner.log.flush()
    if p.returncode:
        return {"error": (p.stderr or p.stdout).strip()[-500:]}
    return json.loads(p.stdout)


def state(prefix):
    tensors, _ = read_safetensors(prefix + ".safetensors")
    tensors.update(read_safetensors(prefix + ".optimizer.safetensors")[0])
    return tensors


def compare(gpu, cpu, gpu_prefix, cpu_prefix):
    """The largest relative difference over the losses and saved tensors,
    and the name of the worst."""
    worst, where = 0.0, ""
    for i, (a, b) in enumerate(zip(gpu["losses"], cpu["losses"])):
        err = abs(a - b) / max(1.0, abs(b))
        if not err <= worst:
            worst, where = err, f"loss of step {i + 1}"
    sa, sb = state(gpu_prefix), state(cpu_prefix)
    if sorted(sa) != sorted(sb):
        return float("inf"), "different tensors saved"
    for name in sa:
        a, b = sa[name].astype(np.float64), sb[name].astype(np.float64)
        err = float(np.max(np.abs(a - b))) / max(float(np.max(np.abs(b))),
                                                 1e-12)
        if not err <= worst:
            worst, where = err, name
    return worst, where


def check(runner, artifacts, work):
    """[{name, steps, passed, rel_error, worst | error}]."""
    results = []
    for name, cpu_name, rows, shape, classes, steps, tolerance in CHECKS:
        entry = {"name": name, "steps": steps, "passed": False}
        results.append(entry)
        models = os.path.join(artifacts, "models")
        data = os.path.join(work, f"train-{name}.npz")
        write_data(data, rows, shape, classes)
        out = {}
        for target, model in (("cuda", name), ("cpu", cpu_name)):
            prefix = os.path.join(work, f"train-{name}-{target}")
            out[target] = run_train(
                runner, os.path.join(models, f"train-{model}-{target}"), data,
                steps, save=prefix + ".safetensors")
            out[target + "_prefix"] = prefix
        error = out["cuda"].get("error") or out["cpu"].get("error")
        if error:
            entry["error"] = error
        else:
            worst, where = compare(out["cuda"], out["cpu"],
                                   out["cuda_prefix"], out["cpu_prefix"])
            entry.update(rel_error=worst, worst=where,
                         passed=worst <= tolerance,
                         device=out["cuda"].get("device"))
        print(f"training check {name} ({steps} steps, GPU vs CPU): "
              + ("PASS" if entry["passed"] else "FAIL")
              + (f", max rel err {entry['rel_error']:.2e} ({entry['worst']})"
                 if "rel_error" in entry else f" ({entry.get('error')})"),
              flush=True)
    return results


def time_steps(step, iterations):
    """Median ms of `iterations` calls of step() after 3 warm-ups, each
    between two CUDA events."""
    for _ in range(3):
        step()
    torch.cuda.synchronize()
    times = []
    for _ in range(iterations):
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        start.record()
        step()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    return statistics.median(times)


def torch_step(model, x, y, amp):
    optimizer = torch.optim.SGD(model.parameters(), lr=LR, momentum=MOMENTUM,
                                weight_decay=WEIGHT_DECAY)

    def step():
        optimizer.zero_grad(set_to_none=True)
        with torch.autocast("cuda", dtype=torch.bfloat16, enabled=amp):
            loss = F.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
    return step


def bench(runner, artifacts, work):
    """rows[name][batch] = median ms per step (or None)."""
    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.benchmark = True
    rows = {}

    def put(name, batch, ms):
        rows.setdefault(name, {})[batch] = ms
        print(f"training bench {name} batch {batch}: "
              + (f"{ms:.1f} ms/step, {batch * 1000.0 / ms:.1f} images/s"
                 if ms else "skipped"), flush=True)

    for batch in BENCH_BATCHES:
        if runner.left() < 60:
            print(f"training bench batch {batch}: skipped (time)", flush=True)
            continue
        for fmt, data_format in (("cl", "channels-last"), ("nchw", None),
                                 ("cl-bf16", "channels-last")):
            name = {"cl": "memfmt channels-last f32",
                    "nchw": "memfmt NCHW f32",
                    "cl-bf16": "memfmt channels-last bf16"}[fmt]
            if runner.left() < 40:
                put(name, batch, None)
                continue
            data = os.path.join(work, f"train-b{batch}-{fmt}.npz")
            write_data(data, batch, (3, 224, 224), 1000,
                       channels_last=data_format is not None)
            r = run_train(runner, os.path.join(
                artifacts, "models", f"train-resnet50-{fmt}-b{batch}"), data,
                BENCH_STEPS[batch],
                extra=["--data-format", data_format] if data_format else [])
            steps = r.get("step_ms") or []
            if r.get("error"):
                print(f"memfmt-train failed: {r['error']}", flush=True)
            put(name, batch, statistics.median(steps[1:]) if len(steps) > 1
                else None)
            os.remove(data)
        x = torch.randn(batch, 3, 224, 224, device="cuda")
        y = torch.randint(0, 1000, (batch,), device="cuda")
        x_cl = x.to(memory_format=torch.channels_last)
        model = seeded_model("resnet50", 1).cuda().train()
        put("PyTorch eager NCHW f32", batch,
            time_steps(torch_step(model, x, y, False),
                       TORCH_ITERATIONS[batch]))
        model_cl = seeded_model("resnet50", 1).cuda().train().to(
            memory_format=torch.channels_last)
        put("PyTorch eager channels-last + AMP bf16", batch,
            time_steps(torch_step(model_cl, x_cl, y, True),
                       TORCH_ITERATIONS[batch]))
        if runner.left() > 240:
            try:
                compiled = torch.compile(model_cl)
                put("torch.compile channels-last + AMP bf16", batch,
                    time_steps(torch_step(compiled, x_cl, y, True),
                               TORCH_ITERATIONS[batch]))
            except Exception as e:  # noqa: BLE001 - report and go on
                print(f"torch.compile failed: {e}", flush=True)
                put("torch.compile channels-last + AMP bf16", batch, None)
        else:
            put("torch.compile channels-last + AMP bf16", batch, None)
        del x, y, x_cl, model, model_cl
        torch.cuda.empty_cache()
    return rows


def table(rows):
    """The markdown table of bench()'s rows: ms/step, images/s and the
    ratio against PyTorch eager channels-last + AMP."""
    batches = sorted({b for r in rows.values() for b in r})
    base = "PyTorch eager channels-last + AMP bf16"
    lines = ["Training steps (bench/gpu/training.py): ResNet-50 224x224, SGD "
             "(lr 0.1, momentum 0.9, weight decay 1e-4), median ms per step "
             "with CUDA events (memfmt: memfmt-train's step times after the "
             "first), f32 with TF32 off.", "",
             "| training step | " + " | ".join(
                 f"batch {b}: ms / images/s | vs eager CL + AMP"
                 for b in batches) + " |",
             "|---|" + "---|---|" * len(batches)]
    for name, cells in rows.items():
        out = []
        for b in batches:
            ms, ref = cells.get(b), rows.get(base, {}).get(b)
            out.append(f"{ms:.1f} / {b * 1000.0 / ms:,.0f}" if ms else "-")
            out.append(f"{ref / ms:.2f}x" if ms and ref else "-")
        lines.append(f"| {name} | " + " | ".join(out) + " |")
    return "\n".join(lines)
