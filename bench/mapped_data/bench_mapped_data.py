#!/usr/bin/env python3
"""Memory-mapped data benchmark, through the CLI (standard library only).

- memory: peak RSS of training the char_transformer on a 2 GiB token file
  against a 20 MiB one (target <= 1.10: flat however large the file);
- mapped vs in memory: train steps/s on a .bin token file against the same
  bytes as a .txt read into memory (the character LM), same model, vocabulary
  (256) and batch; and on a folder of .npy arrays against the same arrays in a
  torch.save .pt file (the MLP, whose ~1 ms steps show the data path most).
  Debian's python3 (python3-torch, numpy) writes the .pt and .npy files.

usage: bench_mapped_data.py <bin/trainhook> <work dir> <json out> [--quick]
"""
import json
import os
import random
import subprocess
import sys
import time


LM = ["--model", "char_transformer", "--hidden_size", "64", "--num_layers", "2", "--num_heads", "4",
      "--block_size", "64"]
FIXTURE_PYTHON = "/usr/bin/python3"  # Debian's, with python3-torch and numpy


def train(cli, args, out_dir, log, model=LM):
    """Runs one training; returns (peak RSS KiB of the child, its all_results.json)."""
    cmd = [cli, "train", *args, "--output_dir", out_dir, "--save_strategy", "no", "--disable_tqdm",
           "--do_train", *model, "--per_device_train_batch_size", "32", "--seed", "1"]
    with open(log, "w") as f:
        p = subprocess.Popen(cmd, stdout=f, stderr=subprocess.STDOUT)
        _, status, usage = os.wait4(p.pid, 0)
    if status != 0:
        sys.exit(f"bench_mapped_data: {' '.join(cmd)} failed; see {log}")
    with open(os.path.join(out_dir, "train_results.json")) as f:
        return usage.ru_maxrss, json.load(f)


def write_tokens(path, size, seed):
    """`size` bytes of uint16 ids below 256, written in 20 MiB pieces."""
    rng = random.Random(seed)
    piece = bytes(b for _ in range(10 << 20) for b in (rng.randrange(256), 0)) if size >= (20 << 20) else None
    with open(path, "wb") as f:
        left = size
        while left > 0:
            chunk = piece if piece is not None else bytes(b for _ in range(size // 2) for b in (rng.randrange(256), 0))
            chunk = chunk[:left]
            f.write(chunk)
            left -= len(chunk)


def write_arrays(work):
    """The same features and labels as a .pt file and as a folder of .npy arrays."""
    folder = os.path.join(work, "arrays")
    script = """
import os, sys, numpy as np, torch
work, folder = sys.argv[1], sys.argv[2]
rng = np.random.default_rng(5)
x = rng.normal(size=(50000, 32)).astype(np.float32)
y = (x @ rng.normal(size=(32, 10))).argmax(1).astype(np.int64)
os.makedirs(folder, exist_ok=True)
np.save(os.path.join(folder, "input.npy"), x)
np.save(os.path.join(folder, "labels.npy"), y)
torch.save({"input": torch.from_numpy(x), "labels": torch.from_numpy(y)}, os.path.join(work, "arrays.pt"))
"""
    subprocess.run([FIXTURE_PYTHON, "-c", script, work, folder], check=True)
    return os.path.join(work, "arrays.pt"), folder


def steps_per_second(cli, work, name, args, model):
    _, results = train(cli, args, os.path.join(work, name), os.path.join(work, f"{name}.log"), model)
    return results["train_steps_per_second"]


def main():
    cli, work, out = sys.argv[1], sys.argv[2], sys.argv[3]
    quick = "--quick" in sys.argv
    steps = "100" if quick else "400"
    os.makedirs(work, exist_ok=True)
    small, big = os.path.join(work, "small.bin"), os.path.join(work, "big.bin")
    write_tokens(small, 20 << 20, 1)
    write_tokens(big, 2 << 30, 1)
    common = ["--max_steps", steps, "--vocab_size", "256", "--logging_steps", steps]
    rss_small, _ = train(cli, ["--train_file", small, *common], os.path.join(work, "small"),
                         os.path.join(work, "small.log"))
    rss_big, _ = train(cli, ["--train_file", big, *common], os.path.join(work, "big"), os.path.join(work, "big.log"))
    os.remove(big)

    # The same bytes in memory (.txt, the character LM) and mapped (.bin).
    text = os.path.join(work, "text.txt")
    rng = random.Random(2)
    # Every byte value occurs, so the character LM's vocabulary is 256 as the token file's.
    data = bytes(rng.randrange(256) for _ in range(2 << 20))
    with open(text, "wb") as f:
        f.write(data)
    tokens = os.path.join(work, "text.bin")
    with open(tokens, "wb") as f:
        f.write(bytes(b for c in data for b in (c, 0)))
    repeats = 1 if quick else 3
    lm_steps = ["--max_steps", steps, "--logging_steps", steps]
    runs = {}
    # The best of interleaved repeats, so a slow spell of a shared machine hits both sides.
    for r in range(repeats):
        for name, path, extra in (("memory", text, []), ("mapped", tokens, ["--vocab_size", "256"])):
            speed = steps_per_second(cli, work, f"{name}{r}", ["--train_file", path, *lm_steps, *extra], LM)
            runs[name] = max(runs.get(name, 0.0), speed)
    pt, folder = write_arrays(work)
    mlp_steps = "1000" if quick else "10000"
    mlp = ["--model", "mlp", "--hidden_size", "64"]
    for r in range(repeats):
        for name, path in (("pt", pt), ("npy", folder)):
            speed = steps_per_second(cli, work, f"{name}{r}",
                                     ["--train_file", path, "--max_steps", mlp_steps, "--logging_steps", mlp_steps], mlp)
            runs[name] = max(runs.get(name, 0.0), speed)
    result = {"rss_small_kb": rss_small, "rss_big_kb": rss_big, "rss_ratio": rss_big / rss_small,
              "steps_per_second_memory": runs["memory"], "steps_per_second_mapped": runs["mapped"],
              "speed_ratio": runs["mapped"] / runs["memory"], "steps": int(steps),
              "steps_per_second_pt": runs["pt"], "steps_per_second_npy": runs["npy"],
              "npy_speed_ratio": runs["npy"] / runs["pt"], "mlp_steps": int(mlp_steps)}
    with open(out, "w") as f:
        json.dump(result, f, indent=2)
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    t0 = time.time()
    main()
    print(f"bench_mapped_data: {time.time() - t0:.0f} s")
