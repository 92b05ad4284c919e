"""The digits data (build/data/digits.csv: 64 pixel values 0-16 and a class) and
an MLP as the HF Trainer takes them, for the Python bridge's tests and benchmark.
Needs torch and numpy (the HF venv, scripts/venv hf)."""
import numpy as np
import torch


def digits_rows(path):
    return np.loadtxt(path, delimiter=",")


class Digits(torch.utils.data.Dataset):
    """Rows of the digits CSV: pixels scaled to 0..1 as `input`, the class as `labels`."""

    def __init__(self, rows):
        self.x = torch.tensor(rows[:, :64] / 16.0, dtype=torch.float32)
        self.y = torch.tensor(rows[:, 64], dtype=torch.long)

    def __len__(self):
        return len(self.y)

    def __getitem__(self, i):
        return {"input": self.x[i], "labels": self.y[i]}


class Mlp(torch.nn.Module):
    """64 -> hidden0 (ReLU) -> ... -> out (10), returning HF's {"loss", "logits"}. Each
    Linear is a direct child (hidden0, ..., out), so per-module statistics see one
    module per layer."""

    def __init__(self, hidden=(32,)):
        super().__init__()
        self.hidden = []
        width = 64
        for i, h in enumerate(hidden):
            layer = torch.nn.Linear(width, h)
            self.add_module(f"hidden{i}", layer)
            self.hidden.append(layer)
            width = h
        self.out = torch.nn.Linear(width, 10)

    def forward(self, input, labels=None):
        x = input
        for layer in self.hidden:
            x = torch.relu(layer(x))
        logits = self.out(x)
        loss = torch.nn.functional.cross_entropy(logits, labels) if labels is not None else None
        return {"loss": loss, "logits": logits}
