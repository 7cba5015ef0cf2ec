# The built-in model zoo (lib/Models/ResNet.cpp, written by memfmt-compile
# --model to DIR/input.mlir) is torchvision's ResNet family, op for op.
#
# For each model, memfmt-compile writes the zoo's IR and torch.fx traces
# torchvision.models.<name>() (with ShapeProp for the shapes). The two graphs
# must be the same sequence of ops: the same kind (Conv2d is memfmt.conv2d,
# BatchNorm2d batch_norm, ReLU relu, MaxPool2d max_pool2d, AdaptiveAvgPool2d
# adaptive_avg_pool2d, Linear linear, + add, torch.flatten flatten), the same
# torchvision module path as the op's NameLoc, the same operands (the same
# producing op, in the same order; parameters by state_dict key), the same
# attributes (stride, padding, dilation, groups, kernel, ceil mode, output
# size, start dim) and the same result shape. The `memfmt.weight` ops must
# be the state_dict's entries (less num_batches_tracked), in its order, with
# its shapes. This is the check that the IR of the removed Python generator
# (scripts/gen_resnet_mlir.py) used to give, against torchvision itself.
#
# REQUIRES: torch, memfmt-compile, memfmt-opt
# RUN: %python %s --bin %memfmt_bin --work %t | FileCheck %s
# CHECK: resnet18 2x3x64x96: 69 ops, 102 parameters: PASS
# CHECK: resnet18 1x3x67x75: 69 ops, 102 parameters: PASS
# CHECK: resnet34 2x3x64x96: 125 ops, 182 parameters: PASS
# CHECK: resnet50 2x3x64x96: 175 ops, 267 parameters: PASS
# CHECK: resnet101 2x3x64x96: 345 ops, 522 parameters: PASS
# CHECK: resnet152 2x3x64x96: 515 ops, 777 parameters: PASS
# CHECK: resnext50_32x4d 2x3x64x96: 175 ops, 267 parameters: PASS
# CHECK: wide_resnet50_2 2x3x64x96: 175 ops, 267 parameters: PASS
# CHECK: all 8 models match
import argparse
import operator
import os
import re
import subprocess
import sys

import torch
import torchvision
from torch.fx.passes.shape_prop import ShapeProp

RUNS = [
    ("resnet18", 2, 64, 96),
    ("resnet18", 1, 67, 75),
    ("resnet34", 2, 64, 96),
    ("resnet50", 2, 64, 96),
    ("resnet101", 2, 64, 96),
    ("resnet152", 2, 64, 96),
    ("resnext50_32x4d", 2, 64, 96),
    ("wide_resnet50_2", 2, 64, 96),
]

# torchvision module class -> (memfmt op, parameter names in operand order)
MODULES = {
    torch.nn.Conv2d: ("conv2d", ("weight", "bias")),
    torch.nn.BatchNorm2d: ("batch_norm",
                           ("weight", "bias", "running_mean", "running_var")),
    torch.nn.ReLU: ("relu", ()),
    torch.nn.MaxPool2d: ("max_pool2d", ()),
    torch.nn.AdaptiveAvgPool2d: ("adaptive_avg_pool2d", ()),
    torch.nn.Linear: ("linear", ("weight", "bias")),
}

OP_LINE = re.compile(r'^\s*(%\w+) = memfmt\.(\w+) (.*) loc\("([^"]+)"\)$')
TENSOR = re.compile(r"tensor<((?:\d+x)*)\w+>")
ARRAY_ATTR = re.compile(r"(\w+) = array<i64: ([-\d, ]*)>")
INT_ATTR = re.compile(r"(\w+) = (-?\d+) : i64")


def pair(v):
    return list(v) if isinstance(v, (tuple, list)) else [v, v]


def shape_of(type_text):
    return [int(d) for d in TENSOR.findall(type_text)[-1].split("x") if d]


def zoo_graph(args, model, batch, height, width):
    """The zoo's IR as (ops, parameters, input shape, returned value)."""
    out = os.path.join(args.work, f"{model}-{batch}x{height}x{width}")
    subprocess.run([os.path.join(args.bin, "memfmt-compile"), "--model", model,
                    "--batch", str(batch), "--height", str(height), "--width",
                    str(width), "-o", out], check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    text = subprocess.run(
        [os.path.join(args.bin, "memfmt-opt"), "--mlir-print-debuginfo",
         "--mlir-print-local-scope", os.path.join(out, "input.mlir")],
        check=True, capture_output=True, text=True).stdout
    producers = {}  # SSA value -> op index, -1 for the input, or a key
    ops, params, returned = [], [], None
    for line in text.splitlines():
        if "func.func" in line:
            producers[re.search(r"\((%\w+):", line).group(1)] = -1
            input_shape = shape_of(line.split("->")[0])
            continue
        if line.strip().startswith("return "):
            returned = producers[line.split()[1]]
            continue
        m = OP_LINE.match(line)
        if not m:
            continue
        value, kind, body, loc = m.groups()
        if kind == "weight":
            key = re.match(r'"([^"]+)"', body).group(1)
            params.append((key, shape_of(body)))
            producers[value] = ("param", key)
            continue
        operands_text = body.split(" : ")[0].split(" {")[0]
        attrs = {k: [int(x) for x in v.split(",") if x.strip()]
                 for k, v in ARRAY_ATTR.findall(body)}
        attrs.update({k: int(v) for k, v in INT_ATTR.findall(body)})
        attrs["ceil_mode"] = "ceil_mode = true" in body
        ops.append({"kind": kind, "name": loc,
                    "operands": [producers[v] for v in
                                 re.findall(r"%\w+", operands_text)],
                    "shape": shape_of(body), "attrs": attrs})
        producers[value] = len(ops) - 1
    return ops, params, input_shape, returned


def expected_attrs(kind, module, node):
    """The zoo's attributes for a torchvision op, defaults filled in."""
    if kind == "conv2d":
        return {"stride": pair(module.stride), "padding": pair(module.padding),
                "dilation": pair(module.dilation), "groups": module.groups}
    if kind == "max_pool2d":
        return {"kernel_size": pair(module.kernel_size),
                "stride": pair(module.stride), "padding": pair(module.padding),
                "dilation": pair(module.dilation),
                "ceil_mode": bool(module.ceil_mode)}
    if kind == "adaptive_avg_pool2d":
        return {"output_size": pair(module.output_size)}
    if kind == "flatten":
        return {"start_dim": node.args[1]}
    return {}


DEFAULTS = {"stride": [1, 1], "padding": [0, 0], "dilation": [1, 1],
            "groups": 1, "ceil_mode": False}


def torch_graph(model, batch, height, width):
    """torchvision's model as (ops, parameters, input shape, returned op)."""
    net = getattr(torchvision.models, model)().eval()
    traced = torch.fx.symbolic_trace(net)
    ShapeProp(traced).propagate(torch.zeros(batch, 3, height, width))
    index, ops, returned = {}, [], None
    for node in traced.graph.nodes:
        if node.op == "placeholder":
            index[node] = -1
            continue
        if node.op == "output":
            returned = index[node.args[0]]
            continue
        operands = [index[a] for a in node.args if isinstance(a, torch.fx.Node)]
        if node.op == "call_module":
            module = traced.get_submodule(node.target)
            kind, names = MODULES[type(module)]
            operands += [("param", f"{node.target}.{p}") for p in names
                         if getattr(module, p, None) is not None]
            name = node.target
        elif node.target in (operator.add, operator.iadd, torch.add):
            kind, module, name = "add", None, None
        elif node.target is torch.flatten:
            kind, module, name = "flatten", None, "flatten"
        else:
            raise RuntimeError(f"{model}: unexpected node {node.format_node()}")
        ops.append({"kind": kind, "name": name, "operands": operands,
                    "shape": list(node.meta["tensor_meta"].shape),
                    "attrs": expected_attrs(kind, module, node)})
        index[node] = len(ops) - 1
    params = [(k, list(v.shape)) for k, v in net.state_dict().items()
              if not k.endswith("num_batches_tracked")]
    return ops, params, [batch, 3, height, width], returned


def compare(model, batch, height, width, args):
    zoo_ops, zoo_params, zoo_input, zoo_ret = zoo_graph(args, model, batch,
                                                        height, width)
    tv_ops, tv_params, tv_input, tv_ret = torch_graph(model, batch, height,
                                                      width)
    errors = []
    if zoo_input != tv_input:
        errors.append(f"input {zoo_input} != {tv_input}")
    if zoo_params != tv_params:
        for i, (z, t) in enumerate(zip(zoo_params, tv_params)):
            if z != t:
                errors.append(f"parameter {i}: zoo {z}, torchvision {t}")
                break
        errors.append(f"{len(zoo_params)} parameters, torchvision has "
                      f"{len(tv_params)}")
    if len(zoo_ops) != len(tv_ops):
        errors.append(f"{len(zoo_ops)} ops, torchvision has {len(tv_ops)}")
    for i, (z, t) in enumerate(zip(zoo_ops, tv_ops)):
        attrs = {k: z["attrs"].get(k, DEFAULTS.get(k)) for k in t["attrs"]}
        name_ok = (z["name"] == t["name"] if t["name"] is not None
                   else z["name"].endswith(".add"))
        if (z["kind"], z["operands"], z["shape"], attrs) != (
                t["kind"], t["operands"], t["shape"], t["attrs"]) or not name_ok:
            errors.append(f"op {i}: zoo {z['kind']} {z['name']} "
                          f"{z['operands']} {z['shape']} {attrs}, torchvision "
                          f"{t['kind']} {t['name']} {t['operands']} "
                          f"{t['shape']} {t['attrs']}")
            break
    if zoo_ret != tv_ret:
        errors.append(f"returns op {zoo_ret}, torchvision op {tv_ret}")
    what = f"{model} {batch}x3x{height}x{width}"
    if errors:
        print(f"{what}: FAIL\n  " + "\n  ".join(errors))
        return False
    print(f"{what}: {len(zoo_ops)} ops, {len(zoo_params)} parameters: PASS")
    return True


def main():
    p = argparse.ArgumentParser(
        description="Checks the model zoo against torchvision")
    p.add_argument("--bin", required=True)
    p.add_argument("--work", required=True)
    args = p.parse_args()
    os.makedirs(args.work, exist_ok=True)
    passed = sum(compare(*run, args) for run in RUNS)
    if passed != len(RUNS):
        print(f"{len(RUNS) - passed} of {len(RUNS)} models differ")
        return 1
    print(f"all {len(RUNS)} models match")
    return 0


if __name__ == "__main__":
    sys.exit(main())
