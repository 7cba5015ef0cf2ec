# Reference results for the ONNX models of compile-run.test, computed with
# numpy from the models' own initializers, compared with what memfmt-run
# wrote: max|memfmt - reference| / max|reference|.
#
# usage: reference.py MODEL_NAME MODEL.onnx OUT_PREFIX INPUT.npy...
#   MODEL_NAME is a name of test/Import/ONNX/Inputs/make_onnx.py; OUT_PREFIX
#   is memfmt-run's --output (FILE.npy, or FILE.output_<i>.npy for several
#   outputs).
import sys

import numpy as np
import onnx
from onnx import numpy_helper


def conv2d(x, w, b):
    """Valid (no padding), stride 1."""
    n, c, h, wd = x.shape
    o, _, kh, kw = w.shape
    y = np.zeros((n, o, h - kh + 1, wd - kw + 1), np.float64)
    for i in range(kh):
        for j in range(kw):
            y += np.einsum("nchw,oc->nohw",
                           x[:, :, i:i + y.shape[2], j:j + y.shape[3]],
                           w[:, :, i, j])
    return y + b.reshape(1, -1, 1, 1)


def layer_norm(x, eps):
    """Over the last axis, biased variance."""
    mean = x.mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(((x - mean) ** 2).mean(-1, keepdims=True) +
                                eps)


def softmax(x, axis):
    e = np.exp(x - x.max(axis, keepdims=True))
    return e / e.sum(axis, keepdims=True)


def main():
    name, model_path, prefix = sys.argv[1:4]
    inputs = [np.load(p).astype(np.float64) for p in sys.argv[4:]]
    model = onnx.load(model_path)
    init = {t.name: numpy_helper.to_array(t).astype(np.float64)
            for t in model.graph.initializer}
    if name == "init_f16":
        expected = [conv2d(inputs[0], init["w"], init["b"])]
    elif name == "gemm_transposed_scaled":
        expected = [0.5 * inputs[0] @ init["w"] + 2.0 * init["c"]]
    elif name == "concat_split":
        x, y = inputs
        batch = np.concatenate([x, y], 0)
        expected = [np.concatenate([x, y], 1), batch[:2], batch[2:],
                    batch[:1], batch[1:]]
    elif name == "activations":
        from math import erf, pi, sqrt
        x, scale = inputs
        sig = 1 / (1 + np.exp(-x))
        hsig = np.clip(0.2 * sig + 0.5, 0, 1)
        hsig6 = np.clip(hsig / 6 + 0.5, 0, 1)
        hswish = hsig6 * np.clip(hsig6 + 3, 0, 6) / 6
        upper = np.minimum(np.clip(hswish, 0, 6), 6)
        gelu = 0.5 * upper * (1 + np.vectorize(erf)(upper / sqrt(2)))
        gelu_tanh = 0.5 * gelu * (1 + np.tanh(sqrt(2 / pi) *
                                              (gelu + 0.044715 * gelu ** 3)))
        expected = [(gelu_tanh * scale - x) / 2]
    elif name == "transpose_slice":
        x, = inputs
        nhwc = x.transpose(0, 2, 3, 1)
        odd = nhwc[..., 1:6:2].transpose(0, 3, 1, 2)
        shuffled = x.reshape(2, 2, 3, 5, 3).transpose(0, 2, 1, 3, 4) \
            .reshape(x.shape)
        expected = [np.concatenate([odd, shuffled[:, :3], shuffled[:, 3:]],
                                   1), x.transpose(3, 2, 1, 0)]
    elif name == "layer_norm_decomposed":
        from math import erf, sqrt
        x, = inputs
        gelu = np.vectorize(lambda v: 0.5 * v * (1 + erf(v / sqrt(2))))
        ln1 = layer_norm(x.transpose(0, 2, 3, 1), 1e-6) * init["gamma"] + \
            init["beta_init"]
        fc2 = gelu(ln1 @ init["w1"] + init["b1"]) @ init["w2"]
        expected = [fc2.transpose(0, 3, 1, 2), gelu(layer_norm(fc2, 1e-5))]
    elif name == "layer_norm17":
        x, = inputs
        y = layer_norm(x, 1e-5) * init["scale"] + init["bias"]
        z = layer_norm(y, 1e-5) * init["scale"]
        w = layer_norm(z.reshape(1, 3, 30), 1e-5).reshape(z.shape)
        expected = [w * init["scale2"] + init["bias2"]]
    elif name == "softmax_gather":
        x, = inputs
        expected = [softmax(x, 1), x[:, [0, 2, 3, 5]], x[..., -1]]
    elif name == "softmax11":
        x, = inputs
        rows = softmax(x.reshape(12, 15), 1).reshape(x.shape)
        expected = [softmax(rows, 3)]
    elif name == "class_token":
        x, = inputs
        tokens = np.broadcast_to(init["token"], (2, 1, 4))
        expected = [np.concatenate([tokens, x], 1), x.reshape(1, 2, 3, 4)]
    else:
        raise SystemExit(f"no reference for {name}")
    for i, want in enumerate(expected):
        path = prefix if len(expected) == 1 else \
            prefix[:-4] + f".output_{i}.npy"
        got = np.load(path)
        err = float(np.max(np.abs(got - want)) / max(np.max(np.abs(want)),
                                                      1e-30))
        ok = got.shape == want.shape and err <= 1e-4
        print(f"{name} output {i} {list(got.shape)}: "
              f"{'PASS' if ok else 'FAIL'} (rel err {err:.1e})")


if __name__ == "__main__":
    main()
