"""PyTorch reference helpers shared by memfmt's comparison tests and benchmarks.

The tests under test/E2E and test/ONNX and the scripts under bench/ compare
memfmt with PyTorch on the same weights. They all build torchvision models
the same way (seeded, with non-trivial batch-norm running statistics so that
every op matters), hand the weights to memfmt as a .safetensors file
(written here by hand: Debian ships no safetensors package), run memfmt's
tools and measure errors as max |a - b| / max |b|. Import it with
`sys.path.insert(0, <repo>/scripts)`.
"""
import json
import struct
import subprocess
import sys


def seeded_model(name, seed, **kwargs):
    """torchvision model `name` in eval mode, weights from `seed`, with batch
    norm scales in [0.5, 1.5], shifts and means ~N(0, 0.1) and variances in
    [0.5, 1.5]."""
    import torch
    import torchvision
    torch.manual_seed(seed)
    model = getattr(torchvision.models, name)(**kwargs)
    with torch.no_grad():
        for module in model.modules():
            if isinstance(module, torch.nn.BatchNorm2d):
                module.weight.uniform_(0.5, 1.5)
                module.bias.normal_(0.0, 0.1)
                module.running_mean.normal_(0.0, 0.1)
                module.running_var.uniform_(0.5, 1.5)
    return model.eval()


def write_safetensors(path, state_dict):
    """Writes a state_dict as .safetensors (f32, and i64 for counters)."""
    import numpy as np
    header, blobs, offset = {}, [], 0
    for name, tensor in state_dict.items():
        array = tensor.detach().cpu().contiguous().numpy()
        if array.dtype == np.int64:
            dtype = "I64"
        else:
            array = array.astype(np.float32)
            dtype = "F32"
        data = array.tobytes()
        header[name] = {"dtype": dtype, "shape": list(array.shape),
                        "data_offsets": [offset, offset + len(data)]}
        blobs.append(data)
        offset += len(data)
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * ((8 - len(text) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for data in blobs:
            f.write(data)


def rel_error(a, b):
    """max |a - b| / max |b|."""
    import numpy as np
    return float(np.max(np.abs(a - b)) / max(np.max(np.abs(b)), 1e-30))


def run(cmd):
    """Runs a tool; on failure prints the command and its output and exits."""
    result = subprocess.run(cmd, capture_output=True, text=True)
    if result.returncode != 0:
        sys.stderr.write(" ".join(cmd) + "\n" + result.stdout + result.stderr)
        raise SystemExit(f"command failed with exit code {result.returncode}")
    return result.stdout
