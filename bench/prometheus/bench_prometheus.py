"""The prometheus plugin under training, through the CLI on the built-in MLP:

- the step-time ratio with `--report_to prometheus` / `--report_to none`
  (target <= 1.01): the runs alternate, the first round is dropped, each
  side's median of train_runtime / steps is its step time; no scraper runs
  (a real Prometheus scrapes every 15 to 60 s: a handful of scrapes a run);
- the latency of a `/metrics` scrape while the MLP trains (median and p99,
  target <= 10 ms): a third side, the same prometheus run with a scraper on a
  thread of this process GETting /metrics every `--scrape_every` seconds;
  its step-time ratio to `none` is printed too (that scraping, far denser
  than a real Prometheus, takes CPU from a 2-core machine's training).

usage: bench_prometheus.py --cli <trainhook> [--steps N] [--repeats R] [--scrape_every S]
"""
import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "testkit"))
from free_port import free_port  # noqa: E402


def scraper(port, every, stop, latencies):
    url = "http://127.0.0.1:%d/metrics" % port
    while not stop.is_set():
        t0 = time.perf_counter()
        try:
            with urllib.request.urlopen(url, timeout=5) as r:
                body = r.read()
            if b"trainhook_steps_total" in body:
                latencies.append(time.perf_counter() - t0)
        except OSError:
            pass  # not listening yet (before train begin) or already gone
        stop.wait(every)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cli", required=True)
    ap.add_argument("--steps", type=int, default=600)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--scrape_every", type=float, default=0.05)
    o = ap.parse_args()
    work = tempfile.mkdtemp(prefix="trainhook-bench-prom-")
    try:
        rnd = random.Random(0)
        with open(f"{work}/train.csv", "w") as f:
            for _ in range(4096):
                f.write(",".join("%.4f" % rnd.random() for _ in range(64)) + ",%d\n" % rnd.randrange(10))
        common = ["train", "--train_file", f"{work}/train.csv", "--do_train", "--max_steps", str(o.steps),
                  "--per_device_train_batch_size", "64", "--learning_rate", "1e-3", "--logging_steps", "10",
                  "--save_strategy", "no", "--disable_tqdm", "true", "--model", "mlp", "--hidden_size", "256",
                  "--num_layers", "2", "--overwrite_output_dir", "true"]
        times = {"none": [], "prometheus": [], "scraped": []}
        latencies = []
        for r in range(o.repeats + 1):  # the first round warms caches and is dropped
            for side in ("none", "prometheus", "scraped"):
                out = f"{work}/out_{side}"
                extra = ["--report_to", "none" if side == "none" else "prometheus"]
                stop = threading.Event()
                thread = None
                if side != "none":
                    port = free_port()
                    extra += ["--plugin_config", f"prometheus.listen=127.0.0.1:{port}"]
                if side == "scraped":
                    thread = threading.Thread(target=scraper,
                                              args=(port, o.scrape_every, stop, latencies if r else []))
                    thread.start()
                p = subprocess.run([o.cli] + common + extra + ["--output_dir", out], stdout=subprocess.PIPE,
                                   stderr=subprocess.STDOUT, text=True)
                stop.set()
                if thread:
                    thread.join()
                if p.returncode != 0:
                    print(p.stdout[-3000:], file=sys.stderr)
                    sys.exit(f"the {side} run failed")
                if r:
                    runtime = json.load(open(f"{out}/train_results.json"))["train_runtime"]
                    times[side].append(runtime / o.steps)
        step = {k: statistics.median(v) for k, v in times.items()}
        for k, v in step.items():
            print(f"step time, {k}: {v * 1e6:.0f} us (median of {len(times[k])}: "
                  f"{' '.join('%.0f' % (t * 1e6) for t in times[k])})")
        print(f"step-time ratio prometheus/none: {step['prometheus'] / step['none']:.4f}")
        print(f"step-time ratio prometheus scraped every {o.scrape_every * 1000:.0f} ms/none: "
              f"{step['scraped'] / step['none']:.4f}")
        if len(latencies) < 20:
            sys.exit(f"only {len(latencies)} scrapes answered during training; raise --steps")
        latencies.sort()
        p99 = latencies[min(len(latencies) - 1, int(0.99 * len(latencies)))]
        print(f"scrape latency under training: median {statistics.median(latencies) * 1e3:.2f} ms, "
              f"p99 {p99 * 1e3:.2f} ms ({len(latencies)} scrapes)")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
