#!/usr/bin/env python3
"""Writes a .safetensors file by hand, for memfmt-compile's tests.

The format: an 8-byte little-endian header length N, N bytes of JSON
{name: {"dtype", "shape", "data_offsets": [begin, end]}, "__metadata__": {}},
then the tensors' bytes back to back (zeros here). No safetensors package is
needed (Debian has none).

Usage: make_safetensors.py OUT [--truncate BYTES] [NAME:DTYPE:SHAPE ...]
  SHAPE is dims joined by 'x' ('8x3x3x3'), or 'scalar' for shape [].
  --truncate drops the last BYTES bytes of the file.
"""
import argparse
import json
import struct

SIZES = {"F64": 8, "F32": 4, "F16": 2, "BF16": 2, "I64": 8, "I32": 4,
         "I16": 2, "I8": 1, "U8": 1, "BOOL": 1}


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("output")
    p.add_argument("--truncate", type=int, default=0)
    p.add_argument("tensors", nargs="*")
    a = p.parse_intermixed_args()
    header = {"__metadata__": {"format": "pt"}}
    offset = 0
    for spec in a.tensors:
        name, dtype, shape_text = spec.split(":")
        shape = [] if shape_text == "scalar" else [
            int(d) for d in shape_text.split("x")]
        count = 1
        for d in shape:
            count *= d
        size = count * SIZES[dtype]
        header[name] = {"dtype": dtype, "shape": shape,
                        "data_offsets": [offset, offset + size]}
        offset += size
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    data = struct.pack("<Q", len(text)) + text + bytes(offset)
    if a.truncate:
        data = data[:-a.truncate]
    with open(a.output, "wb") as f:
        f.write(data)


if __name__ == "__main__":
    main()
