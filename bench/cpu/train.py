#!/usr/bin/env python3
"""memfmt's ahead-of-time training step against PyTorch's, on the CPU.

One run measures training steps (forward, cross-entropy loss, backward and a
torch.optim.SGD step with momentum 0.9 and weight decay 1e-4, lr 0.01) per
second, interleaved round by round so that a noisy machine hurts every
configuration alike:
  * memfmt channels-last and NCHW, f32 (memfmt-compile --train, timed by
    memfmt-train --json, which reports every step's time), from the same
    seeded torchvision weights as the peers (written to safetensors); where
    the CPU has bf16 instructions also channels-last with memfmt-train
    --allow-bf16 (convolutions and their gradients multiply in bf16, the
    rest stays f32) and the step compiled with --precision bf16 (mixed
    precision in the IR: bf16 activations and gradients, f32 master
    weights, statistics, loss and SGD, as autocast), bf16 rows;
  * PyTorch 1.13 (Debian, /usr/bin/python3): eager NCHW and eager
    channels-last, in this process;
  * with --peers: PyTorch 2.x from bench/.venv (PyPI), eager channels-last
    and torch.compile (inductor) of the whole step's forward, in a process
    of their own timed between the other rounds; where the CPU has bf16
    instructions (AVX512_BF16 or AMX), also eager channels-last under bf16
    autocast (mixed precision: bf16 convolutions and linear layers, f32
    parameters and SGD), ratioed to bf16 rows only (like with like);
  * with --unfused: memfmt channels-last compiled with --fusion=false (no
    training fusion), so what the fusion buys is measured in the same run;
  * with --no-torch1 (and --peers): no PyTorch 1.13 rows, for models where
    its step takes tens of seconds (ConvNeXt: 44 s at batch 8).
Models memfmt's zoo does not build (mobilenet_v2, efficientnet_b0, ...)
are exported by torch.onnx (eval mode, batch norms kept, opset 13) and
compiled from the file; the eval-mode export has no dropout or stochastic
depth, so every PyTorch configuration trains with those modules in eval
mode too (scripts/torchref.py's train_mode), the same computation.
Each round times --iters steps per configuration; a configuration's figure
is the median over rounds of per-round medians. Memory: memfmt's is exact,
the planned arena plus the weights blob (parameters, running statistics and
momentum buffers) from manifest.json; PyTorch's is the peak resident memory
its process gains from just before the model is built to the end of a few
steps (ru_maxrss), measured in a fresh process per configuration.
Results are printed and appended to bench/RESULTS.md with the machine, the
commit and the command.

Usage: bench/cpu/train.py [--models resnet18,resnet50] [--batches 8,32]
                          [--size 224] [--threads 2] [--rounds 3]
                          [--iters 3] [--peers] [--unfused] [--no-torch1]
                          [--no-record]
"""
import argparse
import datetime
import json
import os
import platform
import resource
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
sys.path.insert(0, os.path.join(ROOT, "bench", "cpu"))
from torchref import train_mode, write_safetensors  # noqa: E402
from run import cpu_flags, has_bf16, median, run_peer_script  # noqa: E402
import machine  # noqa: E402

LR, MOMENTUM, WEIGHT_DECAY = 0.01, 0.9, 1e-4
# The models memfmt-compile --model builds; others go through ONNX.
ZOO = ("resnet18", "resnet34", "resnet50", "resnet101", "resnet152",
       "resnext50_32x4d", "wide_resnet50_2")


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def torch_model(torch, torchvision, name, weights, channels_last):
    """The torchvision model in train mode (dropout and stochastic depth
    off, as memfmt trains it) with the weights of `weights` (a state_dict
    saved by torch.save), and its SGD optimizer."""
    torch.manual_seed(0)
    model = getattr(torchvision.models, name)()
    if weights:
        model.load_state_dict(torch.load(weights))
    train_mode(model)
    if channels_last:
        model = model.to(memory_format=torch.channels_last)
    optimizer = torch.optim.SGD(model.parameters(), lr=LR, momentum=MOMENTUM,
                                weight_decay=WEIGHT_DECAY)
    return model, optimizer


class TorchStep:
    """One PyTorch training configuration, timed in-process."""

    def __init__(self, torch, model, optimizer, x, y, compiled=False,
                 autocast=False):
        self.torch, self.model, self.optimizer = torch, model, optimizer
        self.forward = torch.compile(model) if compiled else model
        self.autocast = autocast
        self.x, self.y = x, y
        for _ in range(2):
            self.step()

    def step(self):
        self.optimizer.zero_grad(set_to_none=True)
        with self.torch.autocast("cpu", dtype=self.torch.bfloat16,
                                 enabled=self.autocast):
            loss = self.torch.nn.functional.cross_entropy(
                self.forward(self.x), self.y)
        loss.backward()
        self.optimizer.step()
        return float(loss.detach())

    def measure(self, iters):
        times = []
        for _ in range(iters):
            t = time.perf_counter()
            self.step()
            times.append((time.perf_counter() - t) * 1e3)
        return times


class MemfmtStep:
    """A memfmt training model, timed by memfmt-train over --iters steps."""

    device = ""

    def __init__(self, directory, data, threads, flags=()):
        self.directory, self.data, self.threads = directory, data, threads
        self.flags = list(flags)
        with open(os.path.join(directory, "manifest.json")) as f:
            manifest = json.load(f)
        self.bytes = manifest["arena_bytes"] + manifest["weights_bytes"]

    def measure(self, iters):
        out = subprocess.run(
            [os.path.join(ROOT, "build/bin/memfmt-train"), self.directory,
             "--data", self.data, "--steps", str(iters + 1), "--no-shuffle",
             "--json", "--threads", str(self.threads)] + self.flags,
            check=True, capture_output=True, text=True).stdout
        result = json.loads(out)
        MemfmtStep.device = result.get("device", MemfmtStep.device)
        # The first step of a fresh process pays for oneDNN's primitive
        # creation; the rest are the steady state a training run sees.
        return result["step_ms"][1:]


def torch_peak_bytes(args, name, batch, channels_last, weights):
    """Peak resident bytes a fresh PyTorch 1.13 process gains for 3 steps."""
    code = f"""
import resource, sys, torch, torchvision
sys.path.insert(0, {os.path.join(ROOT, 'bench', 'cpu')!r})
from train import TorchStep, torch_model
torch.set_num_threads({args.threads})
x = torch.randn({batch}, 3, {args.size}, {args.size})
y = torch.randint(0, 1000, ({batch},))
if {channels_last}:
    x = x.to(memory_format=torch.channels_last)
before = int(open('/proc/self/statm').read().split()[1]) * 4096
model, opt = torch_model(torch, torchvision, {name!r}, {weights!r}, {channels_last})
step = TorchStep(torch, model, opt, x, y)
step.measure(1)
print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 - before)
"""
    out = subprocess.run(["/usr/bin/python3", "-c", code], check=True,
                         capture_output=True, text=True).stdout
    return int(out.split()[-1])


def peer_worker(job):
    """Inside bench/.venv: PyTorch 2.x eager channels-last and torch.compile,
    timed once per "round" line on stdin (one JSON line of medians back)."""
    import torch
    import torchvision
    reply = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    torch.set_num_threads(job["threads"])
    x = torch.randn(job["batch"], 3, job["size"], job["size"]).to(
        memory_format=torch.channels_last)
    y = torch.randint(0, 1000, (job["batch"],))
    runners, failed = {}, {}
    configurations = [("torch 2.x eager channels-last", False, False),
                      ("torch 2.x compile channels-last", True, False)]
    if job["bf16"]:
        configurations.append(("torch 2.x eager channels-last bf16", False,
                               True))
    for label, compiled, autocast in configurations:
        try:
            model, opt = torch_model(torch, torchvision, job["model"],
                                     job["weights"], True)
            runners[label] = TorchStep(torch, model, opt, x, y, compiled,
                                       autocast)
        except Exception as e:  # a peer that cannot run is reported
            failed[label] = f"failed: {e}"
    print(json.dumps({"failed": failed, "version": torch.__version__}),
          file=reply, flush=True)
    for line in sys.stdin:
        if line.strip() != "round":
            break
        print(json.dumps({n: median(r.measure(job["iters"]))
                          for n, r in runners.items()}), file=reply, flush=True)
    return 0


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--models", default="resnet18,resnet50")
    p.add_argument("--batches", default="8,32")
    p.add_argument("--size", type=int, default=224)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--iters", type=int, default=3)
    p.add_argument("--peers", action="store_true",
                   help="also PyTorch 2.x eager and torch.compile from bench/.venv")
    p.add_argument("--unfused", action="store_true",
                   help="also time memfmt channels-last with --fusion=false")
    p.add_argument("--no-torch1", action="store_true",
                   help="leave out PyTorch 1.13's rows (needs --peers)")
    p.add_argument("--no-record", action="store_true")
    p.add_argument("--peer-worker", help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.peer_worker:
        return peer_worker(json.loads(args.peer_worker))
    if args.no_torch1 and not args.peers:
        p.error("--no-torch1 needs --peers (PyTorch 2.x is then the only "
                "peer)")

    import numpy as np
    import torch
    import torchvision
    torch.set_num_threads(args.threads)
    subprocess.run([os.path.join(ROOT, "scripts/build.sh"), "memfmt-compile",
                    "memfmt-train"], check=True, stdout=subprocess.DEVNULL)
    work = tempfile.mkdtemp(prefix="memfmt-train-bench-")
    rows, peer_version = [], None
    bf16 = has_bf16(cpu_flags())
    for name in args.models.split(","):
        torch.manual_seed(0)
        reference = getattr(torchvision.models, name)()
        weights = os.path.join(work, f"{name}.safetensors")
        write_safetensors(weights, reference.state_dict())
        torch_weights = os.path.join(work, f"{name}.pt")
        torch.save(reference.state_dict(), torch_weights)
        for batch in [int(b) for b in args.batches.split(",")]:
            log(f"== {name}, batch {batch}, {args.size}x{args.size}")
            rng = np.random.default_rng(batch)
            rows_needed = batch * (args.iters + 1)
            x = rng.standard_normal((rows_needed, 3, args.size, args.size),
                                    dtype=np.float32)
            y = rng.integers(0, 1000, rows_needed, dtype=np.int64)
            data = os.path.join(work, f"{name}.{batch}.npz")
            np.savez(data, x=x, y=y)
            runners, memory = {}, {}
            builds = [("channels-last", []), ("contiguous", [])]
            if args.unfused:
                builds.insert(1, ("channels-last", ["--fusion=false"]))
            if bf16:
                builds.append(("channels-last", ["--precision", "bf16"]))
            if name in ZOO:
                source = ["--model", name, "--batch", str(batch), "--height",
                          str(args.size), "--width", str(args.size),
                          "--weights", weights]
            else:
                source = [os.path.join(work, f"{name}.{batch}.onnx")]
                torch.onnx.export(
                    reference.eval(), torch.zeros(batch, 3, args.size,
                                                  args.size), source[0],
                    opset_version=13,
                    training=torch.onnx.TrainingMode.PRESERVE,
                    do_constant_folding=False)
            for fmt, flags in builds:
                d = os.path.join(work, f"{name}.{batch}.{fmt}{''.join(flags)}")
                subprocess.run(
                    [os.path.join(ROOT, "build/bin/memfmt-compile")] + source +
                    ["--train", "--memory-format", fmt, "--lr", str(LR),
                     "--momentum", str(MOMENTUM), "--weight-decay",
                     str(WEIGHT_DECAY), "-o", d] + flags, check=True,
                    capture_output=True)
                label = " ".join([f"memfmt {fmt}"] + flags)
                runners[label] = MemfmtStep(d, data, args.threads)
                memory[label] = runners[label].bytes
                if fmt == "channels-last" and not flags and bf16:
                    label = "memfmt channels-last --allow-bf16"
                    runners[label] = MemfmtStep(d, data, args.threads,
                                                ["--allow-bf16"])
                    memory[label] = runners[label].bytes
            tx = torch.from_numpy(x[:batch])
            ty = torch.from_numpy(y[:batch])
            for fmt, cl in () if args.no_torch1 else (
                    ("NCHW", False), ("channels-last", True)):
                label = f"torch {torch.__version__.split('+')[0]} eager {fmt}"
                model, opt = torch_model(torch, torchvision, name,
                                         torch_weights, cl)
                inputs = tx.to(memory_format=torch.channels_last) if cl else tx
                runners[label] = TorchStep(torch, model, opt, inputs, ty)
                memory[label] = torch_peak_bytes(args, name, batch, cl,
                                                 torch_weights)
            worker = None
            if args.peers:
                python = run_peer_script(args)
                job = json.dumps({"model": name, "weights": torch_weights,
                                  "batch": batch, "size": args.size,
                                  "threads": args.threads, "iters": args.iters,
                                  "bf16": bf16})
                worker = subprocess.Popen([python, __file__, "--peer-worker",
                                           job], stdin=subprocess.PIPE,
                                          stdout=subprocess.PIPE, text=True)
                hello = json.loads(worker.stdout.readline())
                peer_version = hello["version"]
                for label, why in hello["failed"].items():
                    log(f"{label}: {why}")
            medians = {label: [] for label in runners}
            for _ in range(args.rounds):
                for label, runner in runners.items():
                    medians[label].append(median(runner.measure(args.iters)))
                if worker:
                    worker.stdin.write("round\n")
                    worker.stdin.flush()
                    for label, ms in json.loads(worker.stdout.readline()).items():
                        medians.setdefault(label, []).append(ms)
            if worker:
                worker.stdin.close()
                worker.wait()
            ms = {label: median(v) for label, v in medians.items()}
            # Like with like: a bf16 row is ratioed to the best bf16 peer.
            for label, value in ms.items():
                precision = "bf16" if label.endswith("bf16") else "f32"
                peers = {l: v for l, v in ms.items()
                         if not l.startswith("memfmt")
                         and l.endswith("bf16") == (precision == "bf16")}
                best = min(peers, key=peers.get)
                rows.append((name, batch, label, value, 1e3 / value,
                             peers[best] / value, memory.get(label), best))
    header = ("| model | batch | configuration | ms / step | steps/s | "
              "vs best PyTorch of its precision | memory (MiB) |\n|---|---|---|---|---|---|---|")
    lines = [f"| {m} | {b} | {l} | {v:.0f} | {s:.2f} | {r:.2f}x | "
             f"{'' if mem is None else f'{mem / 2**20:.0f}'} |"
             for m, b, l, v, s, r, mem, _ in rows]
    table = header + "\n" + "\n".join(lines)
    print(table)
    print("best PyTorch per case: " + ", ".join(
        sorted({f"{m}/{b}: {bp}" for m, b, _, _, _, _, _, bp in rows})))
    if not args.no_record:
        commit = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short",
                                 "HEAD"], capture_output=True,
                                text=True).stdout.strip()
        cpu = machine.cpu_line()
        with open(os.path.join(ROOT, "bench", "RESULTS.md"), "a") as f:
            f.write(f"\n## CPU training step, {datetime.date.today()}, commit "
                    f"{commit}\n\nMachine: {cpu}, {os.cpu_count()} "
                    f"vCPUs, {platform.system()}; {args.threads} threads; "
                    f"memfmt runtime: {MemfmtStep.device or 'unknown'}; "
                    f"PyTorch {torch.__version__} (Debian)"
                    + (f" and {peer_version} (bench/.venv)" if peer_version
                       else "")
                    + f". Command: `bench/cpu/train.py "
                    f"{' '.join(sys.argv[1:])}`. {args.size}x{args.size}, "
                    f"SGD lr {LR} momentum {MOMENTUM} weight decay "
                    f"{WEIGHT_DECAY}; ms/step are medians of {args.rounds} "
                    f"interleaved rounds of {args.iters} steps. Memory: "
                    f"memfmt's planned arena + weights blob; PyTorch's peak "
                    f"RSS gained over 3 steps in a fresh process.\n\n"
                    f"{table}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
