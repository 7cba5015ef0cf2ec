# ===- _model.py - A loaded compiled model --------------------------------=== #
#
# Part of the memfmt project.
#
# ===---------------------------------------------------------------------=== #
"""memfmt.Model: a compiled model directory loaded into a context of its
own, run on the caller's arrays (see _arrays.py for when that copies), and
inspected (inputs, outputs, the layout report, benchmark, profile).

The model runs through the runtime's C API (the _memfmt extension), with
the GIL released; each Model has its own context, so models run in
parallel threads, and one model used from two threads runs one call at a
time.
"""

import json
import os
from dataclasses import dataclass

import numpy as np

from . import _arrays
from ._memfmt import Model as _RuntimeModel
from ._memfmt import suggest_memory_format


@dataclass(frozen=True)
class TensorInfo:
    """One input or output: its name, logical shape (NCHW meaning), element
    type, the strides (in elements) of the buffer the model reads or writes,
    and their memory format ("channels_last" or "contiguous", as the layout
    library's suggestMemoryFormat names it: channels-last strides that are
    not also NCHW's, L4). A parameter
    that is optimizer state (momentum buffers, a step count: zeros unless
    the weights have it) has zero_init."""
    name: str
    shape: tuple
    dtype: str
    strides: tuple
    memory_format: str
    buffer_bytes: int
    zero_init: bool = False

    @staticmethod
    def of(d):
        shape, strides = tuple(d["shape"]), tuple(d["strides"])
        return TensorInfo(d["name"], shape, d["dtype"], strides,
                          suggest_memory_format(list(shape), list(strides)),
                          d["buffer_bytes"],
                          d["zero_init"])


@dataclass(frozen=True)
class RunStats:
    """What the last run moved: `conversions` is the number of inputs and
    outputs that were copied into or out of the model's layout (0 when every
    caller buffer was used as it is); `converted` and `zero_copy` name them;
    `input_addresses` are the addresses of the buffers the model read (the
    caller's own memory for the inputs that were not copied)."""
    conversions: int
    converted: tuple
    zero_copy: tuple
    input_addresses: tuple


class Model:
    """A compiled model, loaded. Create with memfmt.load(dir) or
    memfmt.compile(...)."""

    def __init__(self, directory, *, weights=None, threads=0, allow_bf16=None):
        directory = os.fspath(directory)
        with open(os.path.join(directory, "manifest.json")) as f:
            target = json.load(f).get("target", "cpu")
        try:
            self._model = _RuntimeModel(directory, weights, threads, target,
                                        allow_bf16)
        except RuntimeError as e:
            raise RuntimeError(f"cannot load {directory}: {e}") from None
        self._info = self._model.info()
        self.inputs = [TensorInfo.of(d) for d in self._model.inputs()]
        self.outputs = [TensorInfo.of(d) for d in self._model.outputs()]
        self.report = _read_report(directory)
        self.directory = directory
        self.last_run = None

    # -- what it is -------------------------------------------------------- #
    @property
    def device(self):
        """The device the kernels run on, as memfmt-run prints it (the CPU
        and oneDNN's instruction set, or the GPU)."""
        return self._info["device"]

    @property
    def name(self):
        return self._info["name"]

    @property
    def memory_format(self):
        """The format the model computes in ("channels_last" or
        "contiguous")."""
        return self._info["memory_format"].replace("-", "_")

    @property
    def precision(self):
        return self._info["precision"]

    def __repr__(self):
        ins = ", ".join(f"{t.name}: {t.dtype}{list(t.shape)} {t.memory_format}"
                        for t in self.inputs)
        return (f"<memfmt.Model {self.name!r} {self.memory_format} "
                f"{self.precision} on {self._info['target']} ({ins})>")

    # -- running ----------------------------------------------------------- #
    def __call__(self, *inputs, out=None):
        return self.run(*inputs, out=out)

    def run(self, *inputs, out=None):
        """Runs the model once on `inputs` (numpy arrays, torch tensors or
        DLPack objects; one per model input). Returns the output (a tuple
        for several), as the kind of the first input, or `out` (an array or
        a sequence of arrays, one per output) after writing into it."""
        ins, outs, finish = self._bind(inputs, out)
        self._model.run(ins, outs)
        return finish()

    def _bind(self, inputs, out):
        if len(inputs) != len(self.inputs):
            raise ValueError(f"the model takes {len(self.inputs)} input(s) "
                             f"({', '.join(t.name for t in self.inputs)}), "
                             f"got {len(inputs)}")
        outs_given = out
        if out is not None and len(self.outputs) == 1 and \
                not isinstance(out, (list, tuple)):
            out = [out]
        if out is not None and len(out) != len(self.outputs):
            raise ValueError(f"out= must hold {len(self.outputs)} array(s), "
                             f"got {len(out)}")
        keep, converted, zero_copy, addresses = [], [], [], []
        kind, first_dtype = "numpy", None
        for i, (x, info) in enumerate(zip(inputs, self.inputs)):
            address, buffer, wrapped, conv = _arrays.input_buffer(
                x, info, f"input {i} ('{info.name}')")
            if i == 0:
                kind = wrapped.kind
            keep.append(buffer)
            addresses.append(address)
            (converted if conv else zero_copy).append(info.name)
        out_addresses, staged = [], []
        for i, info in enumerate(self.outputs):
            given = None if out is None else out[i]
            address, buffer, dest, conv = _arrays.output_buffer(
                given, info, f"out[{i}] ('{info.name}')")
            out_addresses.append(address)
            staged.append((buffer, dest, conv))
            (converted if conv else zero_copy).append(info.name)

        def finish():
            for buffer, dest, conv in staged:
                _arrays.finish_output(buffer, dest, conv)
            self.last_run = RunStats(len(converted), tuple(converted),
                                     tuple(zero_copy), tuple(addresses))
            del keep[:]
            if outs_given is not None:
                return outs_given
            results = tuple(
                _arrays.to_kind(buffer, kind,
                                _arrays.DTYPE_NAMES[info.dtype])
                for (buffer, _, _), info in zip(staged, self.outputs))
            return results[0] if len(results) == 1 else results

        return addresses, out_addresses, finish

    # -- measuring --------------------------------------------------------- #
    def _example_buffers(self, inputs):
        if inputs is None:
            rng = np.random.default_rng(0)
            inputs = []
            for info in self.inputs:
                a = _arrays.empty(info)
                if info.dtype == "i64":
                    a[...] = 0
                elif info.dtype == "bf16":
                    a[...] = 0x3F80  # 1.0
                else:
                    a[...] = rng.standard_normal(info.shape)
                inputs.append(a)
        return self._bind(tuple(inputs), None)

    def benchmark(self, iters=50, inputs=None):
        """Times the model as memfmt-run --bench N does: 3 warm-up runs,
        then `iters` timed runs (on `inputs`, or random data in the model's
        layout). Returns a dict of milliseconds per run (median, p10, p90,
        mean, min), images per second at the median, and the run count."""
        ins, outs, finish = self._example_buffers(inputs)
        ms = np.array(self._model.time_runs(ins, outs, int(iters)))
        finish()
        batch = self.inputs[0].shape[0] if self.inputs and \
            self.inputs[0].shape else 1
        median = float(np.percentile(ms, 50))
        return {"runs": int(iters), "batch": batch, "median_ms": median,
                "p10_ms": float(np.percentile(ms, 10)),
                "p90_ms": float(np.percentile(ms, 90)),
                "mean_ms": float(ms.mean()), "min_ms": float(ms.min()),
                "images_per_second": batch * 1000.0 / median
                if median > 0 else 0.0}

    def profile(self, iters=10, inputs=None):
        """Per-node kernel times over `iters` runs, as memfmt-run --profile:
        a list of dicts (node, kernel, impl, calls, total_ms, ms_per_run),
        the most expensive first."""
        ins, outs, finish = self._example_buffers(inputs)
        entries = self._model.profile(ins, outs, int(iters))
        finish()
        rows = [{"node": node, "kernel": kernel, "impl": impl,
                 "calls": calls, "total_ms": seconds * 1e3,
                 "ms_per_run": seconds * 1e3 / iters}
                for node, kernel, impl, calls, seconds in entries]
        return sorted(rows, key=lambda r: -r["total_ms"])

    # -- parameters -------------------------------------------------------- #
    def parameters(self):
        """The model's state tensors (weights, batch-norm statistics,
        momentum buffers) as TensorInfo, in manifest order."""
        return [TensorInfo.of(d) for d in self._model.parameters()]

    def read_parameter(self, name):
        """Parameter `name` as a numpy array of its logical shape: float32,
        or int64 for a step count."""
        info = self._parameter(name)
        values = np.empty(info.shape, np.float32)
        self._model.read_parameter(name, values.ctypes.data, values.size)
        return np.rint(values).astype(np.int64) if info.dtype == "i64" \
            else values

    def write_parameter(self, name, values):
        """Sets parameter `name` from an array of its logical shape (any
        float dtype, numpy or torch); the next run uses it."""
        info = self._parameter(name)
        w = _arrays.as_numpy(values, f"parameter '{name}'")
        a = np.ascontiguousarray(w.array, np.float32)
        if tuple(a.shape) != info.shape:
            raise ValueError(f"parameter '{name}' has shape "
                             f"{list(info.shape)}, got {list(a.shape)}")
        self._model.write_parameter(name, a.ctypes.data, a.size)

    def _parameter(self, name):
        for info in self.parameters():
            if info.name == name:
                return info
        raise KeyError(f"the model has no parameter '{name}'")

    def close(self):
        """Frees the model now (else when it is garbage-collected), and the
        temporary directory memfmt.compile compiled it in."""
        self._model.close()
        scratch = getattr(self, "_scratch", None)
        if scratch is not None:
            scratch.cleanup()
            self._scratch = None


def _read_report(directory):
    path = os.path.join(directory, "report.json")
    if not os.path.exists(path):
        return {}
    with open(path) as f:
        return json.load(f)
