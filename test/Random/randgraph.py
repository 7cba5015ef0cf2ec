#!/usr/bin/env python3
# ===- randgraph.py - Differential testing on random graphs (L8, L9) ------=== #
#
# Part of the memfmt project.
#
# ===---------------------------------------------------------------------=== #
"""Random well-typed memfmt graphs, compiled NCHW and channels-last (L8).

In the manner of NNSmith: a generator builds random graphs over the op set of
DESIGN.md §2 -- conv2d (groups, dilation, stride, 2- and 4-value padding,
bias), batch_norm, relu, add, mul, sub and div (with broadcasting, either
operand order; div by a parameter), sigmoid, silu, hardswish, hardsigmoid,
clamp, gelu, max_pool2d (+with_indices), avg_pool2d (ceil_mode,
count_include_pad),
adaptive_avg_pool2d, flatten, reshape (4-D to 2-D and back), linear, cat and
chunk along the batch, clone, contiguous and to, permute (any permutation:
a view or a copy), slice (any dim, steps), channel_shuffle (also as the
reshape - permute - reshape exporters write), layer_norm (last dim,
optional weight and bias) and softmax (any dim) -- with random shapes (N=1,
C=1, H=W=1 and odd sizes come up often), random attributes, and inputs and
parameters (memfmt.weight) declared in random formats (contiguous or
#memfmt.strides channels-last). Declared result types follow the layout
rules (L5 join, L6 preserve), so each graph is what a user could write.

Each batch of graphs (several independent graphs in one function, to save
compiles) is compiled with memfmt-compile --memory-format contiguous and
--memory-format channels-last (input format random), run by memfmt-run with
--check (fast kernels against reference kernels, 1e-4), and the two builds'
outputs are compared: max|a - b| / max|b| <= 1e-5 per output (L8). A
third build, channels-last with --sub-batch 1 (memfmt-tile-batch: every op
that computes each sample alone runs one sample at a time), is run and
compared the same way. The channels-last build is also checked against the
conversion rules:
memfmt-opt --memfmt-verify-layouts=contiguous-operands=true passes on its
model.mlir, every runtime conversion in report.json has a rule's reason
(an input entering channels-last, L7 before a reshape, an output kept in its
declared format, or an explicit conversion op of the graph), and none is of
a tensor that is both contiguous and channels-last (L3: free).

The grad mode does the same for training steps (gradients, L8 and L9):
random graphs over the ops with a VJP only (conv2d incl. grouped, strided,
dilated, padded and with bias; training-mode batch_norm, relu, add of
same-shape tensors (a broadcasting add has no VJP yet), max_pool2d
(+with_indices) and avg_pool2d incl. ceil_mode, adaptive_avg_pool2d,
flatten, reshape, linear, clone, contiguous), every input with the same
batch N, the same edge shapes and declared formats, each graph ending in
logits [N, K] (every value nothing consumes goes through a head --
adaptive pool / flatten / reshape, then linear to K -- and the heads are
added, so every weight reaches the loss). One graph per compile (one loss):
memfmt-compile --train --gradients --lr 0 (no update: the step returns the
mean cross-entropy loss and every trainable weight's gradient), NCHW and
channels-last, and channels-last again with --fusion=false (no training
fusion), all run through the runtime's C API (the memfmt Python
package; memfmt-run cannot feed the i64 classes) on the
same x and y, and the channels-last build again with MEMFMT_KERNELS=
reference (in a subprocess: the runtime reads it when its context is
made). Checked: the outputs are the loss and one finite gradient for each
trainable weight (not the running statistics); loss and gradients agree
between the builds (formats, and fused against unfused) and between fast
and reference kernels within GRAD_TOLERANCE (see there); the conversion
rules as above.

A failing graph is reduced (delta debugging over ops: an op is dropped by
turning its result into a new function argument of the same type, which
keeps the graph well-typed, or bypassed by an operand of its result's type;
dead ops are removed; in grad mode a graph must keep a trainable weight and
fail with the same error) and written as a self-checking lit test.

Commands:
  run    --seed S --count N [--time-budget SEC] [--batch K] [--jobs J]
         [--workdir DIR] [--reduce-to DIR] [--bin DIR]
         generate and check graphs until N are done or the budget is spent;
         prints "random graphs: G checked, M mismatches" (exit 1 if M > 0)
  check  FILE.mlir [--workdir DIR] [--bin DIR]
         check one .mlir file (a regression test); exit 1 on a mismatch
  gen    --seed S [--count N]    print a batch of N graphs as one function
  grad   --seed S --count N [--jobs J] [--workdir DIR] [--reduce-to DIR]
         [--bin DIR] [--python DIR] [--verbose]
         check N gradient graphs; prints "random gradient graphs: G
         checked, M mismatches" (exit 1 if M > 0), each failing graph's
         .mlir path (kept in the workdir), and with --verbose the check
         that came closest to the tolerance
  grad-check FILE.mlir [--seed S] [--data-seed D] [--input-format F]
         [--workdir DIR] [--bin DIR] [--python DIR]
         check one gradient graph (a regression test); exit 1 on a mismatch
  grad-gen --seed S [--index I]   print gradient graph I of seed S
  grad-exec (internal: runs model directories for grad, in a subprocess)
"""
import argparse
import concurrent.futures
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np

L8_TOLERANCE = 1e-5
CONVERSION_REASONS = [
    "inputs=convert",  # an argument enters channels-last
    "L7",              # contiguous before a reshape/flatten
    "outputs=keep",    # a result goes back to its declared format
    "explicit",        # a conversion op of the graph itself
    "L9",              # a gradient back to its primal's format (the
                       # inverse of a forward conversion)
]

# ===---------------------------------------------------------------------=== #
# Layouts
# ===---------------------------------------------------------------------=== #


def contiguous_strides(shape):
    strides, s = [], 1
    for d in reversed(shape):
        strides.append(s)
        s *= d
    return list(reversed(strides))


def channels_last_strides(shape):
    n, c, h, w = shape
    return [h * w * c, 1, w * c, c]


def same_bytes(shape, a, b):
    """L3: equal strides on every dim of size > 1."""
    return all(x == y for d, x, y in zip(shape, a, b) if d != 1)


class TType:
    """A ranked f32 tensor type: shape and strides (None = contiguous)."""

    def __init__(self, shape, strides=None):
        self.shape = list(shape)
        if strides is not None and strides == contiguous_strides(shape):
            strides = None
        self.strides = strides

    def text(self):
        dims = "x".join(str(d) for d in self.shape)
        dims = dims + "x" if dims else ""
        if self.strides is None:
            return f"tensor<{dims}f32>"
        enc = ", ".join(str(s) for s in self.strides)
        return f"tensor<{dims}f32, #memfmt.strides<[{enc}]>>"

    def rank(self):
        return len(self.shape)

    def numel(self):
        n = 1
        for d in self.shape:
            n *= d
        return n

    def is_channels_last(self):
        """L4: channels-last contiguous and not also contiguous."""
        if self.rank() != 4 or self.strides is None:
            return False
        cl = channels_last_strides(self.shape)
        return (same_bytes(self.shape, self.strides, cl) and
                not same_bytes(self.shape, self.strides,
                               contiguous_strides(self.shape)))

    def is_l3(self):
        """Both contiguous and channels-last (a free conversion)."""
        return self.rank() == 4 and same_bytes(
            self.shape, contiguous_strides(self.shape),
            channels_last_strides(self.shape))

    def __eq__(self, other):
        return self.shape == other.shape and self.strides == other.strides


def joined(shape, operands):
    """L5: the result type of a propagating op with 4-D result `shape`."""
    if len(shape) == 4 and any(t.is_channels_last() for t in operands
                               if t.rank() == 4):
        return TType(shape, channels_last_strides(shape))
    return TType(shape)


def in_format(ttype, fmt):
    if fmt == "channels_last" and ttype.rank() == 4:
        return TType(ttype.shape, channels_last_strides(ttype.shape))
    return TType(ttype.shape)


# ===---------------------------------------------------------------------=== #
# Graphs
# ===---------------------------------------------------------------------=== #


class Op:
    """One op: `kind`, operand names, attributes text, results."""

    def __init__(self, kind, operands, results, attrs="", extra=None):
        self.kind = kind
        self.operands = list(operands)   # value names
        self.results = list(results)     # (name, TType)
        self.attrs = attrs
        self.extra = extra or {}         # kind-specific (weight name, ...)


class Graph:
    """A function body: arguments, ops, returned values."""

    def __init__(self, prefix):
        self.prefix = prefix
        self.args = []      # (name, TType)
        self.ops = []
        self.outputs = []   # value names
        self.counter = 0

    def fresh(self, hint="v"):
        self.counter += 1
        return f"%{self.prefix}{hint}{self.counter}"

    def types(self):
        t = dict(self.args)
        for op in self.ops:
            for name, ty in op.results:
                t[name] = ty
        return t


def op_text(op, types):
    """The custom-form text of one op."""
    ins = [types[v] for v in op.operands]
    res = ", ".join(n for n, _ in op.results)
    a = f" {{{op.attrs}}}" if op.attrs else ""
    k = op.kind
    if k == "weight":
        return f'{res} = memfmt.weight "{op.extra["name"]}" : {op.results[0][1].text()}'
    if k in ("conv2d", "linear"):
        sig = ", ".join(t.text() for t in ins)
        return (f"{res} = memfmt.{k} {', '.join(op.operands)}{a} : ({sig}) -> "
                f"{op.results[0][1].text()}")
    if k in ("contiguous", "clone", "to"):
        return f"{res} = memfmt.{k} {op.operands[0]}{a} : {ins[0].text()}"
    if k == "layer_norm":
        # Optional weight and bias, each after its keyword.
        roles = op.extra["roles"]
        operands = " ".join(f"{r} {v}" if r else v
                            for r, v in zip(roles, op.operands))
        sig = " ".join(f"{r} {t.text()}" if r else t.text()
                       for r, t in zip(roles, ins))
        return (f"{res} = memfmt.{k} {operands}{a} : {sig} -> "
                f"{op.results[0][1].text()}")
    outs = ", ".join(t.text() for _, t in op.results)
    if len(op.results) > 1:
        n = op.results[0][0].split("#")[0]
        res = f"{n}:{len(op.results)}"
    return (f"{res} = memfmt.{k} {', '.join(op.operands)}{a} : "
            f"{', '.join(t.text() for t in ins)} -> {outs}")


def function_text(graphs, name="graphs"):
    """One public function holding every graph of `graphs`."""
    args, outs, body = [], [], []
    for g in graphs:
        types = g.types()
        args += [f"{n}: {t.text()}" for n, t in g.args]
        for op in g.ops:
            body.append("  " + op_text(op, types))
        outs += [(v, types[v]) for v in g.outputs]
    lines = [f"func.func @{name}({', '.join(args)}) -> "
             f"({', '.join(t.text() for _, t in outs)}) {{"]
    lines += body
    lines.append(f"  return {', '.join(v for v, _ in outs)} : "
                 f"{', '.join(t.text() for _, t in outs)}")
    lines.append("}")
    return "\n".join(lines) + "\n"


# ===---------------------------------------------------------------------=== #
# The generator
# ===---------------------------------------------------------------------=== #

SIZES = [1, 1, 2, 3, 3, 4, 5, 7, 8, 9]
CHANNELS = [1, 1, 2, 3, 4, 5, 6, 8]
BATCH = [1, 1, 2, 3]


class Generator:
    def __init__(self, rng, prefix):
        self.r = rng
        self.g = Graph(prefix)
        self.live = []          # value names usable as operands
        self.nparams = 0

    # -- helpers ---------------------------------------------------------- #
    def ty(self, v):
        return self.g.types()[v]

    def add_op(self, kind, operands, result_types, attrs="", extra=None,
               hint="v"):
        base = self.g.fresh(hint)
        if len(result_types) == 1:
            results = [(base, result_types[0])]
        else:
            results = [(f"{base}#{i}", t) for i, t in enumerate(result_types)]
        op = Op(kind, operands, results, attrs, extra)
        self.g.ops.append(op)
        return [n for n, _ in results]

    def random_format(self, shape):
        if len(shape) == 4 and self.r.random() < 0.5:
            return TType(shape, channels_last_strides(shape))
        return TType(shape)

    def param(self, layer, suffix, shape, formatted=True):
        name = f"{self.g.prefix}{layer}.{suffix}"
        t = self.random_format(shape) if formatted else TType(shape)
        (v,) = self.add_op("weight", [], [t], extra={"name": name}, hint="p")
        return v

    def layer(self, kind):
        self.nparams += 1
        return f"{kind}{self.nparams}"

    def input(self):
        shape = [self.r.choice(BATCH), self.r.choice(CHANNELS),
                 self.r.choice(SIZES), self.r.choice(SIZES)]
        name = self.g.fresh("x")
        self.g.args.append((name, self.random_format(shape)))
        self.live.append(name)
        return name

    def pick(self, rank=None, pred=None):
        cands = [v for v in self.live
                 if (rank is None or self.ty(v).rank() == rank) and
                 (pred is None or pred(self.ty(v)))]
        if not cands:
            return None
        # Mostly the newest value, so that graphs grow deep, not only wide.
        if self.r.random() < 0.6:
            return cands[-1]
        return self.r.choice(cands)

    def padding(self, limits, four=True):
        """2 values (symmetric) or 4 (top, left, bottom, right)."""
        ph, pw = limits
        if four and self.r.random() < 0.3:
            t, b = self.r.randint(0, ph), self.r.randint(0, ph)
            l, rr = self.r.randint(0, pw), self.r.randint(0, pw)
            return [t, l, b, rr], (t, b, l, rr)
        h, w = self.r.randint(0, ph), self.r.randint(0, pw)
        return [h, w], (h, h, w, w)

    @staticmethod
    def arr(values):
        return "array<i64: " + ", ".join(str(v) for v in values) + ">"

    # -- ops ------------------------------------------------------------ #
    def conv2d(self):
        x = self.pick(4)
        n, c, h, w = self.ty(x).shape
        divisors = [d for d in range(1, c + 1) if c % d == 0]
        groups = self.r.choice(divisors) if self.r.random() < 0.4 else 1
        out = groups * self.r.randint(1, max(1, 8 // groups))
        kh, kw = self.r.randint(1, 3), self.r.randint(1, 3)
        sh, sw = self.r.randint(1, 3), self.r.randint(1, 2)
        dh, dw = self.r.choice([1, 1, 2]), self.r.choice([1, 1, 2])
        pads, (pt, pb, pl, pr) = self.padding((2, 2))
        oh = (h + pt + pb - dh * (kh - 1) - 1) // sh + 1
        ow = (w + pl + pr - dw * (kw - 1) - 1) // sw + 1
        if h + pt + pb - dh * (kh - 1) - 1 < 0 or \
                w + pl + pr - dw * (kw - 1) - 1 < 0:
            return None
        layer = self.layer("conv")
        wv = self.param(layer, "weight", [out, c // groups, kh, kw])
        operands = [x, wv]
        if self.r.random() < 0.5:
            operands.append(self.param(layer, "bias", [out], False))
        attrs = [f"stride = {self.arr([sh, sw])}",
                 f"padding = {self.arr(pads)}",
                 f"dilation = {self.arr([dh, dw])}"]
        if groups != 1:
            attrs.append(f"groups = {groups} : i64")
        self.r.shuffle(attrs)
        t = joined([n, out, oh, ow], [self.ty(v) for v in operands])
        return self.add_op("conv2d", operands, [t], ", ".join(attrs))[0]

    def batch_norm(self, accepts=None):
        """A batch_norm of a 4-D value (one that `accepts` its type, when
        given), or None when there is none."""
        x = self.pick(4, accepts)
        if x is None:
            return None
        c = self.ty(x).shape[1]
        layer = self.layer("bn")
        ps = [self.param(layer, s, [c], False)
              for s in ("weight", "bias", "running_mean", "running_var")]
        eps = self.r.choice(["1.0e-05", "1.0e-03", "1.000000e-01"])
        t = joined(self.ty(x).shape, [self.ty(x)])
        return self.add_op("batch_norm", [x] + ps, [t],
                           f"eps = {eps} : f64")[0]

    def relu(self):
        x = self.pick()
        return self.add_op("relu", [x], [joined(self.ty(x).shape,
                                                [self.ty(x)])])[0]

    # The unary elementwise ops beyond ResNet, with their attributes.
    ELTWISE = [("sigmoid", ""), ("silu", ""), ("hardswish", ""),
               ("hardsigmoid", ""), ("hardsigmoid", "alpha = 2.000000e-01 : f64"),
               ("clamp", "max = 6.000000e+00 : f64, min = 0.000000e+00 : f64"),
               ("clamp", "min = -5.000000e-01 : f64"),
               ("clamp", "max = 1.000000e+00 : f64"),
               ("gelu", ""), ("gelu", 'approximate = "tanh"')]

    def eltwise(self):
        x = self.pick()
        kind, attrs = self.r.choice(self.ELTWISE)
        return self.add_op(kind, [x], [joined(self.ty(x).shape,
                                              [self.ty(x)])], attrs)[0]

    def add(self, kind="add"):
        """add, mul, sub or div with broadcasting. div's divisor is always a
        parameter (the same in both builds), so that a divisor near 0 cannot
        turn the builds' last-bit differences into a mismatch."""
        a = self.pick()
        ta = self.ty(a)
        choice = 0.5 if kind == "div" else self.r.random()
        if kind == "div" and ta.rank() != 4:
            return None
        b = None
        if choice < 0.4:
            b = self.pick(pred=lambda t: t.shape == ta.shape and True)
            if b == a and self.r.random() < 0.5:
                b = None
        if b is None and choice < 0.7 and ta.rank() == 4:
            n, c, h, w = ta.shape
            shape = self.r.choice([[c, 1, 1], [1, c, 1, 1], [1], [w],
                                   [1, 1, h, w], [n, 1, h, 1]])
            b = self.param(self.layer("add"), "bias", shape,
                           formatted=len(shape) == 4)
        if b is None:
            # A second branch from the same tensor.
            b = self.relu_of(a)
        tb = self.ty(b)
        rank = max(ta.rank(), tb.rank())
        sa = [1] * (rank - ta.rank()) + ta.shape
        sb = [1] * (rank - tb.rank()) + tb.shape
        if any(x != y and x != 1 and y != 1 for x, y in zip(sa, sb)):
            return None
        shape = [max(x, y) if 1 in (x, y) else x for x, y in zip(sa, sb)]
        ops = [a, b] if kind == "div" or self.r.random() < 0.5 else [b, a]
        t = joined(shape, [self.ty(v) for v in ops])
        return self.add_op(kind, ops, [t])[0]

    def relu_of(self, x):
        return self.add_op("relu", [x], [joined(self.ty(x).shape,
                                                [self.ty(x)])])[0]

    def pool(self, kind):
        x = self.pick(4)
        n, c, h, w = self.ty(x).shape
        kh, kw = self.r.randint(1, 3), self.r.randint(1, 3)
        dil = [1, 1]
        if kind != "avg_pool2d" and self.r.random() < 0.3:
            dil = [self.r.randint(1, 2), self.r.randint(1, 2)]
        eh, ew = dil[0] * (kh - 1) + 1, dil[1] * (kw - 1) + 1
        if eh > h + 2 * (eh // 2) or ew > w + 2 * (ew // 2):
            return None
        empty_stride = self.r.random() < 0.2
        sh, sw = (kh, kw) if empty_stride else (self.r.randint(1, 3),
                                                self.r.randint(1, 3))
        pads, (pt, pb, pl, pr) = self.padding((kh // 2, kw // 2),
                                              four=kind == "avg_pool2d")
        ceil = self.r.random() < 0.4

        def size(i, k, s, b, e, d):
            span = i + b + e - d * (k - 1) - 1 + (s - 1 if ceil else 0)
            if span < 0:
                return None
            o = span // s + 1
            if ceil and (o - 1) * s >= i + b:
                o -= 1
            return o

        oh = size(h, kh, sh, pt, pb, dil[0])
        ow = size(w, kw, sw, pl, pr, dil[1])
        if not oh or not ow or oh < 1 or ow < 1:
            return None

        def covered(o_size, i, k, s, b, d):
            # Every window must tap an input element (a dilated window can
            # fall between them); the verifier rejects it otherwise.
            return all(any(0 <= o * s - b + j * d < i for j in range(k))
                       for o in range(o_size))

        if not covered(oh, h, kh, sh, pt, dil[0]) or \
                not covered(ow, w, kw, sw, pl, dil[1]):
            return None
        attrs = [f"kernel_size = {self.arr([kh, kw])}",
                 "stride = array<i64>" if empty_stride
                 else f"stride = {self.arr([sh, sw])}",
                 f"padding = {self.arr(pads)}"]
        if ceil:
            attrs.append("ceil_mode = true")
        if kind != "avg_pool2d" and dil != [1, 1]:
            attrs.append(f"dilation = {self.arr(dil)}")
        if kind == "avg_pool2d" and self.r.random() < 0.5:
            attrs.append("count_include_pad = false")
        self.r.shuffle(attrs)
        t = joined([n, c, oh, ow], [self.ty(x)])
        if kind == "max_pool2d_with_indices":
            names = self.add_op(kind, [x], [t, IndexType(t)], ", ".join(attrs))
            return names[0]
        return self.add_op(kind, [x], [t], ", ".join(attrs))[0]

    def adaptive(self):
        x = self.pick(4)
        n, c, h, w = self.ty(x).shape
        oh, ow = self.r.randint(1, h + 1), self.r.randint(1, w + 1)
        t = joined([n, c, oh, ow], [self.ty(x)])
        return self.add_op("adaptive_avg_pool2d", [x], [t],
                           f"output_size = {self.arr([oh, ow])}")[0]

    def flatten(self):
        x = self.pick(4)
        n, c, h, w = self.ty(x).shape
        return self.add_op("flatten", [x], [TType([n, c * h * w])],
                           "start_dim = 1 : i64")[0]

    def reshape(self):
        x = self.pick()
        t = self.ty(x)
        count = t.numel()
        if t.rank() == 4 and self.r.random() < 0.5:
            shape = [t.shape[0], count // t.shape[0]]
        else:
            n = t.shape[0]
            rest = count // n
            divs = [d for d in range(1, rest + 1) if rest % d == 0]
            c = self.r.choice(divs)
            hw = rest // c
            hd = [d for d in range(1, hw + 1) if hw % d == 0]
            hh = self.r.choice(hd)
            shape = [n, c, hh, hw // hh]
        return self.add_op("reshape", [x], [TType(shape)])[0]

    def linear(self):
        x = self.pick(2)
        if x is None:
            x = self.flatten()
        n, k = self.ty(x).shape
        m = self.r.randint(1, 8)
        layer = self.layer("fc")
        operands = [x, self.param(layer, "weight", [m, k], False)]
        if self.r.random() < 0.6:
            operands.append(self.param(layer, "bias", [m], False))
        return self.add_op("linear", operands, [TType([n, m])])[0]

    def cat(self, dim=0):
        """cat along `dim` (the batch by default: the plan's gather)."""
        a = self.pick(4)
        ta = self.ty(a)
        b = self.pick(4, lambda t: all(t.shape[d] == ta.shape[d]
                                       for d in range(4) if d != dim))
        if b is None or self.r.random() < 0.3:
            b = self.relu_of(a)
        ops = [a, b] if self.r.random() < 0.5 else [b, a]
        if self.r.random() < 0.3:
            ops.append(a)
        shape = list(ta.shape)
        shape[dim] = sum(self.ty(v).shape[dim] for v in ops)
        t = joined(shape, [self.ty(v) for v in ops])
        return self.add_op("cat", ops, [t],
                           f"dim = {dim} : i64" if dim else "")[0]

    def chunk(self, dim=0):
        """chunk along `dim` (the batch by default: the plan's scatter)."""
        x = self.pick(4, lambda t: t.shape[dim] >= 2)
        if x is None:
            return None
        t = self.ty(x)
        chunks = self.r.randint(2, t.shape[dim])
        step = -(-t.shape[dim] // chunks)
        sizes = []
        begin = 0
        while begin < t.shape[dim]:
            sizes.append(min(step, t.shape[dim] - begin))
            begin += step
        types = [joined(t.shape[:dim] + [s] + t.shape[dim + 1:], [t])
                 for s in sizes]
        names = self.add_op("chunk", [x], types, f"chunks = {chunks} : i64" +
                            (f", dim = {dim} : i64" if dim else ""))
        self.live.extend(names[1:])
        return names[0]

    def permute(self, keep_batch=False):
        """A random permutation (of the dims after the first with
        `keep_batch`): a view where the permuted strides are a memory format
        (what the layout passes make it), else a contiguous copy."""
        x = self.pick()
        t = self.ty(x)
        if t.rank() < (3 if keep_batch else 2):
            return None
        perm = list(range(t.rank()))
        if keep_batch:
            rest = perm[1:]
            self.r.shuffle(rest)
            perm = [0] + rest
        else:
            self.r.shuffle(perm)
        shape = [t.shape[d] for d in perm]
        strides = t.strides or contiguous_strides(t.shape)
        view = [strides[d] for d in perm]
        result = TType(shape)
        if same_bytes(shape, view, contiguous_strides(shape)):
            result = TType(shape)
        elif len(shape) == 4 and same_bytes(shape, view,
                                            channels_last_strides(shape)):
            result = TType(shape, channels_last_strides(shape))
        return self.add_op("permute", [x], [result],
                           f"dims = {self.arr(perm)}")[0]

    def slice(self, first_dim=0, steps=(1, 1, 2, 3)):
        x = self.pick()
        t = self.ty(x)
        if t.rank() <= first_dim:
            return None
        dim = self.r.randrange(first_dim, t.rank())
        size = t.shape[dim]
        start = self.r.randint(0, size - 1)
        end = self.r.randint(start + 1, size)
        step = self.r.choice(steps)
        shape = list(t.shape)
        shape[dim] = (end - start + step - 1) // step
        return self.add_op(
            "slice", [x], [joined(shape, [t])],
            f"dim = {dim} : i64, end = {end} : i64, start = {start} : i64, "
            f"step = {step} : i64")[0]

    def channel_shuffle(self):
        """aten::channel_shuffle, or the reshape - permute - reshape an
        exporter writes for it (canonicalized to it)."""
        x = self.pick(4)
        t = self.ty(x)
        n, c, h, w = t.shape
        groups = self.r.choice([g for g in range(1, c + 1) if c % g == 0])
        if self.r.random() < 0.5:
            return self.add_op("channel_shuffle", [x], [joined(t.shape, [t])],
                               f"groups = {groups} : i64")[0]
        (split,) = self.add_op("reshape", [x],
                               [TType([n, groups, c // groups, h, w])])
        (swapped,) = self.add_op("permute", [split],
                                 [TType([n, c // groups, groups, h, w])],
                                 f"dims = {self.arr([0, 2, 1, 3, 4])}")
        return self.add_op("reshape", [swapped], [TType(t.shape)])[0]

    def layer_norm(self):
        x = self.pick()
        t = self.ty(x)
        d = t.shape[-1]
        layer = self.layer("ln")
        operands, roles = [x], [""]
        for role in ("weight", "bias"):
            if self.r.random() < 0.7:
                operands.append(self.param(layer, role, [d], False))
                roles.append(role)
        eps = self.r.choice(["1.0e-05", "1.0e-03", "1.000000e-01"])
        return self.add_op("layer_norm", operands, [joined(t.shape, [t])],
                           f"eps = {eps} : f64, normalized_shape = "
                           f"{self.arr([d])}", extra={"roles": roles})[0]

    def softmax(self):
        x = self.pick()
        t = self.ty(x)
        dim = self.r.randrange(t.rank())
        return self.add_op("softmax", [x], [joined(t.shape, [t])],
                           f"dim = {dim} : i64")[0]

    def conversion(self):
        x = self.pick()
        t = self.ty(x)
        kind = self.r.choice(["clone", "contiguous", "to"])
        fmt = self.r.choice(["contiguous", "channels_last", "preserve"])
        if kind == "contiguous" and fmt == "preserve":
            fmt = "contiguous"
        if t.rank() != 4 and fmt == "channels_last":
            fmt = "contiguous"
        attrs = ""
        if fmt != ("contiguous" if kind == "contiguous" else "preserve"):
            attrs = f"memory_format = #memfmt.memory_format<{fmt}>"
        if fmt == "preserve":
            result = TType(t.shape, t.strides)
        else:
            result = in_format(t, fmt)
        return self.add_op(kind, [x], [result], attrs)[0]

    # -- the graph ------------------------------------------------------ #
    def grow(self, weights, num_ops):
        """Adds up to `num_ops` ops, each drawn from `weights` ((maker,
        weight) pairs; a maker returns the new value, or None when it cannot
        apply), giving up after 10 tries per op."""
        fns = [f for f, w in weights for _ in range(w)]
        made = 0
        attempts = 0
        while made < num_ops and attempts < num_ops * 10:
            attempts += 1
            f = self.r.choice(fns)
            try:
                v = f()
            except (IndexError, ValueError, TypeError):
                v = None
            if v is None:
                continue
            # Keep tensors small: nothing above 2048 elements.
            if self.ty(v).numel() > 2048:
                self.drop_last()
                continue
            self.live.append(v)
            made += 1

    def build(self, num_ops):
        self.input()
        if self.r.random() < 0.3:
            self.input()
        weights = [(self.conv2d, 6), (self.batch_norm, 3), (self.relu, 3),
                   (self.add, 4), (lambda: self.pool("max_pool2d"), 2),
                   (lambda: self.pool("max_pool2d_with_indices"), 1),
                   (lambda: self.pool("avg_pool2d"), 2), (self.adaptive, 1),
                   (self.flatten, 1), (self.reshape, 1), (self.linear, 1),
                   (self.cat, 1), (self.chunk, 1), (self.conversion, 2),
                   (self.eltwise, 2), (lambda: self.add("mul"), 2),
                   (lambda: self.add("sub"), 1), (lambda: self.add("div"), 1),
                   (self.permute, 2), (self.slice, 1),
                   (self.channel_shuffle, 1), (self.layer_norm, 1),
                   (self.softmax, 1),
                   (self.softmax, 1)]
        self.grow(weights, num_ops)
        produced = [v for v in self.live if v not in dict(self.g.args)]
        if not produced:
            produced = [self.relu_of(self.live[0])]
        # Every value nothing consumes is an output (the newest three), so
        # that no branch is dead; sometimes an inner value too.
        used = used_names(self.g)
        outs = [v for v in produced if v not in used][-3:] or [produced[-1]]
        if len(produced) > 1 and self.r.random() < 0.2:
            other = self.r.choice(produced[:-1])
            if other not in outs:
                outs.append(other)
        self.g.outputs = outs
        remove_dead(self.g)
        return self.g

    def drop_last(self):
        # Drop the op just made and the weights it made.
        op = self.g.ops.pop()
        while self.g.ops and self.g.ops[-1].kind == "weight" and \
                self.g.ops[-1].results[0][0] not in used_names(self.g):
            self.g.ops.pop()
        for n, _ in op.results:
            if n in self.live:
                self.live.remove(n)


class IndexType(TType):
    """The i64 indices result of max_pool2d_with_indices."""

    def __init__(self, like):
        super().__init__(like.shape, like.strides)

    def text(self):
        return super().text().replace("xf32", "xi64")


def used_names(g):
    used = set(g.outputs)
    for op in g.ops:
        used.update(op.operands)
    return used


def remove_dead(g):
    """Drops ops none of whose results is used (weights included)."""
    changed = True
    while changed:
        changed = False
        used = used_names(g)
        for op in reversed(g.ops):
            names = [n for n, _ in op.results]
            # Multi-result ops are referenced as %name#i.
            if not any(n in used for n in names):
                g.ops.remove(op)
                changed = True
                break
    used = used_names(g)
    g.args = [(n, t) for n, t in g.args if n in used]


def generate(seed, index):
    rng = random.Random(f"{seed}:{index}")
    gen = Generator(rng, f"g{index}_")
    return gen.build(rng.randint(3, 10))


# ===---------------------------------------------------------------------=== #
# Compiling, running, comparing
# ===---------------------------------------------------------------------=== #


class Checker:
    def __init__(self, bindir, workdir, seed):
        self.bin = os.path.abspath(bindir)
        self.work = workdir
        self.seed = seed

    def tool(self, name):
        return os.path.join(self.bin, name)

    def sh(self, args, timeout=300):
        try:
            return subprocess.run(args, capture_output=True, text=True,
                                  timeout=timeout)
        except subprocess.TimeoutExpired:
            return subprocess.CompletedProcess(
                args, -9, "", f"{args[0]}: timed out after {timeout} s")

    def fresh_source(self, tag, text):
        """An empty work directory for `tag` holding `text` as graph.mlir:
        (the directory, the file)."""
        d = os.path.join(self.work, tag)
        shutil.rmtree(d, ignore_errors=True)
        os.makedirs(d)
        src = os.path.join(d, "graph.mlir")
        with open(src, "w") as f:
            f.write(text)
        return d, src

    def check_text(self, text, tag, num_outputs, input_format="contiguous"):
        """Compiles and runs `text` both ways; returns a list of problems
        (empty when everything agrees) and per-output errors."""
        d, src = self.fresh_source(tag, text)
        problems = []
        outputs = {}
        builds = (("contiguous", "contiguous", []),
                  ("channels-last", "channels-last", []),
                  ("tiled", "channels-last", ["--sub-batch", "1"]))
        for name, fmt, extra in builds:
            out = os.path.join(d, name)
            r = self.sh([self.tool("memfmt-compile"), src, "--memory-format",
                         fmt, "--input-format", input_format, *extra,
                         "--weights", f"synthetic:{self.seed}", "-o", out])
            if r.returncode != 0:
                kind = "invalid" if "error:" in r.stderr and \
                    "internal error" not in r.stderr and \
                    "graph.mlir:" in r.stderr else "compile"
                problems.append((kind, f"memfmt-compile --memory-format {fmt}"
                                 f" {' '.join(extra)} exited {r.returncode}:"
                                 f"\n{r.stderr[-3000:]}"))
                return problems
            npy = os.path.join(d, f"{name}.npy")
            r = self.sh([self.tool("memfmt-run"), out, "--input",
                         f"random:{self.seed}", "--check", "--output", npy])
            if r.returncode != 0 or "check      PASS" not in r.stdout:
                problems.append(("check", f"memfmt-run --check ({name}) "
                                 f"exited {r.returncode}:\n"
                                 f"{(r.stdout + r.stderr)[-3000:]}"))
                return problems
            outputs[name] = self.load_outputs(npy, num_outputs)
        for name in ("channels-last", "tiled"):
            problems += self.compare(outputs[name], outputs["contiguous"],
                                     name)
        problems += self.check_rules(os.path.join(d, "channels-last"))
        return problems

    @staticmethod
    def compare(outputs, reference, name):
        """L8 problems of `outputs` against the NCHW build's `reference`."""
        problems = []
        for i, (a, b) in enumerate(zip(outputs, reference)):
            if a.shape != b.shape:
                problems.append(("L8", f"{name} output {i}: shape {a.shape} "
                                 f"vs {b.shape}"))
                continue
            # Non-finite values must match exactly (NaN where NaN, inf of
            # the same sign); the finite ones within the tolerance.
            finite = np.isfinite(a) & np.isfinite(b)
            same_special = np.array_equal(np.isnan(a), np.isnan(b)) and \
                np.array_equal(np.where(np.isinf(a), a, 0),
                               np.where(np.isinf(b), b, 0))
            scale = float(np.max(np.abs(b[finite]))) if finite.any() else 0.0
            diff = float(np.max(np.abs(a[finite] - b[finite]))) \
                if finite.any() else 0.0
            if not same_special or diff > L8_TOLERANCE * max(scale, 1e-30):
                problems.append(("L8", f"{name} output {i}: max|{name} - "
                                 f"nchw| = {diff:.3e}, max|nchw| = "
                                 f"{scale:.3e}"))
        return problems

    def load_outputs(self, npy, count):
        if count == 1:
            return [np.load(npy)]
        stem = npy[:-4]
        return [np.load(f"{stem}.output_{i}.npy") for i in range(count)]

    def check_rules(self, model_dir):
        problems = []
        r = self.sh([self.tool("memfmt-opt"),
                     os.path.join(model_dir, "model.mlir"),
                     "--memfmt-verify-layouts=contiguous-operands=true",
                     "-o", os.devnull])
        if r.returncode != 0:
            problems.append(("rules", "memfmt-verify-layouts failed on the "
                             f"channels-last model.mlir:\n{r.stderr[-2000:]}"))
        with open(os.path.join(model_dir, "report.json")) as f:
            report = json.load(f)
        for conv in report.get("conversions", []):
            if conv.get("kind") != "runtime":
                continue
            reason = conv.get("reason", "")
            if not any(key in reason for key in CONVERSION_REASONS):
                problems.append(("rules", "a runtime conversion without a "
                                 f"rule's reason: {json.dumps(conv)}"))
            shape = conv.get("shape", [])
            if len(shape) == 4 and TType(shape).is_l3():
                problems.append(("rules", "a runtime conversion of a tensor "
                                 "that is both contiguous and channels-last "
                                 f"(L3 says free): {json.dumps(conv)}"))
        return problems


def count_outputs(text):
    m = re.search(r"^func\.func @\w+\((.*)\) -> \((.*)\) \{$", text, re.M)
    if not m:
        m1 = re.search(r"^func\.func @\w+\(.*\) -> (tensor<[^{]*>) \{$",
                       text, re.M)
        return 1 if m1 else 0
    return len(re.findall(r"tensor<", m.group(2)))


# ===---------------------------------------------------------------------=== #
# Reduction
# ===---------------------------------------------------------------------=== #


def cut(g, op_index):
    """`g` with op `op_index` replaced by new arguments for its results."""
    import copy
    h = copy.deepcopy(g)
    op = h.ops.pop(op_index)
    if op.kind == "weight":
        return None
    renames = {}
    for i, (name, t) in enumerate(op.results):
        if isinstance(t, IndexType):
            continue
        arg = h.fresh("r")
        h.args.append((arg, TType(t.shape, t.strides)))
        renames[name] = arg
    for o in h.ops:
        if any(v in [n for n, _ in op.results] and v not in renames
               for v in o.operands):
            return None
        o.operands = [renames.get(v, v) for v in o.operands]
    if any(v in [n for n, _ in op.results] and v not in renames
           for v in h.outputs):
        return None
    h.outputs = [renames.get(v, v) for v in h.outputs]
    remove_dead(h)
    return h


def bypass(g, op_index):
    """The graphs `g` with op `op_index` bypassed: its one result replaced
    by an operand of the same type (an add by either addend, a relu by its
    input); none where no operand has that type."""
    import copy
    op = g.ops[op_index]
    if op.kind == "weight" or len(op.results) != 1:
        return []
    name, t = op.results[0]
    types = g.types()
    graphs = []
    for keep in dict.fromkeys(v for v in op.operands if types[v] == t):
        h = copy.deepcopy(g)
        h.ops.pop(op_index)
        for o in h.ops:
            o.operands = [keep if v == name else v for v in o.operands]
        h.outputs = [keep if v == name else v for v in h.outputs]
        remove_dead(h)
        graphs.append(h)
    return graphs


def reduce_graph(g, fails):
    """Greedy 1-minimal reduction: cut or bypass ops and drop outputs while
    `fails`."""
    changed = True
    while changed:
        changed = False
        if len(g.outputs) > 1:
            for i in range(len(g.outputs)):
                import copy
                h = copy.deepcopy(g)
                h.outputs.pop(i)
                remove_dead(h)
                if fails(h):
                    g, changed = h, True
                    break
            if changed:
                continue
        for i in reversed(range(len(g.ops))):
            for h in bypass(g, i) + [cut(g, i)]:
                if h is not None and h.ops and fails(h):
                    g, changed = h, True
                    break
            if changed:
                break
    return g


# ===---------------------------------------------------------------------=== #
# Gradients (grad mode): training steps compiled NCHW and channels-last
# ===---------------------------------------------------------------------=== #

# Tolerance of a gradient comparison, per tensor:
#   max|a - b| <= GRAD_TOLERANCE * max(max|b|, tiny),
#   tiny = the largest max|b| over the graph's gradients (for the loss, 0).
# The two builds (and the fast and reference kernels) sum in different
# orders: a weight's gradient is a sum over N*H*W (up to 2048 here) products
# and a chain of backward ops repeats such sums, so f32 rounding (6e-8 a
# step) grows to ~1e-6..1e-5 of the values -- the forward's L8 bound of
# 1e-5 would be too tight; 1e-4 still catches a wrong index, a lost term or
# a stale layout (errors of the order of the values themselves).
# tiny: a tensor whose true value is zero comes out as rounding noise whose
# size follows the gradients summed, not the result -- the bias of a conv
# that a training-mode batch norm follows (its gradient cancels exactly in
# real arithmetic), a batch norm over a channel that is constant (noise
# amplified by 1/sqrt(var + eps), up to 316 for eps 1e-5). Measured: such
# tensors reach ~1e-5 of the graph's largest gradient, so they are compared
# against that (an absolute bound of 1e-4 of it); all-zero gradients (K = 1:
# the loss is 0) must be zero in both.
GRAD_TOLERANCE = 1e-4
# Class counts K of the logits; K = 1 (loss 0, all gradients 0) is the edge.
CLASSES = [1, 2, 2, 2, 3, 3, 4, 4, 5, 5, 6, 7, 8, 10]
NON_TRAINABLE = ("running_mean", "running_var")


class GradGenerator(Generator):
    """Random graphs over the ops with a VJP only (conv2d, batch_norm, relu,
    the eltwise functions (sigmoid, silu, hardswish, hardsigmoid, clamp,
    gelu), add, mul, sub and div with broadcasting (a broadcast operand's
    gradient is summed to its shape), cat, chunk, slice (any step), permute
    and channel_shuffle (along dims after the batch), layer_norm (over the
    last dim, with and without weight and bias), softmax (along any dim),
    max_pool2d
    (+with_indices), avg_pool2d, adaptive_avg_pool2d, flatten, reshape,
    linear, clone, contiguous),
    every input with the same batch N, ending in one logits tensor [N, K]:
    each value nothing consumes goes through a head (pool / flatten /
    reshape, then linear to K) and the heads are summed, so every branch,
    and so every weight, reaches the loss."""

    def __init__(self, rng, prefix):
        super().__init__(rng, prefix)
        self.n = rng.choice(BATCH)
        self.k = rng.choice(CLASSES)

    def input(self):
        shape = [self.n, self.r.choice(CHANNELS), self.r.choice(SIZES),
                 self.r.choice(SIZES)]
        name = self.g.fresh("x")
        self.g.args.append((name, self.random_format(shape)))
        self.live.append(name)
        return name

    def batch_norm(self, accepts=None):
        # Training-mode batch norm needs more than one value per channel
        # (the running variance divides by N*H*W - 1; PyTorch refuses too).
        return super().batch_norm(
            lambda t: t.shape[0] * t.shape[2] * t.shape[3] > 1)

    def conversion(self):
        x = self.pick()
        t = self.ty(x)
        kind = self.r.choice(["clone", "contiguous"])
        fmt = self.r.choice(["contiguous", "channels_last", "preserve"])
        if kind == "contiguous" and fmt == "preserve":
            fmt = "contiguous"
        if t.rank() != 4 and fmt == "channels_last":
            fmt = "contiguous"
        attrs = ""
        if fmt != ("contiguous" if kind == "contiguous" else "preserve"):
            attrs = f"memory_format = #memfmt.memory_format<{fmt}>"
        result = TType(t.shape, t.strides) if fmt == "preserve" \
            else in_format(t, fmt)
        return self.add_op(kind, [x], [result], attrs)[0]

    # Data movement that keeps the batch dim (every value keeps N): cat and
    # chunk along the channels, slices after the batch dim, permutes that
    # leave the batch first.
    def cat(self):
        return super().cat(dim=1)

    def chunk(self):
        return super().chunk(dim=1)

    def slice(self):
        return super().slice(first_dim=1)

    def permute(self):
        return super().permute(keep_batch=True)

    def head(self, v):
        """`v` to logits [N, K]."""
        t = self.ty(v)
        if t.rank() == 4:
            r = self.r.random()
            if r < 0.4:
                n, c, h, w = t.shape
                size = [1, 1] if self.r.random() < 0.6 else \
                    [self.r.randint(1, h + 1), self.r.randint(1, w + 1)]
                v = self.add_op("adaptive_avg_pool2d", [v],
                                [joined([n, c] + size, [t])],
                                f"output_size = {self.arr(size)}")[0]
            if r < 0.8:
                n, c, h, w = self.ty(v).shape
                v = self.add_op("flatten", [v], [TType([n, c * h * w])],
                                "start_dim = 1 : i64")[0]
            else:
                v = self.add_op("reshape", [v],
                                [TType([t.shape[0], t.numel() // t.shape[0]])])[0]
        n, f = self.ty(v).shape
        layer = self.layer("fc")
        operands = [v, self.param(layer, "weight", [self.k, f], False)]
        if self.r.random() < 0.6:
            operands.append(self.param(layer, "bias", [self.k], False))
        return self.add_op("linear", operands, [TType([n, self.k])])[0]

    def build(self, num_ops):
        self.input()
        if self.r.random() < 0.3:
            self.input()
        weights = [(self.conv2d, 6), (self.batch_norm, 3), (self.relu, 3),
                   (self.eltwise, 2), (self.add, 3),
                   (lambda: self.add("mul"), 2), (lambda: self.add("sub"), 1),
                   (lambda: self.add("div"), 1), (self.cat, 1),
                   (self.chunk, 1), (self.slice, 1), (self.permute, 1),
                   (self.channel_shuffle, 1), (self.layer_norm, 1),
                   (self.softmax, 1),
                   (lambda: self.pool("max_pool2d"), 2),
                   (lambda: self.pool("max_pool2d_with_indices"), 1),
                   (lambda: self.pool("avg_pool2d"), 2), (self.adaptive, 1),
                   (self.flatten, 1), (self.reshape, 1), (self.linear, 1),
                   (self.conversion, 2)]
        self.grow(weights, num_ops)
        produced = [v for v in self.live if v not in dict(self.g.args)]
        used = used_names(self.g)
        leaves = [v for v in produced if v not in used][-3:] or \
            [self.live[0]]
        heads = [self.head(v) for v in leaves]
        out = heads[0]
        for h in heads[1:]:
            out = self.add_op("add", [out, h], [TType(self.ty(out).shape)])[0]
        self.g.outputs = [out]
        remove_dead(self.g)
        return self.g


def generate_grad(seed, index):
    rng = random.Random(f"grad:{seed}:{index}")
    gen = GradGenerator(rng, f"g{index}_")
    return gen.build(rng.randint(3, 10))


def trainable_weights(text):
    """The memfmt.weight names of `text` that get a gradient."""
    names = re.findall(r'memfmt\.weight "([^"]+)"', text)
    return [n for n in dict.fromkeys(names)
            if not n.endswith(NON_TRAINABLE)]


def logits_classes(text):
    m = re.search(r"^func\.func @\w+\(.*\) -> \(?tensor<(\d+)x(\d+)xf32",
                  text, re.M)
    return int(m.group(2)) if m else 1


def compare(a, b, tiny):
    """(ok, max|a - b|, allowed) with GRAD_TOLERANCE; a and b finite."""
    if a.shape != b.shape:
        return False, float("inf"), 0.0
    scale = float(np.max(np.abs(b))) if b.size else 0.0
    diff = float(np.max(np.abs(a.astype(np.float64) - b))) if b.size \
        else 0.0
    allowed = GRAD_TOLERANCE * max(scale, tiny)
    return diff <= allowed, diff, allowed


class GradChecker(Checker):
    def __init__(self, bindir, pythondir, workdir, seed):
        super().__init__(bindir, workdir, seed)
        self.python = os.path.abspath(pythondir)
        self.worst = (0.0, "")   # largest diff / allowed seen in a pass

    def execute(self, dirs, inputs, out, kernels):
        """Runs each model of `dirs` on `inputs` (an .npz) in a subprocess
        with MEMFMT_KERNELS=`kernels` (read when the runtime's context is
        created), one thread; the outputs go to `out` (an .npz)."""
        env = dict(os.environ, MEMFMT_KERNELS=kernels, MEMFMT_NUM_THREADS="1",
                   OMP_NUM_THREADS="1")
        args = [sys.executable, os.path.abspath(__file__), "grad-exec",
                "--python", self.python, "--inputs", inputs, "--out",
                out] + dirs
        try:
            return subprocess.run(args, capture_output=True, text=True,
                                  timeout=300, env=env)
        except subprocess.TimeoutExpired:
            return subprocess.CompletedProcess(args, -9, "", "timed out")

    def check_grad(self, text, tag, input_format="contiguous", data_seed=0):
        """Compiles `text` as a training step with gradients, NCHW and
        channels-last, runs both (and the channels-last one with the
        reference kernels) on the same x and y; returns the problems."""
        d, src = self.fresh_source(tag, text)
        problems = []
        dirs = {}
        # Each build's directory name is its key in `dirs` and `results`.
        builds = (("contiguous", "contiguous", []),
                  ("channels-last", "channels-last", []),
                  ("unfused", "channels-last", ["--fusion=false"]))
        for name, fmt, flags in builds:
            out = os.path.join(d, name)
            # --gradients: no SGD update (lr 0 too, so nothing moves).
            r = self.sh([self.tool("memfmt-compile"), src, "--train",
                         "--gradients", "--lr", "0", "--momentum", "0",
                         "--weight-decay", "0", "--memory-format", fmt,
                         "--input-format", input_format,
                         "--weights", f"synthetic:{self.seed}", "-o", out]
                        + flags)
            if r.returncode != 0:
                # "invalid": the compiler refused the graph with a located
                # error about an op of the graph (a generator bug); an error
                # about an op the compiler made (a *_backward op, a
                # conversion it inserted) is the compiler's: "compile".
                ops = set(re.findall(r"'memfmt\.(\w+)' op", r.stderr))
                kind = "invalid" if "error:" in r.stderr and \
                    "internal error" not in r.stderr and \
                    "graph.mlir:" in r.stderr and \
                    all(f"memfmt.{o} " in text for o in ops) else "compile"
                problems.append((kind, f"memfmt-compile --train --gradients "
                                 f"--memory-format {fmt} {' '.join(flags)} "
                                 f"exited {r.returncode}:\n"
                                 f"{r.stderr[-3000:]}"))
                return problems
            dirs[name] = out
        # The same x (N(0, 1)) and y (classes) for every run.
        with open(os.path.join(dirs["contiguous"], "manifest.json")) as f:
            manifest = json.load(f)
        rng = np.random.default_rng([self.seed, data_seed])
        k = logits_classes(text)
        arrays = {}
        for i, t in enumerate(manifest["inputs"]):
            if t["dtype"] == "i64":
                arrays[f"in{i}"] = rng.integers(0, k, size=t["shape"])
            else:
                arrays[f"in{i}"] = rng.standard_normal(
                    t["shape"]).astype(np.float32)
        inputs = os.path.join(d, "inputs.npz")
        np.savez(inputs, **arrays)
        results = {}
        runs = [("fast", [dirs["contiguous"], dirs["channels-last"],
                          dirs["unfused"]]),
                ("reference", [dirs["channels-last"]])]
        for kernels, ds in runs:
            out = os.path.join(d, f"{kernels}.npz")
            r = self.execute(ds, inputs, out, kernels)
            if r.returncode != 0:
                problems.append(("run", f"running {', '.join(ds)} "
                                 f"(MEMFMT_KERNELS={kernels}) exited "
                                 f"{r.returncode}:\n"
                                 f"{(r.stdout + r.stderr)[-3000:]}"))
                return problems
            with np.load(out) as z:
                for key in z.files:
                    i, name = key.split(":", 1)
                    fmt = os.path.basename(ds[int(i)])
                    results.setdefault((fmt, kernels), {})[name] = z[key]
        nchw = results[("contiguous", "fast")]
        cl = results[("channels-last", "fast")]
        unfused = results[("unfused", "fast")]
        ref = results[("channels-last", "reference")]
        # Every trainable weight has its gradient, and nothing else is out.
        expected = ["loss"] + [f"grad.{n}" for n in trainable_weights(text)]
        for what, res in (("NCHW", nchw), ("channels-last", cl),
                          ("channels-last --fusion=false", unfused)):
            if sorted(res) != sorted(expected):
                problems.append(("outputs", f"{what} build outputs "
                                 f"{sorted(res)}, expected {sorted(expected)}"))
            for name, v in res.items():
                if not np.all(np.isfinite(v)):
                    problems.append(("finite", f"{what} {name} has "
                                     f"{int(np.sum(~np.isfinite(v)))} "
                                     "non-finite values"))
        if problems:
            return problems
        for what, a, b in (("L8 channels-last vs NCHW", cl, nchw),
                           ("L8 training fusion: fused vs --fusion=false",
                            cl, unfused),
                           ("channels-last fast vs reference kernels", cl,
                            ref)):
            grad_scale = max([float(np.max(np.abs(b[n]))) for n in expected
                              if n != "loss" and b[n].size] + [0.0])
            for name in expected:
                tiny = 0.0 if name == "loss" else grad_scale
                ok, diff, allowed = compare(a[name], b[name], tiny)
                ratio = diff / allowed if allowed else (0.0 if ok else 1e9)
                if ok and ratio > self.worst[0]:
                    self.worst = (ratio, f"{tag} {name} ({what})")
                if not ok:
                    problems.append((
                        "L8" if what.startswith("L8") else "kernels",
                        f"{what}: {name} {list(a[name].shape)}: max|a - b| "
                        f"= {diff:.3e}, max|b| = "
                        f"{float(np.max(np.abs(b[name]), initial=0)):.3e}, "
                        f"allowed {allowed:.3e}"))
        problems += self.check_rules(dirs["channels-last"])
        return problems


def failure_signatures(problems):
    """What a reduced graph must still fail with: the kind, and for a
    compiler error its first message with the numbers dropped (so that the
    reducer does not trade one error for another)."""
    sigs = set()
    for kind, msg in problems:
        m = re.search(r"error: (.*)", msg)
        text = re.sub(r"[0-9]+", "#", m.group(1))[:120] if m and \
            kind in ("invalid", "compile") else ""
        sigs.add((kind, text))
    return sigs


def grad_regression_text(g, problems, seed, input_format, data_seed):
    lines = [
        "// A random gradient graph (randgraph.py grad) on which the",
        "// channels-last and NCHW training steps disagreed, reduced; it must",
        "// now pass every check:",
    ]
    for kind, msg in problems[:3]:
        lines.append(f"//   was: [{kind}] {msg.splitlines()[0][:100]}")
    lines += [
        "// REQUIRES: memfmt-compile, python-package",
        "// UNSUPPORTED: sanitizer",
        f"// RUN: %python %S/../randgraph.py grad-check %s --bin %memfmt_bin "
        f"--python %memfmt_python --workdir %t --seed {seed} --data-seed "
        f"{data_seed} --input-format {input_format}",
    ]
    return "\n".join(lines) + "\n" + function_text([g])


def grad_one(checker, seed, index, input_format):
    g = generate_grad(seed, index)
    problems = checker.check_grad(function_text([g]), f"grad{index}",
                                  input_format, index)
    return g, problems


def cmd_grad(a):
    work = a.workdir or tempfile.mkdtemp(prefix="randgraph-grad-")
    os.makedirs(work, exist_ok=True)
    checker = GradChecker(a.bin, a.python, work, a.seed)
    start = time.time()
    fmt_rng = random.Random(f"grad:{a.seed}")
    formats = [fmt_rng.choice(["contiguous", "contiguous", "channels-last"])
               for _ in range(a.count)]
    checked, failing = 0, []
    with concurrent.futures.ThreadPoolExecutor(a.jobs) as pool:
        futures = {}
        for i in range(a.count):
            futures[pool.submit(grad_one, checker, a.seed, i,
                                formats[i])] = i
        for fut in concurrent.futures.as_completed(futures):
            i = futures[fut]
            g, problems = fut.result()
            checked += 1
            if problems:
                failing.append((i, g, problems))
            else:
                shutil.rmtree(os.path.join(work, f"grad{i}"),
                              ignore_errors=True)
    for i, g, problems in sorted(failing, key=lambda f: f[0]):
        fmt = formats[i]
        path = os.path.join(work, f"grad{i}", "graph.mlir")
        print(f"FAIL gradient graph {g.prefix} (seed {a.seed}, input format "
              f"{fmt}): {path}")
        for kind, msg in problems:
            print(f"  [{kind}] {msg}")
        if a.reduce_to:
            wanted = failure_signatures(problems)

            def fails(h, wanted=wanted, fmt=fmt, i=i):
                text = function_text([h])
                if not trainable_weights(text):
                    return False   # refused: nothing to differentiate
                q = checker.check_grad(text, f"reduce{i}", fmt, i)
                return bool(wanted & failure_signatures(q))
            small = reduce_graph(g, fails)
            os.makedirs(a.reduce_to, exist_ok=True)
            out = os.path.join(a.reduce_to,
                               f"grad-seed{a.seed}-{g.prefix.strip('_')}.mlir")
            with open(out, "w") as f:
                f.write(grad_regression_text(small, problems, a.seed, fmt, i))
            print(f"  reduced to {len(small.ops)} ops: {out}")
    elapsed = time.time() - start
    print(f"random gradient graphs: {checked} checked, {len(failing)} "
          f"mismatches (seed {a.seed}, {elapsed:.0f} s)")
    invalid = sum(all(k == "invalid" for k, _ in f[2]) for f in failing)
    if invalid:
        print(f"note: {invalid} graphs the compiler rejected as invalid "
              "input (a generator bug)")
    if a.verbose and checker.worst[1]:
        print(f"closest to the tolerance: {checker.worst[0]:.2f} of it, "
              f"{checker.worst[1]}")
    if not a.workdir and not failing:
        shutil.rmtree(work, ignore_errors=True)
    return 1 if failing else 0


def cmd_grad_check(a):
    with open(a.file) as f:
        text = f.read()
    work = a.workdir or tempfile.mkdtemp(prefix="randgraph-grad-")
    os.makedirs(work, exist_ok=True)
    checker = GradChecker(a.bin, a.python, work, a.seed)
    problems = checker.check_grad(text, "check", a.input_format, a.data_seed)
    for kind, msg in problems:
        print(f"[{kind}] {msg}")
    print(f"{os.path.basename(a.file)}: {'FAIL' if problems else 'PASS'}")
    return 1 if problems else 0


def cmd_grad_exec(a):
    """(internal) Runs model directories on saved inputs, in this process:
    the parent sets MEMFMT_KERNELS for it."""
    sys.path.insert(0, a.python)
    import memfmt
    with np.load(a.inputs) as z:
        arrays = [z[f"in{i}"] for i in range(len(z.files))]
    outs = {}
    dtypes = {"f32": np.float32, "i64": np.int64}
    for i, d in enumerate(a.dirs):
        model = memfmt.load(d)
        results = model.run(*[np.asarray(x, dtypes[t.dtype])
                               for x, t in zip(arrays, model.inputs)])
        if len(model.outputs) == 1:
            results = (results,)
        for info, v in zip(model.outputs, results):
            outs[f"{i}:{info.name}"] = v
        model.close()
    np.savez(a.out, **outs)
    return 0


def cmd_grad_gen(a):
    sys.stdout.write(function_text([generate_grad(a.seed, a.index)]))
    return 0


# ===---------------------------------------------------------------------=== #
# Commands
# ===---------------------------------------------------------------------=== #


def regression_text(g, problems, seed, input_format):
    lines = [
        "// A random graph (randgraph.py) on which the channels-last and NCHW",
        "// builds disagreed, reduced; it must now pass every check:",
    ]
    for kind, msg in problems[:3]:
        lines.append(f"//   was: [{kind}] {msg.splitlines()[0][:100]}")
    lines.append(f"// RUN: %python %S/../randgraph.py check %s --bin "
                 f"%memfmt_bin --workdir %t --seed {seed} "
                 f"--input-format {input_format}")
    return "\n".join(lines) + "\n" + function_text([g])


def run_batch(checker, seed, first, batch, input_format):
    graphs = [generate(seed, first + i) for i in range(batch)]
    text = function_text(graphs)
    n_out = sum(len(g.outputs) for g in graphs)
    problems = checker.check_text(text, f"batch{first}", n_out, input_format)
    return graphs, problems


def cmd_run(a):
    work = a.workdir or tempfile.mkdtemp(prefix="randgraph-")
    os.makedirs(work, exist_ok=True)
    checker = Checker(a.bin, work, a.seed)
    start = time.time()
    checked, mismatches, invalid = 0, 0, 0
    failing = []
    batches = []
    i = 0
    while i < a.count:
        batches.append((i, min(a.batch, a.count - i)))
        i += a.batch
    fmt_rng = random.Random(a.seed)
    formats = {b: fmt_rng.choice(["contiguous", "contiguous",
                                  "channels-last"]) for b, _ in batches}
    with concurrent.futures.ThreadPoolExecutor(a.jobs) as pool:
        pending = {}
        it = iter(batches)
        def submit():
            try:
                b, n = next(it)
            except StopIteration:
                return False
            if a.time_budget and time.time() - start > a.time_budget:
                return False
            pending[pool.submit(run_batch, checker, a.seed, b, n,
                                formats[b])] = (b, n)
            return True
        for _ in range(a.jobs):
            submit()
        while pending:
            done, _ = concurrent.futures.wait(
                pending, return_when=concurrent.futures.FIRST_COMPLETED)
            for fut in done:
                b, n = pending.pop(fut)
                graphs, problems = fut.result()
                checked += n
                if problems:
                    if all(k == "invalid" for k, _ in problems):
                        invalid += n
                    failing.append((b, graphs, problems, formats[b]))
                else:
                    shutil.rmtree(os.path.join(work, f"batch{b}"),
                                  ignore_errors=True)
                submit()
    # Split failing batches into graphs and reduce each failing one.
    for b, graphs, problems, fmt in failing:
        for g in graphs:
            n_out = len(g.outputs)
            tag = f"single-{g.prefix}"
            p = checker.check_text(function_text([g]), tag, n_out, fmt)
            if not p:
                continue
            mismatches += 1
            print(f"FAIL graph {g.prefix} (seed {a.seed}, input format "
                  f"{fmt}):")
            for kind, msg in p:
                print(f"  [{kind}] {msg}")
            if a.reduce_to:
                kinds = {k for k, _ in p}

                def fails(h, kinds=kinds, fmt=fmt):
                    q = checker.check_text(function_text([h]), "reduce",
                                           len(h.outputs), fmt)
                    return any(k in kinds for k, _ in q)
                small = reduce_graph(g, fails)
                os.makedirs(a.reduce_to, exist_ok=True)
                path = os.path.join(a.reduce_to,
                                    f"seed{a.seed}-{g.prefix.strip('_')}.mlir")
                with open(path, "w") as f:
                    f.write(regression_text(small, p, a.seed, fmt))
                print(f"  reduced to {len(small.ops)} ops: {path}")
    elapsed = time.time() - start
    print(f"random graphs: {checked} checked, {mismatches} mismatches "
          f"(seed {a.seed}, {elapsed:.0f} s)")
    if invalid:
        print(f"note: {invalid} graphs in batches the compiler rejected as "
              "invalid input (a generator bug)")
    if not a.workdir and mismatches == 0:
        shutil.rmtree(work, ignore_errors=True)
    return 1 if mismatches else 0


def cmd_check(a):
    with open(a.file) as f:
        text = f.read()
    work = a.workdir or tempfile.mkdtemp(prefix="randgraph-")
    os.makedirs(work, exist_ok=True)
    checker = Checker(a.bin, work, a.seed)
    problems = checker.check_text(text, "check", count_outputs(text),
                                  a.input_format)
    for kind, msg in problems:
        print(f"[{kind}] {msg}")
    print(f"{os.path.basename(a.file)}: "
          f"{'FAIL' if problems else 'PASS'}")
    return 1 if problems else 0


def cmd_gen(a):
    graphs = [generate(a.seed, i) for i in range(a.count)]
    sys.stdout.write(function_text(graphs))
    return 0


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    here = os.path.dirname(os.path.abspath(__file__))
    default_bin = os.path.join(here, "..", "..", "build", "bin")
    r = sub.add_parser("run")
    r.add_argument("--seed", type=int, default=0)
    r.add_argument("--count", type=int, default=200)
    r.add_argument("--batch", type=int, default=4)
    r.add_argument("--jobs", type=int, default=2)
    r.add_argument("--time-budget", type=float, default=0)
    r.add_argument("--workdir")
    r.add_argument("--reduce-to")
    r.add_argument("--bin", default=default_bin)
    c = sub.add_parser("check")
    c.add_argument("file")
    c.add_argument("--seed", type=int, default=0)
    c.add_argument("--input-format", default="contiguous")
    c.add_argument("--workdir")
    c.add_argument("--bin", default=default_bin)
    g = sub.add_parser("gen")
    g.add_argument("--seed", type=int, default=0)
    g.add_argument("--count", type=int, default=1)
    default_python = os.path.join(here, "..", "..", "build", "python")
    gr = sub.add_parser("grad")
    gr.add_argument("--seed", type=int, default=0)
    gr.add_argument("--count", type=int, default=40)
    gr.add_argument("--jobs", type=int, default=2)
    gr.add_argument("--workdir")
    gr.add_argument("--reduce-to")
    gr.add_argument("--verbose", action="store_true")
    gr.add_argument("--bin", default=default_bin)
    gr.add_argument("--python", default=default_python)
    gc = sub.add_parser("grad-check")
    gc.add_argument("file")
    gc.add_argument("--seed", type=int, default=0)
    gc.add_argument("--data-seed", type=int, default=0)
    gc.add_argument("--input-format", default="contiguous")
    gc.add_argument("--workdir")
    gc.add_argument("--bin", default=default_bin)
    gc.add_argument("--python", default=default_python)
    gg = sub.add_parser("grad-gen")
    gg.add_argument("--seed", type=int, default=0)
    gg.add_argument("--index", type=int, default=0)
    ge = sub.add_parser("grad-exec")
    ge.add_argument("--python", required=True)
    ge.add_argument("--inputs", required=True)
    ge.add_argument("--out", required=True)
    ge.add_argument("dirs", nargs="+")
    a = p.parse_args()
    return {"run": cmd_run, "check": cmd_check, "gen": cmd_gen,
            "grad": cmd_grad, "grad-check": cmd_grad_check,
            "grad-gen": cmd_grad_gen, "grad-exec": cmd_grad_exec}[a.cmd](a)


if __name__ == "__main__":
    sys.exit(main())
