#!/usr/bin/env python3
# ===- make_onnx.py - Broken ONNX models for the error catalogue ----------=== #
#
# Part of the memfmt project.
#
# ===---------------------------------------------------------------------=== #
"""Writes into the directory given a good one-Conv ONNX model (good.onnx)
and broken variants memfmt-compile must refuse: truncated.onnx (cut in
half), garbage.onnx (not protobuf), empty.onnx, unsupported-op.onnx (Gelu),
inconsistent.onnx (weight channels that do not match the input),
missing-weight.onnx (no initializer for the weight), dynamic.onnx (a
symbolic batch dimension), external.onnx (external data that is not there),
opset.onnx (opset 99), short-initializer.onnx (raw data 8 bytes short) and
cycle.onnx (two nodes that read each other's outputs)."""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def conv_model(w_shape=(4, 3, 3, 3), op="Conv", with_weight=True):
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 8, 8])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
    w = numpy_helper.from_array(np.ones(w_shape, np.float32), "w")
    node = helper.make_node(op, ["x", "w"], ["y"])
    graph = helper.make_graph([node], "g", [x], [y],
                              [w] if with_weight else [])
    return helper.make_model(graph,
                             opset_imports=[helper.make_opsetid("", 13)])


out = sys.argv[1]


def path(name):
    return os.path.join(out, name)


onnx.save(conv_model(), path("good.onnx"))
data = open(path("good.onnx"), "rb").read()
open(path("truncated.onnx"), "wb").write(data[:len(data) // 2])
open(path("garbage.onnx"), "wb").write(b"this is not protobuf\x00\xff")
open(path("empty.onnx"), "wb").write(b"")
onnx.save(conv_model(op="Gelu"), path("unsupported-op.onnx"))
onnx.save(conv_model(w_shape=(4, 5, 3, 3)), path("inconsistent.onnx"))
onnx.save(conv_model(with_weight=False), path("missing-weight.onnx"))
m = conv_model()
m.graph.input[0].type.tensor_type.shape.dim[0].dim_param = "N"
onnx.save(m, path("dynamic.onnx"))
m = conv_model()
m.graph.initializer[0].ClearField("raw_data")
m.graph.initializer[0].data_location = TensorProto.EXTERNAL
entry = m.graph.initializer[0].external_data.add()
entry.key, entry.value = "location", "w.bin"
onnx.save(m, path("external.onnx"))
m = conv_model()
m.opset_import[0].version = 99
onnx.save(m, path("opset.onnx"))
m = conv_model()
m.graph.initializer[0].raw_data = m.graph.initializer[0].raw_data[:-8]
onnx.save(m, path("short-initializer.onnx"))
x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 8, 8])
a = helper.make_tensor_value_info("a", TensorProto.FLOAT, None)
cycle = helper.make_graph([helper.make_node("Add", ["x", "b"], ["a"]),
                           helper.make_node("Relu", ["a"], ["b"])],
                          "g", [x], [a])
onnx.save(helper.make_model(cycle,
                            opset_imports=[helper.make_opsetid("", 13)]),
          path("cycle.onnx"))
