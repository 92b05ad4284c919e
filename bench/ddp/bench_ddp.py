"""Data-parallel cost: the same per-rank work in 1 process and in 2 ranks
(Gloo on 127.0.0.1 through `trainhook launch`), and the same workload under
PyTorch's DistributedDataParallel (torch_ddp.py: Debian's python3-torch with
Gloo, /usr/bin/python3), interleaved repeats, medians.

The model is compute-bound for its size (an MLP of ~1.1 M parameters, batch 64
per rank, one LibTorch thread per process), so the difference of step times is
what data parallelism adds per step: the bucketed gradient all-reduce (~4.4 MB)
plus the small control-flag agreement. On a small machine two processes also
slow each other down without communicating (shared cores, caches, memory
bandwidth), so a third configuration, two independent 1-process runs at once,
separates that contention from the communication; each side's overhead is its
own 2-rank step minus its own 2 independent processes. Prints:
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
  pytorch ddp 1 process step / 2 independent processes step / 2 ranks step / all-reduce overhead
  all-reduce overhead trainhook / pytorch ddp: <x>   (target <= 1.0)
  2-rank step trainhook / pytorch ddp: <x>           (target <= 0.8)
  overlap window: <text>       (with --breakdown: how much backward is left once the
                                first bucket is ready, against that bucket's all-reduce)
usage: bench_ddp.py --cli build/bin/trainhook --data digits.csv [--steps N] [--repeats R]
                    [--python /usr/bin/python3] [--breakdown build/bench/bench_ddp_breakdown]
                    [--cli-before other-build/bin/trainhook]
"""
import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "testkit"))
from free_port import free_port  # noqa: E402


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


def torch_step_seconds(python, script, data, steps, world, out, env):
    """PyTorch's step time: one run of torch_ddp.py (world 1: a plain process)."""
    run([[python, script, "--data", data, "--steps", str(steps), "--world", str(world),
          "--port", str(free_port()), "--out", out]], env)
    with open(out) as f:
        return json.load(f)["step_seconds"]


def overlap_window(breakdown, env):
    """From bench_ddp_breakdown: backward left once bucket 0 is ready, and that bucket's all-reduce."""
    p = subprocess.run([breakdown, "--steps", "150"], env=env, stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, text=True, timeout=600)
    if p.returncode != 0:
        sys.stdout.write(p.stdout[-3000:])
        raise SystemExit(f"failed ({p.returncode}): {breakdown}")
    text = p.stdout.split("== all-reduces through shared memory ==")[-1]
    bucket = re.search(r"gradient bucket 0 \((\d+) bytes\): ([0-9.]+) us", text)
    left = re.search(r"overlapping backward.*?backward left after bucket 0 is ready: ([0-9.]+) ms", text, re.S)
    if not bucket or not left:
        return None
    return float(left.group(1)), float(bucket.group(2)) / 1e3, int(bucket.group(1))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cli", required=True)
    ap.add_argument("--data", required=True)
    ap.add_argument("--steps", type=int, default=80)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--python", default="/usr/bin/python3", help="a Python with torch (PyTorch's DDP side)")
    ap.add_argument("--breakdown", help="bench_ddp_breakdown, for the overlap window")
    ap.add_argument("--cli-before", help="another build's trainhook (e.g. main's), its 2-rank step interleaved")
    o = ap.parse_args()
    here = os.path.dirname(os.path.abspath(__file__))
    torch_script = os.path.join(here, "torch_ddp.py")
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
        times = {"one": [], "pair": [], "ddp": [], "after": [], "torch_one": [], "torch_pair": [], "torch_ddp": [],
                 "before_ddp": []}
        for r in range(o.repeats):
            # Ours and PyTorch's alternate, so a change of load hits both alike.
            out = os.path.join(work, f"one_{r}")
            run([[o.cli] + args + ["--output_dir", out]], env)
            times["one"].append(step_seconds(out, o.steps))
            times["torch_one"].append(
                torch_step_seconds(o.python, torch_script, train, o.steps, 1, os.path.join(work, "t1.json"), env))
            outs = [os.path.join(work, f"pair{i}_{r}") for i in (0, 1)]
            run([[o.cli] + args + ["--output_dir", d] for d in outs], env)
            times["pair"].append(statistics.mean(step_seconds(d, o.steps) for d in outs))
            tp = [os.path.join(work, f"tp{i}.json") for i in (0, 1)]
            run([[o.python, torch_script, "--data", train, "--steps", str(o.steps), "--world", "1",
                  "--out", tp[i]] for i in (0, 1)], env)
            times["torch_pair"].append(statistics.mean(json.load(open(p))["step_seconds"] for p in tp))
            out = os.path.join(work, f"ddp_{r}")
            run([[o.cli, "launch", "--nproc_per_node", "2", "--"] + args +
                 ["--output_dir", out]], env)
            times["ddp"].append(step_seconds(out, o.steps))
            times["torch_ddp"].append(
                torch_step_seconds(o.python, torch_script, train, o.steps, 2, os.path.join(work, "t2.json"), env))
            out = os.path.join(work, f"after_{r}")
            run([[o.cli, "launch", "--nproc_per_node", "2", "--"] + args +
                 ["--ddp_gradient_reduction", "after_backward", "--output_dir", out]], env)
            times["after"].append(step_seconds(out, o.steps))
            if o.cli_before:
                out = os.path.join(work, f"before_{r}")
                run([[o.cli_before, "launch", "--nproc_per_node", "2", "--"] + args + ["--output_dir", out]], env)
                times["before_ddp"].append(step_seconds(out, o.steps))
        if not o.cli_before:
            del times["before_ddp"]
        med = {k: statistics.median(v) for k, v in times.items()}
        t1, tp, t2 = med["one"], med["pair"], med["ddp"]
        q1, qp, q2 = med["torch_one"], med["torch_pair"], med["torch_ddp"]
        print(f"raw step seconds: {times}")
        print(f"1 rank step: {t1 * 1e3:.3f} ms")
        print(f"2 independent processes step: {tp * 1e3:.3f} ms")
        print(f"2 ranks step: {t2 * 1e3:.3f} ms")
        print(f"all-reduce overhead per step: {(t2 - tp) * 1e3:.3f} ms")
        print(f"contention per step: {(tp - t1) * 1e3:.3f} ms")
        print(f"step-time ratio 2 ranks / 1 rank: {t2 / t1:.4f}")
        print(f"scaling efficiency: {t1 / t2:.4f}")
        overlap = t2 / med["after"]
        print(f"overlap ratio: {overlap:.4f}")
        print(f"pytorch ddp 1 process step: {q1 * 1e3:.3f} ms")
        print(f"pytorch ddp 2 independent processes step: {qp * 1e3:.3f} ms")
        print(f"pytorch ddp 2 ranks step: {q2 * 1e3:.3f} ms")
        print(f"pytorch ddp all-reduce overhead per step: {(q2 - qp) * 1e3:.3f} ms")
        ours, theirs = t2 - tp, q2 - qp
        ratio = ours / theirs if theirs > 0 else float("nan")
        print(f"all-reduce overhead trainhook / pytorch ddp: {ratio:.4f} (target <= 1.0)")
        print(f"2-rank step trainhook / pytorch ddp: {t2 / q2:.4f} (target <= 0.8)")
        if o.cli_before:
            b = med["before_ddp"]
            print(f"2 ranks step of --cli-before: {b * 1e3:.3f} ms (all-reduce overhead {(b - tp) * 1e3:.3f} ms, "
                  f"/ pytorch ddp's {(b - tp) / theirs:.4f}; 2-rank step / pytorch ddp's {b / q2:.4f})")
        if o.breakdown:
            w = overlap_window(o.breakdown, env)
            if w:
                left, bucket_ms, size = w
                verdict = ("long enough to hide it" if left >= bucket_ms else
                           "too short to hide it: an overlap ratio near 1.0 is all this model allows")
                print(f"overlap window: {left:.3f} ms of backward left once the first bucket ({size} bytes) "
                      f"is ready, its all-reduce {bucket_ms:.3f} ms: backward is {verdict}")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
