# Compares memfmt-run outputs with torch's (the first rows of y.npy):
# max |diff| <= 1e-4 * max |torch|.
#
# usage: compare.py Y.npy OUT.npy...  (test/ONNX/torch2-export.test)
import os
import sys

import numpy as np

expected = np.load(sys.argv[1])
for path in sys.argv[2:]:
    actual = np.load(path)
    ref = expected[: actual.shape[0]]
    err = float(np.abs(actual - ref).max())
    bound = 1e-4 * float(np.abs(ref).max())
    print(f"{os.path.basename(path)} {list(actual.shape)}: "
          f"{'PASS' if err <= bound else 'FAIL'} (max |diff| {err:.3g}, "
          f"bound {bound:.3g})")
