# ===- memfmt/__init__.py - memfmt from Python ----------------------------=== #
#
# Part of the memfmt project.
#
# ===---------------------------------------------------------------------=== #
"""memfmt from Python: compile a torch module, an ONNX file or a zoo model
ahead of time in channels-last, and run it on numpy arrays and torch
tensors -- without a copy when they are already in the model's layout.

    import memfmt, torch, torchvision
    net = torchvision.models.resnet18().eval()
    x = torch.randn(8, 3, 224, 224).to(memory_format=torch.channels_last)
    model = memfmt.compile(net, example_input=x)
    y = model(x)                      # a torch tensor; x was not copied
    model.last_run.conversions        # 0
    model.report["runtime_conversions"], model.benchmark(iters=20)

See docs/python.md.
"""

from ._compile import CompileError, compile
from ._model import Model, RunStats, TensorInfo
from ._trainer import Trainer

__all__ = ["CompileError", "Model", "RunStats", "TensorInfo", "Trainer",
           "compile", "load"]


def load(directory, *, weights=None, threads=0, allow_bf16=None):
    """Loads a directory memfmt-compile (or memfmt.compile(out_dir=...))
    wrote. `weights` overrides its weight source ("synthetic:SEED" or a
    .safetensors path); `threads` and `allow_bf16` as in memfmt.compile."""
    import json
    import os
    with open(os.path.join(os.fspath(directory), "manifest.json")) as f:
        manifest = json.load(f)
    # A training step takes int64 class indices last, returns only its loss
    # and updates parameters in place (a --gradients step returns the
    # gradients too: a Model).
    inputs, outputs = manifest.get("inputs", []), manifest.get("outputs", [])
    training = bool(inputs) and inputs[-1].get("dtype") == "i64" and \
        len(outputs) == 1 and \
        any(p.get("updated") for p in manifest.get("parameters", []))
    cls = Trainer if training else Model
    return cls(directory, weights=weights, threads=threads,
               allow_bf16=allow_bf16)
