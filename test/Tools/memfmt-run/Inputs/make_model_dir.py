#!/usr/bin/env python3
"""Assembles a model directory for memfmt-run's tests, without numpy.

  make_model_dir.py DIR FAKE_MODEL_SO [--logits] [--set KEY=JSON]...
  make_model_dir.py --npy FILE SHAPE [--dtype f4|f8] [--seed N]

The first form copies the fake model (runtime/test/loader/FakeModel.c) to
DIR/model.so and writes its manifest (relu(x) + shift on a [2,3,4,5]
channels-last input). --logits declares the output as [2, 60] (the same
bytes) so memfmt-run prints a top-5; --set replaces a top-level field. The
second form writes a .npy of the given shape ("2,3,4,5") with seeded
values.
"""
import json
import os
import random
import shutil
import struct
import sys

MANIFEST = {
    "format_version": 2,
    "model": "fake",
    "target": "cpu",
    "precision": "f32",
    "memory_format": "channels-last",
    "input_format": "channels-last",
    "library": "model.so",
    "entry": "memfmt_forward_packed",
    "arena_bytes": 480,
    "peak_live_bytes": 480,
    "weights_bytes": 128,
    "weights_source": "synthetic:0",
    "parameters": [{"name": "shift", "dtype": "f32", "shape": [1, 3, 1, 1],
                    "strides": [3, 1, 1, 1], "offset": 64, "bytes": 12}],
    "inputs": [{"name": "input_0", "dtype": "f32", "shape": [2, 3, 4, 5],
                "strides": [60, 1, 15, 3]}],
    "outputs": [{"name": "output_0", "dtype": "f32", "shape": [2, 3, 4, 5],
                 "strides": [60, 20, 5, 1]}],
    "nodes": ["memfmt.relu at loc(\"fake.mlir\":1:1)",
              "memfmt.add at loc(\"fake.mlir\":2:1)"],
}


def write_npy(path, shape, dtype, seed):
    count = 1
    for d in shape:
        count *= d
    rng = random.Random(seed)
    values = [rng.gauss(0.0, 1.0) for _ in range(count)]
    dims = "".join("%d, " % d for d in shape) if len(shape) != 1 \
        else "%d," % shape[0]
    header = "{'descr': '<%s', 'fortran_order': False, 'shape': (%s), }" % (
        dtype, dims)
    header += " " * (63 - (10 + len(header)) % 64) + "\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)))
        f.write(header.encode("latin1"))
        f.write(struct.pack("<%d%s" % (count, "f" if dtype == "f4" else "d"),
                            *values))


def main(argv):
    if argv[0] == "--npy":
        path, shape = argv[1], [int(d) for d in argv[2].split(",") if d]
        dtype, seed = "f4", 0
        rest = argv[3:]
        while rest:
            if rest[0] == "--dtype":
                dtype = rest[1]
            elif rest[0] == "--seed":
                seed = int(rest[1])
            rest = rest[2:]
        write_npy(path, shape, dtype, seed)
        return
    directory, library = argv[0], argv[1]
    manifest = json.loads(json.dumps(MANIFEST))
    rest = argv[2:]
    while rest:
        if rest[0] == "--logits":
            manifest["outputs"] = [{"name": "logits", "dtype": "f32",
                                    "shape": [2, 60], "strides": [60, 1]}]
            rest = rest[1:]
        elif rest[0] == "--set":
            key, value = rest[1].split("=", 1)
            manifest[key] = json.loads(value)
            rest = rest[2:]
        else:
            sys.exit("unknown argument " + rest[0])
    os.makedirs(directory, exist_ok=True)
    shutil.copyfile(library, os.path.join(directory, "model.so"))
    with open(os.path.join(directory, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=2)


if __name__ == "__main__":
    main(sys.argv[1:])
