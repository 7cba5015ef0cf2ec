#!/usr/bin/env python3
"""Compares two f32 .npy files without numpy (L8 tests).

  compare_npy.py A.npy B.npy TOLERANCE

Prints the shapes and max|a-b| / max|b| and exits 1 when the relative error
is above TOLERANCE or the shapes differ.
"""
import ast
import struct
import sys


def load(path):
    data = open(path, "rb").read()
    if data[:6] != b"\x93NUMPY":
        sys.exit(path + ": not a .npy file")
    if data[6] == 1:
        length, start = struct.unpack("<H", data[8:10])[0], 10
    else:
        length, start = struct.unpack("<I", data[8:12])[0], 12
    header = ast.literal_eval(data[start:start + length].decode("latin1"))
    if header["descr"] != "<f4" or header["fortran_order"]:
        sys.exit(path + ": expected C-order '<f4'")
    body = data[start + length:]
    return header["shape"], struct.unpack("<%df" % (len(body) // 4), body)


def main(a_path, b_path, tolerance):
    shape_a, a = load(a_path)
    shape_b, b = load(b_path)
    if shape_a != shape_b:
        print("shapes differ: %s vs %s" % (shape_a, shape_b))
        return 1
    max_abs = max(abs(x - y) for x, y in zip(a, b))
    max_ref = max(abs(y) for y in b)
    rel = max_abs / max_ref if max_ref else (0.0 if max_abs == 0 else 1e30)
    verdict = "PASS" if rel <= float(tolerance) else "FAIL"
    print("shape %s rel %.3g %s" % (list(shape_a), rel, verdict))
    return 0 if verdict == "PASS" else 1


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:4]))
