# ===- _compile.py - memfmt.compile: sources to loaded models -------------=== #
#
# Part of the memfmt project.
#
# ===---------------------------------------------------------------------=== #
"""memfmt.compile: an ONNX file, a .mlir file, a zoo name or a torch module
compiled by memfmt-compile (the same compiler and options as on the command
line) and loaded as a memfmt.Model (or a memfmt.Trainer with train=True).

A torch module is exported with torch.onnx.export (its parameters and
buffers -- its state_dict -- become the ONNX file's initializers, which the
compiler takes as the weights) into a temporary directory. Unless `out_dir`
names one, the compiled directory is temporary too; the model owns it (the
runtime reads the weights file again when parameters are read or written)
and removes it when it is closed or collected, so nothing is left on disk.
"""

import os
import shutil
import subprocess
import tempfile

from . import _config


class CompileError(Exception):
    """memfmt-compile rejected the source; the message is the compiler's
    (located: the file, node or op, and what is wrong)."""


def compiler_path():
    """memfmt-compile: $MEMFMT_BIN/memfmt-compile, else the one of the build
    or installation this package belongs to, else the PATH's."""
    for directory in (os.environ.get("MEMFMT_BIN"), _config.BIN_DIR):
        if directory:
            path = os.path.join(directory, "memfmt-compile")
            if os.access(path, os.X_OK):
                return path
    path = shutil.which("memfmt-compile")
    if path is None:
        raise CompileError("memfmt-compile not found: set MEMFMT_BIN to the "
                           "directory that holds it (build/bin)")
    return path


_FORMATS = {"channels_last": "channels-last", "channels-last": "channels-last",
            "contiguous": "contiguous", "nchw": "contiguous"}


def _format_flag(value, what):
    key = str(value).lower()
    if key not in _FORMATS:
        raise ValueError(f"{what} must be 'channels_last' or 'contiguous', "
                         f"got {value!r}")
    return _FORMATS[key]


def _export(module, example_input, path, opset):
    import torch
    if example_input is None:
        raise ValueError("compiling a torch.nn.Module needs example_input= "
                         "(a tensor of the input's shape)")
    args = example_input if isinstance(example_input, tuple) else \
        (example_input,)
    was_training = module.training
    module.eval()
    try:
        with torch.no_grad():
            torch.onnx.export(module, args, path, opset_version=opset)
    finally:
        module.train(was_training)


def compile_command(source_path, *, zoo_name, memory_format, input_format,
                    batch, height, width, precision, target, weights, fusion,
                    tile_batch_bytes, sub_batch, train, lr, momentum,
                    dampening, weight_decay, nesterov, out_dir,
                    grad_scaler=None):
    """The memfmt-compile command line for these options."""
    cmd = [compiler_path()]
    cmd += ["--model", zoo_name] if zoo_name else [source_path]
    fmt = _format_flag(memory_format, "memory_format")
    cmd += ["--memory-format", fmt]
    cmd += ["--input-format",
            _format_flag(input_format, "input_format") if input_format
            else fmt]
    for flag, value in (("--batch", batch), ("--height", height),
                        ("--width", width)):
        if value is not None:
            cmd += [flag, str(int(value))]
    cmd += ["--precision", str(precision), "--target", str(target)]
    if weights is not None:
        cmd += ["--weights", os.fspath(weights)]
    if not fusion:
        cmd += ["--fusion=false"]
    for flag, value in (("--tile-batch-bytes", tile_batch_bytes),
                        ("--sub-batch", sub_batch)):
        if value is not None:
            cmd += [flag, str(int(value))]
    if train:
        cmd += ["--train"]
        for flag, value in (("--lr", lr), ("--momentum", momentum),
                            ("--dampening", dampening),
                            ("--weight-decay", weight_decay)):
            if value is not None:
                cmd += [flag, repr(float(value))]
        if nesterov:
            cmd += ["--nesterov"]
        cmd += _grad_scaler_flags(grad_scaler)
    cmd += ["-o", out_dir]
    return cmd


_GRAD_SCALER_FLAGS = {"init_scale": "--grad-scaler-init-scale",
                      "growth_factor": "--grad-scaler-growth-factor",
                      "backoff_factor": "--grad-scaler-backoff-factor",
                      "growth_interval": "--grad-scaler-growth-interval"}


def _grad_scaler_flags(grad_scaler):
    """memfmt-compile's --grad-scaler flags: None or False for none, True
    for torch.cuda.amp.GradScaler's defaults, or a dict of its arguments
    (init_scale, growth_factor, backoff_factor, growth_interval)."""
    if grad_scaler is None or grad_scaler is False:
        return []
    if grad_scaler is True:
        return ["--grad-scaler"]
    if not isinstance(grad_scaler, dict):
        raise TypeError("grad_scaler must be a bool or a dict of "
                        "GradScaler's arguments, got "
                        f"{type(grad_scaler).__name__}")
    unknown = sorted(set(grad_scaler) - set(_GRAD_SCALER_FLAGS))
    if unknown:
        raise ValueError(f"grad_scaler: unknown argument(s) {unknown}; "
                         f"expected {sorted(_GRAD_SCALER_FLAGS)}")
    flags = ["--grad-scaler"]
    for name, value in grad_scaler.items():
        number = int(value) if name == "growth_interval" else float(value)
        flags += [_GRAD_SCALER_FLAGS[name], repr(number)]
    return flags


def compile(source, *, memory_format="channels_last", input_format=None,
            batch=None, height=None, width=None, precision="f32",
            target="cpu", weights=None, fusion=True, tile_batch_bytes=None,
            sub_batch=None, out_dir=None, example_input=None, opset=17,
            threads=0, train=False, lr=None, momentum=None,
            dampening=None, weight_decay=None, nesterov=False,
            grad_scaler=None, allow_bf16=None):
    """Compiles `source` and loads the result.

    source: a path to an ONNX file or a .mlir file, a zoo name ("resnet50"),
        or a torch.nn.Module with `example_input` (exported at `opset`).
    memory_format: the format the model computes in ("channels_last" or
        "contiguous").
    input_format: the layout of the input buffers the model reads; by
        default the memory format, so that a torch.channels_last batch
        enters a channels-last model without a copy.
    batch, height, width: a zoo model's sizes, or an ONNX model's dynamic
        batch (memfmt-compile --batch/--height/--width).
    precision, target, weights, fusion: as memfmt-compile's options.
    tile_batch_bytes, sub_batch: batch tiling on the CPU, as
        memfmt-compile --tile-batch-bytes / --sub-batch (None: the
        compiler's default).
    out_dir: keep the compiled directory there (memfmt.load reads it back).
    threads: the threads the model runs on (0: MEMFMT_NUM_THREADS, else
        every hardware thread).
    train, lr, momentum, dampening, weight_decay, nesterov: compile a
        training step (memfmt-compile --train); returns a memfmt.Trainer.
    grad_scaler: dynamic loss scaling in the training step
        (memfmt-compile --grad-scaler): True for torch.cuda.amp.GradScaler's
        defaults, or a dict of its init_scale, growth_factor,
        backoff_factor and growth_interval.
    allow_bf16: on the CPU, let f32 convolutions and their gradients
        multiply in bf16 with f32 accumulation where the CPU has bf16
        instructions (mixed precision, as memfmt-train --allow-bf16; the
        model's `device` says whether it applies). None (the default):
        the MEMFMT_ALLOW_BF16 environment variable decides, else off.

    Raises CompileError with the compiler's message when it fails.
    """
    owner = tempfile.TemporaryDirectory(prefix="memfmt-")
    try:
        model = _compile_in(owner.name, source, memory_format, input_format,
                            batch, height, width, precision, target, weights,
                            fusion, tile_batch_bytes, sub_batch, out_dir,
                            example_input, opset, threads, train, lr,
                            momentum, dampening, weight_decay, nesterov,
                            grad_scaler, allow_bf16)
    except BaseException:
        owner.cleanup()
        raise
    model._scratch = owner
    return model


def _compile_in(scratch, source, memory_format, input_format, batch, height,
                width, precision, target, weights, fusion, tile_batch_bytes,
                sub_batch, out_dir, example_input, opset, threads, train, lr,
                momentum, dampening, weight_decay, nesterov, grad_scaler,
                allow_bf16):
    from ._model import Model
    zoo_name, path = None, None
    if hasattr(source, "state_dict") and hasattr(source, "forward"):
        path = os.path.join(scratch, "module.onnx")
        _export(source, example_input, path, opset)
    else:
        text = os.fspath(source)
        if os.path.exists(text) or text.endswith((".onnx", ".mlir")):
            if not os.path.exists(text):
                raise FileNotFoundError(f"{text}: no such file")
            path = text
        else:
            zoo_name = text
    directory = os.fspath(out_dir) if out_dir is not None else \
        os.path.join(scratch, "model")
    cmd = compile_command(
        path, zoo_name=zoo_name, memory_format=memory_format,
        input_format=input_format, batch=batch, height=height,
        width=width, precision=precision, target=target, weights=weights,
        fusion=fusion, tile_batch_bytes=tile_batch_bytes,
        sub_batch=sub_batch, train=train, lr=lr, momentum=momentum,
        dampening=dampening, weight_decay=weight_decay, nesterov=nesterov,
        out_dir=directory, grad_scaler=grad_scaler)
    done = subprocess.run(cmd, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True)
    if done.returncode != 0:
        lines = [line for line in done.stderr.splitlines()
                 if not line.startswith("[")]
        raise CompileError("\n".join(lines).strip() or
                           f"memfmt-compile exited with status "
                           f"{done.returncode}")
    if train:
        from ._trainer import Trainer
        return Trainer(directory, threads=threads, allow_bf16=allow_bf16)
    return Model(directory, threads=threads, allow_bf16=allow_bf16)
