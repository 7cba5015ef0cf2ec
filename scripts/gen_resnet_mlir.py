#!/usr/bin/env python3
"""Writes a torchvision ResNet-family forward function as memfmt IR, in NCHW.

The function is the model as saved: every tensor contiguous, parameters as
`memfmt.weight` ops named with torchvision `state_dict` keys
(`layer1.0.conv1.weight`), batch norm in inference form. It is the checked-in
input of the layout-pass tests (test/Dialect/MemFmt/Transforms/Inputs/), so
the architecture here follows torchvision.models.resnet exactly:
conv1/bn1/relu/maxpool, four stages of BasicBlock or Bottleneck (stride on
the 3x3 conv, projection shortcut with conv+bn), adaptive average pooling,
flatten and fc.

Usage: gen_resnet_mlir.py [--model resnet50] [--batch 8] [--height 224]
                          [--width 224] [-o FILE]
"""
import argparse
import sys

# name -> (block kind, blocks per stage, groups, width per group)
MODELS = {
    "resnet18": ("basic", [2, 2, 2, 2], 1, 64),
    "resnet34": ("basic", [3, 4, 6, 3], 1, 64),
    "resnet50": ("bottleneck", [3, 4, 6, 3], 1, 64),
    "resnet101": ("bottleneck", [3, 4, 23, 3], 1, 64),
    "resnet152": ("bottleneck", [3, 8, 36, 3], 1, 64),
    "resnext50_32x4d": ("bottleneck", [3, 4, 6, 3], 32, 4),
    "wide_resnet50_2": ("bottleneck", [3, 4, 6, 3], 1, 128),
}


def conv_out(size, kernel, stride, pad):
    return (size + 2 * pad - kernel) // stride + 1


class Emitter:
    def __init__(self, dtype):
        self.lines = []
        self.counter = 0
        self.dtype = dtype

    def ty(self, shape):
        return "tensor<" + "x".join(str(d) for d in shape) + "x" + self.dtype + ">"

    def fresh(self):
        self.counter += 1
        return f"%v{self.counter}"

    def emit(self, text):
        self.lines.append("    " + text)

    def weight(self, name, shape):
        v = self.fresh()
        self.emit(f'{v} = memfmt.weight "{name}" : {self.ty(shape)}')
        return v

    def conv(self, x, shape, name, out_ch, kernel, stride, pad, groups=1):
        n, c, h, w = shape
        wshape = [out_ch, c // groups, kernel, kernel]
        wv = self.weight(name + ".weight", wshape)
        out = [n, out_ch, conv_out(h, kernel, stride, pad),
               conv_out(w, kernel, stride, pad)]
        attrs = []
        if stride != 1:
            attrs.append(f"stride = array<i64: {stride}, {stride}>")
        if pad != 0:
            attrs.append(f"padding = array<i64: {pad}, {pad}>")
        if groups != 1:
            attrs.append(f"groups = {groups} : i64")
        attr = " {" + ", ".join(attrs) + "}" if attrs else ""
        v = self.fresh()
        self.emit(f"{v} = memfmt.conv2d {x}, {wv}{attr} : "
                  f"({self.ty(shape)}, {self.ty(wshape)}) -> {self.ty(out)}")
        return v, out

    def bn(self, x, shape, name):
        c = shape[1]
        params = [self.weight(f"{name}.{p}", [c])
                  for p in ("weight", "bias", "running_mean", "running_var")]
        v = self.fresh()
        pty = self.ty([c])
        self.emit(f"{v} = memfmt.batch_norm {x}, {', '.join(params)} : "
                  f"{self.ty(shape)}, {pty}, {pty}, {pty}, {pty} -> "
                  f"{self.ty(shape)}")
        return v

    def relu(self, x, shape):
        v = self.fresh()
        self.emit(f"{v} = memfmt.relu {x} : {self.ty(shape)} -> {self.ty(shape)}")
        return v

    def add(self, a, b, shape):
        v = self.fresh()
        t = self.ty(shape)
        self.emit(f"{v} = memfmt.add {a}, {b} : {t}, {t} -> {t}")
        return v


def block(e, x, shape, prefix, kind, planes, stride, groups, base_width):
    expansion = 4 if kind == "bottleneck" else 1
    identity, id_shape = x, shape
    if kind == "basic":
        y, s = e.conv(x, shape, prefix + ".conv1", planes, 3, stride, 1)
        y = e.relu(e.bn(y, s, prefix + ".bn1"), s)
        y, s = e.conv(y, s, prefix + ".conv2", planes, 3, 1, 1)
        y = e.bn(y, s, prefix + ".bn2")
    else:
        width = int(planes * (base_width / 64.0)) * groups
        y, s = e.conv(x, shape, prefix + ".conv1", width, 1, 1, 0)
        y = e.relu(e.bn(y, s, prefix + ".bn1"), s)
        y, s = e.conv(y, s, prefix + ".conv2", width, 3, stride, 1, groups)
        y = e.relu(e.bn(y, s, prefix + ".bn2"), s)
        y, s = e.conv(y, s, prefix + ".conv3", planes * expansion, 1, 1, 0)
        y = e.bn(y, s, prefix + ".bn3")
    if stride != 1 or shape[1] != planes * expansion:
        identity, id_shape = e.conv(x, shape, prefix + ".downsample.0",
                                    planes * expansion, 1, stride, 0)
        identity = e.bn(identity, id_shape, prefix + ".downsample.1")
    y = e.add(y, identity, s)
    return e.relu(y, s), s


def generate(model, batch, height, width, dtype="f32", num_classes=1000):
    kind, layers, groups, base_width = MODELS[model]
    e = Emitter(dtype)
    shape = [batch, 3, height, width]
    x, s = e.conv("%input", shape, "conv1", 64, 7, 2, 3)
    x = e.relu(e.bn(x, s, "bn1"), s)
    pooled = [s[0], s[1], conv_out(s[2], 3, 2, 1), conv_out(s[3], 3, 2, 1)]
    v = e.fresh()
    e.emit(f"{v} = memfmt.max_pool2d {x} {{kernel_size = array<i64: 3, 3>, "
           f"stride = array<i64: 2, 2>, padding = array<i64: 1, 1>}} : "
           f"{e.ty(s)} -> {e.ty(pooled)}")
    x, s = v, pooled
    for stage, (planes, blocks) in enumerate(zip([64, 128, 256, 512], layers)):
        for i in range(blocks):
            stride = 2 if (stage > 0 and i == 0) else 1
            x, s = block(e, x, s, f"layer{stage + 1}.{i}", kind, planes,
                         stride, groups, base_width)
    pooled = [s[0], s[1], 1, 1]
    v = e.fresh()
    e.emit(f"{v} = memfmt.adaptive_avg_pool2d {x} {{output_size = array<i64: 1, 1>}}"
           f" : {e.ty(s)} -> {e.ty(pooled)}")
    flat = [s[0], s[1]]
    f = e.fresh()
    e.emit(f"{f} = memfmt.flatten {v} {{start_dim = 1 : i64}} : "
           f"{e.ty(pooled)} -> {e.ty(flat)}")
    fw = e.weight("fc.weight", [num_classes, s[1]])
    fb = e.weight("fc.bias", [num_classes])
    out = [s[0], num_classes]
    y = e.fresh()
    e.emit(f"{y} = memfmt.linear {f}, {fw}, {fb} : ({e.ty(flat)}, "
           f"{e.ty([num_classes, s[1]])}, {e.ty([num_classes])}) -> {e.ty(out)}")
    e.emit(f"return {y} : {e.ty(out)}")
    header = (f"// {model}, batch {batch}, {height}x{width}, NCHW as saved.\n"
              f"// Generated by scripts/gen_resnet_mlir.py; do not edit.\n"
              f"func.func @{model}(%input: {e.ty([batch, 3, height, width])})"
              f" -> {e.ty(out)} {{\n")
    return header + "\n".join(e.lines) + "\n}\n"


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--model", default="resnet50", choices=sorted(MODELS))
    p.add_argument("--batch", type=int, default=8)
    p.add_argument("--height", type=int, default=224)
    p.add_argument("--width", type=int, default=224)
    p.add_argument("-o", "--output", default="-")
    a = p.parse_args()
    text = generate(a.model, a.batch, a.height, a.width)
    if a.output == "-":
        sys.stdout.write(text)
    else:
        with open(a.output, "w") as f:
            f.write(text)


if __name__ == "__main__":
    main()
