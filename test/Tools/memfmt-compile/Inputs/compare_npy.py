#!/usr/bin/env python3
"""Checks that .npy files of f32 logits agree (L8), without numpy.

Usage: compare_npy.py [--tolerance T] FILE.npy FILE.npy... ; prints "N
outputs of shape S agree" or the largest difference, relative to the largest
magnitude of the first file, and exits 1 above T (default 1e-4).
"""
import ast
import struct
import sys


def load(path):
    with open(path, "rb") as f:
        data = f.read()
    assert data[:6] == b"\x93NUMPY", path + ": not a .npy file"
    major = data[6]
    if major == 1:
        (length,) = struct.unpack("<H", data[8:10])
        start = 10
    else:
        (length,) = struct.unpack("<I", data[8:12])
        start = 12
    header = ast.literal_eval(data[start:start + length].decode("latin1"))
    assert header["descr"] == "<f4" and not header["fortran_order"], path
    body = data[start + length:]
    return header["shape"], struct.unpack("<%df" % (len(body) // 4), body)


def main():
    tolerance = 1e-4
    if len(sys.argv) > 2 and sys.argv[1] == "--tolerance":
        tolerance = float(sys.argv[2])
        del sys.argv[1:3]
    shape, reference = load(sys.argv[1])
    scale = max(abs(v) for v in reference) or 1.0
    worst = 0.0
    for path in sys.argv[2:]:
        other_shape, values = load(path)
        if other_shape != shape:
            print("%s: shape %s, expected %s" % (path, other_shape, shape))
            return 1
        worst = max(worst, max(abs(a - b) for a, b in zip(reference, values)))
    if worst / scale > tolerance:
        print("outputs differ: max abs difference %g (max |value| %g)"
              % (worst, scale))
        return 1
    print("%d outputs of shape %s agree" % (len(sys.argv) - 1, shape))
    return 0


if __name__ == "__main__":
    sys.exit(main())
