"""The same MLP as a TorchScript archive vs the built-in `mlp`, through the CLI.

Both are 64-256-256-10 Linear+ReLU networks with cross-entropy, trained for
the same steps on the same random data (a .pt file) with the same arguments;
the runs alternate, and the median of each side's train_runtime / steps gives
the step times. The ratio (TorchScript / built-in) is the interpreter's
overhead; target <= 1.10. Run with the HF venv's python (python3-torch 1.13
scripts the model): scripts/bench does.

usage: bench_torchscript.py --cli <trainhook> [--steps N] [--repeats R]
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

import torch


class Mlp(torch.nn.Module):
    def __init__(self):
        super().__init__()
        # The built-in mlp's layout and names: layers.0, layers.2, layers.4.
        self.layers = torch.nn.Sequential(torch.nn.Linear(64, 256), torch.nn.ReLU(), torch.nn.Linear(256, 256),
                                          torch.nn.ReLU(), torch.nn.Linear(256, 10))

    def forward(self, input):
        return self.layers(input)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cli", required=True)
    ap.add_argument("--steps", type=int, default=400)
    ap.add_argument("--repeats", type=int, default=5)
    o = ap.parse_args()
    work = tempfile.mkdtemp(prefix="trainhook-bench-ts-")
    try:
        torch.manual_seed(0)
        torch.save({"input": torch.rand(4096, 64), "labels": torch.randint(0, 10, (4096,))}, f"{work}/train.pt")
        torch.jit.save(torch.jit.script(Mlp()), f"{work}/mlp.pt")
        common = ["train", "--train_file", f"{work}/train.pt", "--do_train", "--max_steps", str(o.steps),
                  "--per_device_train_batch_size", "64", "--learning_rate", "1e-3", "--logging_steps", "50",
                  "--save_strategy", "no", "--disable_tqdm", "--report_to", "none", "--overwrite_output_dir"]
        sides = {"builtin": ["--model", "mlp", "--hidden_size", "256", "--num_layers", "2"],
                 "torchscript": ["--model_name_or_path", f"{work}/mlp.pt", "--loss", "cross_entropy"]}
        times = {k: [] for k in sides}
        for r in range(o.repeats + 1):  # the first round warms caches and is dropped
            for name, extra in sides.items():
                out = f"{work}/out_{name}"
                p = subprocess.run([o.cli] + common + extra + ["--output_dir", out], stdout=subprocess.PIPE,
                                   stderr=subprocess.STDOUT, text=True)
                if p.returncode != 0:
                    print(p.stdout[-3000:], file=sys.stderr)
                    sys.exit(f"{name} run failed")
                runtime = json.load(open(f"{out}/train_results.json"))["train_runtime"]
                if r > 0:
                    times[name].append(runtime / o.steps)
        b = statistics.median(times["builtin"])
        t = statistics.median(times["torchscript"])
        ratio = t / b
        print(f"MLP 64-256-256-10, batch 64, {o.steps} steps, {o.repeats} alternating repeats, median step time:")
        print(f"  built-in mlp          {b * 1e6:8.1f} us")
        print(f"  TorchScript archive   {t * 1e6:8.1f} us")
        print(f"step-time ratio torchscript/builtin: {ratio:.3f} (target <= 1.10) "
              f"{'ok' if ratio <= 1.10 else 'ABOVE TARGET'}")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
