# Shared fixtures of the Python package's tests (test/Python/test_*.py, each
# a lit test that runs pytest on itself): the memfmt package from the build
# tree (PYTHONPATH set by the RUN line), a small seeded CNN and its compiled
# models in both memory formats, compiled once per test file.
import os
import sys

import numpy as np
import pytest
import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "scripts"))

import memfmt  # noqa: E402

torch.set_num_threads(2)


class SmallNet(torch.nn.Module):
    """conv - batch norm - relu - residual conv - max pool - linear: the ops
    whose layouts differ between the formats, in a model that compiles in a
    few seconds."""

    def __init__(self):
        super().__init__()
        self.conv1 = torch.nn.Conv2d(3, 8, 3, padding=1, bias=False)
        self.bn1 = torch.nn.BatchNorm2d(8)
        self.conv2 = torch.nn.Conv2d(8, 8, 3, padding=1)
        self.pool = torch.nn.MaxPool2d(2)
        self.fc = torch.nn.Linear(8 * 4 * 5, 10)

    def forward(self, x):
        y = torch.relu(self.bn1(self.conv1(x)))
        y = torch.relu(self.conv2(y) + y)
        return self.fc(torch.flatten(self.pool(y), 1))


SHAPE = (2, 3, 8, 10)


def small_net():
    torch.manual_seed(0)
    net = SmallNet()
    with torch.no_grad():
        net.bn1.running_mean.normal_(0, 0.1)
        net.bn1.running_var.uniform_(0.5, 1.5)
    return net.eval()


def batch(seed=0):
    rng = np.random.default_rng(seed)
    return rng.standard_normal(SHAPE).astype(np.float32)


def rel_error(ours, reference):
    ours, reference = np.asarray(ours), np.asarray(reference)
    return float(np.abs(ours - reference).max() / np.abs(reference).max())


@pytest.fixture(scope="module")
def net():
    return small_net()


@pytest.fixture(scope="module")
def cl_model(net):
    """Computes channels-last and reads channels-last input buffers."""
    model = memfmt.compile(net, example_input=torch.from_numpy(batch()))
    yield model
    model.close()


@pytest.fixture(scope="module")
def nchw_model(net):
    model = memfmt.compile(net, example_input=torch.from_numpy(batch()),
                           memory_format="contiguous")
    yield model
    model.close()


@pytest.fixture(scope="module")
def reference(net):
    with torch.no_grad():
        return net(torch.from_numpy(batch())).numpy()
