# memfmt.compile from each kind of source: a torchvision ResNet-18 module
# (seeded, batch norms calibrated) in both memory formats against torch, a
# channels-last batch entering the channels-last model with no conversion
# at all (neither by the package nor in the model); an ONNX file, a zoo
# name, out_dir + memfmt.load; nothing left on disk without out_dir; and the
# errors: the compiler's located message as CompileError, bad options,
# missing files and a module without example_input.
#
# REQUIRES: python-package, pytest, torch, python-onnx, memfmt-compile
# RUN: env PYTHONPATH=%memfmt_python MEMFMT_BIN=%memfmt_bin %python -m pytest -q -p no:cacheprovider %s
import os

import numpy as np
import onnx
import pytest
import torch
from onnx import TensorProto, helper

import memfmt
from conftest import rel_error
from torchref import calibrated, seeded_model

TOLERANCE = 1e-4


@pytest.fixture(scope="module")
def resnet18():
    return calibrated(seeded_model("resnet18", seed=1),
                      torch.randn(4, 3, 64, 64, generator=torch.Generator()
                                  .manual_seed(2)))


@pytest.mark.parametrize("memory_format", ["channels_last", "contiguous"])
def test_torchvision_module(resnet18, memory_format):
    x = torch.randn(2, 3, 64, 64, generator=torch.Generator().manual_seed(3))
    x = x.to(memory_format=torch.channels_last if memory_format ==
             "channels_last" else torch.contiguous_format)
    model = memfmt.compile(resnet18, example_input=x,
                           memory_format=memory_format)
    with torch.no_grad():
        reference = resnet18(x).numpy()
    y = model(x)
    assert isinstance(y, torch.Tensor)
    assert rel_error(y.numpy(), reference) <= TOLERANCE
    # The input's layout is the model's: nothing converted anywhere.
    assert model.last_run.conversions == 0
    assert model.last_run.input_addresses == (x.data_ptr(),)
    assert model.report["runtime_conversions"] == 0
    assert model.inputs[0].memory_format == memory_format
    model.close()


def test_input_format_option(resnet18):
    x = torch.randn(1, 3, 32, 32)
    model = memfmt.compile(resnet18, example_input=x,
                           input_format="contiguous")
    assert model.memory_format == "channels_last"
    assert model.inputs[0].memory_format == "contiguous"
    model(x)
    assert model.last_run.conversions == 0
    # The model converts its input itself: the report shows it.
    assert model.report["runtime_conversions"] == 1


def tiny_onnx(path, op="Relu"):
    graph = helper.make_graph(
        [helper.make_node(op, ["x"], ["y"], name="the_node")], "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2, 3, 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 2, 3, 3])])
    onnx.save(helper.make_model(
        graph, opset_imports=[helper.make_opsetid("", 13)]), str(path))
    return path


def test_onnx_file_out_dir_and_load(tmp_path):
    path = tiny_onnx(tmp_path / "relu.onnx")
    out = tmp_path / "compiled"
    model = memfmt.compile(path, out_dir=out, memory_format="contiguous")
    x = np.linspace(-1, 1, 18, dtype=np.float32).reshape(1, 2, 3, 3)
    np.testing.assert_array_equal(model(x), np.maximum(x, 0))
    model.close()
    assert (out / "manifest.json").exists() and (out / "model.so").exists()
    again = memfmt.load(out)
    np.testing.assert_array_equal(again(x), np.maximum(x, 0))


def test_nothing_left_on_disk(tmp_path, monkeypatch):
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    import tempfile
    monkeypatch.setattr(tempfile, "tempdir", None)
    model = memfmt.compile(tiny_onnx(tmp_path / "relu.onnx"))
    assert len(os.listdir(tmp_path)) == 2  # the ONNX file and the model's
    model.close()
    assert os.listdir(tmp_path) == ["relu.onnx"]


def test_zoo_name():
    model = memfmt.compile("resnet18", batch=1, height=32, width=32,
                           weights="synthetic:3")
    assert model.name == "resnet18"
    assert model.inputs[0].shape == (1, 3, 32, 32)
    y = model(torch.randn(1, 3, 32, 32).to(memory_format=torch.channels_last))
    assert y.shape == (1, 1000) and torch.isfinite(y).all()


def test_batch_tiling_options(tmp_path):
    # One sample at a time computes what the whole batch does (L8).
    x = torch.randn(2, 3, 32, 32).to(memory_format=torch.channels_last)
    outputs = {}
    for name, options in (("whole", {"tile_batch_bytes": 0}),
                          ("tiled", {"sub_batch": 1})):
        out_dir = tmp_path / name
        model = memfmt.compile("resnet18", batch=2, height=32, width=32,
                               weights="synthetic:3", out_dir=out_dir,
                               **options)
        outputs[name] = model(x)
        text = (out_dir / "model.mlir").read_text()
        assert ("memfmt.cat" in text) == (name == "tiled")
    whole, tiled = outputs["whole"], outputs["tiled"]
    assert (tiled - whole).abs().max() <= 1e-5 * whole.abs().max()
    with pytest.raises(memfmt.CompileError,
                       match="--sub-batch 3 does not divide the model's "
                             "batch, 2"):
        memfmt.compile("resnet18", batch=2, height=32, width=32,
                       sub_batch=3)


def test_compile_error_is_located(tmp_path):
    path = tiny_onnx(tmp_path / "neg.onnx", op="Neg")
    with pytest.raises(memfmt.CompileError,
                       match=r"neg.onnx: 1 unsupported node or input:\n"
                             r"  Neg 'the_node': operator Neg is not "
                             r"supported"):
        memfmt.compile(path)


def test_option_errors(tmp_path, resnet18):
    path = tiny_onnx(tmp_path / "relu.onnx")
    with pytest.raises(ValueError, match="memory_format must be "
                       "'channels_last' or 'contiguous', got 'nhwc'"):
        memfmt.compile(path, memory_format="nhwc")
    with pytest.raises(memfmt.CompileError, match="precision"):
        memfmt.compile(path, precision="f8")
    with pytest.raises(FileNotFoundError, match="missing.onnx"):
        memfmt.compile(tmp_path / "missing.onnx")
    with pytest.raises(memfmt.CompileError, match="resnet7"):
        memfmt.compile("resnet7")
    with pytest.raises(ValueError, match="needs example_input="):
        memfmt.compile(resnet18)
