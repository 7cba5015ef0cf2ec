# Data-parallel training: memfmt-train started by Open MPI's launcher.
#
#  1. A model without batch norm: 2 replicas at batch B compute exactly
#     what one process at batch 2B computes (the mean loss of 2B rows is the
#     mean of the two halves' means), so after 3 SGD steps with momentum and
#     weight decay rank 0's checkpoint (parameters and momentum buffers)
#     matches the single process's within 1e-4 of max |value|, in both
#     memory formats.
#     Channels-last data ([M,H,W,C], --data-format channels-last) feeds a
#     model compiled with --input-format channels-last on both replicas
#     with no conversion, and trains to the same checkpoint. With
#     --grad-scaler the replicas train to the unscaled replicas'
#     checkpoint bit for bit (a power-of-two scale is exact in f32).
#  2. A small network with batch norm (BatchNormNet: strided grouped
#     convolution, max pooling, a residual block) in both memory formats:
#     - per-replica statistics: 2 replicas against PyTorch's
#       DistributedDataParallel (gloo, 2 processes, Debian's torch) on the
#       same shards from the same weights: rank 0's parameters, momentum
#       buffers, running statistics and num_batches_tracked after 3 steps
#       within 1e-4 of max |torch|. The truth is DDP in float64; each line
#       prints torch's own f32 run's error beside memfmt's;
#     - --sync-batch-norm (SyncBatchNorm's statistics over the global
#       batch): 2 replicas at batch 4 match one process at batch 8 after 3
#       steps, every state tensor within 1e-4 of max |value|.
#  3. A replica that stops answering (SIGSTOP) ends the job with the
#     collective timeout's error, and a replica that dies (SIGKILL) ends it
#     through mpirun, each well within a minute; neither hangs.
#
# REQUIRES: torch, memfmt-compile, memfmt-train, mpi
# A sanitizer build would run whole training steps under ASan in two
# processes; the kernels are covered by its GoogleTests.
# UNSUPPORTED: sanitizer
# RUN: %python %s --bin %memfmt_bin --work %t | FileCheck %s
# CHECK: no batch norm, channels-last: 2 replicas x batch 2 vs 1 process x batch 4 after 3 steps: PASS
# CHECK: no batch norm, channels-last data into channels-last inputs: 0 conversions, same checkpoint: PASS
# CHECK: no batch norm, channels-last, --grad-scaler: 2 replicas = the unscaled replicas, bit for bit: PASS
# CHECK: no batch norm, contiguous: 2 replicas x batch 2 vs 1 process x batch 4 after 3 steps: PASS
# CHECK: batch norm, channels-last: 2 replicas vs DistributedDataParallel (gloo) after 3 steps: PASS
# CHECK: batch norm, channels-last, --sync-batch-norm: 2 replicas x batch 4 vs 1 process x batch 8 after 3 steps: PASS
# CHECK: batch norm, contiguous: 2 replicas vs DistributedDataParallel (gloo) after 3 steps: PASS
# CHECK: batch norm, contiguous, --sync-batch-norm: 2 replicas x batch 4 vs 1 process x batch 8 after 3 steps: PASS
# CHECK: a stopped replica ends the job with the timeout's error: PASS
# CHECK: a killed replica ends the job: PASS
import argparse
import copy
import json
import os
import signal
import subprocess
import sys
import tempfile
import time

import numpy as np
import torch
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "scripts"))
from torchref import (read_safetensors, rel_error, run,  # noqa: E402
                      write_safetensors)

LR, MOMENTUM, WEIGHT_DECAY = 1e-2, 0.9, 1e-4
FORMATS = ("channels-last", "contiguous")
STEPS = 3


def mpirun(np_, command):
    """The launcher's command line for `np_` processes of `command` (root
    allowed, more processes than cores allowed, one thread each)."""
    return ["mpirun", "--allow-run-as-root", "--oversubscribe", "--bind-to",
            "none", "-np", str(np_)] + command


def mpi_env():
    env = dict(os.environ)
    # Containers often forbid the cross-memory attach of shared-memory
    # transfers; copy through the shared segment instead.
    env["OMPI_MCA_btl_vader_single_copy_mechanism"] = "none"
    return env


class Net(torch.nn.Module):
    """Convolutions, a strided and a grouped one, max pooling and a linear
    layer: no batch norm, so replicas need no statistics of each other."""

    def __init__(self):
        super().__init__()
        self.conv1 = torch.nn.Conv2d(3, 8, 3, padding=1)
        self.conv2 = torch.nn.Conv2d(8, 16, 3, stride=2, padding=1, groups=2)
        self.pool = torch.nn.MaxPool2d(2)
        self.fc = torch.nn.Linear(16, 10)

    def forward(self, x):
        x = torch.relu(self.conv1(x))
        x = self.pool(torch.relu(self.conv2(x)))
        x = torch.nn.functional.adaptive_avg_pool2d(x, 1).flatten(1)
        return self.fc(x)


def export(model, batch, size, path):
    torch.onnx.export(copy.deepcopy(model).eval(),
                      torch.zeros(batch, 3, size, size), path,
                      opset_version=13,
                      training=torch.onnx.TrainingMode.PRESERVE,
                      do_constant_folding=False)


def write_data(path, seed, global_batch, size):
    """STEPS global batches of random images and labels of 10 classes."""
    rng = np.random.default_rng(seed)
    rows = global_batch * STEPS
    np.savez(path, x=rng.standard_normal((rows, 3, size, size),
                                         dtype=np.float32),
             y=rng.integers(0, 10, size=rows, dtype=np.int64))
    return path


def sgd_flags():
    return ["--lr", str(LR), "--momentum", str(MOMENTUM), "--weight-decay",
            str(WEIGHT_DECAY)]


def checkpoint(path):
    state, _ = read_safetensors(path)
    momenta, _ = read_safetensors(path.replace(".safetensors",
                                               ".optimizer.safetensors"))
    state.update(momenta)
    return state


def compare(ours, truth, tolerance):
    """The worst tensor and its relative error (integers must be equal)."""
    worst, error = "", 0.0
    for name, t in truth.items():
        if name not in ours:
            return name + " (missing)", float("inf")
        e = (0.0 if np.array_equal(ours[name], t) else float("inf")) \
            if t.dtype == np.int64 else rel_error(ours[name], t)
        if e >= error:
            worst, error = name, e
    return worst, error


def report(what, worst, error, tolerance, extra=""):
    verdict = "PASS" if error <= tolerance else "FAIL"
    print(f"{what}: {verdict} (worst {worst}: {error:.2e}, limit "
          f"{tolerance:g}{extra})")
    return error <= tolerance


def no_batch_norm(args, train):
    """Part 1."""
    torch.manual_seed(5)
    model = Net()
    size, batch = 12, 2
    data = write_data(os.path.join(args.work, "nobn.npz"), 3, 2 * batch,
                      size)
    ok = True
    for fmt in FORMATS:
        saved = {}
        for label, per_process, processes in (("single", 2 * batch, 1),
                                              ("replicas", batch, 2)):
            onnx = os.path.join(args.work, f"nobn.{per_process}.onnx")
            export(model, per_process, size, onnx)
            out = os.path.join(args.work, f"nobn.{fmt}.{label}")
            run([os.path.join(args.bin, "memfmt-compile"), onnx, "--train",
                 "--memory-format", fmt, "-o", out] + sgd_flags())
            ckpt = out + ".safetensors"
            command = train + [out, "--data", data, "--steps", str(STEPS),
                               "--no-shuffle", "--threads", "1", "--save",
                               ckpt]
            subprocess.run(mpirun(2, command) if processes == 2 else command,
                           check=True, stdout=subprocess.DEVNULL,
                           env=mpi_env())
            saved[label] = checkpoint(ckpt)
        worst, error = compare(saved["replicas"], saved["single"], 1e-4)
        ok &= report(f"no batch norm, {fmt}: 2 replicas x batch {batch} vs "
                     f"1 process x batch {2 * batch} after {STEPS} steps",
                     worst, error, 1e-4)
        if fmt != "channels-last":
            continue
        # The plan's channels-last DataLoader: NHWC rows, no conversion.
        arrays = np.load(data)
        nhwc = os.path.join(args.work, "nobn.nhwc.npz")
        np.savez(nhwc, x=np.ascontiguousarray(
            arrays["x"].transpose(0, 2, 3, 1)), y=arrays["y"])
        out = os.path.join(args.work, "nobn.nhwc.replicas")
        run([os.path.join(args.bin, "memfmt-compile"),
             os.path.join(args.work, f"nobn.{batch}.onnx"), "--train",
             "--memory-format", fmt, "--input-format", "channels-last", "-o",
             out] + sgd_flags())
        ckpt = out + ".safetensors"
        report_json = subprocess.run(
            mpirun(2, train + [out, "--data", nhwc, "--data-format",
                               "channels-last", "--steps", str(STEPS),
                               "--no-shuffle", "--threads", "1", "--json",
                               "--save", ckpt]),
            check=True, capture_output=True, text=True, env=mpi_env()).stdout
        conversions = json.loads(report_json)["conversions"]
        worst, error = compare(checkpoint(ckpt), saved["replicas"], 1e-6)
        ok &= report(f"no batch norm, channels-last data into channels-last "
                     f"inputs: {conversions} conversions, same checkpoint",
                     worst, error if conversions == 0 else float("inf"),
                     1e-6)
        # Dynamic loss scaling across replicas: the averaged gradients are
        # unscaled alike on every replica (one found_inf for all), and in
        # f32 a power-of-two scale changes no bit.
        out = os.path.join(args.work, "nobn.scaled.replicas")
        run([os.path.join(args.bin, "memfmt-compile"),
             os.path.join(args.work, f"nobn.{batch}.onnx"), "--train",
             "--memory-format", fmt, "--grad-scaler", "-o", out] +
            sgd_flags())
        ckpt = out + ".safetensors"
        subprocess.run(mpirun(2, train + [out, "--data", data, "--steps",
                                          str(STEPS), "--no-shuffle",
                                          "--threads", "1", "--save", ckpt]),
                       check=True, stdout=subprocess.DEVNULL, env=mpi_env())
        scaled = checkpoint(ckpt)
        worst, error = compare(scaled, saved["replicas"], 0.0)
        ok &= report("no batch norm, channels-last, --grad-scaler: 2 "
                     "replicas = the unscaled replicas, bit for bit", worst,
                     error if scaled.get("grad_scaler.scale") == 65536.0
                     else float("inf"), 0.0)
    return ok


class BatchNormNet(torch.nn.Module):
    """Convolution, batch norm and relu blocks (a strided grouped one), max
    pooling, a residual block (gradient accumulation) and a linear layer:
    small, so no relu or max-pool decision sits within rounding of its
    threshold and f32 runs agree with float64 to ~1e-6 after 3 steps (on
    ResNet-18 with random data such flips make torch's own f32 run 10-30%
    off float64 on some tensors, which no tolerance can cover)."""

    def __init__(self):
        super().__init__()
        self.conv1 = torch.nn.Conv2d(3, 8, 3, padding=1, bias=False)
        self.bn1 = torch.nn.BatchNorm2d(8)
        self.conv2 = torch.nn.Conv2d(8, 16, 3, stride=2, padding=1, groups=2,
                                     bias=False)
        self.bn2 = torch.nn.BatchNorm2d(16)
        self.pool = torch.nn.MaxPool2d(2)
        self.conv3 = torch.nn.Conv2d(16, 16, 1, bias=False)
        self.bn3 = torch.nn.BatchNorm2d(16)
        self.fc = torch.nn.Linear(16, 10)

    def forward(self, x):
        x = torch.relu(self.bn1(self.conv1(x)))
        x = self.pool(torch.relu(self.bn2(self.conv2(x))))
        x = torch.relu(self.bn3(self.conv3(x)) + x)
        x = torch.nn.functional.adaptive_avg_pool2d(x, 1).flatten(1)
        return self.fc(x)


def batch_norm_net():
    torch.manual_seed(11)
    model = BatchNormNet()
    with torch.no_grad():
        for module in model.modules():
            if isinstance(module, torch.nn.BatchNorm2d):
                module.weight.uniform_(0.5, 1.5)
                module.bias.normal_(0.0, 0.1)
                module.running_var.uniform_(0.5, 1.5)
    return model


def ddp_worker(rank, init, weights, data, batch, result):
    """One process of DistributedDataParallel (gloo): the state of rank 0
    after STEPS steps on its shards, in float64 and in float32, saved to
    `result`.{f64,f32}.npz."""
    import torch.distributed as dist
    torch.set_num_threads(1)
    dist.init_process_group("gloo", init_method=init, rank=rank,
                            world_size=2)
    arrays = np.load(data)
    for dtype, suffix in ((torch.float64, "f64"), (torch.float32, "f32")):
        model = batch_norm_net()
        state, _ = read_safetensors(weights)
        model.load_state_dict({n: torch.from_numpy(v)
                               for n, v in state.items()})
        model = model.to(dtype).train()
        ddp = torch.nn.parallel.DistributedDataParallel(model)
        optimizer = torch.optim.SGD(ddp.parameters(), lr=LR,
                                    momentum=MOMENTUM,
                                    weight_decay=WEIGHT_DECAY)
        for step in range(STEPS):
            first = step * 2 * batch + rank * batch
            x = torch.from_numpy(arrays["x"][first:first + batch]).to(dtype)
            y = torch.from_numpy(arrays["y"][first:first + batch])
            optimizer.zero_grad()
            torch.nn.functional.cross_entropy(ddp(x), y).backward()
            optimizer.step()
        if rank == 0:
            names = {p: n for n, p in model.named_parameters()}
            out = {n: t.detach().contiguous().numpy()
                   for n, t in model.state_dict().items()}
            out.update({names[p] + ".momentum_buffer":
                        s["momentum_buffer"].numpy()
                        for p, s in optimizer.state.items()})
            np.savez(f"{result}.{suffix}.npz", **out)
    dist.destroy_process_group()


def with_batch_norm(args, train):
    """Part 2."""
    size, batch = 16, 4
    model = batch_norm_net()
    weights = os.path.join(args.work, "bn.safetensors")
    write_safetensors(weights, model.state_dict())
    data = write_data(os.path.join(args.work, "bn.npz"), 7, 2 * batch, size)
    result = os.path.join(args.work, "ddp")
    init = "file://" + os.path.join(args.work, "ddp.rendezvous")
    if os.path.exists(init[len("file://"):]):
        os.remove(init[len("file://"):])
    torch.multiprocessing.spawn(ddp_worker,
                                args=(init, weights, data, batch, result),
                                nprocs=2)
    truth = dict(np.load(result + ".f64.npz"))
    torch_worst, torch_error = compare(dict(np.load(result + ".f32.npz")),
                                       truth, 1e-3)
    dirs = {}
    for per_process in (batch, 2 * batch):
        onnx = os.path.join(args.work, f"bn.{per_process}.onnx")
        export(model, per_process, size, onnx)
        for fmt in FORMATS:
            out = os.path.join(args.work, f"bn.{fmt}.{per_process}")
            run([os.path.join(args.bin, "memfmt-compile"), onnx, "--train",
                 "--memory-format", fmt, "-o", out] + sgd_flags())
            dirs[fmt, per_process] = out
    ok = True
    for fmt in FORMATS:
        saved = {}
        for label, command in (
                ("ddp", mpirun(2, train + [dirs[fmt, batch]])),
                ("sync", mpirun(2, train + [dirs[fmt, batch],
                                            "--sync-batch-norm"])),
                ("single", train + [dirs[fmt, 2 * batch]])):
            ckpt = os.path.join(args.work, f"bn.{fmt}.{label}.safetensors")
            subprocess.run(command + ["--data", data, "--steps", str(STEPS),
                                      "--no-shuffle", "--threads", "1",
                                      "--save", ckpt],
                           check=True, stdout=subprocess.DEVNULL,
                           env=mpi_env())
            saved[label] = checkpoint(ckpt)
        worst, error = compare(saved["ddp"], truth, 1e-4)
        ok &= report(f"batch norm, {fmt}: 2 replicas vs DistributedDataParallel"
                     f" (gloo) after {STEPS} steps", worst, error, 1e-4,
                     f"; torch f32 DDP: {torch_worst} {torch_error:.2e}")
        worst, error = compare(saved["sync"], saved["single"], 1e-4)
        ok &= report(f"batch norm, {fmt}, --sync-batch-norm: 2 replicas x "
                     f"batch {batch} vs 1 process x batch {2 * batch} after "
                     f"{STEPS} steps", worst, error, 1e-4)
    return ok


def replica_pid(rank, work):
    """The pid of memfmt-train's replica `rank` of the job working in
    `work` (found through its environment)."""
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                cmdline = f.read().split(b"\0")
            with open(f"/proc/{entry}/environ", "rb") as f:
                environ = f.read().split(b"\0")
        except OSError:
            continue
        if cmdline and cmdline[0].endswith(b"memfmt-train") and \
                work.encode() in b" ".join(cmdline) and \
                f"OMPI_COMM_WORLD_RANK={rank}".encode() in environ:
            return int(entry)
    return None


def failing_replica(args, train, sig, what, expect):
    """Part 3: a long job whose replica 1 gets `sig` after a few steps."""
    out = os.path.join(args.work, "nobn.channels-last.replicas")
    data = os.path.join(args.work, "nobn.npz")
    job = subprocess.Popen(
        mpirun(2, train + [out, "--data", data, "--steps", "1000000",
                           "--threads", "1", "--collective-timeout", "5"]),
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        env=mpi_env())
    victim = None
    try:
        for line in job.stdout:
            if line.startswith("step 3/"):
                break
        victim = replica_pid(1, out)
        if victim is None:
            print(f"{what}: FAIL (replica 1 not found)")
            return False
        begin = time.monotonic()
        os.kill(victim, sig)
        output = job.communicate(timeout=90)[0]
        took = time.monotonic() - begin
    except subprocess.TimeoutExpired:
        print(f"{what}: FAIL (the job still runs after 90 s)")
        return False
    finally:
        if job.poll() is None:
            job.kill()
        if victim is not None:
            for s in (signal.SIGCONT, signal.SIGKILL):
                try:
                    os.kill(victim, s)
                except OSError:
                    pass
    ok = job.returncode != 0 and expect in output
    last = [line for line in output.splitlines() if line.strip()][-3:]
    print(f"{what}: {'PASS' if ok else 'FAIL'} (exit {job.returncode} "
          f"after {took:.1f} s; {' | '.join(last)})")
    return ok


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin", required=True)
    parser.add_argument("--work", required=True)
    args = parser.parse_args()
    os.makedirs(args.work, exist_ok=True)
    torch.set_num_threads(2)
    train = [os.path.join(args.bin, "memfmt-train")]
    ok = no_batch_norm(args, train)
    ok &= with_batch_norm(args, train)
    ok &= failing_replica(args, train, signal.SIGSTOP,
                          "a stopped replica ends the job with the timeout's "
                          "error", "timed out after 5 s")
    ok &= failing_replica(args, train, signal.SIGKILL,
                          "a killed replica ends the job", "")
    return 0 if ok else 1


if __name__ == "__main__":
    tempfile.tempdir = None
    sys.exit(main())
