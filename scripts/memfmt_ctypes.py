"""Runs a compiled memfmt model from Python through the runtime's C API.

For tests that feed a model what memfmt-run cannot: a training step's i64
class indices (memfmt-run takes f32 inputs only). It loads build/lib's
libmemfmt_model.so (model.h's API; it links libmemfmt_runtime.so) with
ctypes, loads a model directory with
memfmt_model_load and runs it with memfmt_model_run: each numpy input is
written, in logical (NCHW) order, into a buffer at the strides the manifest
gives; each output is read back the same way. A stand-in until the Python
package exists; import it with `sys.path.insert(0, <repo>/scripts)`.
"""
import ctypes
import os

import numpy as np

_c_i64_p = ctypes.POINTER(ctypes.c_int64)
_DTYPES = {"f32": np.float32, "i64": np.int64, "f16": np.float16}


class _TensorInfo(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("dtype", ctypes.c_char_p),
                ("element_size", ctypes.c_int64), ("rank", ctypes.c_int64),
                ("shape", _c_i64_p), ("strides", _c_i64_p),
                ("num_elements", ctypes.c_int64),
                ("buffer_bytes", ctypes.c_int64),
                ("zero_init", ctypes.c_int32)]


class _ModelInfo(ctypes.Structure):
    _fields_ = [(n, ctypes.c_char_p) for n in (
        "name", "target", "precision", "memory_format", "input_format",
        "weights_source", "directory", "library_path")] + [
        (n, ctypes.c_int64) for n in (
            "num_inputs", "num_outputs", "num_parameters", "num_nodes",
            "arena_bytes", "peak_live_bytes", "weights_bytes")]


class Tensor:
    def __init__(self, info):
        self.name = info.name.decode()
        self.dtype = np.dtype(_DTYPES[info.dtype.decode()])
        self.shape = tuple(info.shape[i] for i in range(info.rank))
        self.strides = tuple(info.strides[i] * self.dtype.itemsize
                             for i in range(info.rank))
        self.buffer = np.zeros(max(info.buffer_bytes, 1), dtype=np.uint8)

    def view(self):
        """The logical array over the buffer."""
        return np.lib.stride_tricks.as_strided(
            self.buffer.view(self.dtype), shape=self.shape,
            strides=self.strides)


class Model:
    """A loaded model directory; `run(*arrays)` returns {name: array}."""

    def __init__(self, directory, lib_dir):
        self.lib = ctypes.CDLL(os.path.join(lib_dir, "libmemfmt_model.so"))
        self.lib.memfmt_context_last_error.restype = ctypes.c_char_p
        self.ctx = ctypes.c_void_p()
        self._check(self.lib.memfmt_context_create(None,
                                                   ctypes.byref(self.ctx)))
        self.model = ctypes.c_void_p()
        self._check(self.lib.memfmt_model_load(
            self.ctx, directory.encode(), None, ctypes.byref(self.model)))
        info = _ModelInfo()
        self._check(self.lib.memfmt_model_get_info(self.model,
                                                   ctypes.byref(info)))
        self.inputs = [self._tensor(self.lib.memfmt_model_input_info, i)
                       for i in range(info.num_inputs)]
        self.outputs = [self._tensor(self.lib.memfmt_model_output_info, i)
                        for i in range(info.num_outputs)]

    def _check(self, status):
        if status != 0:
            raise RuntimeError(
                self.lib.memfmt_context_last_error(self.ctx).decode())

    def _tensor(self, getter, index):
        info = _TensorInfo()
        self._check(getter(self.model, ctypes.c_int64(index),
                           ctypes.byref(info)))
        return Tensor(info)

    def run(self, *arrays):
        for tensor, array in zip(self.inputs, arrays):
            tensor.view()[...] = np.asarray(array, dtype=tensor.dtype)
        pointers = lambda ts: (ctypes.c_void_p * len(ts))(
            *[t.buffer.ctypes.data for t in ts])
        self._check(self.lib.memfmt_model_run(
            self.model, pointers(self.inputs), pointers(self.outputs)))
        return {t.name: t.view().copy() for t in self.outputs}

    def __del__(self):
        if getattr(self, "model", None):
            self.lib.memfmt_model_destroy(self.model)
        if getattr(self, "ctx", None):
            self.lib.memfmt_context_destroy(self.ctx)
