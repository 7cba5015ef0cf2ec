# Prints a .safetensors file for FileCheck: the header length's alignment,
# the metadata, then one line per tensor in file order - name, dtype, shape,
# data offsets and the first values - and checks that the tensors tile the
# data section.
#
# usage: dump_safetensors.py FILE.safetensors
import json
import struct
import sys

import numpy as np

DTYPES = {"F32": np.float32, "F16": np.float16, "BF16": np.uint16,
          "F64": np.float64, "I64": np.int64}


def main():
    data = open(sys.argv[1], "rb").read()
    (length,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + length])
    body = data[8 + length:]
    print(f"header {length} bytes, aligned {length % 8 == 0}")
    print("metadata", json.dumps(header.pop("__metadata__", {}),
                                 sort_keys=True))
    end = 0
    for name, entry in sorted(header.items(),
                              key=lambda kv: kv[1]["data_offsets"][0]):
        begin, stop = entry["data_offsets"]
        assert begin == end, f"gap or overlap before {name}"
        end = stop
        values = np.frombuffer(body[begin:stop], DTYPES[entry["dtype"]])
        if entry["dtype"] == "F16":
            values = values.astype(np.float32)
        shown = " ".join(f"{v:g}" for v in values.reshape(-1)[:4])
        print(f"{name} {entry['dtype']} {entry['shape']} [{begin}, {stop}) "
              f"{shown}")
    assert end == len(body), "bytes after the last tensor"
    print(f"{len(header)} tensors, {len(body)} data bytes")


if __name__ == "__main__":
    main()
