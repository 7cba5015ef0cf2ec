# ===- _trainer.py - A compiled training step -----------------------------=== #
#
# Part of the memfmt project.
#
# ===---------------------------------------------------------------------=== #
"""memfmt.Trainer: a training step compiled by memfmt-compile --train
(forward, mean cross-entropy loss, backward and torch.optim.SGD's update of
the parameters, momentum buffers and batch-norm running statistics, all in
place), loaded and driven from Python.

``step(x, y)`` takes a batch (any layout; a channels-last batch enters a
channels-last step without a copy) and its class indices, and returns the
loss. ``state_dict()`` holds the model's state under torchvision's names
(with each batch norm's ``num_batches_tracked``, the steps taken), as
torch tensors where torch is importable; ``save(path)`` writes it, with the
optimizer state (the momentum buffers, and with dampening the step count
``optimizer.step``, and a loss scaler's state), as one safetensors file
that ``memfmt.load(dir, weights=path)`` resumes from. ``loss_scale`` is a
loss-scaled step's current scale.
"""

import os

import numpy as np

from ._memfmt import read_safetensors, write_safetensors
from ._model import Model

_RUNNING_MEAN = ".running_mean"
_TRACKED = ".num_batches_tracked"


class Trainer(Model):
    """A loaded training step. Create with memfmt.compile(..., train=True)
    or memfmt.load(dir) on a directory compiled with --train."""

    def __init__(self, directory, *, weights=None, threads=0, allow_bf16=None):
        super().__init__(directory, weights=weights, threads=threads,
                         allow_bf16=allow_bf16)
        if not self.inputs or self.inputs[-1].dtype != "i64" or \
                len(self.outputs) != 1:
            raise ValueError(f"{directory} is not a training step (a step "
                             f"takes its batch and then int64 class "
                             f"indices, and returns its loss)")
        self.steps = self._tracked_in_source()

    def step(self, *batch):
        """One SGD step: step(x, y) on batch `x` with class indices `y`
        (int64, one per row), or step(x1, x2, ..., y) for a model of several
        inputs; returns the batch's mean loss as a float."""
        loss = self.run(*batch)
        self.steps += 1
        return float(np.asarray(loss.detach() if hasattr(loss, "detach")
                                else loss).reshape(-1)[0])

    @property
    def loss_scale(self):
        """The loss scale of the next step of a step compiled with
        grad_scaler= (GradScaler.get_scale(); it backs off where a step's
        gradients were not finite and that step was skipped), else None."""
        if not any(p.name == "grad_scaler.scale" for p in self.parameters()):
            return None
        return float(np.asarray(self.read_parameter("grad_scaler.scale"))
                     .reshape(-1)[0])

    def state_dict(self, numpy=False):
        """The model's state under torchvision's names: weights, biases,
        running statistics and num_batches_tracked (no optimizer state), as
        torch tensors (numpy arrays with numpy=True or without torch)."""
        state = {}
        for info in self.parameters():
            if info.zero_init:  # Optimizer state.
                continue
            state[info.name] = self.read_parameter(info.name)
            if info.name.endswith(_RUNNING_MEAN):
                module = info.name[:-len(_RUNNING_MEAN)]
                state[module + _TRACKED] = np.array(self.steps, np.int64)
        return state if numpy else _as_torch(state)

    def load_state_dict(self, state):
        """Sets the parameters from a state dict of torchvision's names (torch
        tensors or arrays); every parameter but the optimizer state must be
        there, and nothing else. num_batches_tracked sets the step count."""
        names = {p.name for p in self.parameters() if not p.zero_init}
        tracked = {k for k in state if k.endswith(_TRACKED)}
        missing = sorted(names - set(state))
        unexpected = sorted(set(state) - names - tracked)
        if missing or unexpected:
            raise KeyError(f"state dict does not match the model: missing "
                           f"{missing}, unexpected {unexpected}")
        for name in names:
            self.write_parameter(name, state[name])
        if tracked:
            self.steps = int(np.asarray(state[sorted(tracked)[0]]))

    def save(self, path):
        """Writes the state dict and the optimizer state to `path` (a
        safetensors file)."""
        tensors = dict(self.state_dict(numpy=True))
        for info in self.parameters():
            if info.zero_init:
                tensors[info.name] = self.read_parameter(info.name)
        write_safetensors(os.fspath(path), tensors)

    def _tracked_in_source(self):
        source = self._info["weights_source"]
        if not source.startswith("safetensors:"):
            return 0
        try:
            tensors = read_safetensors(source[len("safetensors:"):])
        except RuntimeError:  # Gone or changed since the model loaded it.
            return 0
        for name, value in tensors.items():
            if name.endswith(_TRACKED) and value.dtype == np.int64:
                return int(value.reshape(-1)[0])
        return 0


def _as_torch(state):
    try:
        import torch
    except ImportError:
        return state
    return {k: torch.from_numpy(v) for k, v in state.items()}
