"""Step-time ratio: mlflow logging every step through a slow network vs none.

Starts a real `mlflow server`, puts a TCP proxy that delays every request by
--delay seconds (default 0.1) in front of it, then runs the same simulated
training loop (mlflow_driver, busy-wait "compute" per step) twice: without
the plugin and with it logging 4 metrics at every step. Prints the mean step
times and their ratio (target <= 1.01); the ratio is printed, never asserted.

It also prints how many HTTP requests the plugin made (coalescing: a handful
of large log-batch requests, not one per step) and the server's own ingest
cost, measured directly (no proxy) with log-batch requests of two sizes: the
train-end drain can never be shorter than the server's time for whatever is
still queued when training ends, and on a loaded machine a sqlite-backed
mlflow server ingests metrics slower than this loop produces them.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tests", "mlflow"))
from mlflow_server import MlflowServer, TcpProxy  # noqa: E402


def run(opts, out, env, *extra):
    p = subprocess.run([opts.driver, "--plugin", opts.plugin, "--output_dir", out, "--steps", str(opts.steps),
                        "--step_ms", str(opts.step_ms), *extra], env=env, capture_output=True, text=True, check=True)
    return json.loads([l for l in p.stdout.splitlines() if l.startswith("{")][-1])


def server_cost(server):
    """(seconds per request, seconds per metric) of log-batch, measured directly."""
    exp = server.post("experiments/create", {"name": "bench-ingest-probe"})["experiment_id"]
    run = server.post("runs/create", {"experiment_id": exp, "start_time": 0})["run"]["info"]["run_id"]
    took = {}
    for n in (10, 200):
        body = {"run_id": run, "metrics": [{"key": f"k{i % 4}", "value": float(i), "timestamp": 1000 + n + i,
                                            "step": i // 4} for i in range(n)]}
        t = time.perf_counter()
        server.post("runs/log-batch", body)
        took[n] = time.perf_counter() - t
    per_metric = max(0.0, (took[200] - took[10]) / 190)
    return max(0.0, took[10] - 10 * per_metric), per_metric


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--driver", required=True)
    ap.add_argument("--plugin", required=True)
    ap.add_argument("--steps", type=int, default=300)
    ap.add_argument("--step_ms", type=int, default=20)
    ap.add_argument("--delay", type=float, default=0.1)
    opts = ap.parse_args()
    work = tempfile.mkdtemp(prefix="th_bench_mlflow_")
    server = MlflowServer(os.path.join(work, "server")).start()
    proxy = TcpProxy(server.port, delay=opts.delay)
    try:
        env = {k: v for k, v in os.environ.items() if not k.startswith("MLFLOW_")}
        base = run(opts, os.path.join(work, "none"), env, "--no_plugin")
        env.update(MLFLOW_TRACKING_URI=proxy.url, MLFLOW_EXPERIMENT_NAME="bench")
        with_ml = run(opts, os.path.join(work, "mlflow"), env, "--config", json.dumps({"flush_timeout": 300}))
        requests = proxy.requests
        per_request, per_metric = server_cost(server)
        ratio = with_ml["mean_step_ms"] / base["mean_step_ms"]
        print(f"proxy delay per request: {opts.delay * 1000:.0f} ms; {opts.steps} steps of {opts.step_ms} ms compute")
        print(f"mean step time, no logging:          {base['mean_step_ms']:.3f} ms")
        print(f"mean step time, mlflow every step:   {with_ml['mean_step_ms']:.3f} ms "
              f"(on_log mean {with_ml['mean_callback_us']:.1f} us, max {with_ml['max_callback_us']:.0f} us)")
        print(f"train end (drain the queue):         {with_ml['train_end_ms']:.0f} ms")
        metrics = 4 * opts.steps
        print(f"HTTP requests through the proxy:     {requests} for {metrics} metric points "
              f"(run setup, params, log-batch, end)")
        print(f"server ingest, measured directly:    {per_request * 1000:.0f} ms per log-batch request + "
              f"{per_metric * 1000:.2f} ms per metric point -> {metrics} points alone take "
              f"{metrics * per_metric:.1f} s of server time vs {opts.steps * with_ml['mean_step_ms'] / 1000:.1f} s "
              f"of training")
        print(f"step-time ratio mlflow/none: {ratio:.4f} (target <= 1.01)")
    finally:
        proxy.close()
        server.stop()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
