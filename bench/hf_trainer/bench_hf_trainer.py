"""Trainhook's CLI against HF's Trainer on the same job, and Trainhook builds against each other.

The job: the same random data (a .pt file of 4096 rows of 64
features, 10 classes), the same model (the built-in `mlp` 64-256-256-10 or
`cnn` on 8x8 images: conv 1->16->32, max-pool, 512->128->10), batch 64, AdamW
at 1e-3, seed 0, logging every step, no saving, one thread (OMP_NUM_THREADS=1
and torch.set_num_threads(1)). Each side's step time is its own in-run figure,
train_runtime / max_steps from its train() metrics (HF's Trainer.train() and
train_results.json), so start-up (Python import, library load) is outside it.
Sides alternate: repeats + 1 rounds, the first dropped (warm caches), and the
median of each side's step times is compared in one run.

Run with a Python that has torch, transformers and accelerate (scripts/bench
makes build/bench-hf-venv: PyTorch from PyPI, the version the 2.x build uses).

usage: bench_hf_trainer.py --side NAME=trainhook:<cli> [--side NAME=trainhook:<cli>:<extra flags>]
                           [--side NAME=hf] --model mlp|cnn [--steps N] [--repeats R]
  prints one line per side ("step time <name>: <us> us") and, for each
  --ratio A/B, "ratio A/B (<model>): <x>" (B's step time over A's: > 1 means A is faster).
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

ROWS, FEATURES, CLASSES, BATCH, LR = 4096, 64, 10, 64, 1e-3


def write_data(path):
    import torch
    g = torch.Generator().manual_seed(0)
    torch.save({"input": torch.rand(ROWS, FEATURES, generator=g),
                "labels": torch.randint(0, CLASSES, (ROWS,), generator=g)}, path)


def hf_model(kind):
    """The built-in models' layers, in the order they are created (same seed, same shapes)."""
    import torch
    from torch import nn

    class Classifier(nn.Module):
        def __init__(self):
            super().__init__()
            if kind == "mlp":
                self.net = nn.Sequential(nn.Linear(FEATURES, 256), nn.ReLU(), nn.Linear(256, 256), nn.ReLU(),
                                         nn.Linear(256, CLASSES))
            else:
                self.net = nn.Sequential(nn.Unflatten(1, (1, 8, 8)), nn.Conv2d(1, 16, 3, padding=1), nn.ReLU(),
                                         nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                                         nn.Flatten(), nn.Linear(32 * 4 * 4, 128), nn.ReLU(),
                                         nn.Linear(128, CLASSES))

        def forward(self, input, labels=None):
            logits = self.net(input)
            loss = torch.nn.functional.cross_entropy(logits, labels) if labels is not None else None
            return {"loss": loss, "logits": logits}

    return Classifier()


def run_hf(data, kind, steps, out, optim):
    """One HF Trainer run in this process; prints its step time in seconds as JSON."""
    import torch
    torch.set_num_threads(1)
    from transformers import Trainer, TrainingArguments, set_seed

    tensors = torch.load(data)

    class Rows(torch.utils.data.Dataset):
        def __len__(self):
            return ROWS

        def __getitem__(self, i):
            return {"input": tensors["input"][i], "labels": tensors["labels"][i]}

    set_seed(0)
    args = TrainingArguments(output_dir=out, max_steps=steps, per_device_train_batch_size=BATCH,
                             learning_rate=LR, logging_steps=1, save_strategy="no", report_to=[],
                             disable_tqdm=True, use_cpu=True, dataloader_num_workers=0, seed=0,
                             optim=optim)
    result = Trainer(model=hf_model(kind), args=args, train_dataset=Rows()).train()
    print(json.dumps({"step_seconds": result.metrics["train_runtime"] / steps,
                      "train_loss": result.metrics["train_loss"]}))


def trainhook_args(kind):
    if kind == "mlp":
        return ["--model", "mlp", "--hidden_size", "256", "--num_layers", "2"]
    return ["--model", "cnn", "--hidden_size", "128"]


def run_side(side, data, kind, steps, work, optim):
    name, spec = side
    out = os.path.join(work, "out_" + name)
    shutil.rmtree(out, ignore_errors=True)
    env = dict(os.environ, OMP_NUM_THREADS="1", MKL_NUM_THREADS="1")
    if spec[0] == "hf":
        cmd = [sys.executable, __file__, "--hf-run", data, "--model", kind, "--steps", str(steps), "--out", out,
               "--optim", optim]
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
        if p.returncode != 0:
            sys.exit(f"{name}: the HF Trainer run failed:\n{p.stdout[-3000:]}")
        line = [l for l in p.stdout.splitlines() if l.startswith("{\"step_seconds\"")]
        if not line:
            sys.exit(f"{name}: the HF Trainer run printed no result:\n{p.stdout[-3000:]}")
        return json.loads(line[-1])
    cli, extra = spec[1], spec[2]
    cmd = [cli, "train", "--train_file", data, "--do_train", "--max_steps", str(steps),
           "--per_device_train_batch_size", str(BATCH), "--learning_rate", str(LR), "--optim", optim,
           "--logging_steps", "1", "--save_strategy", "no", "--disable_tqdm", "--report_to", "none",
           "--seed", "0", "--overwrite_output_dir", "--output_dir", out] + trainhook_args(kind) + extra
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
    if p.returncode != 0:
        sys.exit(f"{name}: {' '.join(cmd)} failed (exit {p.returncode}):\n{p.stdout[-3000:]}")
    with open(os.path.join(out, "train_results.json")) as f:
        r = json.load(f)
    return {"step_seconds": r["train_runtime"] / steps, "train_loss": r["train_loss"]}


def parse_side(text):
    name, _, spec = text.partition("=")
    if not name or not spec:
        sys.exit(f"--side {text!r}: expected NAME=hf or NAME=trainhook:<cli>[:<extra flags>]")
    if spec == "hf":
        return name, ("hf",)
    kind, _, rest = spec.partition(":")
    cli, _, extra = rest.partition(":")
    if kind != "trainhook" or not cli:
        sys.exit(f"--side {text!r}: expected NAME=hf or NAME=trainhook:<cli>[:<extra flags>]")
    if not os.access(cli, os.X_OK):
        sys.exit(f"--side {text!r}: {cli} is not an executable")
    return name, ("trainhook", cli, extra.split())


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--side", action="append", default=[])
    ap.add_argument("--ratio", action="append", default=[], help="A/B: B's step time over A's")
    ap.add_argument("--model", choices=["mlp", "cnn"], required=True)
    ap.add_argument("--steps", type=int, default=300)
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--optim", choices=["adamw_torch", "adamw_torch_fused"], default="adamw_torch_fused",
                    help="both sides' optimizer (HF's default on torch >= 2.8 is adamw_torch_fused; "
                         "a LibTorch without the fused CPU kernel, 1.13, runs adamw_torch and says so)")
    ap.add_argument("--hf-run", help=argparse.SUPPRESS)
    ap.add_argument("--out", help=argparse.SUPPRESS)
    o = ap.parse_args()
    if o.hf_run:
        return run_hf(o.hf_run, o.model, o.steps, o.out, o.optim)
    sides = [parse_side(s) for s in o.side]
    names = [n for n, _ in sides]
    for r in o.ratio:
        a, _, b = r.partition("/")
        if a not in names or b not in names:
            sys.exit(f"--ratio {r}: both sides must be given with --side (sides: {', '.join(names)})")
    work = tempfile.mkdtemp(prefix="trainhook-bench-hf-")
    try:
        data = os.path.join(work, "train.pt")
        write_data(data)
        times = {n: [] for n in names}
        losses = {}
        for rnd in range(o.repeats + 1):
            for side in sides:
                r = run_side(side, data, o.model, o.steps, work, o.optim)
                losses[side[0]] = r["train_loss"]
                if rnd > 0:
                    times[side[0]].append(r["step_seconds"])
        print(f"{o.model}, batch {BATCH}, {o.optim}, {o.steps} steps, logging every step, 1 thread, "
              f"{o.repeats} interleaved rounds, median step time:")
        for n in names:
            print(f"step time {n}: {statistics.median(times[n]) * 1e6:.1f} us (train_loss {losses[n]:.4f})")
        for r in o.ratio:
            a, _, b = r.partition("/")
            print(f"ratio {a}/{b} ({o.model}): {statistics.median(times[b]) / statistics.median(times[a]):.3f}")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
