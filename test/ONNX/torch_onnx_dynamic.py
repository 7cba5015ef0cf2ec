# Dynamic-batch exports of Debian's torch (torch.onnx.export with
# dynamic_axes, opsets 13 and 17): a CNN whose head is
# x.view(x.size(0), -1) (Shape, Gather, Unsqueeze, Concat, Reshape: shape
# arithmetic folded at import) and torchvision's resnet18, compiled with
# --batch in both memory formats, run at the compiled batch and at a
# smaller one (padded by memfmt-run), against torch: max|a - b| /
# max|torch| <= 1e-4. torch runs with 2 threads.
#
# REQUIRES: torch, python-onnx, memfmt-compile, memfmt-run
# RUN: %python %s --bin %memfmt_bin --work %t | FileCheck %s
# CHECK: view_head opset 13 batch 3 channels-last: PASS
# CHECK: view_head opset 13 batch 3 channels-last, 2 rows: PASS
# CHECK: view_head opset 13 batch 3 contiguous: PASS
# CHECK: view_head opset 13 batch 3 contiguous, 2 rows: PASS
# CHECK: resnet18 opset 17 batch 2 channels-last: PASS
# CHECK: resnet18 opset 17 batch 2 channels-last, 1 rows: PASS
# CHECK: resnet18 opset 17 batch 2 contiguous: PASS
# CHECK: resnet18 opset 17 batch 2 contiguous, 1 rows: PASS
# CHECK: all 8 comparisons passed
import argparse
import os
import subprocess
import sys

import numpy as np
import torch
from torch import nn
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "scripts"))
from torchref import Tally, rel_error, seeded_model  # noqa: E402

TOLERANCE = 1e-4


class ViewHead(nn.Module):
    """conv, relu, max pool, then x.view(x.size(0), -1) and a linear."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 6, 3, padding=1)
        self.fc = nn.Linear(6 * 5 * 4, 7)

    def forward(self, x):
        x = nn.functional.max_pool2d(torch.relu(self.conv(x)), 2)
        return self.fc(x.view(x.size(0), -1))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin", required=True)
    parser.add_argument("--work", required=True)
    args = parser.parse_args()
    torch.set_num_threads(2)
    torch.manual_seed(0)
    os.makedirs(args.work, exist_ok=True)
    cases = [("view_head", ViewHead().eval(), 13, 3, (10, 8)),
             ("resnet18", seeded_model("resnet18", seed=5), 17, 2, (35, 33))]
    tally = Tally()
    for name, model, opset, batch, (h, w) in cases:
        x = torch.from_numpy(np.random.default_rng(opset).standard_normal(
            (batch, 3, h, w)).astype(np.float32))
        path = os.path.join(args.work, f"{name}.onnx")
        torch.onnx.export(model, (x,), path, opset_version=opset,
                          input_names=["x"], output_names=["y"],
                          dynamic_axes={"x": {0: "batch"}, "y": {0: "batch"}})
        with torch.no_grad():
            expected = model(x).numpy()
        np.save(os.path.join(args.work, "x.npy"), x.numpy())
        np.save(os.path.join(args.work, "rows.npy"), x.numpy()[:batch - 1])
        for fmt in ("channels-last", "contiguous"):
            out = os.path.join(args.work, f"{name}-{fmt}")
            subprocess.run([os.path.join(args.bin, "memfmt-compile"), path,
                            "--batch", str(batch), "--memory-format", fmt,
                            "-o", out], check=True, capture_output=True)
            for given, label in ((batch, ""), (batch - 1,
                                                f", {batch - 1} rows")):
                npy = "x.npy" if given == batch else "rows.npy"
                y = os.path.join(args.work, "y.npy")
                subprocess.run([os.path.join(args.bin, "memfmt-run"), out,
                                "--input", os.path.join(args.work, npy),
                                "--output", y], check=True,
                               capture_output=True)
                err = rel_error(np.load(y), expected[:given])
                tally.check(f"{name} opset {opset} batch {batch} {fmt}{label}",
                            err <= TOLERANCE, f"rel. error {err:.2e}")
    return tally.finish()


if __name__ == "__main__":
    sys.exit(main())
