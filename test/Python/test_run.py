# Model.run on numpy arrays and torch tensors: values against torch in both
# memory formats, zero-copy where the caller's layout is the model's (the
# runtime reads the caller's own buffer), exactly one counted conversion
# where it is not, out=, results of the caller's kind, every error path,
# two models in two threads, a model freed while another runs, and the
# inspection API (inputs, outputs, report, device, benchmark, profile).
#
# REQUIRES: python-package, pytest, torch, memfmt-compile
# RUN: env PYTHONPATH=%memfmt_python MEMFMT_BIN=%memfmt_bin %python -m pytest -q -p no:cacheprovider %s
import threading

import numpy as np
import pytest
import torch

import memfmt
from conftest import SHAPE, batch, rel_error

TOLERANCE = 1e-4


def channels_last(x):
    return torch.from_numpy(x).to(memory_format=torch.channels_last)


# -- values ----------------------------------------------------------------- #
@pytest.mark.parametrize("which", ["cl_model", "nchw_model"])
def test_numpy_and_torch_match_torch(request, which, reference):
    model = request.getfixturevalue(which)
    x = batch()
    y = model(x)
    assert isinstance(y, np.ndarray) and y.shape == reference.shape
    assert rel_error(y, reference) <= TOLERANCE
    t = model(torch.from_numpy(x))
    assert isinstance(t, torch.Tensor)
    assert rel_error(t.numpy(), reference) <= TOLERANCE
    t = model(channels_last(x))
    assert rel_error(t.numpy(), reference) <= TOLERANCE


def test_dlpack_object(cl_model, reference):
    class Capsule:
        """Only __dlpack__ / __dlpack_device__, as other libraries' arrays."""

        def __init__(self, tensor):
            self.tensor = tensor

        def __dlpack__(self, stream=None):
            return self.tensor.__dlpack__()

        def __dlpack_device__(self):
            return self.tensor.__dlpack_device__()

    y = cl_model(Capsule(channels_last(batch())))
    assert cl_model.last_run.conversions == 0
    assert rel_error(y, reference) <= TOLERANCE


# -- zero copy and conversions ---------------------------------------------- #
def test_channels_last_tensor_is_not_copied(cl_model):
    x = channels_last(batch())
    cl_model(x)
    run = cl_model.last_run
    assert run.conversions == 0, run
    assert run.input_addresses == (x.data_ptr(),)
    assert cl_model.inputs[0].memory_format == "channels_last"


def test_nchw_tensor_into_channels_last_model_converts_once(cl_model):
    x = torch.from_numpy(batch())
    cl_model(x)
    assert cl_model.last_run.conversions == 1
    assert cl_model.last_run.converted == ("input_0",)
    assert cl_model.last_run.input_addresses != (x.data_ptr(),)


def test_nchw_array_into_nchw_model_is_not_copied(nchw_model):
    x = batch()
    nchw_model(x)
    assert nchw_model.last_run.conversions == 0
    assert nchw_model.last_run.input_addresses == (x.ctypes.data,)
    nchw_model(channels_last(x))
    assert nchw_model.last_run.conversions == 1


def test_report(cl_model, nchw_model):
    # A channels-last input enters the channels-last model as it is; the one
    # conversion is the flatten's (L7: a 4x5 map is not NCHW in
    # channels-last).
    (conversion,) = cl_model.report["conversions"]
    assert conversion["reason"].startswith("L7: memfmt.flatten")
    assert cl_model.report["runtime_conversions"] == 1
    assert nchw_model.report["runtime_conversions"] == 0
    assert cl_model.memory_format == "channels_last"
    assert nchw_model.memory_format == "contiguous"


# -- out= -------------------------------------------------------------------- #
def test_out_in_the_model_layout(cl_model, reference):
    out = np.empty(reference.shape, np.float32)
    result = cl_model(channels_last(batch()), out=out)
    assert result is out
    assert cl_model.last_run.conversions == 0
    assert rel_error(out, reference) <= TOLERANCE


def test_out_in_another_layout(cl_model, reference):
    out = np.empty(reference.shape, np.float32, order="F")
    cl_model.run(channels_last(batch()), out=[out])
    assert cl_model.last_run.conversions == 1
    assert cl_model.last_run.converted == ("output_0",)
    assert rel_error(out, reference) <= TOLERANCE


def test_out_torch(cl_model, reference):
    out = torch.empty(reference.shape)
    assert cl_model(channels_last(batch()), out=out) is out
    assert rel_error(out.numpy(), reference) <= TOLERANCE


# -- errors ------------------------------------------------------------------ #
def test_wrong_shape(cl_model):
    with pytest.raises(ValueError, match=r"input 0 \('input_0'\) has shape "
                       r"\[1, 3, 8, 10\]; the model takes \[2, 3, 8, 10\]"):
        cl_model(np.zeros((1, 3, 8, 10), np.float32))


def test_wrong_dtype(cl_model):
    with pytest.raises(TypeError, match="has dtype float64; the model takes "
                       "float32"):
        cl_model(np.zeros(SHAPE))
    with pytest.raises(TypeError, match="has dtype int32"):
        cl_model(torch.zeros(SHAPE, dtype=torch.int32))


def test_wrong_device(cl_model):
    with pytest.raises(ValueError, match="is on device 'meta'"):
        cl_model(torch.empty(SHAPE, device="meta"))


def test_wrong_count_and_kind(cl_model):
    with pytest.raises(ValueError, match=r"takes 1 input\(s\) \(input_0\), "
                       "got 2"):
        cl_model(batch(), batch())
    with pytest.raises(TypeError, match="must be a numpy array, a torch "
                       "tensor or an object with __dlpack__, got list"):
        cl_model([[1.0]])


def test_bad_out(cl_model):
    x = channels_last(batch())
    with pytest.raises(ValueError, match=r"out\[0\] \('output_0'\) has shape"):
        cl_model(x, out=np.empty((3, 10), np.float32))
    with pytest.raises(ValueError, match=r"out= must hold 1 array\(s\), "
                       "got 2"):
        cl_model(x, out=[np.empty((2, 10), np.float32)] * 2)
    readonly = np.empty((2, 10), np.float32)
    readonly.flags.writeable = False
    with pytest.raises(ValueError, match="is read-only"):
        cl_model(x, out=readonly)


@pytest.fixture(scope="module")
def model_dir(net, tmp_path_factory):
    """A compiled directory of the small net (memfmt.compile(out_dir=))."""
    path = tmp_path_factory.mktemp("small_net")
    memfmt.compile(net, example_input=torch.from_numpy(batch()),
                   out_dir=path).close()
    return path


def test_closed_model(model_dir):
    model = memfmt.load(model_dir)
    model.close()
    with pytest.raises(RuntimeError, match="the model was closed"):
        model(batch())


def test_load_errors(tmp_path):
    with pytest.raises(FileNotFoundError):
        memfmt.load(tmp_path / "missing")
    (tmp_path / "manifest.json").write_text("{}")
    with pytest.raises(RuntimeError, match="cannot load"):
        memfmt.load(tmp_path)


# -- threads ----------------------------------------------------------------- #
def test_two_models_in_two_threads(cl_model, nchw_model, reference):
    errors = []

    def work(model, x):
        try:
            for _ in range(20):
                y = model(x)
                assert rel_error(y, reference) <= TOLERANCE
        except Exception as e:  # reported by the main thread
            errors.append(e)

    threads = [threading.Thread(target=work, args=(m, x)) for m, x in
               ((cl_model, channels_last(batch())), (nchw_model, batch()),
                (cl_model, batch()))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors


def test_model_freed_while_another_runs(model_dir, cl_model, reference):
    other = memfmt.load(model_dir)
    done = threading.Event()
    errors = []

    def work():
        try:
            while not done.is_set():
                assert rel_error(cl_model(batch()), reference) <= TOLERANCE
        except Exception as e:
            errors.append(e)

    t = threading.Thread(target=work)
    t.start()
    other(batch())
    other.close()
    del other
    done.set()
    t.join()
    assert not errors, errors


# -- inspection -------------------------------------------------------------- #
def test_inputs_outputs(cl_model, nchw_model):
    (i,) = cl_model.inputs
    assert (i.name, i.shape, i.dtype) == ("input_0", SHAPE, "f32")
    assert i.strides == (240, 1, 30, 3)
    assert nchw_model.inputs[0].memory_format == "contiguous"
    (o,) = cl_model.outputs
    assert (o.shape, o.dtype, o.memory_format) == ((2, 10), "f32",
                                                   "contiguous")
    assert "input_0" in repr(cl_model)


def test_device():
    import memfmt._memfmt as ext
    assert ext.has_onednn() in (True, False)


def test_device_string(cl_model):
    assert cl_model.device.startswith("CPU")


def test_benchmark(cl_model):
    b = cl_model.benchmark(iters=5)
    assert b["runs"] == 5 and b["batch"] == 2
    assert 0 < b["min_ms"] <= b["median_ms"] <= b["p90_ms"]
    assert b["images_per_second"] > 0
    with pytest.raises(ValueError, match="iters must be >= 1"):
        cl_model.benchmark(iters=0)


def test_profile(cl_model):
    rows = cl_model.profile(iters=3)
    kernels = {r["kernel"] for r in rows}
    assert "memfmt_conv2d_f32" in kernels
    assert all(r["calls"] == 3 for r in rows)
    assert rows == sorted(rows, key=lambda r: -r["total_ms"])


def test_layout_rules_are_the_layout_library():
    # Python classifies and compares strides with the compiler's own rules
    # (memfmt/Layout/Strides.h through the extension): channels-last strides
    # that are also NCHW's (C = 1, or H = W = 1) are contiguous (L4), and
    # the stride of a size-1 dimension never matters (L3).
    from memfmt._memfmt import same_bytes, suggest_memory_format
    assert suggest_memory_format([2, 3, 4, 5], [60, 1, 15, 3]) == \
        "channels_last"
    assert suggest_memory_format([2, 3, 4, 5], [60, 20, 5, 1]) == \
        "contiguous"
    assert suggest_memory_format([2, 1, 4, 5], [20, 1, 5, 1]) == \
        "contiguous"
    assert suggest_memory_format([2, 8, 1, 1], [8, 1, 8, 8]) == "contiguous"
    assert same_bytes([2, 1, 4, 5], [20, 1, 5, 1], [20, 20, 5, 1])
    assert not same_bytes([2, 3, 4, 5], [60, 1, 15, 3], [60, 20, 5, 1])
    # A channels-last array whose C is 1 enters an NCHW buffer as it is.
    a = np.zeros((2, 1, 4, 5), np.float32)
    assert memfmt._arrays.same_layout(a, (2, 1, 4, 5), (20, 1, 5, 1))
