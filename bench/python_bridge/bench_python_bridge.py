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
--steps steps, after one warm-up run of each, in wall time and in the process's
CPU time (the "step-time ratio" lines: steadier on a shared machine).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

import torch
import transformers
from transformers import Trainer, TrainerCallback, TrainerControl, TrainerState, TrainingArguments

import trainhook

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "testkit"))
from hf_digits import Digits, Mlp, digits_rows  # noqa: E402


class StepClock(TrainerCallback):
    """Steady-state step time: from the step_begin of step `skip` to the last step_end
    (the Trainer's setup, first steps and end of run are left out)."""

    def __init__(self, skip):
        self.skip = skip
        self.start = self.end = None
        self.steps = 0

    def on_step_begin(self, args, state, control, **kwargs):
        if state.global_step == self.skip:
            self.start = (time.perf_counter(), time.process_time())

    def on_step_end(self, args, state, control, **kwargs):
        self.end = (time.perf_counter(), time.process_time())
        self.steps = state.global_step - self.skip


_EVENTS = ("on_init_end", "on_train_begin", "on_train_end", "on_epoch_begin", "on_epoch_end", "on_step_begin",
           "on_substep_end", "on_pre_optimizer_step", "on_optimizer_step", "on_step_end", "on_evaluate",
           "on_predict", "on_prediction_step", "on_log", "on_save")


class InsideClock:
    """Wraps a callback's event methods: the training thread's CPU time inside it (the
    bridge and its plugins; CPU time, so that being descheduled on a busy machine is
    not counted), from `skip` on like StepClock."""

    def __init__(self, callback, clock):
        self.total = 0.0
        for name in _EVENTS:
            method = getattr(callback, name)

            def timed(*a, _method=method, **k):
                start = time.thread_time()
                try:
                    return _method(*a, **k)
                finally:
                    if clock.start is not None:
                        self.total += time.thread_time() - start
            setattr(callback, name, timed)  # HF looks the method up on the instance


def step_ms(data, steps, work, callbacks, inside=None):
    args = TrainingArguments(output_dir=work, per_device_train_batch_size=64, learning_rate=0.05, max_steps=steps,
                             logging_steps=10, save_strategy="no", eval_strategy="no", report_to=[], use_cpu=True,
                             seed=7, disable_tqdm=True, optim="sgd", lr_scheduler_type="constant",
                             dataloader_num_workers=0)
    torch.manual_seed(7)
    clock = StepClock(skip=min(20, steps // 2))
    made = callbacks()
    timers = [InsideClock(c, clock) for c in made]
    t = Trainer(model=Mlp(hidden=(256, 256)), args=args, train_dataset=data, callbacks=[clock] + made)
    t.train()
    if inside is not None:
        inside.append(sum(x.total for x in timers) * 1e6 / clock.steps)
    # Wall time, and the process's CPU time (all its threads: the plugins' workers
    # count), which a machine shared with other work disturbs far less.
    return tuple((e - b) * 1000.0 / clock.steps for e, b in zip(clock.end, clock.start))


def cli_step_ms(cli, digits, steps, work, plugins):
    """The same model, data and plugins in the C++ trainer (`trainhook train`): train_runtime per step."""
    out = os.path.join(work, "cli_plugins" if plugins else "cli_none")
    cmd = [cli, "train", "--train_file", digits, "--feature_scale", "0.0625", "--model", "mlp", "--hidden_size",
           "256", "--num_layers", "2", "--do_train", "--max_steps", str(steps), "--per_device_train_batch_size",
           "64", "--learning_rate", "0.05", "--optim", "sgd", "--lr_scheduler_type", "constant",
           "--logging_steps", "10", "--save_strategy", "no", "--disable_tqdm", "true", "--seed", "7",
           "--overwrite_output_dir", "true", "--output_dir", out]
    cmd += ["--callbacks", "grad_stats", "--report_to", "tensorboard"] if plugins else ["--report_to", "none"]
    env = dict(os.environ, OMP_NUM_THREADS="1", MKL_NUM_THREADS="1")
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env, timeout=600)
    if p.returncode != 0:
        sys.exit(f"trainhook train failed ({p.returncode}):\n{p.stdout[-3000:]}")
    with open(os.path.join(out, "train_results.json")) as f:
        return json.load(f)["train_runtime"] * 1000.0 / steps


def event_us(callback, hf_event, n, **kwargs):
    """The bridge's cost of one HF event, called directly (no training)."""
    with tempfile.TemporaryDirectory() as out:
        args = TrainingArguments(output_dir=out, report_to=[], use_cpu=True, max_steps=10, logging_steps=10)
        state, control = TrainerState(max_steps=10, logging_steps=10), TrainerControl()
        model = Mlp(hidden=(256, 256))
        callback.on_init_end(args, state, control, model=model)
        callback.on_train_begin(args, state, control, model=model)
        method = getattr(callback, hf_event)
        for _ in range(100):
            method(args, state, control, model=model, **kwargs)
        start = time.perf_counter()
        for _ in range(n):
            method(args, state, control, model=model, **kwargs)
        elapsed = time.perf_counter() - start
        callback.on_train_end(args, state, control, model=model)
        callback.close()
    return elapsed * 1e6 / n


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--digits", required=True)
    p.add_argument("--steps", type=int, default=400)
    p.add_argument("--repeats", type=int, default=7)
    p.add_argument("--cli", help="a trainhook program: the same plugins' cost in the C++ trainer, for comparison")
    opts = p.parse_args()
    transformers.logging.set_verbosity_error()
    torch.set_num_threads(1)  # one thread: a 2-core machine shared with other work measures steadily
    data = Digits(digits_rows(opts.digits))
    configs = {
        "none": lambda: [],
        "bridge_empty": lambda: [trainhook.TrainhookCallback()],
        "bridge_grad_stats_tensorboard": lambda: [trainhook.TrainhookCallback(
            callbacks=["grad_stats"], report_to=["tensorboard"])],
    }
    times = {k: [] for k in configs}
    inside = []  # us per step inside the bridge (and its plugins) on the training thread
    cli_times = {False: [], True: []}
    with tempfile.TemporaryDirectory() as work:
        for k, make in configs.items():  # warm-up
            step_ms(data, 50, os.path.join(work, k), make)
        for _ in range(opts.repeats):
            for k, make in configs.items():
                times[k].append(step_ms(data, opts.steps, os.path.join(work, k), make,
                                        inside if k == "bridge_grad_stats_tensorboard" else None))
            if opts.cli:
                for plugins in (False, True):
                    cli_times[plugins].append(cli_step_ms(opts.cli, opts.digits, opts.steps, work, plugins))
    print(f"transformers {transformers.__version__}, torch {torch.__version__}, {opts.steps} steps x "
          f"{opts.repeats} runs, medians; load average {os.getloadavg()[0]:.1f}")
    for i, clock in enumerate(("wall", "cpu")):
        med = {k: statistics.median(x[i] for x in v) for k, v in times.items()}
        for k, v in med.items():
            print(f"{clock} step time {k}: {v:.4f} ms (runs: {', '.join(f'{x[i]:.4f}' for x in times[k])})")
        prefix = "step-time" if clock == "cpu" else "wall step-time"
        print(f"{prefix} ratio bridge_empty/none: {med['bridge_empty'] / med['none']:.4f}")
        print(f"{prefix} ratio bridge_grad_stats_tensorboard/none: "
              f"{med['bridge_grad_stats_tensorboard'] / med['none']:.4f}")
        print(f"{clock} bridge dispatch cost per step (empty bridge - none): "
              f"{med['bridge_empty'] - med['none']:.4f} ms")
    print(f"CPU time inside the bridge with grad_stats+tensorboard, training thread: {statistics.median(inside):.1f} "
          f"us per step (runs: {', '.join(f'{x:.1f}' for x in inside)})")
    if opts.cli:
        # What the same plugins cost in the C++ trainer (wall time, train_runtime) against what they
        # cost through the bridge in HF (wall time): the difference is what the bridge adds.
        none, plugins = statistics.median(cli_times[False]), statistics.median(cli_times[True])
        wall = {k: statistics.median(x[0] for x in v) for k, v in times.items()}
        cpp_cost, hf_cost = plugins - none, wall["bridge_grad_stats_tensorboard"] - wall["none"]
        print(f"C++ trainer step time none: {none:.4f} ms, grad_stats+tensorboard: {plugins:.4f} ms "
              f"(runs: {', '.join(f'{x:.4f}' for x in cli_times[True])})")
        print(f"C++ trainer step-time ratio grad_stats+tensorboard/none: {plugins / none:.4f}")
        print(f"plugins' cost per step: C++ trainer {cpp_cost:.4f} ms, HF through the bridge {hf_cost:.4f} ms")
        print(f"bridge adds over the plugins' C++ cost: {(hf_cost - cpp_cost) / wall['none'] * 100:.2f} % "
              f"of HF's step time (step-time differences: noisy on a shared machine)")
        print(f"CPU time inside the bridge beyond the plugins' C++ cost: "
              f"{(statistics.median(inside) / 1000.0 - cpp_cost) / wall['none'] * 100:.2f} % of HF's step time")
    # The same costs without the noise of whole steps: one event, many times.
    n = 20000
    skipped = event_us(trainhook.TrainhookCallback(callbacks=["grad_stats"]), "on_step_begin", n)
    ignored = event_us(trainhook.TrainhookCallback(callbacks=["grad_stats"]), "on_pre_optimizer_step", n)
    delivered = event_us(trainhook.TrainhookCallback(callbacks=["ema"]), "on_step_end", n // 10)
    logged = event_us(trainhook.TrainhookCallback(report_to=["tensorboard"]), "on_log", n // 10,
                      logs={"loss": 0.5, "grad_norm": 1.0, "learning_rate": 0.01, "epoch": 0.1})
    print(f"bridge event nobody wants (grad_stats, on_step_begin): {skipped:.2f} us")
    print(f"bridge event delivered, nothing to do (grad_stats, on_pre_optimizer_step off a log step): "
          f"{ignored:.2f} us")
    print(f"bridge event delivered (ema, on_step_end, 4 parameter views + its EMA update): {delivered:.2f} us")
    print(f"bridge event delivered (tensorboard, on_log with 4 values): {logged:.2f} us")


if __name__ == "__main__":
    sys.exit(main())
