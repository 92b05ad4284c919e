"""Our mlflow integration through the Python bridge against a real `mlflow server`.

Runs in the test venv (TRAINHOOK_TEST_VENV: the server), starts the server on
127.0.0.1 (tests/mlflow/mlflow_server.py), runs one HF Trainer run with
TrainhookCallback(report_to=["mlflow"], callbacks=["grad_stats"]) in the HF venv
(hf_bridge_check.py mlflow_run), then reads the run back over REST. The check is
the one the C++ trainer's run is held to (tests/mlflow, the CLI scenario): every
numeric value of every log_history entry (grad_stats' plugin metrics included)
at its step exactly once, and no metric beyond them; the run FINISHED.

usage: run_mlflow_bridge_test.py --hf_python PY --work DIR --digits CSV
"""
import argparse
import json
import math
import os
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "mlflow"))
from mlflow_server import MlflowServer  # noqa: E402

failures = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what, flush=True)
    if not cond:
        failures.append(what)


def same(a, b):
    return a == b or (math.isnan(a) and math.isnan(b)) or abs(a - b) <= 1e-9 * max(abs(a), abs(b))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--hf_python", required=True)
    p.add_argument("--work", required=True)
    p.add_argument("--digits", required=True)
    opts = p.parse_args()
    shutil.rmtree(opts.work, ignore_errors=True)
    os.makedirs(opts.work)
    server = MlflowServer(os.path.join(opts.work, "server")).start()
    try:
        env = dict(os.environ, MLFLOW_TRACKING_URI=server.url)
        r = subprocess.run([opts.hf_python, os.path.join(HERE, "hf_bridge_check.py"), "mlflow_run", "--digits",
                            opts.digits, "--work", opts.work], env=env, timeout=600)
        check(r.returncode == 0, f"the HF run through the bridge succeeded (exit {r.returncode})")
        with open(os.path.join(opts.work, "log_history.json")) as f:
            log_history = json.load(f)
        runs = server.runs("bridge")
        check(len(runs) == 1, f"one MLflow run in experiment 'bridge' ({len(runs)})")
        if not runs:
            return
        info, data = runs[0]["info"], runs[0].get("data", {})
        check(info.get("status") == "FINISHED", f"the run is FINISHED ({info.get('status')})")
        expected = {}
        for entry in log_history:
            for k, v in entry.items():
                if k != "step" and isinstance(v, (int, float)) and not isinstance(v, bool):
                    expected.setdefault(k, []).append((entry["step"], float(v)))
        check("loss" in expected and "eval_loss" in expected and "train_runtime" in expected
              and any(k.startswith("grad_norm/") for k in expected),
              f"log_history has training, eval, final and grad_stats values ({len(expected)} keys)")
        for key, want in sorted(expected.items()):
            got = sorted((m["step"], float(m["value"])) for m in server.history(info["run_id"], key))
            want = sorted(want)
            ok = len(got) == len(want) and all(gs == ws and same(gv, wv) for (gs, gv), (ws, wv) in zip(got, want))
            check(ok, f"metric {key}: {len(want)} value(s) at steps {[s for s, _ in want]} exactly once"
                      + ("" if ok else f" (server has {got})"))
        latest = {m["key"] for m in data.get("metrics", [])}
        check(latest == set(expected), f"no metric beyond log_history ({sorted(latest - set(expected))})")
    finally:
        server.stop()
    if failures:
        print(f"{len(failures)} check(s) failed", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
