#!/usr/bin/env python3
"""memfmt against PyTorch (and optional peers) on the CPU, side by side.

One run measures, interleaved round by round so that a noisy machine hurts
every configuration alike:
  * memfmt channels-last and NCHW, in f32 and in bf16 (memfmt-compile
    [--precision bf16] + memfmt-run --bench), with the same seeded
    torchvision weights as the peers (written to safetensors); models
    outside memfmt's zoo (mobilenet_v2, mobilenet_v3_large,
    efficientnet_b0, regnet_y_400mf, ...) are compiled from their ONNX
    export, batch norms calibrated so that activations stay O(1);
  * PyTorch 1.13 (Debian, /usr/bin/python3): eager NCHW, eager channels-last,
    and torch.jit.trace + torch.jit.freeze in channels-last;
  * with --peers: ONNX Runtime, OpenVINO and IREE (llvm-cpu, compiled for
    this CPU) on the same model exported to ONNX, and PyTorch 2.x eager and
    torch.compile (inductor) in channels-last on the same weights, all
    installed into bench/.venv from PyPI (never needed by the build or the
    tests);
  * with --baseline DIR: the same memfmt builds from another checkout of
    memfmt (e.g. a git worktree of an older commit, built with
    scripts/build.sh), compiled and run by that checkout's own tools, in the
    same interleaved rounds, so that a change to memfmt is measured against
    the code before it (`memfmt@<commit> ...` rows and a "vs baseline" line).
The PyPI peers run in a process of their own, set up once per case and
timed round by round between memfmt's and PyTorch 1.13's rounds.
Where the CPU computes in bf16 (AVX-512 BF16 or AMX in /proc/cpuinfo), each
peer that has a reduced-precision mode also runs in it: PyTorch 1.13 and
2.x in channels-last under bf16 autocast (eager, and torch.compile for 2.x)
and OpenVINO with the bf16 INFERENCE_PRECISION_HINT; ONNX Runtime and IREE
run f32 only (ONNX Runtime's CPU provider has no bf16 mode for these
models). Like is compared with like: an f32 row's ratio is to the best f32
peer, a bf16 row's to the best bf16 peer.
It prints images/s (median over rounds of per-round medians), the ratio of
each configuration to the best peer of its precision, and the share of the
fp32 peak, checks that
memfmt's outputs match PyTorch's (f32: 1e-4, bf16: 3e-2 of max|torch|), and
appends a dated table to bench/RESULTS.md, with the CPU's bf16 and AMX
flags and the device line memfmt-run printed (what oneDNN chose).

Share of peak: 2 x multiply-adds of the model per image (ResNet-18 1.82 G,
ResNet-50 4.11 G at 224x224) x images/s, over the fp32 peak at the thread
count: measured by bench/cpu/peak.c (chains of FMAs on the widest vectors,
best of 3, before the models run; --peak-gflops gives a figure instead).
bf16 rows use the same fp32 figure; the bf16 dot-product peak, measured the
same way, is printed and recorded beside it.
Fast convolution algorithms can do fewer operations than that count.

Usage: bench/cpu/run.py [--models resnet18,resnet50] [--batches 1,8,32]
                        [--threads 2] [--rounds 3] [--iters 3] [--peers]
                        [--precisions f32,bf16] [--baseline DIR]
                        [--no-record]
"""
import argparse
import datetime
import json
import os
import platform
import struct
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
from torchref import calibrated, seeded_model, write_safetensors  # noqa: E402
import machine  # noqa: E402  (bench/cpu/machine.py, beside this script)

# The memfmt builds measured, and how close each must be to PyTorch's f32
# output (max |memfmt - torch| / max |torch|; bf16 as in test/E2E/cpu_bf16.py).
# Some networks amplify bf16 rounding beyond 3e-2 whoever computes them
# (mobilenet_v2 with calibrated random weights: PyTorch's own bf16 autocast
# is 1.0e-1 from its f32 output), so a bf16 build also passes when it is no
# further from f32 than 1.5x PyTorch's autocast output, where that runs.
BUILDS = [("f32", "channels-last"), ("f32", "contiguous"),
          ("bf16", "channels-last"), ("bf16", "contiguous")]
TOLERANCE = {"f32": 1e-4, "bf16": 3e-2}
MACS = {"resnet18": 1.82e9, "resnet50": 4.11e9, "resnet34": 3.67e9,
        "resnet101": 7.83e9, "mobilenet_v2": 0.30e9,
        "mobilenet_v3_large": 0.22e9, "mobilenet_v3_small": 0.06e9,
        "efficientnet_b0": 0.39e9, "regnet_y_400mf": 0.40e9,
        "shufflenet_v2_x1_0": 0.15e9, "convnext_tiny": 4.46e9,
        "vit_b_16": 17.56e9}
# Models of memfmt's zoo (memfmt-compile --model); the others are compiled
# from their ONNX export (opset 14), the file the ONNX peers run, with batch
# norms calibrated so that activations stay O(1) (torchref.calibrated).
ZOO = {"resnet18", "resnet34", "resnet50", "resnet101", "resnet152",
       "resnext50_32x4d", "wide_resnet50_2"}


def cpu_flags():
    """The instruction-set flags of /proc/cpuinfo (empty where unreadable)."""
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("flags"):
                return set(line.split(":", 1)[1].split())
    except OSError:
        pass
    return set()


def has_bf16(flags):
    """True where the CPU has bf16 arithmetic the peers can use."""
    return bool(flags & {"avx512_bf16", "amx_bf16"})


def is_bf16(name):
    """A configuration computing in bf16 (its label says so)."""
    return name.endswith(" bf16")


def log(msg):
    print(msg, file=sys.stderr, flush=True)


class TorchRunner:
    """A PyTorch configuration timed in-process; with `bf16`, under CPU
    autocast to bfloat16 (the output is returned in float32)."""

    def __init__(self, torch, fn, x, bf16=False):
        if bf16:
            model = fn

            def fn(x):
                with torch.autocast("cpu", dtype=torch.bfloat16):
                    return model(x).float()
        self.torch, self.fn, self.x = torch, fn, x
        with torch.no_grad():
            for _ in range(2):
                self.out = fn(x)

    def measure(self, iters):
        times = []
        with self.torch.no_grad():
            for _ in range(iters):
                t = time.perf_counter()
                self.fn(self.x)
                times.append((time.perf_counter() - t) * 1e3)
        return times


class MemfmtRunner:
    """A compiled memfmt model timed by memfmt-run --bench."""

    # What memfmt-run says it ran on: "CPU (2 threads, oneDNN 2.6.3 on
    # avx512_core_bf16)". The instruction set decides how fast bf16 is.
    device = ""

    def __init__(self, directory, input_npy, threads, root=ROOT):
        self.directory, self.input, self.threads = directory, input_npy, threads
        self.root = root

    def measure(self, iters):
        out = subprocess.run(
            [os.path.join(self.root, "build/bin/memfmt-run"), self.directory,
             "--input", self.input, "--bench", str(iters), "--json",
             "--threads", str(self.threads)],
            check=True, capture_output=True, text=True).stdout
        result = json.loads(out)
        MemfmtRunner.device = result.get("device", "")
        bench = result["bench"]
        return [bench["median_ms"]] * iters  # memfmt-run reports the median


class OrtRunner:
    def __init__(self, job, x):
        onnx_path, threads = job["onnx"], job["threads"]
        import onnxruntime as ort
        opts = ort.SessionOptions()
        opts.intra_op_num_threads = threads
        opts.inter_op_num_threads = 1
        self.sess = ort.InferenceSession(onnx_path, opts,
                                         providers=["CPUExecutionProvider"])
        self.x = x
        self.name = self.sess.get_inputs()[0].name
        for _ in range(2):
            self.sess.run(None, {self.name: x})

    def measure(self, iters):
        times = []
        for _ in range(iters):
            t = time.perf_counter()
            self.sess.run(None, {self.name: self.x})
            times.append((time.perf_counter() - t) * 1e3)
        return times


class OpenVinoRunner:
    def __init__(self, job, x, precision="f32"):
        onnx_path, threads = job["onnx"], job["threads"]
        import openvino as ov
        core = ov.Core()
        core.set_property("CPU", {"INFERENCE_NUM_THREADS": threads,
                                  "INFERENCE_PRECISION_HINT": precision})
        self.compiled = core.compile_model(onnx_path, "CPU")
        self.x = x
        for _ in range(2):
            self.compiled([x])

    def measure(self, iters):
        times = []
        for _ in range(iters):
            t = time.perf_counter()
            self.compiled([self.x])
            times.append((time.perf_counter() - t) * 1e3)
        return times


class IreeRunner:
    """IREE: the ONNX model imported (iree-import-onnx) and compiled for
    llvm-cpu on this CPU (iree-compile), run by the local-task driver on
    `threads` CPUs."""

    def __init__(self, job, x):
        onnx_path, threads = job["onnx"], job["threads"]
        import iree.runtime as rt
        bin_dir = os.path.dirname(sys.executable)
        mlir = onnx_path + ".iree.mlir"
        vmfb = onnx_path + ".vmfb"
        subprocess.run([os.path.join(bin_dir, "iree-import-onnx"), onnx_path,
                        "-o", mlir], check=True, capture_output=True)
        subprocess.run([os.path.join(bin_dir, "iree-compile"), mlir,
                        "--iree-hal-target-device=local",
                        "--iree-hal-local-target-device-backends=llvm-cpu",
                        "--iree-llvmcpu-target-cpu=host", "-o", vmfb],
                       check=True, capture_output=True)
        rt.flags.parse_flags("--task_topology_cpu_ids=" +
                             ",".join(str(i) for i in range(threads)))
        self.context = rt.SystemContext(config=rt.Config("local-task"))
        with open(vmfb, "rb") as f:
            module = rt.VmModule.copy_buffer(self.context.instance, f.read())
        self.context.add_vm_module(module)
        name = next(n for n in module.function_names
                    if not n.startswith("__") and not n.endswith("$async"))
        self.fn = getattr(self.context.modules.module, name)
        self.x = x
        for _ in range(2):
            self.fn(x).to_host()

    def measure(self, iters):
        times = []
        for _ in range(iters):
            t = time.perf_counter()
            self.fn(self.x).to_host()
            times.append((time.perf_counter() - t) * 1e3)
        return times


def read_safetensors(path):
    """The tensors of a .safetensors file (as write_safetensors writes them)
    as numpy arrays."""
    import numpy as np
    with open(path, "rb") as f:
        size = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(size))
        data = f.read()
    types = {"F32": np.float32, "I64": np.int64}
    return {name: np.frombuffer(data[t["data_offsets"][0]:t["data_offsets"][1]],
                                dtype=types[t["dtype"]]).reshape(t["shape"])
            for name, t in header.items() if name != "__metadata__"}


class Torch2Runner:
    """PyTorch 2.x from bench/.venv, channels-last, eager or torch.compile
    (inductor), on the same weights (the job's safetensors file)."""

    def __init__(self, job, x, compiled, bf16=False):
        import torch
        import torchvision
        torch.set_num_threads(job["threads"])
        model = getattr(torchvision.models, job["model"])()
        model.load_state_dict({k: torch.from_numpy(v.copy()) for k, v in
                               read_safetensors(job["weights"]).items()})
        model = model.eval().to(memory_format=torch.channels_last)
        if compiled:
            model = torch.compile(model)
        tx = torch.from_numpy(x).to(memory_format=torch.channels_last)
        self.runner = TorchRunner(torch, model, tx, bf16)

    def measure(self, iters):
        return self.runner.measure(iters)


def median(values):
    values = sorted(values)
    n = len(values)
    return values[n // 2] if n % 2 else 0.5 * (values[n // 2 - 1] + values[n // 2])


def run_peer_script(args):
    """Re-runs this script inside bench/.venv for the PyPI peers."""
    venv = os.path.join(ROOT, "bench", ".venv")
    python = os.path.join(venv, "bin", "python")
    if not os.path.exists(python):
        log("setting up bench/.venv (onnxruntime, openvino, onnx, numpy)")
        subprocess.run([sys.executable, "-m", "venv", venv], check=True)
        subprocess.run([python, "-m", "pip", "install", "-q", "numpy",
                        "onnx", "onnxruntime", "openvino",
                        "iree-base-compiler", "iree-base-runtime", "torch",
                        "torchvision"], check=True)
    return python


def measure_peak(work, threads, kind=""):
    """The fp32 FMA peak (kind "") or bf16 dot-product peak (kind "bf16") of
    `threads` threads in GFLOP/s, best of 3 (bench/cpu/peak.c); None where
    the CPU has no such instructions."""
    exe = os.path.join(work, "peak")
    if not os.path.exists(exe):
        subprocess.run(["cc", "-O2", "-march=native", "-ffp-contract=fast",
                        "-pthread", os.path.join(ROOT, "bench/cpu/peak.c"),
                        "-o", exe], check=True)
    best = 0.0
    for _ in range(3):
        run = subprocess.run([exe, str(threads)] + ([kind] if kind else []),
                             capture_output=True, text=True)
        if run.returncode:
            return None
        best = max(best, float(run.stdout.split()[0]))
    return best


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--models", default="resnet18,resnet50")
    p.add_argument("--batches", default="1,8,32")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--iters", type=int, default=3)
    p.add_argument("--peak-gflops", type=float, default=0.0,
                   help="fp32 peak (default: measured by bench/cpu/peak.c)")
    p.add_argument("--peers", action="store_true",
                   help="also ONNX Runtime, OpenVINO and IREE from bench/.venv")
    p.add_argument("--precisions", default="f32,bf16",
                   help="memfmt builds to measure (f32, bf16)")
    p.add_argument("--baseline", metavar="DIR",
                   help="another memfmt checkout (built) to measure alongside")
    p.add_argument("--no-record", action="store_true")
    p.add_argument("--peer-worker", help=argparse.SUPPRESS)
    args = p.parse_args()

    import numpy as np
    if args.peer_worker:
        # Inside bench/.venv: the PyPI peers for one (model, input) job. It
        # sets them all up, prints one JSON line of those that failed, then
        # times each peer once per "round" line on stdin (one JSON line of
        # medians back), so that the peers' rounds interleave with memfmt's.
        job = json.loads(args.peer_worker)
        x = np.load(job["input"])
        # The protocol owns the real stdout; anything a library prints to
        # stdout (Python or C) goes to stderr.
        reply = os.fdopen(os.dup(1), "w")
        os.dup2(2, 1)
        sys.stdout = sys.stderr
        runners, failed = {}, {}
        peers = (("onnxruntime", OrtRunner),
                 ("openvino", OpenVinoRunner),
                 ("iree llvm-cpu", IreeRunner),
                 ("torch 2.x eager channels-last",
                  lambda job, x: Torch2Runner(job, x, compiled=False)),
                 ("torch 2.x compile channels-last",
                  lambda job, x: Torch2Runner(job, x, compiled=True)))
        if job["bf16"]:
            peers += (("openvino bf16",
                       lambda job, x: OpenVinoRunner(job, x, "bf16")),
                      ("torch 2.x eager channels-last bf16",
                       lambda job, x: Torch2Runner(job, x, compiled=False,
                                                   bf16=True)),
                      ("torch 2.x compile channels-last bf16",
                       lambda job, x: Torch2Runner(job, x, compiled=True,
                                                   bf16=True)))
        for name, make in peers:
            try:
                runners[name] = make(job, x)
            except Exception as e:  # a peer that cannot run is reported
                failed[name] = f"failed: {e}"
        print(json.dumps(failed), file=reply, flush=True)
        for line in sys.stdin:
            if line.strip() != "round":
                break
            result = {}
            for name, runner in list(runners.items()):
                try:
                    result[name] = median(runner.measure(job["iters"]))
                except Exception as e:  # reported, and not timed again
                    log(f"{name}: failed: {e}")
                    del runners[name]
            print(json.dumps(result), file=reply, flush=True)
        return 0

    import torch
    import torchvision
    torch.set_num_threads(args.threads)
    os.environ["MEMFMT_NUM_THREADS"] = str(args.threads)
    subprocess.run([os.path.join(ROOT, "scripts/build.sh"), "memfmt-compile",
                    "memfmt-run"], check=True, stdout=subprocess.DEVNULL)
    precisions = args.precisions.split(",")
    builds = [(p, f) for p, f in BUILDS if p in precisions]
    # (label prefix, checkout) of every memfmt whose builds are measured.
    checkouts = [("memfmt", ROOT)]
    if args.baseline:
        base = os.path.abspath(args.baseline)
        for tool in ("memfmt-compile", "memfmt-run"):
            if not os.access(os.path.join(base, "build/bin", tool), os.X_OK):
                raise SystemExit(f"--baseline {base}: no build/bin/{tool} "
                                 f"(run scripts/build.sh there first)")
        sha = subprocess.run(["git", "-C", base, "rev-parse", "--short",
                              "HEAD"], capture_output=True,
                             text=True).stdout.strip() or "baseline"
        checkouts.append((f"memfmt@{sha}", base))
    work = tempfile.mkdtemp(prefix="memfmt-bench-")
    peak_how = "given"
    if not args.peak_gflops:
        args.peak_gflops = measure_peak(work, args.threads)
        peak_how = "measured by bench/cpu/peak.c"
    log(f"fp32 peak at {args.threads} threads: {args.peak_gflops:.0f} GFLOP/s "
        f"({peak_how})")
    bf16_peak = measure_peak(work, args.threads, "bf16")
    bf16_note = ("" if bf16_peak is None else
                 f" The bf16 dot-product peak measured the same way is "
                 f"{bf16_peak:.0f} GFLOP/s.")
    log(f"bf16 dot-product peak: " +
        ("none (no AVX-512 BF16)" if bf16_peak is None
         else f"{bf16_peak:.0f} GFLOP/s"))
    flags = cpu_flags()
    amx = sorted(f for f in flags if f.startswith("amx"))
    isa_note = (f"bf16 instructions: "
                f"{'avx512_bf16' if 'avx512_bf16' in flags else 'none'}; "
                f"AMX: {' '.join(amx) if amx else 'no'}")
    log(isa_note)
    # The peers' reduced-precision modes run where the CPU has bf16 and
    # memfmt's bf16 builds are measured.
    bf16_peers = has_bf16(flags) and "bf16" in precisions
    rows = []
    for model_name in args.models.split(","):
        def build_model():
            m = seeded_model(model_name, 0)
            if model_name not in ZOO:
                m = calibrated(m, torch.from_numpy(np.random.default_rng(
                    99).standard_normal((4, 3, 224, 224), dtype=np.float32)))
            return m
        model = build_model()
        weights = os.path.join(work, f"{model_name}.safetensors")
        write_safetensors(weights, model.state_dict())
        cl_model = build_model().to(memory_format=torch.channels_last)
        for batch in [int(b) for b in args.batches.split(",")]:
            log(f"== {model_name}, batch {batch}")
            x = np.random.default_rng(batch).standard_normal(
                (batch, 3, 224, 224), dtype=np.float32)
            npy = os.path.join(work, f"{model_name}.{batch}.npy")
            np.save(npy, x)
            tx = torch.from_numpy(x)
            txc = tx.to(memory_format=torch.channels_last)
            runners, tolerance = {}, {}
            onnx_path = os.path.join(work, f"{model_name}.{batch}.onnx")
            if model_name not in ZOO or args.peers:
                torch.onnx.export(model, tx, onnx_path, opset_version=14)
            for (label, root), (precision, fmt) in (
                    (c, b) for c in checkouts for b in builds):
                name = f"{label} {fmt}" + ("" if precision == "f32" else
                                           f" {precision}")
                d = os.path.join(work, f"{model_name}.{batch}.{fmt}."
                                       f"{precision}.{label}")
                source = (["--model", model_name, "--batch", str(batch),
                           "--weights", weights] if model_name in ZOO
                          else [onnx_path])
                subprocess.run([os.path.join(root, "build/bin/memfmt-compile"),
                                *source, "--memory-format", fmt,
                                "--precision", precision, "-o", d],
                               check=True, capture_output=True)
                out_npy = d + ".out.npy"
                subprocess.run([os.path.join(root, "build/bin/memfmt-run"), d,
                                "--input", npy, "--output", out_npy],
                               check=True, capture_output=True)
                runners[name] = MemfmtRunner(d, npy, args.threads, root)
                runners[name].out = np.load(out_npy)
                tolerance[name] = TOLERANCE[precision]
            runners["torch eager NCHW"] = TorchRunner(torch, model, tx)
            runners["torch eager channels-last"] = TorchRunner(torch, cl_model, txc)
            with torch.no_grad():
                frozen = torch.jit.freeze(torch.jit.trace(cl_model, txc))
            runners["torch jit+freeze channels-last"] = TorchRunner(torch, frozen, txc)
            if bf16_peers:
                try:
                    runners["torch eager channels-last bf16"] = TorchRunner(
                        torch, cl_model, txc, bf16=True)
                except RuntimeError as e:
                    # Debian's PyTorch 1.13 autocast fails on some models
                    # (ConvNeXt's layer_norm: "expected scalar type
                    # BFloat16 but found Float"); the row is left out.
                    log(f"torch eager channels-last bf16 fails on "
                        f"{model_name}: {str(e).splitlines()[0]}")
            reference = runners["torch eager NCHW"].out.numpy()
            scale = float(np.abs(reference).max())
            torch_bf16_err = None
            if "torch eager channels-last bf16" in runners:
                out = runners["torch eager channels-last bf16"].out.numpy()
                torch_bf16_err = float(np.abs(out - reference).max()) / scale
                log(f"torch eager channels-last bf16: rel err "
                    f"{torch_bf16_err:.2e}")
            for name, limit in tolerance.items():
                err = float(np.abs(runners[name].out - reference).max()) / scale
                if is_bf16(name) and torch_bf16_err is not None:
                    limit = max(limit, 1.5 * torch_bf16_err)
                if err > limit:
                    raise SystemExit(f"{name} differs from torch: rel {err:.2e}"
                                     f" (limit {limit:.2e})")
                if is_bf16(name):
                    log(f"{name}: rel err {err:.2e}")
            medians = {name: [] for name in runners}
            worker = None
            if args.peers:
                # The PyPI peers in their own process (bench/.venv), set up
                # once and timed round by round between memfmt's and
                # PyTorch 1.13's rounds.
                python = run_peer_script(args)
                job = json.dumps({"onnx": onnx_path, "input": npy,
                                  "model": model_name, "weights": weights,
                                  "threads": args.threads,
                                  "iters": args.iters, "bf16": bf16_peers})
                worker = subprocess.Popen(
                    [python, __file__, "--peer-worker", job],
                    stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
                for name, why in json.loads(worker.stdout.readline()).items():
                    log(f"{name}: {why}")
            for r in range(args.rounds):
                for name, runner in runners.items():
                    medians[name].append(median(runner.measure(args.iters)))
                if worker:
                    worker.stdin.write("round\n")
                    worker.stdin.flush()
                    line = worker.stdout.readline()
                    if not line:
                        raise SystemExit("the peer worker stopped")
                    for name, ms in json.loads(line).items():
                        medians.setdefault(name, []).append(ms)
            if worker:
                worker.stdin.close()
                if worker.wait():
                    raise SystemExit("the peer worker failed")
            ips = {name: batch * 1e3 / median(ms) for name, ms in medians.items()}
            # Like with like: each precision's rows against its best peer
            # (bf16 rows against the best f32 peer only where no peer ran
            # bf16).
            peers = {n: v for n, v in ips.items() if not n.startswith("memfmt")}
            best = {}
            for precision in (False, True):
                same = {n: v for n, v in peers.items() if is_bf16(n) == precision}
                if same:
                    best[precision] = max(same, key=same.get)
            for name, value in ips.items():
                best_peer = best.get(is_bf16(name), best[False])
                gflops = value * 2 * MACS.get(model_name, 0) / 1e9
                rows.append((model_name, batch, name, value,
                             value / peers[best_peer],
                             100 * gflops / args.peak_gflops, best_peer))
    header = (f"| model | batch | configuration | images/s | vs best peer "
              f"of its precision | % of fp32 peak |\n|---|---|---|---|---|---|")
    lines = [f"| {m} | {b} | {n} | {v:.1f} | {r:.2f}x ({bp}) | {pk:.0f}% |"
             for m, b, n, v, r, pk, bp in rows]
    table = header + "\n" + "\n".join(lines)
    print(table)
    best = sorted({(m, b, bp) for m, b, _, _, _, _, bp in rows})
    print("best peer per case and precision: " +
          ", ".join(f"{m}/{b}: {bp}" for m, b, bp in best))
    if len(checkouts) > 1:
        # This checkout's builds against the baseline's, case by case.
        label = checkouts[1][0]
        ips = {(m, b, n): v for m, b, n, v, _, _, _ in rows}
        ratios = [f"{m}/{b} {n[len('memfmt '):]}: "
                  f"{v / ips[(m, b, label + n[len('memfmt'):])]:.2f}x"
                  for (m, b, n), v in ips.items()
                  if n.startswith("memfmt ")]
        table += f"\n\nThis commit vs {label}: " + ", ".join(ratios) + "."
        print(f"vs baseline {label}: " + ", ".join(ratios))
    if not args.no_record:
        commit = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short",
                                 "HEAD"], capture_output=True,
                                text=True).stdout.strip()
        cpu = machine.cpu_line()
        with open(os.path.join(ROOT, "bench", "RESULTS.md"), "a") as f:
            f.write(f"\n## CPU, {datetime.date.today()}, commit {commit}\n\n"
                    f"Machine: {cpu}, {os.cpu_count()} vCPUs, "
                    f"{platform.system()}, {isa_note}; {args.threads} "
                    f"threads; memfmt "
                    f"runtime: {MemfmtRunner.device or 'unknown'}; PyTorch "
                    f"{torch.__version__} (Debian). Command: `bench/cpu/run.py "
                    f"{' '.join(sys.argv[1:])}`. Images/s are medians of "
                    f"{args.rounds} interleaved rounds of {args.iters} "
                    f"iterations; the peak share counts 2 x multiply-adds "
                    f"against {args.peak_gflops:.0f} GFLOP/s ({peak_how})."
                    f"{bf16_note}\n\n{table}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
