# Writes the small ONNX models of test/ONNX/torch2-export.test with PyTorch
# 2.x's default exporter (torch.onnx.export, dynamo; opset 20, IR 10), and
# their reference data. Debian's torch (1.13) has no such exporter, so the
# files are committed; regenerate them with the benchmark environment:
#
#   bench/.venv/bin/pip install onnxscript
#   bench/.venv/bin/python test/ONNX/Inputs/torch2/make_models.py test/ONNX/Inputs/torch2
#
# The networks are a ResNet in miniature (stem, max pool, a basic block with
# a strided, projected shortcut, global average pooling, linear), 8-16
# channels so the files stay small, and a vision transformer in miniature
# (torchvision's VisionTransformer: 16x16 images, 4x4 patches, one layer of
# two heads of 8). Outputs: static.onnx (batch 2, 3x20x18), dynamic.onnx
# (the batch a dynamic dimension), x.npy ([3, 3, 20, 18]) and y.npy (the
# module's output for x, from torch); vit.onnx (batch 2), vit_x.npy and
# vit_y.npy.
import os
import sys

import numpy as np
import torch
from torch import nn


class Block(nn.Module):
    def __init__(self, cin, cout, stride):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.down = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False),
                                  nn.BatchNorm2d(cout))

    def forward(self, x):
        y = torch.relu(self.bn1(self.conv1(x)))
        return torch.relu(self.bn2(self.conv2(y)) + self.down(x))


class Small(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 8, 3, 1, 1, bias=False),
                                  nn.BatchNorm2d(8), nn.ReLU(),
                                  nn.MaxPool2d(3, 2, 1))
        self.block = Block(8, 16, 2)
        self.fc = nn.Linear(16, 5)

    def forward(self, x):
        x = self.block(self.stem(x))
        x = nn.functional.adaptive_avg_pool2d(x, 1)
        return self.fc(torch.flatten(x, 1))


def vit(out):
    from torchvision.models.vision_transformer import VisionTransformer
    torch.manual_seed(1)
    model = VisionTransformer(image_size=16, patch_size=4, num_layers=1,
                              num_heads=2, hidden_dim=16, mlp_dim=32,
                              num_classes=5).eval()
    with torch.no_grad():  # zeros at initialisation: the output would be 0
        model.class_token.normal_()
        model.heads.head.weight.normal_(0.0, 0.25)
    x = torch.randn(2, 3, 16, 16)
    torch.onnx.export(model, (x,), os.path.join(out, "vit.onnx"))
    np.save(os.path.join(out, "vit_x.npy"), x.numpy())
    with torch.no_grad():
        np.save(os.path.join(out, "vit_y.npy"), model(x).numpy())


def main(out):
    torch.manual_seed(0)
    model = Small().eval()
    with torch.no_grad():  # statistics that make the batch norms non-trivial
        for m in model.modules():
            if isinstance(m, nn.BatchNorm2d):
                m.running_mean.uniform_(-0.5, 0.5)
                m.running_var.uniform_(0.5, 2.0)
                m.weight.uniform_(0.5, 1.5)
                m.bias.uniform_(-0.5, 0.5)
    x = torch.randn(3, 3, 20, 18)
    torch.onnx.export(model, (x[:2],), os.path.join(out, "static.onnx"))
    batch = torch.export.Dim("batch", min=1, max=64)
    torch.onnx.export(model, (x,), os.path.join(out, "dynamic.onnx"),
                      dynamic_shapes={"x": {0: batch}})
    np.save(os.path.join(out, "x.npy"), x.numpy())
    with torch.no_grad():
        np.save(os.path.join(out, "y.npy"), model(x).numpy())
    vit(out)
    print(f"torch {torch.__version__}: wrote {out}")


if __name__ == "__main__":
    main(sys.argv[1])
