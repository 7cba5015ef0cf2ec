#!/usr/bin/env python3
# ===- make_npy.py - .npy inputs memfmt-run must refuse -------------------=== #
#
# Part of the memfmt project.
#
# ===---------------------------------------------------------------------=== #
"""Writes .npy files that memfmt-run must refuse, next to a good one, into
the directory given: good.npy (2x3x8x8 f32), magic.npy (bad magic), cut.npy
(data cut short by 10 bytes), fortran.npy (column-major), big.npy
(big-endian f32), rank.npy (2x3x64) and object.npy (an object array)."""
import os
import sys

import numpy as np

out = sys.argv[1]
x = np.zeros((2, 3, 8, 8), np.float32)
good = os.path.join(out, "good.npy")
np.save(good, x)
data = open(good, "rb").read()
open(os.path.join(out, "magic.npy"), "wb").write(b"NOTNUMPY" + data[8:])
open(os.path.join(out, "cut.npy"), "wb").write(data[:-10])
np.save(os.path.join(out, "fortran.npy"), np.asfortranarray(x))
np.save(os.path.join(out, "big.npy"), x.astype(">f4"))
np.save(os.path.join(out, "rank.npy"), x.reshape(2, 3, 64))
np.save(os.path.join(out, "object.npy"), np.array([{"a": 1}], dtype=object),
        allow_pickle=True)
