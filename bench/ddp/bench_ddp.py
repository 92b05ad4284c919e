"""Data-parallel cost: the same per-rank work in 1 process and in 2 ranks
(Gloo on 127.0.0.1 through `trainhook launch`), interleaved repeats, medians.

The model is compute-bound for its size (an MLP of ~1.1 M parameters, batch 64
per rank, one LibTorch thread per process), so the difference of step times is
what data parallelism adds per step: the bucketed gradient all-reduce (~4.4 MB)
plus the small control-flag agreement. On a small machine two processes also
slow each other down without communicating (shared cores, caches, memory
bandwidth), so a third configuration, two independent 1-process runs at once,
separates that contention from the communication. Prints:
  1 rank step: <ms> ms
  2 independent processes step: <ms> ms
  2 ranks step: <ms> ms
  all-reduce overhead per step: <ms> ms        (2 ranks - 2 independent processes)
  contention per step: <ms> ms                 (2 independent processes - 1 rank)
  step-time ratio 2 ranks / 1 rank: <x>
  scaling efficiency: <x>      (2-rank samples/s / (2 x 1-rank samples/s))
  overlap ratio: <x>           (2-rank step with the all-reduce overlapping backward /
                                all-reduce after backward: --ddp_gradient_reduction after_backward,
                                which `trainhook train` maps onto TrainerOptions::gradient_reduction)
usage: bench_ddp.py --cli build/bin/trainhook --data digits.csv [--steps N] [--repeats R]
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile


def run(cmds, env):
    """Runs the commands at the same time; fails when any fails."""
    procs = [subprocess.Popen(c, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
             for c in cmds]
    for c, p in zip(cmds, procs):
        out, _ = p.communicate(timeout=600)
        if p.returncode != 0:
            sys.stdout.write(out[-3000:])
            raise SystemExit(f"failed ({p.returncode}): {' '.join(c)}")


def step_seconds(out, steps):
    with open(os.path.join(out, "all_results.json")) as f:
        return json.load(f)["train_runtime"] / steps


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cli", required=True)
    ap.add_argument("--data", required=True)
    ap.add_argument("--steps", type=int, default=80)
    ap.add_argument("--repeats", type=int, default=3)
    o = ap.parse_args()
    work = tempfile.mkdtemp(prefix="trainhook-bench-ddp-")
    try:
        train = os.path.join(work, "train.csv")
        with open(o.data) as f, open(train, "w") as out:
            out.writelines(f.readlines()[:1024])
        env = dict(os.environ, OMP_NUM_THREADS="1", MKL_NUM_THREADS="1")
        args = ["train", "--train_file", train, "--feature_scale", "0.0625", "--model", "mlp",
                "--hidden_size", "1024", "--num_layers", "2", "--do_train", "--max_steps", str(o.steps),
                "--per_device_train_batch_size", "64", "--save_strategy", "no", "--logging_steps",
                str(o.steps), "--disable_tqdm", "--overwrite_output_dir"]
        times = {"one": [], "pair": [], "ddp": [], "after": []}
        for r in range(o.repeats):
            out = os.path.join(work, f"one_{r}")
            run([[o.cli] + args + ["--output_dir", out]], env)
            times["one"].append(step_seconds(out, o.steps))
            outs = [os.path.join(work, f"pair{i}_{r}") for i in (0, 1)]
            run([[o.cli] + args + ["--output_dir", d] for d in outs], env)
            times["pair"].append(statistics.mean(step_seconds(d, o.steps) for d in outs))
            out = os.path.join(work, f"ddp_{r}")
            run([[o.cli, "launch", "--nproc_per_node", "2", "--"] + args + ["--output_dir", out]], env)
            times["ddp"].append(step_seconds(out, o.steps))
            out = os.path.join(work, f"after_{r}")
            run([[o.cli, "launch", "--nproc_per_node", "2", "--"] + args +
                 ["--ddp_gradient_reduction", "after_backward", "--output_dir", out]], env)
            times["after"].append(step_seconds(out, o.steps))
        t1, tp, t2 = (statistics.median(times[k]) for k in ("one", "pair", "ddp"))
        print(f"raw step seconds: {times}")
        print(f"1 rank step: {t1 * 1e3:.3f} ms")
        print(f"2 independent processes step: {tp * 1e3:.3f} ms")
        print(f"2 ranks step: {t2 * 1e3:.3f} ms")
        print(f"all-reduce overhead per step: {(t2 - tp) * 1e3:.3f} ms")
        print(f"contention per step: {(tp - t1) * 1e3:.3f} ms")
        print(f"step-time ratio 2 ranks / 1 rank: {t2 / t1:.4f}")
        print(f"scaling efficiency: {t1 / t2:.4f}")
        print(f"overlap ratio: {t2 / statistics.median(times['after']):.4f}")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
