"""The HF Trainer's step time with Trainhook plugins through the Python bridge
(trainhook.TrainhookCallback with grad_stats and the tensorboard integration)
against the same Trainer with no callbacks, and with the bridge holding no
plugin (the cost of the bridge's own event dispatch).

Run in the HF venv (scripts/venv hf) with the core library of a build:
  TRAINHOOK_LIBRARY=build/lib/libtrainhook_base.so PYTHONPATH=python \
    build/hf-venv/bin/python bench/python_bridge/bench_python_bridge.py --digits build/data/digits.csv
Model: MLP 64-256-256-10 on the digits data, batch 64, CPU, SGD; logging every
10 steps (grad_stats computes its norms and tensorboard writes at each log).
Configurations are interleaved; each figure is the median of --repeats runs of
--steps steps, after one warm-up run of each.
"""
import argparse
import os
import statistics
import sys
import tempfile
import time

import numpy as np
import torch
import transformers
from transformers import Trainer, TrainingArguments

import trainhook


class Digits(torch.utils.data.Dataset):
    def __init__(self, path):
        rows = np.loadtxt(path, delimiter=",")
        self.x = torch.tensor(rows[:, :64] / 16.0, dtype=torch.float32)
        self.y = torch.tensor(rows[:, 64], dtype=torch.long)

    def __len__(self):
        return len(self.y)

    def __getitem__(self, i):
        return {"input": self.x[i], "labels": self.y[i]}


class Mlp(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.net = torch.nn.Sequential(torch.nn.Linear(64, 256), torch.nn.ReLU(), torch.nn.Linear(256, 256),
                                       torch.nn.ReLU(), torch.nn.Linear(256, 10))

    def forward(self, input, labels=None):
        logits = self.net(input)
        return {"loss": torch.nn.functional.cross_entropy(logits, labels), "logits": logits}


def step_ms(data, steps, work, callbacks):
    args = TrainingArguments(output_dir=work, per_device_train_batch_size=64, learning_rate=0.05, max_steps=steps,
                             logging_steps=10, save_strategy="no", eval_strategy="no", report_to=[], use_cpu=True,
                             seed=7, disable_tqdm=True, optim="sgd", lr_scheduler_type="constant",
                             dataloader_num_workers=0)
    torch.manual_seed(7)
    t = Trainer(model=Mlp(), args=args, train_dataset=data, callbacks=callbacks())
    start = time.perf_counter()
    t.train()
    return (time.perf_counter() - start) * 1000.0 / steps


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--digits", required=True)
    p.add_argument("--steps", type=int, default=400)
    p.add_argument("--repeats", type=int, default=5)
    opts = p.parse_args()
    transformers.logging.set_verbosity_error()
    torch.set_num_threads(1)  # one thread: a 2-core machine shared with other work measures steadily
    data = Digits(opts.digits)
    configs = {
        "none": lambda: [],
        "bridge_empty": lambda: [trainhook.TrainhookCallback()],
        "bridge_grad_stats_tensorboard": lambda: [trainhook.TrainhookCallback(
            callbacks=["grad_stats"], report_to=["tensorboard"])],
    }
    times = {k: [] for k in configs}
    with tempfile.TemporaryDirectory() as work:
        for k, make in configs.items():  # warm-up
            step_ms(data, 50, os.path.join(work, k), make)
        for _ in range(opts.repeats):
            for k, make in configs.items():
                times[k].append(step_ms(data, opts.steps, os.path.join(work, k), make))
    med = {k: statistics.median(v) for k, v in times.items()}
    print(f"transformers {transformers.__version__}, torch {torch.__version__}, {opts.steps} steps x "
          f"{opts.repeats} runs, medians")
    for k, v in med.items():
        print(f"step time {k}: {v:.4f} ms (runs: {', '.join(f'{x:.4f}' for x in times[k])})")
    print(f"step-time ratio bridge_empty/none: {med['bridge_empty'] / med['none']:.4f}")
    print(f"step-time ratio bridge_grad_stats_tensorboard/none: "
          f"{med['bridge_grad_stats_tensorboard'] / med['none']:.4f}")
    print(f"bridge dispatch cost per step (empty bridge - none): {med['bridge_empty'] - med['none']:.4f} ms")


if __name__ == "__main__":
    sys.exit(main())
