"""PyTorch reference helpers shared by memfmt's comparison tests and benchmarks.

The tests under test/E2E and test/ONNX and the scripts under bench/ compare
memfmt with PyTorch on the same weights. They all build torchvision models
the same way (seeded, with non-trivial batch-norm running statistics so that
every op matters), hand the weights to memfmt as a .safetensors file
(written here by hand: Debian ships no safetensors package), run memfmt's
tools and measure errors as max |a - b| / max |b|. Import it with
`sys.path.insert(0, <repo>/scripts)`.
"""
import json
import os
import struct
import subprocess
import sys


def seeded_model(name, seed, **kwargs):
    """torchvision model `name` in eval mode, weights from `seed`, with batch
    and layer norm scales in [0.5, 1.5], shifts and means ~N(0, 0.1) and
    variances in [0.5, 1.5], ConvNeXt's layer scales (1e-6 at
    initialisation, which would hide every block) in [0.5, 1], and the
    tensors some models initialise to zeros (ViT's class token ~N(0, 1),
    and its classifier's weight, whose output would be 0 and prove
    nothing, ~N(0, 1/fan_in)).
    `name` may be a torchvision class (VisionTransformer) with its arguments
    in `kwargs`, or a function that builds the model from them."""
    import torch
    import torchvision
    torch.manual_seed(seed)
    model = (name(**kwargs) if callable(name) else
             getattr(torchvision.models, name)(**kwargs))
    with torch.no_grad():
        for module in model.modules():
            if isinstance(module, torch.nn.BatchNorm2d):
                module.weight.uniform_(0.5, 1.5)
                module.bias.normal_(0.0, 0.1)
                module.running_mean.normal_(0.0, 0.1)
                module.running_var.uniform_(0.5, 1.5)
            if isinstance(module, torch.nn.LayerNorm) and \
                    module.elementwise_affine:
                module.weight.uniform_(0.5, 1.5)
                module.bias.normal_(0.0, 0.1)
        for name, parameter in model.named_parameters():
            if name.endswith("layer_scale"):
                parameter.uniform_(0.5, 1.0)
            if name == "class_token":
                parameter.normal_(0.0, 1.0)
            elif parameter.dim() >= 2 and not parameter.any():
                parameter.normal_(0.0, parameter.shape[1] ** -0.5)
    return model.eval()


def calibrated(model, x):
    """Sets every batch norm's running statistics to those of batch `x`
    (momentum 1, one forward pass in train mode), so that activations stay
    O(1) through deep randomly initialised networks (a seeded
    EfficientNet's outputs are otherwise ~1e-10); returns the model in eval
    mode."""
    import torch
    for module in model.modules():
        if isinstance(module, torch.nn.BatchNorm2d):
            module.momentum = 1.0
    model.train()
    with torch.no_grad():
        model(x)
    return model.eval()


def write_safetensors(path, state_dict):
    """Writes a state_dict as .safetensors (f32, and i64 for counters)."""
    import numpy as np
    header, blobs, offset = {}, [], 0
    for name, tensor in state_dict.items():
        array = tensor.detach().cpu().contiguous().numpy()
        if array.dtype == np.int64:
            dtype = "I64"
        else:
            array = array.astype(np.float32)
            dtype = "F32"
        data = array.tobytes()
        header[name] = {"dtype": dtype, "shape": list(array.shape),
                        "data_offsets": [offset, offset + len(data)]}
        blobs.append(data)
        offset += len(data)
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * ((8 - len(text) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for data in blobs:
            f.write(data)


def rel_error(a, b):
    """max |a - b| / max |b|."""
    import numpy as np
    return float(np.max(np.abs(a - b)) / max(np.max(np.abs(b)), 1e-30))


def run(cmd):
    """Runs a tool; on failure prints the command and its output and exits."""
    result = subprocess.run(cmd, capture_output=True, text=True)
    if result.returncode != 0:
        sys.stderr.write(" ".join(cmd) + "\n" + result.stdout + result.stderr)
        raise SystemExit(f"command failed with exit code {result.returncode}")
    return result.stdout


def compile_and_run_onnx(bin_dir, onnx_path, input_path, out_dir, fmt):
    """Compiles an ONNX file with memfmt-compile in memory format `fmt` into
    `out_dir`, runs it on `input_path` and returns (output, its layout
    report as a dict: report.json)."""
    import os
    import numpy as np
    run([os.path.join(bin_dir, "memfmt-compile"), onnx_path,
         "--memory-format", fmt, "-o", out_dir])
    run([os.path.join(bin_dir, "memfmt-run"), out_dir, "--input", input_path,
         "--output", out_dir + ".npy"])
    with open(os.path.join(out_dir, "report.json")) as f:
        report = json.load(f)
    return np.load(out_dir + ".npy"), report


def check_onnx_export(tally, bin_dir, work, name, model, x, opset,
                      tolerance, show_conversions=False, label=None):
    """Exports `model` on input `x` (a torch tensor) to ONNX at `opset`,
    compiles and runs it in both memory formats and checks each against
    torch: max |memfmt - torch| / max |torch| <= tolerance. One tally line
    per format: `<label or name> <NxCxHxW> <format>: PASS (...)`, with the
    runtime conversions and, where the model permutes, the permutes that
    copy when `show_conversions`. What a passing check wrote is removed
    (remove_if_passed); a failing one's files stay for a look."""
    import os
    import numpy as np
    import torch
    onnx_path = os.path.join(work, f"{name}.onnx")
    input_path = os.path.join(work, f"{name}.input.npy")
    torch.onnx.export(model, x, onnx_path, opset_version=opset)
    np.save(input_path, x.numpy())
    with torch.no_grad():
        reference = model(x).numpy()
    shape = "x".join(str(d) for d in x.shape)
    passed = True
    for fmt in ("channels-last", "contiguous"):
        out_dir = os.path.join(work, f"{name}.{fmt}")
        ours, report = compile_and_run_onnx(
            bin_dir, onnx_path, input_path, out_dir, fmt)
        err = rel_error(ours, reference)
        detail = f"rel err {err:.2e} vs torch NCHW, limit {tolerance:.0e}"
        if show_conversions:
            counts = f"{report['runtime_conversions']} runtime conversions"
            if report["permute_views"] + report["permute_copies"]:
                counts += f", {report['permute_copies']} permute copies"
            detail = counts + "; " + detail
        ok = tally.check(f"{label or name} {shape} {fmt}",
                         ours.shape == reference.shape and err <= tolerance,
                         detail)
        remove_if_passed(ok, out_dir, out_dir + ".npy")
        passed = passed and ok
    remove_if_passed(passed, onnx_path, input_path)


def remove_large_files_if_passed(passed, work, prefix,
                                 limit=1 << 20):
    """Removes the files under `work` whose path there starts with
    `prefix` and that are larger than `limit` bytes (weights, checkpoints,
    ONNX files, compiled libraries) once a model's checks passed, keeping
    the reports that later RUN lines read."""
    import os
    if not passed:
        return
    for root, _, files in os.walk(work):
        for name in files:
            path = os.path.join(root, name)
            if os.path.relpath(path, work).startswith(prefix) and \
                    os.path.getsize(path) > limit:
                os.remove(path)


def remove_if_passed(passed, *paths):
    """Removes the files and directories of a check that passed: a test
    that compiles full-size models (100 MB of weights each, once in the
    ONNX file and once per compiled format) would otherwise leave
    gigabytes behind in lit's output tree, and CI machines' disks are not
    always large. A failed check keeps its files."""
    import os
    import shutil
    if not passed:
        return
    for path in paths:
        if os.path.isdir(path):
            shutil.rmtree(path, ignore_errors=True)
        elif os.path.exists(path):
            os.remove(path)


def check_calibrated_exports(models, seed_base, tolerance):
    """The whole of a torch_onnx_*.py test (`--bin DIR --work DIR`): for
    each (model, opset, batch, height, width[, kwargs]) of `models`, the
    seeded torchvision model (seed `seed_base` + its index; built with
    `kwargs`, labelled `label` if kwargs has one) with its batch norms
    calibrated on a random batch, exported at `opset` and checked in both
    memory formats (check_onnx_export, with the conversions shown). Returns
    the exit status."""
    import argparse
    import os
    import numpy as np
    import torch
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin", required=True)
    parser.add_argument("--work", required=True)
    args = parser.parse_args()
    torch.set_num_threads(2)
    os.makedirs(args.work, exist_ok=True)
    tally = Tally()
    for index, (name, opset, batch, height, width, *rest) in \
            enumerate(models):
        kwargs = dict(rest[0]) if rest else {}
        label = kwargs.pop("label", name)
        rng = np.random.default_rng(index)
        model = calibrated(
            seeded_model(name, seed=seed_base + index, **kwargs),
            torch.from_numpy(rng.standard_normal((4, 3, height, width),
                                                 dtype=np.float32)))
        x = torch.from_numpy(
            rng.standard_normal((batch, 3, height, width), dtype=np.float32))
        check_onnx_export(tally, args.bin, args.work, f"{name}.{index}",
                          model, x, opset, tolerance, show_conversions=True,
                          label=label)
    return tally.finish()


class Tally:
    """Counts PASS/FAIL lines and prints the closing line of a test."""

    def __init__(self):
        self.passed = self.failed = 0

    def check(self, what, ok, detail):
        self.passed += bool(ok)
        self.failed += not ok
        print(f"{what}: {'PASS' if ok else 'FAIL'} ({detail})")
        return ok

    def finish(self, noun="comparisons"):
        """Prints the summary; returns the exit status."""
        if self.failed:
            print(f"{self.failed} of {self.passed + self.failed} {noun} failed")
            return 1
        print(f"all {self.passed} {noun} passed")
        return 0


def read_safetensors(path):
    """Reads a .safetensors file into {name: numpy array} (F32, I64) and
    its metadata dict."""
    import numpy as np
    dtypes = {"F32": np.float32, "I64": np.int64, "F16": np.float16}
    with open(path, "rb") as f:
        data = f.read()
    (length,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + length])
    metadata = header.pop("__metadata__", {})
    tensors = {}
    base = 8 + length
    for name, info in header.items():
        begin, end = info["data_offsets"]
        array = np.frombuffer(data[base + begin:base + end],
                              dtype=dtypes[info["dtype"]])
        tensors[name] = array.reshape(info["shape"]).copy()
    return tensors, metadata


def train_checkpoint(bin_dir, model_dir, data, ckpt, steps, resume=None):
    """memfmt-train of the step in `model_dir` for `steps` steps over `data`
    in order (--no-shuffle), saving the checkpoint `ckpt` (resuming from the
    checkpoint `resume`): its state_dict and its optimizer state."""
    cmd = [os.path.join(bin_dir, "memfmt-train"), model_dir, "--data", data,
           "--steps", str(steps), "--no-shuffle", "--save", ckpt]
    if resume:
        cmd += ["--resume", resume]
    run(cmd)
    state, _ = read_safetensors(ckpt)
    optimizer, _ = read_safetensors(ckpt.replace(".safetensors",
                                                 ".optimizer.safetensors"))
    return state, optimizer


def train_mode(model):
    """`model` in training mode as memfmt trains it: batch norm on batch
    statistics, but dropout and stochastic depth off (a model exported to
    ONNX in eval mode, what memfmt-compile --train reads, has neither);
    returns the model."""
    import torch
    import torchvision
    model.train()
    for module in model.modules():
        if isinstance(module, (torch.nn.Dropout,
                               torchvision.ops.StochasticDepth)):
            module.eval()
    return model


def torch_sgd_steps(model, batches, lr, momentum, weight_decay, nesterov,
                    dampening=0.0):
    """Trains `model` (train mode) with torch.optim.SGD on (x, y) numpy
    batches; returns the losses and {param name: momentum buffer}."""
    import torch
    names = {p: n for n, p in model.named_parameters()}
    optimizer = torch.optim.SGD(model.parameters(), lr=lr, momentum=momentum,
                                dampening=dampening,
                                weight_decay=weight_decay, nesterov=nesterov)
    train_mode(model)
    losses = []
    for x, y in batches:
        optimizer.zero_grad()
        loss = torch.nn.functional.cross_entropy(
            model(torch.from_numpy(x)), torch.from_numpy(y))
        loss.backward()
        optimizer.step()
        losses.append(float(loss))
    buffers = {names[p]: s["momentum_buffer"].detach().numpy()
               for p, s in optimizer.state.items()
               if s.get("momentum_buffer") is not None}
    return losses, buffers
