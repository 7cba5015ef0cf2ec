# Builds the small ONNX models the importer tests read, with python3-onnx.
#
# usage: make_onnx.py OUT_DIR NAME...   writes OUT_DIR/NAME.onnx for each NAME
#        make_onnx.py --list            prints the known names
#
# Each model is a function below named after it; most are well-formed, the
# error tests' ones are broken on purpose (no onnx.checker is run). Values
# are seeded, so every run writes the same bytes.
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

F = TensorProto.FLOAT
RNG = np.random.default_rng(0)
MODELS = {}


def model(fn):
    MODELS[fn.__name__] = fn
    return fn


def rand(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


def init(name, array):
    return numpy_helper.from_array(np.asarray(array), name)


def bare_tensor(name, dims, float_data=()):
    """A float TensorProto without the size check of helper.make_tensor."""
    t = TensorProto()
    t.name = name
    t.data_type = F
    t.dims.extend(dims)
    t.float_data.extend(float_data)
    return t


def vi(name, shape, elem=F):
    return helper.make_tensor_value_info(name, elem, shape)


def build(nodes, inputs, outputs, inits=(), opset=13, name="g", **kw):
    graph = helper.make_graph(nodes, name, inputs, outputs, list(inits))
    m = helper.make_model(graph,
                          opset_imports=[helper.make_opsetid("", opset)],
                          producer_name="make_onnx.py", **kw)
    return m


# ---------------------------------------------------------------- Conv


@model
def conv_basic():
    return build([helper.make_node("Conv", ["x", "w", "b"], ["y"],
                                   name="conv1", pads=[1, 1, 1, 1],
                                   strides=[2, 2], kernel_shape=[3, 3])],
                 [vi("x", [1, 3, 8, 8])], [vi("y", [1, 4, 4, 4])],
                 [init("w", rand(4, 3, 3, 3)), init("b", rand(4))])


@model
def conv_group_dilation():
    return build([helper.make_node("Conv", ["x", "w"], ["y"], name="conv",
                                   group=2, dilations=[2, 2])],
                 [vi("x", [1, 4, 9, 9])], [vi("y", [1, 8, 5, 5])],
                 [init("w", rand(8, 2, 3, 3))])


@model
def conv_asymmetric_pads():
    return build([helper.make_node("Conv", ["x", "w"], ["y"], name="conv",
                                   pads=[1, 0, 2, 1])],
                 [vi("x", [1, 2, 6, 6])], [vi("y", [1, 3, 7, 5])],
                 [init("w", rand(3, 2, 3, 3))])


@model
def conv_auto_pad():
    nodes = [
        helper.make_node("Conv", ["x", "w"], ["upper"], name="upper",
                         auto_pad="SAME_UPPER", strides=[2, 2]),
        helper.make_node("Conv", ["x", "w"], ["lower"], name="lower",
                         auto_pad="SAME_LOWER", strides=[2, 2]),
        helper.make_node("Conv", ["x", "w"], ["valid"], name="valid",
                         auto_pad="VALID"),
    ]
    return build(nodes, [vi("x", [1, 1, 6, 6])],
                 [vi("upper", [1, 1, 3, 3]), vi("lower", [1, 1, 3, 3]),
                  vi("valid", [1, 1, 3, 3])],
                 [init("w", rand(1, 1, 4, 4))])


@model
def conv_1d():
    return build([helper.make_node("Conv", ["x", "w", "b"], ["y"],
                                   name="conv1d", pads=[1, 2], strides=[2])],
                 [vi("x", [2, 3, 10])], [vi("y", [2, 4, 6])],
                 [init("w", rand(4, 3, 3)), init("b", rand(4))])


@model
def conv_runtime_weight():
    return build([helper.make_node("Conv", ["x", "w"], ["y"])],
                 [vi("x", [1, 2, 5, 5]), vi("w", [3, 2, 3, 3])],
                 [vi("y", [1, 3, 3, 3])])


@model
def conv_flatten():
    # Flattening a channels-last activation of 2x2 needs a conversion (L7).
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], name="/features/conv"),
             helper.make_node("Relu", ["c"], ["r"], name="/features/relu"),
             helper.make_node("Flatten", ["r"], ["f"], name="/flatten"),
             helper.make_node("Gemm", ["f", "fc.weight", "fc.bias"], ["y"],
                              name="/fc", transB=1)]
    return build(nodes, [vi("x", [2, 3, 4, 4])], [vi("y", [2, 5])],
                 [init("w", rand(8, 3, 3, 3)), init("fc.weight", rand(5, 32)),
                  init("fc.bias", rand(5))])


# ------------------------------------------------------ BatchNorm, Relu, Add


@model
def batchnorm():
    c = 3
    return build([helper.make_node("BatchNormalization",
                                   ["x", "s", "bias", "mean", "var"], ["y"],
                                   name="bn", epsilon=1e-3),
                  helper.make_node("BatchNormalization",
                                   ["y", "s", "bias", "mean", "var"], ["z"],
                                   name="bn_default_eps"),
                  helper.make_node("BatchNormalization",
                                   ["z", "s", "bias", "mean", "var"], ["m"],
                                   name="bn_momentum", momentum=0.99)],
                 [vi("x", [2, c, 4, 4])], [vi("m", [2, c, 4, 4])],
                 [init("s", rand(c)), init("bias", rand(c)),
                  init("mean", rand(c)),
                  init("var", np.abs(rand(c)) + 0.5)], opset=15)


@model
def relu_add():
    return build([helper.make_node("Relu", ["x"], ["r"], name="relu"),
                  helper.make_node("Add", ["r", "y"], ["sum"], name="add"),
                  helper.make_node("Add", ["sum", "c3"], ["s3"], name="add_c3"),
                  helper.make_node("Add", ["c4", "s3"], ["s4"], name="add_c4")],
                 [vi("x", [1, 4, 3, 3]), vi("y", [1, 4, 3, 3])],
                 [vi("s4", [1, 4, 3, 3])],
                 [init("c3", rand(4, 1, 1)), init("c4", rand(1, 4, 1, 1))])


@model
def add_legacy_axis():
    # Add-6 with broadcast = 1 and axis = 1: B [4] spans dim 1 of A.
    return build([helper.make_node("Add", ["x", "b"], ["y"], name="add",
                                   broadcast=1, axis=1)],
                 [vi("x", [2, 4, 3, 3])], [vi("y", [2, 4, 3, 3])],
                 [init("b", rand(4))], opset=6)


# ---------------------------------------------------------------- Pooling


@model
def maxpool():
    nodes = [
        helper.make_node("MaxPool", ["x"], ["ceil"], name="ceil",
                         kernel_shape=[3, 3], strides=[2, 2], ceil_mode=1),
        helper.make_node("MaxPool", ["x"], ["dilated"], name="dilated",
                         kernel_shape=[2, 2], dilations=[2, 2],
                         pads=[1, 1, 1, 1]),
        helper.make_node("MaxPool", ["x"], ["asym"], name="asym",
                         kernel_shape=[3, 3], pads=[0, 1, 2, 1]),
        helper.make_node("MaxPool", ["x"], ["same"], name="same",
                         kernel_shape=[3, 3], strides=[2, 2],
                         auto_pad="SAME_LOWER"),
    ]
    return build(nodes, [vi("x", [1, 2, 6, 6])],
                 [vi("ceil", [1, 2, 3, 3]), vi("dilated", [1, 2, 6, 6]),
                  vi("asym", [1, 2, 6, 6]), vi("same", [1, 2, 3, 3])],
                 opset=12)


@model
def maxpool_indices():
    return build([helper.make_node("MaxPool", ["x"], ["y", "i"], name="pool",
                                   kernel_shape=[2, 2], strides=[2, 2])],
                 [vi("x", [1, 1, 4, 4])],
                 [vi("y", [1, 1, 2, 2]), vi("i", [1, 1, 2, 2],
                                             TensorProto.INT64)], opset=12)


@model
def maxpool_1d():
    return build([helper.make_node("MaxPool", ["x"], ["y"], name="pool1d",
                                   kernel_shape=[3], strides=[2], pads=[1, 1])],
                 [vi("x", [1, 2, 9])], [vi("y", [1, 2, 5])], opset=12)


@model
def avgpool():
    nodes = [
        helper.make_node("AveragePool", ["x"], ["ceil"], name="ceil",
                         kernel_shape=[3, 3], strides=[2, 2], ceil_mode=1),
        helper.make_node("AveragePool", ["x"], ["incl"], name="incl",
                         kernel_shape=[3, 3], pads=[1, 1, 1, 1],
                         count_include_pad=1),
        helper.make_node("AveragePool", ["x"], ["excl"], name="excl",
                         kernel_shape=[3, 3], pads=[1, 0, 1, 2]),
        helper.make_node("AveragePool", ["x"], ["same"], name="same",
                         kernel_shape=[2, 2], auto_pad="SAME_UPPER"),
        helper.make_node("GlobalAveragePool", ["x"], ["gap"], name="gap"),
    ]
    return build(nodes, [vi("x", [1, 2, 6, 6])],
                 [vi("ceil", [1, 2, 3, 3]), vi("incl", [1, 2, 6, 6]),
                  vi("excl", [1, 2, 6, 6]), vi("same", [1, 2, 6, 6]),
                  vi("gap", [1, 2, 1, 1])], opset=11)


# ------------------------------------------------------ Flatten and Reshape


@model
def flatten():
    nodes = [helper.make_node("Flatten", ["x"], [f"a{a}".replace("-", "m")],
                              name=f"flatten{a}", axis=a)
             for a in (1, 0, 2, -1)]
    return build(nodes, [vi("x", [2, 3, 4, 5])],
                 [vi("a1", [2, 60]), vi("a0", [1, 120]), vi("a2", [6, 20]),
                  vi("am1", [24, 5])])


@model
def reshape():
    nodes = [
        helper.make_node("Reshape", ["x", "shape"], ["r1"], name="zero_minus1"),
        helper.make_node("Constant", [], ["shape2"], name="shape2",
                         value=numpy_helper.from_array(
                             np.array([0, 4, -1], np.int64))),
        helper.make_node("Reshape", ["r1", "shape2"], ["r2"], name="const_node"),
        # A Reshape of an initializer is folded: the weight has its output's
        # name.
        helper.make_node("Reshape", ["c", "shape3"], ["c4"], name="fold"),
        helper.make_node("Add", ["r2", "c4"], ["y"], name="add"),
    ]
    return build(nodes, [vi("x", [3, 4, 2, 2])], [vi("y", [3, 4, 4])],
                 [init("shape", np.array([0, -1], np.int64)),
                  init("c", rand(4, 4)),
                  init("shape3", np.array([1, 4, 4], np.int64))])


# ----------------------------------------------------------- Gemm, MatMul


@model
def gemm_linear():
    return build([helper.make_node("Gemm", ["x", "w", "b"], ["y"], name="fc",
                                   transB=1)],
                 [vi("x", [2, 8])], [vi("y", [2, 4])],
                 [init("w", rand(4, 8)), init("b", rand(4))])


@model
def gemm_transposed_scaled():
    return build([helper.make_node("Gemm", ["x", "w", "c"], ["y"], name="gemm",
                                   alpha=0.5, beta=2.0)],
                 [vi("x", [2, 8])], [vi("y", [2, 4])],
                 [init("w", rand(8, 4)), init("c", rand(1, 4))])


@model
def gemm_runtime():
    return build([helper.make_node("Gemm", ["a", "b", "c"], ["y"], name="gemm",
                                   alpha=0.25, beta=0.5, transA=1)],
                 [vi("a", [3, 2]), vi("b", [3, 4]), vi("c", [2, 4])],
                 [vi("y", [2, 4])])


@model
def gemm_matrix_bias():
    return build([helper.make_node("Gemm", ["x", "w", "c"], ["y"], name="gemm",
                                   transB=1)],
                 [vi("x", [2, 3])], [vi("y", [2, 4])],
                 [init("w", rand(4, 3)), init("c", rand(2, 4))])


@model
def matmul():
    nodes = [
        helper.make_node("MatMul", ["x", "w"], ["const"], name="const"),
        helper.make_node("MatMul", ["a", "b"], ["runtime"], name="runtime"),
        helper.make_node("MatMul", ["p", "q"], ["batched"], name="batched"),
    ]
    return build(nodes,
                 [vi("x", [2, 3, 8]), vi("a", [3, 4]), vi("b", [4, 5]),
                  vi("p", [2, 3, 4]), vi("q", [2, 4, 5])],
                 [vi("const", [2, 3, 5]), vi("runtime", [3, 5]),
                  vi("batched", [2, 3, 5])],
                 [init("w", rand(8, 5))])


@model
def matmul_transposed_weight():
    # torch.onnx's nn.Linear on a [N, H, W, C] tensor: MatMul(x, Transpose(W))
    # with W [out, in] an initializer.
    nodes = [
        helper.make_node("Transpose", ["fc.weight"], ["wt"], name="wt",
                         perm=[1, 0]),
        helper.make_node("MatMul", ["x", "wt"], ["y"], name="fc"),
    ]
    return build(nodes, [vi("x", [1, 2, 2, 8])], [vi("y", [1, 2, 2, 5])],
                 [init("fc.weight", rand(5, 8))])


# ------------------------------------ Identity, Dropout, Constant, Concat, Split


@model
def identity_dropout_constant():
    nodes = [
        helper.make_node("Identity", ["x"], ["i"], name="identity"),
        helper.make_node("Dropout", ["i", "ratio"], ["d"], name="dropout"),
        helper.make_node("Constant", [], ["k"], name="k",
                         value=numpy_helper.from_array(rand(1, 3, 1, 1))),
        helper.make_node("Add", ["d", "k"], ["s"], name="add_k"),
        helper.make_node("Constant", [], ["f"], name="f", value_float=2.0),
        helper.make_node("Add", ["s", "f"], ["y"], name="add_f"),
    ]
    return build(nodes, [vi("x", [1, 3, 2, 2])], [vi("y", [1, 3, 2, 2])],
                 [init("ratio", np.array(0.25, np.float32))])


@model
def constant_only():
    # No inputs: the output is a constant.
    return build([helper.make_node("Constant", [], ["y"], name="c",
                                   value_floats=[1.0, -2.0, 3.5])],
                 [], [vi("y", [3])])


@model
def concat_split():
    nodes = [
        helper.make_node("Concat", ["x", "y"], ["batch"], name="cat0", axis=0),
        helper.make_node("Concat", ["x", "y"], ["chan"], name="cat1", axis=1),
        helper.make_node("Split", ["batch"], ["h0", "h1"], name="halves"),
        helper.make_node("Split", ["batch", "sizes"], ["p0", "p1"],
                         name="sizes", axis=0),
    ]
    return build(nodes, [vi("x", [2, 3, 2, 2]), vi("y", [2, 3, 2, 2])],
                 [vi("chan", [2, 6, 2, 2]), vi("h0", [2, 3, 2, 2]),
                  vi("h1", [2, 3, 2, 2]), vi("p0", [1, 3, 2, 2]),
                  vi("p1", [3, 3, 2, 2])],
                 [init("sizes", np.array([1, 3], np.int64))])


@model
def split_attribute():
    # Split-11: the sizes are an attribute.
    return build([helper.make_node("Split", ["x"], ["a", "b"], name="split",
                                   axis=0, split=[4, 2])],
                 [vi("x", [6, 2, 2, 2])],
                 [vi("a", [4, 2, 2, 2]), vi("b", [2, 2, 2, 2])], opset=11)


# ------------------------------------------------ Pad and ReduceMean (extras)


@model
def pad_reduce_mean():
    # torch's export of AvgPool2d(3, 1, padding=1): a zero Pad, then the
    # pool; a Pad of zeros is the identity; ReduceMean over H and W.
    nodes = [
        helper.make_node("Pad", ["x", "pads"], ["p"], name="pad",
                         mode="constant"),
        helper.make_node("AveragePool", ["p"], ["a"], name="pool",
                         kernel_shape=[3, 3]),
        helper.make_node("Pad", ["a", "zeros"], ["z"], name="no_pad"),
        helper.make_node("ReduceMean", ["z"], ["m"], name="mean",
                         axes=[-1, 2], keepdims=0),
        helper.make_node("ReduceMean", ["z"], ["k"], name="mean_keep",
                         axes=[2, 3]),
    ]
    return build(nodes, [vi("x", [1, 2, 5, 5])],
                 [vi("m", [1, 2]), vi("k", [1, 2, 1, 1])],
                 [init("pads", np.array([0, 0, 1, 1, 0, 0, 1, 2], np.int64)),
                  init("zeros", np.zeros(8, np.int64))])


@model
def pad_reduce_mean_unsupported():
    nodes = [
        helper.make_node("Pad", ["x", "pads"], ["p"], name="reflect",
                         mode="reflect"),
        helper.make_node("Pad", ["x", "pads", "one"], ["q"], name="ones"),
        helper.make_node("Pad", ["x", "channel_pads"], ["c"], name="channels"),
        helper.make_node("ReduceMean", ["x"], ["m"], name="mean_c", axes=[1]),
    ]
    return build(nodes, [vi("x", [1, 2, 5, 5])],
                 [vi("p", [1, 2, 7, 8]), vi("q", [1, 2, 7, 8]),
                  vi("c", [1, 4, 5, 5]), vi("m", [1, 1, 5, 5])],
                 [init("pads", np.array([0, 0, 1, 1, 0, 0, 1, 2], np.int64)),
                  init("channel_pads",
                       np.array([0, 1, 0, 0, 0, 1, 0, 0], np.int64)),
                  init("one", np.array(1.0, np.float32))])


@model
def reshape_pad_attributes():
    # Before opset 5 (Reshape) and 11 (Pad) the shape and the pads are
    # attributes: the registry picks the converter of the model's opset.
    nodes = [
        helper.make_node("Pad", ["x"], ["p"], name="pad",
                         pads=[0, 0, 1, 0, 0, 0, 0, 1]),
        helper.make_node("Reshape", ["p"], ["y"], name="reshape",
                         shape=[0, -1]),
    ]
    return build(nodes, [vi("x", [1, 2, 3, 3])], [vi("y", [1, 32])],
                 opset=4)


@model
def pad_opset1():
    # Pad-1 (its attribute was `paddings`) has no converter.
    return build([helper.make_node("Pad", ["x"], ["p"], name="pad",
                                   paddings=[0, 0, 1, 1, 0, 0, 1, 1])],
                 [vi("x", [1, 2, 3, 3])], [vi("p", [1, 2, 5, 5])], opset=1)


# ------------------------------------------- Opsets 18 to 21 (newer forms)


@model
def opset18_forms():
    # What changed at opsets 18 and 19 for the operators memfmt converts:
    # ReduceMean's axes became input #1 (with noop_with_empty_axes), Split
    # gained num_outputs (the last part smaller), Pad an axes input, and
    # AveragePool a dilations attribute.
    i64 = lambda *v: np.array(v, np.int64)
    nodes = [
        helper.make_node("Pad", ["x", "pads", "", "pad_axes"], ["p"],
                         name="pad"),
        helper.make_node("AveragePool", ["p"], ["a"], name="pool",
                         kernel_shape=[3, 3], dilations=[1, 1]),
        helper.make_node("ReduceMean", ["a", "axes"], ["m"], name="mean",
                         keepdims=0),
        helper.make_node("ReduceMean", ["a"], ["same"], name="noop",
                         noop_with_empty_axes=1),
        helper.make_node("Split", ["same"], ["s0", "s1", "s2"], name="split",
                         axis=1, num_outputs=3),
    ]
    return build(nodes, [vi("x", [1, 7, 5, 5])],
                 [vi("m", [1, 7]), vi("s0", [1, 3, 5, 6]),
                  vi("s1", [1, 3, 5, 6]), vi("s2", [1, 1, 5, 6])],
                 [init("pads", i64(1, 1, 1, 2)), init("pad_axes", i64(-2, 3)),
                  init("axes", i64(2, -1))], opset=21, ir_version=10)


@model
def opset18_errors():
    i64 = lambda *v: np.array(v, np.int64)
    nodes = [
        helper.make_node("ReduceMean", ["x"], ["m"], name="axes_attribute",
                         axes=[2, 3]),
        helper.make_node("Split", ["x", "sizes"], ["s0", "s1"], name="both",
                         axis=1, num_outputs=2),
        helper.make_node("Split", ["x"], ["t0", "t1"], name="wrong_count",
                         axis=1, num_outputs=3),
        helper.make_node("AveragePool", ["x"], ["a"], name="dilated",
                         kernel_shape=[2, 2], dilations=[2, 2]),
        helper.make_node("Pad", ["x", "pads", "", "pad_axes"], ["p"],
                         name="pad_count"),
    ]
    return build(nodes, [vi("x", [1, 4, 5, 5])],
                 [vi("m", [1, 4, 1, 1]), vi("s0", [1, 2, 5, 5]),
                  vi("t0", [1, 2, 5, 5]), vi("a", [1, 4, 3, 3]),
                  vi("p", [1, 4, 6, 6])],
                 [init("sizes", i64(2, 2)), init("pads", i64(1, 1, 1)),
                  init("pad_axes", i64(2, 3))], opset=20)


@model
def opset17_new_attributes():
    # The opset-18/19 attributes in an opset-17 model are invalid.
    nodes = [
        helper.make_node("Split", ["x"], ["s0", "s1"], name="split", axis=1,
                         num_outputs=2),
        helper.make_node("AveragePool", ["x"], ["a"], name="pool",
                         kernel_shape=[2, 2], dilations=[1, 1]),
        helper.make_node("ReduceMean", ["x"], ["m"], name="mean",
                         noop_with_empty_axes=1),
    ]
    return build(nodes, [vi("x", [1, 4, 5, 5])],
                 [vi("s0", [1, 2, 5, 5]), vi("a", [1, 4, 4, 4]),
                  vi("m", [1, 1, 1, 1])], opset=17)


@model
def opset22():
    return build([helper.make_node("Relu", ["x"], ["y"])],
                 [vi("x", [1, 2])], [vi("y", [1, 2])], opset=22)


# ------------------------------------------ Activations and Mul/Sub/Div


@model
def activations():
    # MobileNet's and EfficientNet's elementwise ops (opset 20: Gelu).
    n = helper.make_node
    f32 = lambda v: np.array(v, np.float32)
    nodes = [
        n("Sigmoid", ["x"], ["sig"], name="sigmoid"),
        n("HardSigmoid", ["sig"], ["hsig"], name="hardsigmoid"),
        n("HardSigmoid", ["hsig"], ["hsig6"], name="hardsigmoid_aten",
          alpha=float(np.float32(1.0 / 6.0))),
        n("HardSwish", ["hsig6"], ["hswish"], name="hardswish"),
        n("Clip", ["hswish", "zero", "six"], ["relu6"], name="relu6"),
        n("Clip", ["relu6", "", "six"], ["upper"], name="upper_only"),
        n("Gelu", ["upper"], ["gelu"], name="gelu"),
        n("Gelu", ["gelu"], ["gelu_tanh"], name="gelu_tanh",
          approximate="tanh"),
        n("Mul", ["gelu_tanh", "scale"], ["scaled"], name="squeeze_excite"),
        n("Sub", ["scaled", "x"], ["diff"], name="sub"),
        n("Div", ["diff", "two"], ["half"], name="div"),
    ]
    return build(nodes, [vi("x", [1, 4, 3, 3]), vi("scale", [1, 4, 1, 1])],
                 [vi("half", [1, 4, 3, 3])],
                 [init("zero", f32(0)), init("six", f32(6)),
                  init("two", f32(2))], opset=20)


@model
def clip_attributes():
    # Clip-6: the bounds are attributes.
    return build([helper.make_node("Clip", ["x"], ["y"], name="clip", min=0.0,
                                   max=6.0)],
                 [vi("x", [1, 2, 3, 3])], [vi("y", [1, 2, 3, 3])], opset=6)


@model
def activations_errors():
    n = helper.make_node
    nodes = [
        n("Clip", ["x", "x"], ["c"], name="runtime_bound"),
        n("Clip", ["x"], ["d"], name="attribute_bound", min=0.0),
        n("Clip", ["x", "pair"], ["e"], name="two_values"),
        n("Gelu", ["x"], ["g"], name="gelu_fast", approximate="fast"),
        n("Mul", ["x", "wide"], ["m"], name="no_broadcast"),
    ]
    return build(nodes, [vi("x", [1, 2, 3, 3])],
                 [vi("c", [1, 2, 3, 3]), vi("d", [1, 2, 3, 3]),
                  vi("e", [1, 2, 3, 3]), vi("g", [1, 2, 3, 3]),
                  vi("m", [1, 2, 3, 3])],
                 [init("pair", np.array([0, 1], np.float32)),
                  init("wide", np.ones((4, 1, 1), np.float32))], opset=20)


# ------------------------------------------ Shape arithmetic (folded)


@model
def shape_arithmetic():
    # What exporters write around reshapes: x.view(x.size(0), -1) and
    # friends, computed from Shape(x) at import.
    i64 = lambda *v: np.array(v, np.int64)
    scalar = lambda v: np.array(v, np.int64)
    n = helper.make_node
    nodes = [
        n("Shape", ["x"], ["s"], name="shape"),
        n("Gather", ["s", "zero"], ["batch"], name="batch", axis=0),
        n("Unsqueeze", ["batch", "axis0"], ["batch1"], name="unsqueeze"),
        n("Concat", ["batch1", "minus1"], ["flat_shape"], name="flat_shape",
          axis=0),
        n("Reshape", ["x", "flat_shape"], ["flat"], name="flatten"),
        # [batch * 4 / 2, -1] through Mul, Div, Sub and Add of constants.
        n("Mul", ["batch", "four"], ["b4"], name="mul"),
        n("Div", ["b4", "two"], ["b2"], name="div"),
        n("Sub", ["b2", "one"], ["b1"], name="sub"),
        n("Add", ["b1", "one"], ["rows"], name="add_constants"),
        n("Unsqueeze", ["rows", "axis0"], ["rows1"], name="rows1"),
        n("Concat", ["rows1", "minus1"], ["half_shape"], name="half_shape",
          axis=0),
        n("Reshape", ["x", "half_shape"], ["halves"], name="halves"),
        # Shape(x)[1:3] by Range and by Slice (with a negative end).
        n("Range", ["one", "three", "one"], ["middle"], name="range"),
        n("Gather", ["s", "middle"], ["c_h"], name="gather_middle", axis=0),
        n("Slice", ["s", "slice_start", "slice_end"], ["c_h2"], name="slice"),
        n("Concat", ["batch1", "c_h", "minus1"], ["same_shape"], name="same",
          axis=0),
        n("Reshape", ["x", "same_shape"], ["same_x"], name="same_x"),
        n("Reshape", ["x", "c_h2_shape"], ["same_x2"], name="same_x2"),
        n("Concat", ["batch1", "c_h2", "minus1"], ["c_h2_shape"],
          name="same2", axis=0),
        # A constant of the shape [1, C, 1, 1] (float 0.5) added to x.
        n("Gather", ["s", "one_idx"], ["c1"], name="channels", axis=0),
        n("Concat", ["one1", "c1", "one1", "one1"], ["bias_shape"],
          name="bias_shape", axis=0),
        n("ConstantOfShape", ["bias_shape"], ["bias"], name="fill",
          value=numpy_helper.from_array(np.array([0.5], np.float32))),
        n("Add", ["x", "bias"], ["shifted"], name="shift"),
        # Size, Cast of a constant to float, Squeeze/Unsqueeze of x.
        n("Size", ["x"], ["count"], name="size"),
        n("Cast", ["count"], ["count_f"], name="cast", to=TensorProto.FLOAT),
        n("Unsqueeze", ["x", "axis0"], ["x5"], name="unsqueeze_x"),
        n("Squeeze", ["x5", "axis0"], ["x4"], name="squeeze_x"),
        n("Cast", ["x4"], ["x4f"], name="cast_float", to=TensorProto.FLOAT),
        n("Mul", ["count_f", "half"], ["scale"], name="mul_float"),
        n("Add", ["x4f", "scale"], ["scaled"], name="add_scale"),
    ]
    return build(nodes, [vi("x", [2, 4, 3, 3])],
                 [vi("flat", [2, 36]), vi("halves", [4, 18]),
                  vi("same_x", [2, 4, 3, 3]), vi("same_x2", [2, 4, 3, 3]),
                  vi("shifted", [2, 4, 3, 3]), vi("scaled", [2, 4, 3, 3])],
                 [init("zero", scalar(0)), init("axis0", i64(0)),
                  init("minus1", i64(-1)), init("four", scalar(4)),
                  init("two", scalar(2)), init("one", scalar(1)),
                  init("three", scalar(3)), init("slice_start", i64(1)),
                  init("slice_end", i64(-1)), init("one_idx", i64(1)),
                  init("one1", i64(1)),
                  init("half", np.array(0.5, np.float32))])


@model
def shape_arithmetic_errors():
    i64 = lambda *v: np.array(v, np.int64)
    n = helper.make_node
    nodes = [
        n("Slice", ["x", "one1", "zero1", "one1", "minus1"], ["sl"],
          name="slice_runtime"),
        n("Cast", ["x"], ["ci"], name="cast_runtime", to=TensorProto.INT64),
        n("Squeeze", ["x", "one1"], ["sq"], name="squeeze_wide"),
        n("Shape", ["x"], ["s"], name="shape"),
        n("Div", ["s", "zero1"], ["d"], name="divide_by_zero"),
        n("Gather", ["s", "nine"], ["g9"], name="gather_range", axis=0),
        n("Unsqueeze", ["x", "twice"], ["u"], name="unsqueeze_twice"),
    ]
    return build(nodes, [vi("x", [2, 4, 3, 3])],
                 [vi("sl", [2, 1, 3, 3]), vi("ci", [2, 4, 3, 3]),
                  vi("sq", [2, 3, 3]), vi("d", [4]), vi("g9", []),
                  vi("u", [1, 1, 2, 4, 3, 3])],
                 [init("zero1", i64(0)), init("one1", i64(1)),
                  init("minus1", i64(-1)), init("nine", np.array(9, np.int64)),
                  init("twice", i64(0, 0))])


# ------------------------------ Transpose, Slice, channel shuffle, LayerNorm


@model
def transpose_slice():
    # ConvNeXt's permutes, a strided Slice of channels in NHWC, ShuffleNet's
    # channel shuffle (Reshape, Transpose, Reshape) and chunk (Slice).
    i64 = lambda *v: np.array(v, np.int64)
    n = helper.make_node
    nodes = [
        n("Transpose", ["x"], ["nhwc"], name="to_nhwc", perm=[0, 2, 3, 1]),
        n("Slice", ["nhwc", "s_start", "s_end", "s_axes", "s_step"], ["odd"],
          name="odd_channels"),
        n("Transpose", ["odd"], ["odd_nchw"], name="to_nchw",
          perm=[0, 3, 1, 2]),
        n("Reshape", ["x", "split_shape"], ["split"], name="split"),
        n("Transpose", ["split"], ["swapped"], name="swap",
          perm=[0, 2, 1, 3, 4]),
        n("Reshape", ["swapped", "x_shape"], ["shuffled"], name="merge"),
        n("Slice", ["shuffled", "zero", "three", "one"], ["first"],
          name="first_half"),
        n("Slice", ["shuffled", "minus_three", "big", "one"], ["second"],
          name="second_half"),
        n("Concat", ["odd_nchw", "first", "second"], ["y"], name="cat",
          axis=1),
        n("Transpose", ["x"], ["reversed"], name="reverse"),
    ]
    return build(nodes, [vi("x", [2, 6, 5, 3])],
                 [vi("y", [2, 9, 5, 3]), vi("reversed", [3, 5, 6, 2])],
                 [init("s_start", i64(1)), init("s_end", i64(6)),
                  init("s_axes", i64(3)), init("s_step", i64(2)),
                  init("split_shape", i64(2, 2, 3, 5, 3)),
                  init("x_shape", i64(2, 6, 5, 3)), init("zero", i64(0)),
                  init("three", i64(3)), init("one", i64(1)),
                  init("minus_three", i64(-3)),
                  init("big", i64(2 ** 63 - 1))])


def layer_norm_chain(prefix, x, out, gamma=None, beta=None, eps="eps"):
    """The nodes torch.onnx.export writes for F.layer_norm below opset 17."""
    n = helper.make_node
    nodes = [
        n("ReduceMean", [x], [prefix + "mean"], axes=[-1]),
        n("Sub", [x, prefix + "mean"], [prefix + "centred"]),
        n("Pow", [prefix + "centred", "two"], [prefix + "square"]),
        n("ReduceMean", [prefix + "square"], [prefix + "var"], axes=[-1]),
        n("Add", [prefix + "var", eps], [prefix + "var_eps"]),
        n("Sqrt", [prefix + "var_eps"], [prefix + "std"]),
        n("Div", [prefix + "centred", prefix + "std"],
          [prefix + "normed" if gamma else out]),
    ]
    if gamma:
        nodes.append(n("Mul", [prefix + "normed", gamma],
                       [prefix + "scaled" if beta else out]))
    if beta:
        nodes.append(n("Add", [prefix + "scaled", beta], [out]))
    return nodes


@model
def layer_norm_decomposed():
    # ConvNeXt's block as torch exports it at opset 13: permute to NHWC,
    # layer norm (decomposed), Linear, exact GELU (decomposed), Linear,
    # permute back. A second layer norm without affine parameters and the
    # GELU's other order (x * 0.5 * (1 + erf(x * 1/sqrt(2)))).
    n = helper.make_node
    f32 = lambda v: np.array(v, np.float32)
    nodes = [n("Transpose", ["x"], ["nhwc"], perm=[0, 2, 3, 1]),
             n("Constant", [], ["eps"], value=numpy_helper.from_array(
                 f32(1e-6))),
             n("Identity", ["beta_init"], ["beta"])]
    nodes += layer_norm_chain("ln1_", "nhwc", "ln1", "gamma", "beta")
    nodes += [
        n("MatMul", ["ln1", "w1"], ["fc1"]),
        n("Add", ["b1", "fc1"], ["fc1_b"]),
        n("Div", ["fc1_b", "sqrt2"], ["g_scaled"]),
        n("Erf", ["g_scaled"], ["g_erf"]),
        n("Add", ["g_erf", "one"], ["g_plus"]),
        n("Mul", ["fc1_b", "g_plus"], ["g_prod"]),
        n("Mul", ["g_prod", "half"], ["gelu"]),
        n("MatMul", ["gelu", "w2"], ["fc2"]),
        n("Transpose", ["fc2"], ["y"], perm=[0, 3, 1, 2]),
    ]
    nodes += layer_norm_chain("ln2_", "fc2", "ln2", eps="eps_init")
    nodes += [
        n("Mul", ["ln2", "half"], ["h_half"]),
        n("Mul", ["ln2", "inv_sqrt2"], ["h_scaled"]),
        n("Erf", ["h_scaled"], ["h_erf"]),
        n("Add", ["one", "h_erf"], ["h_plus"]),
        n("Mul", ["h_half", "h_plus"], ["z"]),
    ]
    return build(nodes, [vi("x", [2, 6, 3, 5])],
                 [vi("y", [2, 6, 3, 5]), vi("z", [2, 3, 5, 6])],
                 [init("two", f32(2)), init("eps_init", f32(1e-5)),
                  init("gamma", RNG.uniform(0.5, 1.5, 6).astype(np.float32)),
                  init("beta_init", rand(6)), init("w1", rand(6, 8)),
                  init("b1", rand(8)), init("w2", rand(8, 6)),
                  init("sqrt2", f32(np.sqrt(2))), init("one", f32(1)),
                  init("half", f32(0.5)),
                  init("inv_sqrt2", f32(1 / np.sqrt(2)))])


@model
def layer_norm17():
    # LayerNormalization (opset 17) over the last axis, with and without B,
    # and over the last two.
    n = helper.make_node
    nodes = [n("LayerNormalization", ["x", "scale", "bias"], ["y"],
               name="ln", epsilon=1e-5),
             n("LayerNormalization", ["y", "scale"], ["z"], name="ln_no_bias",
               axis=3),
             n("LayerNormalization", ["z", "scale2", "bias2"], ["w"],
               name="ln_two_axes", axis=-2)]
    return build(nodes, [vi("x", [1, 3, 5, 6])], [vi("w", [1, 3, 5, 6])],
                 [init("scale", RNG.uniform(0.5, 1.5, 6).astype(np.float32)),
                  init("bias", rand(6)),
                  init("scale2",
                       RNG.uniform(0.5, 1.5, (5, 6)).astype(np.float32)),
                  init("bias2", rand(5, 6))], opset=17)


@model
def layer_norm_errors():
    n = helper.make_node
    f32 = lambda v: np.array(v, np.float32)
    nodes = [
        n("LayerNormalization", ["x", "scale"], ["a"], name="broadcast_scale",
          axis=-2),
        n("LayerNormalization", ["x", "scale"], ["f"], name="stash_half",
          stash_type=10),
        n("LayerNormalization", ["x", "scale"], ["b", "mean"],
          name="with_mean"),
        n("LayerNormalization", ["x", "wrong"], ["c"], name="wrong_scale"),
        n("Transpose", ["x"], ["d"], name="bad_perm", perm=[0, 1, 1, 2]),
    ]
    # Not a layer norm: the square is a cube, so each node stays itself.
    nodes += layer_norm_chain("cube_", "x", "e", eps="eps")
    nodes[-5].input[1] = "three"
    return build(nodes, [vi("x", [1, 3, 5, 6])],
                 [vi("a", [1, 3, 5, 6]), vi("b", [1, 3, 5, 6]),
                  vi("mean", [1, 3, 5, 1]), vi("c", [1, 3, 5, 6]),
                  vi("d", [1, 3, 5, 6]), vi("e", [1, 3, 5, 6]),
                  vi("f", [1, 3, 5, 6])],
                 [init("scale", np.ones(6, np.float32)),
                  init("wrong", np.ones(5, np.float32)), init("two", f32(2)),
                  init("three", f32(3)), init("eps", f32(1e-5))], opset=17)


@model
def softmax_gather():
    # Softmax over the channels and (Softmax-11, coerced to 2-D) over the
    # trailing dims from axis 2; Gather of run-time data at scattered
    # channels (runs [0], [2, 3], [5]) and at one scalar index.
    i64 = lambda *v: np.array(v, np.int64)
    n = helper.make_node
    nodes = [n("Softmax", ["x"], ["channels"], name="softmax_channels",
               axis=1),
             n("Gather", ["x", "picks"], ["picked"], name="gather_channels",
               axis=1),
             n("Gather", ["x", "last"], ["column"], name="gather_scalar",
               axis=-1)]
    return build(nodes, [vi("x", [2, 6, 5, 3])],
                 [vi("channels", [2, 6, 5, 3]), vi("picked", [2, 4, 5, 3]),
                  vi("column", [2, 6, 5])],
                 [init("picks", i64(0, 2, 3, 5)),
                  init("last", np.array(-1, np.int64))])


@model
def softmax11():
    # Softmax before opset 13: the input coerced to 2-D at `axis`.
    n = helper.make_node
    return build([n("Softmax", ["x"], ["rows"], name="softmax_rows", axis=2),
                  n("Softmax", ["rows"], ["y"], name="softmax_last", axis=3)],
                 [vi("x", [2, 6, 5, 3])], [vi("y", [2, 6, 5, 3])], opset=11)


@model
def class_token():
    # ViT's class token as torch exports it: the shape logic of `expand`
    # (ConstantOfShape, Mul, Equal, Where) around Expand of a parameter to
    # the batch, concatenated with the tokens; and an Expand of run-time
    # data that only adds a leading 1.
    i64 = lambda *v: np.array(v, np.int64)
    n = helper.make_node
    nodes = [
        n("ConstantOfShape", ["three"], ["ones"],
          value=numpy_helper.from_array(i64(1))),
        n("Mul", ["ones", "minus_one"], ["minus_ones"]),
        n("Equal", ["target", "minus_ones"], ["is_minus_one"]),
        n("Where", ["is_minus_one", "ones", "target"], ["shape"]),
        n("Expand", ["token", "shape"], ["tokens"], name="expand_token"),
        n("Concat", ["tokens", "x"], ["y"], axis=1),
        n("Expand", ["x", "lead_one"], ["z"], name="expand_runtime"),
    ]
    return build(nodes, [vi("x", [2, 3, 4])],
                 [vi("y", [2, 4, 4]), vi("z", [1, 2, 3, 4])],
                 [init("three", i64(3)), init("minus_one", i64(-1)),
                  init("target", i64(2, -1, -1)), init("token", rand(1, 1, 4)),
                  init("lead_one", i64(1, 1, 1, 1))])


@model
def window_shape_logic():
    # What torch.onnx writes around Swin's shifted windows, folded at import:
    # Mod (Python's sign and C's fmod), Pow of integers and floats, a
    # ScatterND into a constant (an attention mask's slice assignments), a
    # Cast to bool and Not, an empty slice of a constant (a window that
    # covers the whole map), Pad of dims other than H and W (Swin pads an
    # [N, H, W, C] tensor to whole windows) and Dropout with its mask
    # output and ratio 0 in training mode (F.dropout(attn, p=0.0)).
    i64 = lambda *v: np.array(v, np.int64)
    n = helper.make_node
    f = TensorProto.FLOAT
    nodes = [
        n("Mod", ["a", "b"], ["m0"], name="mod_python"),
        n("Cast", ["m0"], ["m0f"], name="m0f", to=f),
        n("Add", ["x", "m0f"], ["y_mod"], name="add_mod"),
        n("Mod", ["a", "b"], ["m1"], name="mod_c", fmod=1),
        n("Cast", ["m1"], ["m1f"], name="m1f", to=f),
        n("Add", ["x", "m1f"], ["y_fmod"], name="add_fmod"),
        n("Pow", ["base", "exponent"], ["p"], name="pow_int"),
        n("Slice", ["p", "four", "five"], ["nothing"], name="empty_slice"),
        n("Concat", ["nothing", "p"], ["p2"], name="concat_empty", axis=0),
        n("Cast", ["p2"], ["pf"], name="pf", to=f),
        n("Pow", ["sixty_four", "minus_half"], ["scale"], name="pow_float"),
        n("Mul", ["pf", "scale"], ["ps"], name="scaled"),
        n("Add", ["x", "ps"], ["y_pow"], name="add_pow"),
        n("ScatterND", ["zeros4", "rows", "updates"], ["mask"],
          name="scatter"),
        n("Cast", ["mask"], ["mask_b"], name="to_bool", to=TensorProto.BOOL),
        n("Not", ["mask_b"], ["keep"], name="not"),
        n("Cast", ["keep"], ["keep_f"], name="keep_f", to=f),
        n("Add", ["x", "keep_f"], ["y_mask"], name="add_mask"),
        n("Pad", ["x", "pads"], ["y_pad"], name="pad_columns"),
        n("Dropout", ["x", "ratio0", "train"], ["d", "dmask"],
          name="dropout_p0"),
        n("Cast", ["dmask"], ["dmask_f"], name="dmask_f", to=f),
        n("Add", ["d", "dmask_f"], ["y_drop"], name="add_dropout_mask"),
    ]
    return build(nodes, [vi("x", [2, 4])],
                 [vi("y_mod", [2, 4]), vi("y_fmod", [2, 4]),
                  vi("y_pow", [2, 4]), vi("y_mask", [2, 4]),
                  vi("y_pad", [2, 6]), vi("y_drop", [2, 4])],
                 [init("a", i64(7, -7, 16, -16)), init("b", i64(3, 3, -5, -5)),
                  init("base", i64(2, 3, 2, 10)),
                  init("exponent", i64(3, 2, 0, 1)),
                  init("four", i64(4)), init("five", i64(5)),
                  init("sixty_four", np.array(64.0, np.float32)),
                  init("minus_half", np.array(-0.5, np.float32)),
                  init("zeros4", i64(0, 0, 0, 0)),
                  init("rows", np.array([[1], [3]], np.int64)),
                  init("updates", i64(5, 7)),
                  init("pads", i64(0, 1, 0, 1)),
                  init("ratio0", np.array(0.0, np.float32)),
                  init("train", np.array(True))])


@model
def window_shape_logic_errors():
    i64 = lambda *v: np.array(v, np.int64)
    n = helper.make_node
    nodes = [
        n("Mod", ["a", "zero"], ["m"], name="mod_by_zero"),
        n("Pow", ["a", "minus_one"], ["p"], name="pow_negative"),
        n("ScatterND", ["a", "wide", "a"], ["s"], name="scatter_k"),
        n("ScatterND", ["a", "rows", "a"], ["t"], name="scatter_add",
          reduction="add"),
        n("Cast", ["x"], ["xb"], name="cast_runtime_bool",
          to=TensorProto.BOOL),
        n("Pad", ["x", "negative"], ["xp"], name="pad_negative"),
        n("Dropout", ["x", "ratio", "train"], ["d"], name="dropout_train"),
        n("Pow", ["x", "two"], ["x2"], name="pow_runtime"),
    ]
    return build(nodes, [vi("x", [2, 4])],
                 [vi("m", [4]), vi("p", [4]), vi("s", [4]), vi("t", [4]),
                  vi("xb", [2, 4]), vi("xp", [2, 2]), vi("d", [2, 4]),
                  vi("x2", [2, 4])],
                 [init("a", i64(1, 2, 3, 4)), init("zero", i64(0)),
                  init("minus_one", i64(-1)),
                  init("wide", np.array([[0, 0]], np.int64)),
                  init("rows", np.array([[1]], np.int64)),
                  init("negative", i64(0, -1, 0, -1)),
                  init("ratio", np.array(0.5, np.float32)),
                  init("train", np.array(True)),
                  init("two", np.array(2.0, np.float32))])


@model
def softmax_gather_errors():
    i64 = lambda *v: np.array(v, np.int64)
    n = helper.make_node
    nodes = [
        n("Softmax", ["x"], ["a"], name="bad_axis", axis=4),
        n("Where", ["cond", "x", "x"], ["b"], name="runtime_where"),
        n("Expand", ["x", "bigger"], ["c"], name="runtime_expand"),
        n("Expand", ["x", "mismatch"], ["d"], name="bad_expand"),
        n("Gather", ["x", "out_of_range"], ["e"], name="bad_index", axis=1),
        n("Gather", ["x", "x"], ["f"], name="runtime_indices", axis=1),
    ]
    return build(nodes, [vi("x", [1, 3, 5, 6]),
                         vi("cond", [1, 3, 5, 6], TensorProto.BOOL)],
                 [vi(o, None) for o in "abcdef"],
                 [init("bigger", i64(2, 3, 5, 6)), init("mismatch", i64(4, 1)),
                  init("out_of_range", i64(3))])


# ------------------------------------------------------------ Initializers


def conv_with(w, b, extra_inits=()):
    return build([helper.make_node("Conv", ["x", "w", "b"], ["y"],
                                   name="conv")],
                 [vi("x", [1, 2, 4, 4])], [vi("y", [1, 3, 2, 2])],
                 [w, b] + list(extra_inits))


@model
def init_typed():
    # Values in float_data (typed) rather than raw_data.
    w = helper.make_tensor("w", F, [3, 2, 3, 3],
                           [float(i % 7) for i in range(54)])
    b = helper.make_tensor("b", F, [3], [0.5, -1.0, 2.0])
    return conv_with(w, b)


@model
def init_f16():
    # float16 in raw_data and in int32_data (the typed form).
    w = numpy_helper.from_array(rand(3, 2, 3, 3).astype(np.float16), "w")
    # helper.make_tensor stores float16 values as bit patterns in int32_data.
    b = helper.make_tensor("b", TensorProto.FLOAT16, [3], [0.5, -1.0, 2.0])
    assert b.int32_data and not b.raw_data
    return conv_with(w, b)


def external(w_name, location, offset, length, data=True):
    w = bare_tensor("w", [3, 2, 3, 3])
    w.data_location = TensorProto.EXTERNAL
    for key, value in (("location", location), ("offset", offset),
                       ("length", length)):
        if value is not None:
            entry = w.external_data.add()
            entry.key, entry.value = key, str(value)
    return conv_with(w, init("b", np.array([0.5, -1.0, 2.0], np.float32)))


@model
def init_external(out_dir):
    values = np.arange(54, dtype=np.float32) / 10
    with open(os.path.join(out_dir, "init_external.bin"), "wb") as f:
        f.write(b"\0" * 16 + values.tobytes())
    return external("w", "init_external.bin", 16, 216)


@model
def external_missing():
    return external("w", "no_such_file.bin", 0, 216)


@model
def external_truncated(out_dir):
    with open(os.path.join(out_dir, "external_truncated.bin"), "wb") as f:
        f.write(b"\0" * 100)
    return external("w", "external_truncated.bin", 0, 216)


@model
def external_outside():
    return external("w", "../outside.bin", 0, 216)


@model
def external_absolute():
    return external("w", "/etc/passwd", 0, 216)


@model
def init_wrong_raw_size():
    w = init("w", rand(3, 2, 3, 3))
    w.raw_data = w.raw_data[:100]
    return conv_with(w, init("b", rand(3)))


@model
def init_wrong_typed_size():
    w = bare_tensor("w", [3, 2, 3, 3], [1.0] * 50)
    return conv_with(w, init("b", rand(3)))


@model
def init_huge_typed():
    # 2^38 floats declared (1 TiB), one given: an error, not an allocation.
    w = bare_tensor("w", [1 << 19, 1 << 19, 1, 1], [1.0])
    return conv_with(w, init("b", rand(3)))


@model
def init_no_data():
    return conv_with(bare_tensor("w", [3, 2, 3, 3]),
                     init("b", rand(3)))


# ---------------------------------------------------------------- Errors


@model
def unsupported_many():
    nodes = [
        helper.make_node("Conv", ["x", "w"], ["c"], name="conv"),
        helper.make_node("LRN", ["c"], ["n"], name="norm", size=3),
        helper.make_node("Relu", ["n"], ["r"], name="relu_after_lrn"),
        helper.make_node("Neg", ["r"], ["s"]),
        helper.make_node("MaxPool", ["x"], ["p"], name="pool",
                         kernel_shape=[2, 2], foo=1),
        helper.make_node("Conv", ["v", "w3"], ["v3"], name="conv3d"),
        helper.make_node("Custom", ["x"], ["z"], name="custom",
                         domain="com.example"),
        # A name with a control character: escaped in the message.
        helper.make_node("Erf", ["x"], ["e"], name="tab\tname"),
    ]
    return build(nodes,
                 [vi("x", [1, 2, 4, 4]), vi("v", [1, 2, 4, 4, 4])],
                 [vi("s", [1, 3, 2, 2]), vi("p", [1, 2, 2, 2]),
                  vi("v3", [1, 3, 2, 2, 2]), vi("z", [1, 2, 4, 4]),
                  vi("e", [1, 2, 4, 4])],
                 [init("w", rand(3, 2, 3, 3)), init("w3", rand(3, 2, 3, 3, 3))])


@model
def unsupported_inputs():
    nodes = [helper.make_node("Reshape", ["x", "shape"], ["y"], name="r"),
             helper.make_node("Relu", ["d"], ["e"], name="relu")]
    return build(nodes,
                 [vi("x", [2, 3]), vi("shape", [2], TensorProto.INT64),
                  helper.make_tensor_value_info("d", F, ["N", 3])],
                 [vi("y", [3, 2]), vi("e", ["N", 3])])


@model
def unsupported_modes():
    nodes = [
        helper.make_node("BatchNormalization", ["x", "s", "s", "s", "s"],
                         ["y"], name="bn", training_mode=1),
        helper.make_node("MaxPool", ["x"], ["p", "i"], name="pool",
                         kernel_shape=[2, 2]),
        helper.make_node("MaxPool", ["x"], ["q"], name="ceil_past_end",
                         kernel_shape=[2, 2], strides=[2, 2], pads=[0, 0, 1, 1],
                         ceil_mode=1),
        helper.make_node("Dropout", ["x"], ["d", "mask"], name="drop"),
        helper.make_node("MatMul", ["m1", "m2"], ["mm"], name="broadcast_mm"),
    ]
    return build(nodes,
                 [vi("x", [1, 2, 4, 4]), vi("m1", [2, 1, 3, 4]),
                  vi("m2", [1, 2, 4, 5])],
                 [vi("y", [1, 2, 4, 4]), vi("p", [1, 2, 3, 3]),
                  vi("i", [1, 2, 3, 3], TensorProto.INT64),
                  vi("q", [1, 2, 3, 3]), vi("d", [1, 2, 4, 4]),
                  vi("mask", [1, 2, 4, 4], TensorProto.BOOL),
                  vi("mm", [2, 2, 3, 5])],
                 [init("s", np.ones(2, np.float32))], opset=15)


@model
def invalid_shapes():
    nodes = [
        helper.make_node("Conv", ["x", "w"], ["c"], name="conv_channels"),
        helper.make_node("Reshape", ["x", "shape"], ["r"], name="reshape_count"),
        helper.make_node("Split", ["x"], ["s0", "s1"], name="split_sum",
                         split=[1, 1], axis=1),
        helper.make_node("Gemm", ["g", "gw"], ["gy"], name="gemm_inner"),
        helper.make_node("BatchNormalization", ["x", "s", "s", "s", "s"],
                         ["b"], name="bn_momentum", momentum=1.5),
        helper.make_node("Relu", ["x"], ["declared"], name="relu"),
    ]
    return build(nodes, [vi("x", [1, 3, 4, 4]), vi("g", [2, 5])],
                 [vi("c", [1, 2, 2, 2]), vi("r", [5, 9]),
                  vi("s0", [1, 1, 4, 4]), vi("s1", [1, 1, 4, 4]),
                  vi("gy", [2, 4]), vi("b", [1, 3, 4, 4]),
                  vi("declared", [1, 3, 5, 4])],
                 [init("w", rand(2, 4, 3, 3)),
                  init("shape", np.array([5, -1], np.int64)),
                  init("gw", rand(6, 4)), init("s", np.abs(rand(3)) + 0.5)],
                 opset=11)


@model
def dangling():
    nodes = [helper.make_node("Relu", ["x"], ["r"], name="relu"),
             helper.make_node("Add", ["r", "ghost"], ["y"], name="add")]
    return build(nodes, [vi("x", [1, 2])], [vi("y", [1, 2]), vi("z", [1, 2])])


@model
def duplicate_output():
    nodes = [helper.make_node("Relu", ["x"], ["y"], name="first"),
             helper.make_node("Relu", ["x"], ["y"], name="second")]
    return build(nodes, [vi("x", [1, 2])], [vi("y", [1, 2])])


@model
def cycle():
    nodes = [helper.make_node("Relu", ["x"], ["a"], name="start"),
             helper.make_node("Add", ["a", "c"], ["b"], name="add"),
             helper.make_node("Relu", ["b"], ["c"], name="back"),
             helper.make_node("Relu", ["b"], ["y"], name="out")]
    return build(nodes, [vi("x", [1, 2])], [vi("y", [1, 2])])


@model
def no_opset():
    m = build([helper.make_node("Relu", ["x"], ["y"])],
              [vi("x", [1, 2])], [vi("y", [1, 2])])
    del m.opset_import[:]
    return m


@model
def no_graph():
    m = onnx.ModelProto()
    m.ir_version = 8
    m.producer_name = "make_onnx.py"
    return m


def truncated_bytes():
    data = conv_basic().SerializeToString()
    return data[: len(data) * 2 // 3]


SPECIAL = {
    "truncated": truncated_bytes,
    "empty": lambda: b"",
    "garbage": lambda: b"this is not a protobuf file\n" * 4,
}


def main():
    if sys.argv[1:] == ["--list"]:
        print("\n".join(sorted(list(MODELS) + list(SPECIAL))))
        return
    out_dir = sys.argv[1]
    os.makedirs(out_dir, exist_ok=True)
    for name in sys.argv[2:]:
        path = os.path.join(out_dir, name + ".onnx")
        if name in SPECIAL:
            data = SPECIAL[name]()
        else:
            fn = MODELS[name]
            args = [out_dir] if fn.__code__.co_argcount else []
            data = fn(*args).SerializeToString()
        with open(path, "wb") as f:
            f.write(data)


if __name__ == "__main__":
    main()
