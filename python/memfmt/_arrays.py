# ===- _arrays.py - The caller's arrays and the model's buffers -----------=== #
#
# Part of the memfmt project.
#
# ===---------------------------------------------------------------------=== #
"""How the caller's arrays reach a model's buffers and back.

A compiled model reads each input from a buffer of one layout (the strides
of its manifest: NCHW, or NHWC for a model compiled with a channels-last
input format) and writes each output to a buffer of one layout. This module
turns what the caller passes -- a numpy array, a torch tensor, or any
object with ``__dlpack__`` -- into such a buffer:

* When the array's dtype, shape and strides already are the model's (a
  ``torch.channels_last`` tensor into a channels-last model), its own
  memory is the buffer: no copy.
* Otherwise exactly one copy into a buffer of the model's layout (a
  *conversion*, counted in ``Model.last_run``).
* A wrong dtype, shape or device raises TypeError or ValueError naming the
  tensor; nothing is converted implicitly but the layout.

Every array is viewed through numpy (``Tensor.numpy()`` and
``numpy.from_dlpack`` share the memory); results go back as the kind the
caller passed (numpy arrays, or torch tensors sharing the buffer).
"""

import numpy as np

from ._memfmt import same_bytes

# The manifest's element types and their numpy dtypes. bf16 has no numpy
# dtype: its buffers are uint16 bit patterns, and torch tensors go through
# an int16 view (see as_numpy).
DTYPES = {"f32": np.dtype(np.float32), "f16": np.dtype(np.float16),
          "bf16": np.dtype(np.uint16), "i64": np.dtype(np.int64)}
DTYPE_NAMES = {"f32": "float32", "f16": "float16", "bf16": "bfloat16",
               "i64": "int64"}


class Wrapped:
    """A caller's array seen through numpy: `array` shares its memory;
    `kind` is "numpy" or "torch" (results are returned as that kind)."""

    def __init__(self, array, kind, dtype_name):
        self.array = array
        self.kind = kind
        self.dtype_name = dtype_name


def _is_torch_tensor(x):
    return type(x).__module__.startswith("torch") and hasattr(x, "data_ptr")


def as_numpy(x, what):
    """`x` (numpy array, torch tensor or DLPack object) as a Wrapped view."""
    if isinstance(x, np.ndarray):
        return Wrapped(x, "numpy", str(x.dtype))
    if _is_torch_tensor(x):
        import torch
        if x.device.type != "cpu":
            raise ValueError(f"{what} is on device '{x.device}'; memfmt "
                             f"models take host (cpu) tensors")
        # Tensor.numpy() shares the memory and, unlike numpy.from_dlpack,
        # leaves it writable (for out=).
        t = x.detach()
        if t.dtype == torch.bfloat16:
            return Wrapped(t.view(torch.int16).numpy().view(np.uint16),
                           "torch", "bfloat16")
        name = str(t.dtype).replace("torch.", "")
        try:
            return Wrapped(t.numpy(), "torch", name)
        except (TypeError, RuntimeError) as e:
            raise TypeError(f"{what}: a torch tensor of dtype {name} cannot "
                            f"be read without a copy ({e})") from None
    if hasattr(x, "__dlpack__"):
        try:
            a = np.from_dlpack(x)
        except (BufferError, TypeError, RuntimeError) as e:
            raise ValueError(f"{what}: cannot read {type(x).__name__} "
                             f"through DLPack on the host ({e})") from None
        return Wrapped(a, "numpy", str(a.dtype))
    raise TypeError(f"{what} must be a numpy array, a torch tensor or an "
                    f"object with __dlpack__, got {type(x).__name__}")


def element_strides(array):
    """The strides of `array` in elements, or None when a stride is not a
    whole number of elements."""
    size = array.itemsize
    if any(s % size for s in array.strides):
        return None
    return tuple(s // size for s in array.strides)


def same_layout(array, shape, strides):
    """True when `array` (of `shape`) has `strides` on every dimension of
    size > 1 (the layout library's sameBytes, L3: the stride of a size-1
    dimension is never used)."""
    mine = element_strides(array)
    return mine is not None and \
        same_bytes(list(shape), list(mine), list(strides))


def empty(info):
    """A numpy array of a tensor's shape and dtype laid out at its strides
    (the buffer a model reads or writes), 64-byte aligned."""
    dtype = DTYPES[info.dtype]
    count = max(info.buffer_bytes // dtype.itemsize, 1)
    raw = np.empty(count * dtype.itemsize + 64, np.uint8)
    offset = (-raw.ctypes.data) % 64
    flat = raw[offset:offset + count * dtype.itemsize].view(dtype)
    return np.lib.stride_tricks.as_strided(
        flat, shape=info.shape,
        strides=[s * dtype.itemsize for s in info.strides])


def check(wrapped, info, what):
    """Raises TypeError / ValueError unless `wrapped` fits tensor `info`."""
    want = DTYPE_NAMES[info.dtype]
    if wrapped.dtype_name != want:
        raise TypeError(f"{what} has dtype {wrapped.dtype_name}; the model "
                        f"takes {want}")
    if tuple(wrapped.array.shape) != tuple(info.shape):
        raise ValueError(f"{what} has shape {list(wrapped.array.shape)}; the "
                         f"model takes {list(info.shape)}")


def input_buffer(x, info, what):
    """The buffer model input `info` reads for the caller's `x`: (address,
    keep-alive array, Wrapped, converted)."""
    w = as_numpy(x, what)
    check(w, info, what)
    a = w.array
    if same_layout(a, info.shape, info.strides) and \
            a.ctypes.data % a.itemsize == 0:
        return a.ctypes.data, a, w, False
    staged = empty(info)
    np.copyto(staged, a)
    return staged.ctypes.data, staged, w, True


def output_buffer(out, info, what):
    """The buffer output `info` is written to for the caller's `out` (None:
    a new array): (address, buffer, destination Wrapped or None, converted).
    When `out`'s layout is not the model's, the model writes a buffer of its
    own and finish_output copies it into `out` (one conversion)."""
    if out is None:
        buffer = empty(info)
        return buffer.ctypes.data, buffer, None, False
    w = as_numpy(out, what)
    check(w, info, what)
    if not w.array.flags.writeable:
        raise ValueError(f"{what} is read-only")
    a = w.array
    if same_layout(a, info.shape, info.strides) and \
            a.ctypes.data % a.itemsize == 0:
        return a.ctypes.data, a, w, False
    buffer = empty(info)
    return buffer.ctypes.data, buffer, w, True


def finish_output(buffer, destination, converted):
    """Copies a staged output into the caller's `out` array."""
    if converted:
        np.copyto(destination.array, buffer)


def to_kind(array, kind, dtype_name):
    """`array` as the caller's kind: itself, or a torch tensor sharing it."""
    if kind != "torch":
        return array
    import torch
    if dtype_name == "bfloat16":
        return torch.from_numpy(array.view(np.int16)).view(torch.bfloat16)
    return torch.from_numpy(array)
