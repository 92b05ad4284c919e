"""A metric a plugin adds through ABI 1.1's add_metric reaches MLflow like the
trainer's own: a real `mlflow server` (test venv), `trainhook train --report_to
mlflow --callbacks c_grad_norm`, then the run's c_grad_norm history read back
over REST equals log_history's values at each step.

usage: model_access_mlflow.py <trainhook> <plugin folder> <digits.csv> <work dir>
"""
import json
import math
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "mlflow"))
from mlflow_server import MlflowServer  # noqa: E402


def main():
    th, plugins, digits, work = sys.argv[1:5]
    shutil.rmtree(work, ignore_errors=True)  # a re-run starts clean (one run, one server store)
    os.makedirs(work)
    train = os.path.join(work, "train.csv")
    with open(digits) as src, open(train, "w") as dst:
        for i, line in enumerate(src):
            if i >= 256:
                break
            dst.write(line)
    server = MlflowServer(os.path.join(work, "server")).start()
    try:
        out = os.path.join(work, "run")
        env = dict(os.environ, MLFLOW_TRACKING_URI=server.url, MLFLOW_EXPERIMENT_NAME="abi11", OMP_NUM_THREADS="1")
        cmd = [th, "train", "--train_file", train, "--feature_scale", "0.0625", "--model", "mlp", "--do_train",
               "--disable_tqdm", "true", "--max_steps", "4", "--logging_steps", "1", "--save_strategy", "no",
               "--output_dir", out, "--plugin_dir", plugins, "--callbacks", "c_grad_norm", "--report_to", "mlflow"]
        r = subprocess.run(cmd, env=env, capture_output=True, text=True)
        if r.returncode != 0:
            sys.exit(f"FAIL: trainhook train exited {r.returncode}:\n{r.stdout}\n{r.stderr}")
        logged = {h["step"]: h["c_grad_norm"] for h in json.load(open(os.path.join(out, "trainer_state.json")))[
            "log_history"] if "c_grad_norm" in h}
        (run,) = server.runs("abi11")
        got = {m["step"]: m["value"] for m in server.history(run["info"]["run_id"], "c_grad_norm")}
        if sorted(got) != sorted(logged) or not all(math.isclose(got[s], logged[s], rel_tol=1e-6) for s in got):
            sys.exit(f"FAIL: MLflow c_grad_norm {got} != log_history {logged}")
        print("ok: plugin metric c_grad_norm in MLflow at steps", sorted(got))
    finally:
        server.stop()


if __name__ == "__main__":
    main()
