"""Only world rank 0 reports to MLflow: 2 ranks (`trainhook launch`) with
--report_to mlflow against a real `mlflow server` (the test venv's, on
127.0.0.1) make exactly one run, whose loss history has each logged step
once with the loss averaged over ranks (as in trainer_state.json).

usage: ddp_mlflow.py <bin/trainhook> <digits.csv> <work dir>   (run with the test venv's python)
Exit 77 (skip) when the venv has no mlflow.
"""
import json
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "mlflow"))


def main():
    cli, digits, work = sys.argv[1:4]
    if not os.path.exists(os.path.join(os.path.dirname(sys.executable), "mlflow")):
        print(f"SKIP: no mlflow next to {sys.executable} (the test venv, scripts/venv test)")
        return 77
    from mlflow_server import MlflowServer  # noqa: E402

    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    train = os.path.join(work, "train.csv")
    with open(digits) as f, open(train, "w") as out:
        out.writelines(f.readlines()[:1024])
    server = MlflowServer(os.path.join(work, "server")).start()
    try:
        env = {k: v for k, v in os.environ.items() if k != "TRAINHOOK_PLUGIN_PATH"}
        env.update(MLFLOW_TRACKING_URI=server.url, MLFLOW_EXPERIMENT_NAME="th-ddp", OMP_NUM_THREADS="1")
        out = os.path.join(work, "out")
        p = subprocess.run([cli, "launch", "--nproc_per_node", "2", "--", "train", "--train_file", train,
                            "--feature_scale", "0.0625", "--do_train", "--max_steps", "20", "--logging_steps", "5",
                            "--save_strategy", "no", "--per_device_train_batch_size", "16", "--disable_tqdm",
                            "--report_to", "mlflow", "--plugin_error_policy", "fail", "--output_dir", out],
                           env=env, capture_output=True, text=True, timeout=300)
        if p.returncode != 0:
            print(p.stdout[-2000:], p.stderr[-3000:])
            print(f"FAIL: the 2-rank run exited {p.returncode}")
            return 1
        runs = server.runs("th-ddp")
        if len(runs) != 1:
            print(f"FAIL: expected 1 MLflow run (world rank 0 only), found {len(runs)}")
            return 1
        history = sorted((m["step"], m["value"]) for m in server.history(runs[0]["info"]["run_id"], "loss"))
        with open(os.path.join(out, "trainer_state.json")) as f:
            logged = sorted((e["step"], e["loss"]) for e in json.load(f)["log_history"] if "loss" in e)
        if history != logged:
            print(f"FAIL: MLflow loss history {history} differs from trainer_state.json {logged}")
            return 1
        print(f"1 MLflow run; loss history {history}")
        print("PASS")
        return 0
    finally:
        server.stop()


if __name__ == "__main__":
    sys.exit(main())
