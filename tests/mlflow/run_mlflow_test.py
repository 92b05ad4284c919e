"""Integration tests of the mlflow plugin against a real `mlflow server`.

  run_mlflow_test.py integration --driver D --plugin P [--cli TRAINHOOK]
  run_mlflow_test.py fault       --driver D --plugin P
  run_mlflow_test.py cli         --driver D --plugin P --cli TRAINHOOK [--probe_plugins DIR]
  run_mlflow_test.py not_json    --driver D --plugin P

not_json needs no mlflow server: a stand-in on 127.0.0.1 answers every
request with HTTP 200 and an HTML page (a proxy's login page), and the run's
end-of-run line must say that no run exists and why, that nothing was
delivered, how many records wait in which spool file, and how to send them.

The plugin runs inside mlflow_driver (C ABI, like the trainer loads it) and,
with --cli, inside the real `trainhook train --report_to mlflow`; what it
produced is read back through MLflow's REST API and compared with the
trainer's own trainer_state.json / training_args.json / checkpoint folders.
One mlflow server per script run (it takes long to start on a loaded
machine), shared by the scenarios; it is always stopped (finally). Exit code
0 = pass; every failed check is printed.
"""
import argparse
import http.server
import json
import math
import os
import random
import shutil
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "testkit"))
from mlflow_server import MlflowServer, TcpProxy  # noqa: E402
from wait_until import wait_until  # noqa: E402

# How long the fault test keeps the server down: the fault itself (long enough
# for several retries at retry_max 2 s while training goes on), not a wait.
OUTAGE_S = 10


def _loss_points(server, experiment):
    """loss points the server holds for the experiment's first run (0 before it exists)."""
    runs = server.runs(experiment) if _has_experiment(server, experiment) else []
    return len(server.history(runs[0]["info"]["run_id"], "loss")) if runs else 0

FAILURES = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what, flush=True)
    if not cond:
        FAILURES.append(what)


def clean_env(**extra):
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("MLFLOW_") and k not in ("HF_MLFLOW_LOG_ARTIFACTS", "DISABLE_MLFLOW_INTEGRATION")}
    env.update({k: str(v) for k, v in extra.items()})
    return env


def drive(opts, out_dir, env, *extra, timeout=240):
    cmd = [opts.driver, "--plugin", opts.plugin, "--output_dir", out_dir, *extra]
    p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout)
    summary = None
    for line in p.stdout.splitlines():
        if line.startswith("{"):
            summary = json.loads(line)
    return p.returncode, p.stderr, summary


def _has_experiment(server, name):
    try:
        server.get("experiments/get-by-name", experiment_name=name)
        return True
    except Exception:
        return False


def steps_of(server, run_id, key):
    return sorted((m["step"], m["value"]) for m in server.history(run_id, key))


def integration(opts, work, server):
    uri = server.url
    # --- clear errors --------------------------------------------------------
    rc, err, _ = drive(opts, os.path.join(work, "e1"), clean_env(), "--steps", "1")
    check(rc == 3 and "MLFLOW_TRACKING_URI" in err, "missing MLFLOW_TRACKING_URI is a clear error")
    rc, err, _ = drive(opts, os.path.join(work, "e2"), clean_env(MLFLOW_TRACKING_URI=uri, MLFLOW_TAGS="{bad"),
                       "--steps", "1")
    check(rc == 3 and "MLFLOW_TAGS" in err, "bad MLFLOW_TAGS JSON is a clear error")
    rc, err, _ = drive(opts, os.path.join(work, "e3"), clean_env(DISABLE_MLFLOW_INTEGRATION="true"), "--steps", "2")
    check(rc == 0 and "DISABLE_MLFLOW_INTEGRATION" in err, "DISABLE_MLFLOW_INTEGRATION turns the plugin off")

    # --- a full run ------------------------------------------------------------
    args = {"output_dir": "x", "learning_rate": 0.001, "fp16": True, "hub_token": "hf_secret",
            "lr_scheduler_kwargs": {"power": 2.0}, "long_note": "y" * 7000, "seed": 42}
    env = clean_env(MLFLOW_TRACKING_URI=uri, MLFLOW_EXPERIMENT_NAME="th-integration",
                    MLFLOW_TAGS=json.dumps({"team": "nlp", "stage": 2}), MLFLOW_FLATTEN_PARAMS="1",
                    HF_MLFLOW_LOG_ARTIFACTS="YES")
    out = os.path.join(work, "run1")
    rc, err, summary = drive(opts, out, env, "--steps", "30", "--save_every", "10", "--eval_every", "10",
                             "--args", json.dumps(args), "--run_name", "first-run")
    check(rc == 0, f"driver run succeeded (rc={rc})")
    check("long_note" in err and "exceed" in err, "the over-long param is named in a warning")
    runs = server.runs("th-integration")
    check(len(runs) == 1, "one run in the experiment")
    run = runs[0]
    info, data = run["info"], run["data"]
    run_id = info["run_id"]
    params = {p["key"]: p["value"] for p in data.get("params", [])}
    tags = {t["key"]: t["value"] for t in data.get("tags", [])}
    check(info["status"] == "FINISHED" and int(info.get("end_time", 0)) > 0, "run FINISHED with an end_time")
    check(info.get("run_name") == "first-run" and tags.get("mlflow.runName") == "first-run", "run name")
    check(params.get("learning_rate") == "0.001" and params.get("fp16") == "True", "params as HF renders them")
    check(params.get("lr_scheduler_kwargs.power") == "2.0", "params flattened")
    check("hub_token" not in params and "long_note" not in params, "secret and over-long params not sent")
    check(tags.get("team") == "nlp" and tags.get("stage") == "2", "MLFLOW_TAGS set")
    check(tags.get("mlflow.source.name") == "trainhook" and "mlflow.user" in tags, "system tags")
    loss = steps_of(server, run_id, "loss")
    check(loss == [(s, 1.0 / s) for s in range(1, 31)], "every loss value at its step, once")
    gn = steps_of(server, run_id, "grad_norm")
    check(gn == [(s, 0.5 + s) for s in range(1, 31)], "every grad_norm value, once")
    ev = steps_of(server, run_id, "eval_loss")
    check(ev == [(s, 2.0 / s) for s in (10, 20, 30)], "eval metrics at their steps")
    check(server.history(run_id, "note") == [], "text values are not logged as metrics")
    apath = info["artifact_uri"].split("mlflow-artifacts:", 1)[1].lstrip("/")
    for step in (10, 20, 30):
        files = {f["path"]: f for f in server.artifacts(f"{apath}/checkpoint-{step}")}
        ok = ("model.bin" in files and int(files["model.bin"].get("file_size", -1)) == 4096 + step
              and "trainer_state.json" in files and "sub" in files)
        check(ok, f"checkpoint-{step} uploaded (model.bin size, sub folder)")
    sub = [f["path"] for f in server.artifacts(f"{apath}/checkpoint-10/sub")]
    check(sub == ["extra.txt"], "nested checkpoint files uploaded")

    # --- resume the run ----------------------------------------------------------
    env_resume = clean_env(MLFLOW_TRACKING_URI=uri, MLFLOW_RUN_ID=run_id)
    rc, err, _ = drive(opts, os.path.join(work, "run1b"), env_resume, "--steps", "5", "--first_step", "31",
                       "--args", json.dumps(args | {"learning_rate": 0.5}))
    check(rc == 0, "resumed run succeeded")
    check("learning_rate" in err and "different values" in err, "changed param on resume is reported")
    r = server.get("runs/get", run_id=run_id)["run"]
    check(r["info"]["status"] == "FINISHED", "resumed run FINISHED again")
    loss = steps_of(server, run_id, "loss")
    check([s for s, _ in loss] == list(range(1, 36)), "resumed run continues the metric history")
    params = {p["key"]: p["value"] for p in r["data"]["params"]}
    check(params.get("learning_rate") == "0.001", "param kept its first value")

    # --- nested run --------------------------------------------------------------
    env_nested = clean_env(MLFLOW_TRACKING_URI=uri, MLFLOW_EXPERIMENT_NAME="th-integration",
                           MLFLOW_NESTED_RUN="1", MLFLOW_PARENT_RUN_ID=run_id)
    rc, err, _ = drive(opts, os.path.join(work, "nested"), env_nested, "--steps", "3", "--run_name", "child")
    check(rc == 0, "nested run succeeded")
    child = [x for x in server.runs("th-integration") if x["info"]["run_id"] != run_id]
    ctags = {t["key"]: t["value"] for t in child[0]["data"]["tags"]} if child else {}
    check(len(child) == 1 and ctags.get("mlflow.parentRunId") == run_id, "nested run has mlflow.parentRunId")

    # --- failed training ----------------------------------------------------------
    env_fail = clean_env(MLFLOW_TRACKING_URI=uri, MLFLOW_EXPERIMENT_NAME="th-failed")
    rc, _, _ = drive(opts, os.path.join(work, "failed"), env_fail, "--steps", "3", "--no_train_end")
    runs = server.runs("th-failed")
    check(rc == 0 and len(runs) == 1 and runs[0]["info"]["status"] == "FAILED", "run without train end is FAILED")

    # --- config keys instead of env; concurrent experiment creation --------------
    cfg = json.dumps({"tracking_uri": uri, "experiment_name": "th-race"})
    results = []

    def worker(i):
        results.append(drive(opts, os.path.join(work, f"race{i}"), clean_env(), "--steps", "2", "--config", cfg))

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    check(all(r[0] == 0 for r in results), "three concurrent runs succeeded (config keys, no env)")
    check(len(server.runs("th-race")) == 3, "concurrent experiment creation: one experiment, three runs")


# ---- through the real CLI: trainhook train --report_to mlflow -------------------

def _param_text(v):
    """What the plugin sends for a training argument (HF: str() of the value)."""
    if isinstance(v, str):
        return v
    if isinstance(v, bool):
        return "True" if v else "False"
    if v is None:
        return "None"
    return None  # numbers by value, lists/dicts as str() below


def _same_number(a, b):
    return a == b or (math.isnan(a) and math.isnan(b)) or abs(a - b) <= 1e-9 * max(abs(a), abs(b))


def cli(opts, work, server, isolated=False):
    """`trainhook train --report_to mlflow` (the plugin found in the CLI's default
    plugin folder) against the real server; everything the trainer recorded
    must be on the server: run name and status, the training arguments as
    params, every log_history value at its step exactly once, every
    checkpoint file byte for byte. isolated: the same with the integration in
    its own process (--plugin_isolation mlflow), which must deliver the same."""
    tag = "-isolated" if isolated else ""
    experiment, run_name = "th-cli" + tag, "cli-mlflow-run" + tag
    data = os.path.join(work, "cli_train.csv")
    rnd = random.Random(11)
    with open(data, "w") as f:
        for _ in range(128):
            a, b = rnd.uniform(-1, 1), rnd.uniform(-1, 1)
            f.write("%.4f,%.4f,%d\n" % (a, b, int(a + b > 0)))
    out = os.path.join(work, "cli_out" + tag)
    env = clean_env(MLFLOW_TRACKING_URI=server.url, MLFLOW_EXPERIMENT_NAME=experiment, HF_MLFLOW_LOG_ARTIFACTS="1")
    args = [opts.cli, "train", "--train_file", data, "--validation_file", data, "--do_train", "--output_dir", out,
            "--per_device_train_batch_size", "16", "--max_steps", "12", "--logging_steps", "2",
            "--eval_strategy", "steps", "--eval_steps", "4", "--save_steps", "4", "--disable_tqdm", "true",
            "--seed", "3", "--hidden_size", "16", "--learning_rate", "0.003", "--run_name", run_name,
            "--report_to", "mlflow"] + (["--plugin_isolation", "mlflow"] if isolated else [])
    p = subprocess.run(args, env=env, capture_output=True, text=True, timeout=300)
    print(p.stderr[-2500:], flush=True)
    check(p.returncode == 0, f"trainhook train --report_to mlflow{' isolated' if isolated else ''} succeeded (rc={p.returncode})")
    check("FINISHED" in p.stderr + p.stdout and "not delivered" not in p.stderr,
          "the plugin reported the run FINISHED with everything delivered")
    if p.returncode != 0:
        return
    with open(os.path.join(out, "trainer_state.json")) as f:
        log_history = json.load(f)["log_history"]
    with open(os.path.join(out, "training_args.json")) as f:
        training_args = json.load(f)
    with open(os.path.join(out, "trainhook_args.json")) as f:  # the arguments HF's TrainingArguments lacks
        training_args.update(json.load(f))

    runs = server.runs(experiment)
    check(len(runs) == 1, f"one run in the experiment ({len(runs)})")
    if not runs:
        return
    info, data_ = runs[0]["info"], runs[0]["data"]
    run_id = info["run_id"]
    tags = {t["key"]: t["value"] for t in data_.get("tags", [])}
    params = {p_["key"]: p_["value"] for p_ in data_.get("params", [])}
    check(info.get("run_name") == run_name and tags.get("mlflow.runName") == run_name,
          "run name is the trainer's --run_name")
    check(info["status"] == "FINISHED" and int(info.get("end_time") or 0) >= int(info["start_time"]),
          f"run FINISHED with an end_time ({info['status']}, start {info['start_time']}, end {info.get('end_time')})")

    # Params: every training argument the trainer wrote, with its value.
    wrong = []
    for k, v in training_args.items():
        got = params.get(k)
        want = _param_text(v)
        if got is None:
            wrong.append(f"{k} missing")
        elif want is not None:
            if got != want:
                wrong.append(f"{k}={got!r}, expected {want!r}")
        elif isinstance(v, (int, float)):
            if not _same_number(float(got), float(v)):
                wrong.append(f"{k}={got!r}, expected {v!r}")
        elif got != str(v):  # lists and dicts: Python's str(), as HF sends them
            wrong.append(f"{k}={got!r}, expected {str(v)!r}")
    check(not wrong and len(params) == len(training_args),
          f"params = training_args.json ({len(params)} vs {len(training_args)}) {wrong[:5]}")
    check(params.get("learning_rate") == "0.003" and params.get("max_steps") == "12"
          and params.get("report_to") == "['mlflow']", "learning_rate, max_steps, report_to params")

    # Metrics: every numeric value of every log_history entry, at its step, once
    # (a key logged twice at one step, like epoch with an eval, is there twice).
    expected = {}
    for entry in log_history:
        for k, v in entry.items():
            if k != "step" and isinstance(v, (int, float)) and not isinstance(v, bool):
                expected.setdefault(k, []).append((entry["step"], float(v)))
    check("loss" in expected and "eval_loss" in expected and "train_runtime" in expected,
          f"log_history has training, eval and final logs ({sorted(expected)})")
    for key, want in sorted(expected.items()):
        got = sorted((m["step"], float(m["value"])) for m in server.history(run_id, key))
        want = sorted(want)
        ok = len(got) == len(want) and all(gs == ws and _same_number(gv, wv)
                                           for (gs, gv), (ws, wv) in zip(got, want))
        check(ok, f"metric {key}: {len(want)} value(s) at steps {[s for s, _ in want]} exactly once"
                  + ("" if ok else f" (server has {got})"))
    latest = {m["key"] for m in data_.get("metrics", [])}
    check(latest == set(expected), f"no metric beyond log_history ({sorted(latest - set(expected))})")

    # Artifacts: every file of every checkpoint folder, byte for byte.
    apath = info["artifact_uri"].split("mlflow-artifacts:", 1)[1].lstrip("/")
    ckpts = sorted(d for d in os.listdir(out) if d.startswith("checkpoint-"))
    check(ckpts == ["checkpoint-12", "checkpoint-4", "checkpoint-8"], f"three checkpoints saved ({ckpts})")
    for ck in ckpts:
        local = {}
        for root, _, files in os.walk(os.path.join(out, ck)):
            for name in files:
                full = os.path.join(root, name)
                local[os.path.relpath(full, os.path.join(out, ck)).replace(os.sep, "/")] = full
        bad = []
        for rel, full in sorted(local.items()):
            try:
                remote = server.download(f"{apath}/{ck}/{rel}")
            except Exception as e:  # noqa: BLE001 - reported as a failed check
                bad.append(f"{rel}: {e}")
                continue
            with open(full, "rb") as f:
                if remote != f.read():
                    bad.append(f"{rel}: bytes differ")
        check(bool(local) and not bad, f"{ck}: all {len(local)} files uploaded byte for byte {bad[:3]}")


# ---- how a run ends: FINISHED, FAILED with the reason, KILLED ----------------

def outcomes(opts, work, server):
    """The run's status on the real server says how `trainhook train` ended (the
    integration base's outcome, ABI 1.3 on_exception and th_host.stop_signal):
    a plain run FINISHED; a checkpoint that cannot be written at step 20 (an
    error out of the training loop) FAILED with tag trainhook.failure =
    "error: <the error printed>"; a test callback failing under
    plugin_error_policy=fail FAILED with "plugin: ..."; a SIGTERM KILLED with
    the checkpoint saved and no failure tag. The failing and slow callbacks
    come from the failure_probe test plugin (tests/reliability)."""
    data = os.path.join(work, "outcome_train.csv")
    rnd = random.Random(13)
    with open(data, "w") as f:
        for _ in range(64):
            a, b = rnd.uniform(-1, 1), rnd.uniform(-1, 1)
            f.write("%.4f,%.4f,%d\n" % (a, b, int(a + b > 0)))

    def base(name, max_steps):
        return [opts.cli, "train", "--train_file", data, "--do_train", "--output_dir", os.path.join(work, name),
                "--per_device_train_batch_size", "8", "--max_steps", str(max_steps), "--logging_steps", "5",
                "--disable_tqdm", "true", "--hidden_size", "8", "--run_name", name, "--report_to", "mlflow",
                "--plugin_dir", opts.probe_plugins]

    def run_of(experiment):
        runs = server.runs(experiment)
        check(len(runs) == 1, f"{experiment}: one run ({len(runs)})")
        if not runs:
            return None, {}
        return runs[0]["info"], {t["key"]: t["value"] for t in runs[0]["data"].get("tags", [])}

    def error_printed(stderr):
        lines = [ln for ln in stderr.splitlines() if ln.startswith("trainhook train: error: ")]
        return lines[0][len("trainhook train: error: "):] if lines else None

    # A plain run.
    env = clean_env(MLFLOW_TRACKING_URI=server.url, MLFLOW_EXPERIMENT_NAME="th-outcome-finished")
    p = subprocess.run(base("finished", 6), env=env, capture_output=True, text=True, timeout=300)
    check(p.returncode == 0, f"plain run succeeded (rc={p.returncode}) {p.stderr[-500:] if p.returncode else ''}")
    info, tags = run_of("th-outcome-finished")
    if info:
        check(info["status"] == "FINISHED" and "trainhook.failure" not in tags,
              f"plain run FINISHED without a failure tag ({info['status']}, {tags.get('trainhook.failure')})")

    # The checkpoint of step 20 cannot be written: a dangling symlink holds its
    # folder's name, so the finished checkpoint cannot be renamed into place.
    out = os.path.join(work, "ckpt_error")
    os.makedirs(out)
    os.symlink(os.path.join(work, "nowhere"), os.path.join(out, "checkpoint-20"))
    env = clean_env(MLFLOW_TRACKING_URI=server.url, MLFLOW_EXPERIMENT_NAME="th-outcome-error")
    p = subprocess.run(base("ckpt_error", 30) + ["--overwrite_output_dir", "true", "--save_steps", "20"],
                       env=env, capture_output=True, text=True, timeout=300)
    printed = error_printed(p.stderr)
    check(p.returncode == 1 and printed is not None and "cannot rename" in printed and "checkpoint-20" in printed,
          f"a checkpoint error at step 20 ends the CLI with 1 and the error ({p.returncode}, {printed!r})")
    info, tags = run_of("th-outcome-error")
    if info and printed:
        check(info["status"] == "FAILED" and tags.get("trainhook.failure") == "error: " + printed,
              f"checkpoint error: run FAILED with trainhook.failure = 'error: <printed error>' "
              f"({info['status']}, {tags.get('trainhook.failure')!r})")
        loss_steps = [s for s, _ in steps_of(server, info["run_id"], "loss")]
        check(loss_steps == [5, 10, 15, 20], f"the losses logged before the failure were delivered ({loss_steps})")

    # A test callback fails under plugin_error_policy=fail at step 5.
    env = clean_env(MLFLOW_TRACKING_URI=server.url, MLFLOW_EXPERIMENT_NAME="th-outcome-plugin",
                    FAILURE_PROBE_FAIL_AT=5)
    p = subprocess.run(base("plugin_error", 30) + ["--callbacks", "step_fail", "--plugin_error_policy", "fail"],
                       env=env, capture_output=True, text=True, timeout=300)
    want = "callback 'step_fail' failed in on_step_end: step_fail: failing at step 5 as asked [TH_ERROR]"
    check(p.returncode == 1 and error_printed(p.stderr) == want,
          f"a failing callback ends the CLI with 1 and its error ({p.returncode}, {error_printed(p.stderr)!r})")
    info, tags = run_of("th-outcome-plugin")
    if info:
        check(info["status"] == "FAILED" and tags.get("trainhook.failure") == "plugin: " + want,
              f"failing callback: run FAILED with trainhook.failure = 'plugin: {want}' "
              f"({info['status']}, {tags.get('trainhook.failure')!r})")

    # A SIGTERM while training (300 ms per step): a checkpoint, the run KILLED.
    env = clean_env(MLFLOW_TRACKING_URI=server.url, MLFLOW_EXPERIMENT_NAME="th-outcome-killed",
                    FAILURE_PROBE_STEP_MS=300)
    log_path = os.path.join(work, "killed.err")
    with open(log_path, "w") as log:
        proc = subprocess.Popen(base("killed", 1000) + ["--callbacks", "failure_probe"], env=env,
                                stdout=subprocess.DEVNULL, stderr=log)
        try:
            def reached_step_3():
                with open(log_path) as f:
                    return "failure_probe: step 3" in f.read()
            started = wait_until(lambda: reached_step_3() or proc.poll() is not None, timeout=180)
            check(started and proc.poll() is None, "the slow run reached step 3")
            proc.send_signal(15)
            rc = proc.wait(timeout=180)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    check(rc == 143, f"SIGTERM: the CLI exits 143 ({rc})")
    ckpts = [d for d in os.listdir(os.path.join(work, "killed")) if d.startswith("checkpoint-")]
    check(len(ckpts) == 1, f"SIGTERM: a checkpoint was saved ({ckpts})")
    info, tags = run_of("th-outcome-killed")
    if info:
        check(info["status"] == "KILLED" and "trainhook.failure" not in tags,
              f"SIGTERM: run KILLED without a failure tag ({info['status']}, {tags.get('trainhook.failure')!r})")


# ---- secrets never leave the process ------------------------------------------

def secrets(opts, work, server):
    """One `trainhook train` through every integration (mlflow against the real
    server, wandb against the tests' W&B-style receiver, tensorboard, flyte to a
    local folder) with the documented `--plugin_config wandb.api_key=<secret>`:
    the W&B plugin must still authenticate with it (the receiver requires it),
    but no byte of it may be in any file written under output_dir or the flyte
    destination, in what the mlflow server stored (its sqlite store and
    artifacts), in any request body the receiver got, or in the logs. Where the
    arguments are written, the value is HF's "<API_KEY>" placeholder.
    The mlflow address carries a password in its user-info, in the environment
    (MLFLOW_TRACKING_URI) and in `--plugin_config mlflow.tracking_uri`: the
    plugin still reaches the server with it, and no byte of the password is
    anywhere either (written as http://alice:<PASSWORD>@host)."""
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "wandb"))
    from wandb_receiver import Receiver  # noqa: E402 - the W&B tests' receiver

    secret = "th-secret-%016x" % random.Random().getrandbits(64)
    password = "th-urlpw-%016x" % random.Random().getrandbits(64)
    mlflow_url = server.url.replace("http://", "http://alice:" + password + "@", 1)
    data = os.path.join(work, "secrets_train.csv")
    rnd = random.Random(5)
    with open(data, "w") as f:
        for _ in range(96):
            a, b = rnd.uniform(-1, 1), rnd.uniform(-1, 1)
            f.write("%.4f,%.4f,%d\n" % (a, b, int(a + b > 0)))
    out = os.path.join(work, "secrets_out")
    flyte_dest = os.path.join(work, "secrets_flyte")
    rx = Receiver(secret).start()
    try:
        env = {k: v for k, v in clean_env(MLFLOW_TRACKING_URI=mlflow_url, MLFLOW_EXPERIMENT_NAME="th-secrets",
                                          HF_MLFLOW_LOG_ARTIFACTS="1").items()
               if not k.startswith(("WANDB_", "TRAINHOOK_CHECKPOINT", "TRAINHOOK_PREV", "TENSORBOARD_"))}
        args = [opts.cli, "train", "--train_file", data, "--validation_file", data, "--do_train", "--do_eval",
                "--output_dir", out, "--per_device_train_batch_size", "16", "--max_steps", "8",
                "--logging_steps", "2", "--eval_strategy", "steps", "--eval_steps", "4", "--save_steps", "4",
                "--disable_tqdm", "true", "--seed", "3", "--hidden_size", "16", "--run_name", "secret-run",
                "--report_to", "mlflow,tensorboard,wandb,flyte",
                "--plugin_config", "wandb.api_key=" + secret,
                "--plugin_config", "mlflow.tracking_uri=" + mlflow_url,
                "--plugin_config", "wandb.base_url=" + rx.url(),
                "--plugin_config", "wandb.run_id=secrets1",
                "--plugin_config", "wandb.transmit_interval=0.05",
                "--plugin_config", "wandb.log_model=checkpoint",
                "--plugin_config", "flyte.checkpoint_path=file://" + flyte_dest]
        p = subprocess.run(args, env=env, capture_output=True, text=True, timeout=300)
        print(p.stderr[-2000:], flush=True)
        check(p.returncode == 0, f"trainhook train through mlflow, tensorboard, wandb and flyte (rc={p.returncode})")
        check(secret not in p.stdout and secret not in p.stderr, "the secret is not in the logs")
        check(password not in p.stdout and password not in p.stderr, "the URL password is not in the logs")
        check("alice:<PASSWORD>@" in p.stdout + p.stderr or "alice" not in p.stdout + p.stderr,
              "where the mlflow address is logged, its password reads <PASSWORD>")
        if p.returncode != 0:
            return
        # The plugin had the real key: the receiver accepted every request.
        store = rx.run("test-entity", "trainhook", "secrets1")
        check(store is not None and rx.auth_failures == 0 and len(rx.raw_requests) > 0,
              f"the W&B plugin authenticated with the real key ({len(rx.raw_requests)} requests, "
              f"{rx.auth_failures} refused)")
        leaked = [path for path, body in rx.raw_requests if secret.encode() in body or password.encode() in body]
        check(not leaked, f"no request body the receiver got holds the secret {leaked[:3]}")
        if store is not None:
            check(store.config.get("plugin_config", {}).get("value", {}).get("wandb", {}).get("api_key")
                  == "<API_KEY>", "the W&B run config shows the <API_KEY> placeholder")
    finally:
        rx.stop()

    def files_with_secret(root):
        found, n = [], 0
        for dirpath, _, files in os.walk(root):
            for name in files:
                n += 1
                with open(os.path.join(dirpath, name), "rb") as f:
                    data = f.read()
                    if secret.encode() in data or password.encode() in data:
                        found.append(os.path.relpath(os.path.join(dirpath, name), root))
        return found, n

    for what, root in (("output_dir", out), ("the flyte destination", flyte_dest),
                       ("the mlflow server's store and artifacts", server.workdir)):
        found, n = files_with_secret(root)
        check(n > 0 and not found, f"no file in {what} holds the secret ({n} files; {found[:5]})")
    events = [f for _, _, fs in os.walk(os.path.join(out, "runs")) for f in fs if f.startswith("events.out")]
    check(bool(events), f"TensorBoard event files were written and checked ({len(events)})")
    ckpt_args = [os.path.join(out, d, "trainhook_args.json") for d in sorted(os.listdir(out)) if d.startswith("checkpoint-")]
    check(len(ckpt_args) == 2, f"checkpoints hold trainhook_args.json ({len(ckpt_args)})")
    for path in [os.path.join(out, "trainhook_args.json")] + ckpt_args:  # plugin_config is ours
        with open(path) as f:
            got = json.load(f)["plugin_config"]["wandb"]
        check(got.get("api_key") == "<API_KEY>" and got.get("run_id") == "secrets1",
              f"{os.path.relpath(path, out)}: plugin_config.wandb.api_key is <API_KEY>, other keys kept")
        with open(path) as f:
            uri = json.load(f)["plugin_config"]["mlflow"].get("tracking_uri")
        check(uri == mlflow_url.replace(password, "<PASSWORD>"),
              f"{os.path.relpath(path, out)}: plugin_config.mlflow.tracking_uri reads {uri}")
    runs = server.runs("th-secrets")
    check(len(runs) == 1, f"one mlflow run ({len(runs)})")
    if runs:
        params = {p_["key"]: p_["value"] for p_ in runs[0]["data"].get("params", [])}
        pc = params.get("plugin_config", "")
        check("'api_key': '<API_KEY>'" in pc and secret not in json.dumps(params) and
              password not in json.dumps(params),
              f"the mlflow param plugin_config shows the placeholder, Python str() form ({pc[:120]}...)")


def fault(opts, work):
    # Two servers on one sqlite store: B is the "restarted" server, started
    # ahead because an mlflow server takes long to boot on a loaded machine;
    # the plugin sees one address (a TCP forwarder) that goes away when A is
    # killed and comes back on B ~10 s later.
    store = os.path.join(work, "server")
    server = MlflowServer(store).start()
    proxy = None
    spare = None
    try:
        spare = MlflowServer(store).start()
        proxy = TcpProxy(server.port)
        uri = proxy.url
        # --- server killed for ~10 s in the middle of a run ---------------------------
        env = clean_env(MLFLOW_TRACKING_URI=uri, MLFLOW_EXPERIMENT_NAME="th-fault")
        cfg = json.dumps({"flush_timeout": 120, "retry_max": 2})
        out = os.path.join(work, "run")
        proc = subprocess.Popen([opts.driver, "--plugin", opts.plugin, "--output_dir", out, "--steps", "300",
                                 "--step_ms", "100", "--eval_every", "25", "--config", cfg],
                                env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            # Kill in the middle of the run: once the run exists and 30 of its 300 steps
            # arrived (the machine may be slow).
            check(wait_until(lambda: _loss_points(server, "th-fault") >= 30, timeout=120, poll=0.2),
                  "the run's first metrics arrived")
            server.stop()  # SIGKILL: requests in flight are lost mid-way
            proxy.go_down()
            print("server killed", flush=True)
            time.sleep(OUTAGE_S)
            server, spare = spare, None
            proxy.go_up(server.port)
            print("server restarted on the same store", flush=True)
            stdout, stderr = proc.communicate(timeout=200)
        finally:
            if proc.poll() is None:
                proc.kill()
        check(proc.returncode == 0, f"driver survived the outage (rc={proc.returncode})")
        check("retrying in the background" in stderr and "reachable again" in stderr,
              "the outage was seen and recovered from")
        summary = json.loads([l for l in stdout.splitlines() if l.startswith("{")][-1])
        # Non-blocking proof: a step waited on the network would take >= the outage (10 s).
        check(summary["max_callback_us"] < 2e6, f"no step blocked during the outage ({summary['max_callback_us']:.0f} us max)")
        run = server.runs("th-fault")[0]
        run_id = run["info"]["run_id"]
        for key, f in (("loss", lambda s: 1.0 / s), ("grad_norm", lambda s: 0.5 + s)):
            got = steps_of(server, run_id, key)
            check(got == [(s, f(s)) for s in range(1, 301)], f"every {key} point exactly once after the outage")
        ev = steps_of(server, run_id, "eval_loss")
        check(ev == [(s, 2.0 / s) for s in range(25, 301, 25)], "every eval_loss point exactly once")
        check(run["info"]["status"] == "FINISHED", "run FINISHED after the outage")
        print(stderr[-3000:])

        # --- server down at train end: spool, then a later run delivers it -----------
        env = clean_env(MLFLOW_TRACKING_URI=uri, MLFLOW_EXPERIMENT_NAME="th-spool")
        cfg = json.dumps({"flush_timeout": 3, "memory_records": 20, "retry_max": 1})
        out = os.path.join(work, "spoolrun")
        proc = subprocess.Popen([opts.driver, "--plugin", opts.plugin, "--output_dir", out, "--steps", "200",
                                 "--step_ms", "50", "--config", cfg],
                                env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        # Go down once the run exists and its first metrics arrived.
        wait_until(lambda: proc.poll() is not None or _loss_points(server, "th-spool") > 0, timeout=120, poll=0.2)
        proxy.go_down()
        stdout, stderr = proc.communicate(timeout=120)
        check(proc.returncode == 0, "driver finished while the server was down")
        spool_dir = os.path.join(out, "mlflow_spool")
        spooled = [f for f in os.listdir(spool_dir) if f.endswith(".jsonl")] if os.path.isdir(spool_dir) else []
        check("not delivered" in stderr and "spooled in" in stderr and "MLFLOW_RUN_ID=" in stderr,
              "train end reports what was not delivered and where it is spooled")
        check(len(spooled) == 1, f"one spool file under output_dir ({spooled})")
        check("rejected" not in stderr, "records cut off by the flush timeout are spooled, not counted as rejected")
        print(stderr[-1500:])
        proxy.go_up(server.port)
        run_id = spooled[0][:-len(".jsonl")] if spooled else ""
        env2 = clean_env(MLFLOW_TRACKING_URI=uri, MLFLOW_RUN_ID=run_id)
        rc, err, _ = drive(opts, out, env2, "--steps", "5", "--first_step", "201")
        check(rc == 0 and "spooled by an earlier run" in err, "a later run with MLFLOW_RUN_ID delivers the spool")
        got = steps_of(server, run_id, "loss")
        check(got == [(s, 1.0 / s) for s in range(1, 206)], "every spooled metric delivered exactly once, in order")
        check(not [f for f in os.listdir(spool_dir) if f.endswith(".jsonl")], "spool removed once delivered")
        if run_id:
            check(server.get("runs/get", run_id=run_id)["run"]["info"]["status"] == "FINISHED", "run FINISHED")
    finally:
        if proxy:
            proxy.close()
        server.stop()
        if spare:
            spare.stop()


class _LoginPage(http.server.BaseHTTPRequestHandler):
    """Answers everything with 200 and HTML, as a proxy's login page does."""
    def _answer(self):
        length = int(self.headers.get("Content-Length") or 0)
        if length:
            self.rfile.read(length)
        body = b"<html><body>Please log in</body></html>"
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_GET = _answer
    do_POST = _answer

    def log_message(self, *args):
        pass


def not_json(opts, work):
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _LoginPage)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        uri = f"http://127.0.0.1:{server.server_address[1]}"
        out = os.path.join(work, "notjson")
        env = clean_env(MLFLOW_TRACKING_URI=uri, MLFLOW_EXPERIMENT_NAME="th-not-json")
        cfg = json.dumps({"flush_timeout": 2, "retry_initial": 0.2, "retry_max": 0.5})
        rc, err, _ = drive(opts, out, env, "--steps", "12", "--step_ms", "1", "--config", cfg, timeout=120)
        print(err[-2500:])
        check(rc == 0, f"driver finished against a server answering HTML (rc={rc})")
        spool = os.path.join(out, "mlflow_spool", "unassigned.jsonl")
        lines = open(spool).read().splitlines() if os.path.exists(spool) else []
        # 12 steps x 4 numbers (loss, learning_rate, grad_norm, epoch) + the end-of-run record
        check(len(lines) == 49, f"every record is in the spool file ({len(lines)} lines)")
        end = [l for l in err.splitlines() if "MLflow run" in l]
        last = end[-1] if end else ""
        check(last != "", "an end-of-run line was written")
        check("run not created (" in last and "not JSON" in last,
              f"the end line says no run exists and why: {last}")
        check("training FINISHED" in last, "the end line gives the training's final status")
        check(f"0 records delivered, {len(lines)} spooled in {spool}" in last,
              "the end line counts 0 delivered and every spooled record, with the spool file")
        check("send them later: the next run with the same output_dir delivers them" in last,
              "the end line says how to send them")
        check("(not created) FINISHED: 0 records delivered" not in err, "the old misleading line is gone")
        check("rejected" not in err, "records the server never took are not called rejected")
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("mode", choices=["integration", "fault", "cli", "not_json"])
    ap.add_argument("--driver", required=True)
    ap.add_argument("--plugin", required=True)
    ap.add_argument("--cli", help="the trainhook binary: adds the CLI scenario (mode integration) / runs it (mode cli)")
    ap.add_argument("--probe_plugins", help="the failure_probe test plugin's folder: adds the outcome scenario")
    ap.add_argument("--keep", action="store_true", help="keep the work folder")
    opts = ap.parse_args()
    if opts.mode == "cli" and not opts.cli:
        ap.error("mode cli needs --cli")
    work = tempfile.mkdtemp(prefix=f"th_mlflow_{opts.mode}_")
    try:
        if opts.mode == "fault":
            fault(opts, work)  # its own two servers on one store
        elif opts.mode == "not_json":
            not_json(opts, work)  # no mlflow server at all
        else:
            server = MlflowServer(os.path.join(work, "server")).start()
            try:
                if opts.mode == "integration":
                    integration(opts, work, server)
                if opts.cli:
                    cli(opts, work, server)
                    cli(opts, work, server, isolated=True)
                    secrets(opts, work, server)
                    if opts.probe_plugins:
                        outcomes(opts, work, server)
            finally:
                server.stop()
    finally:
        if not opts.keep:
            shutil.rmtree(work, ignore_errors=True)
    if FAILURES:
        print(f"{len(FAILURES)} check(s) failed", flush=True)
        return 1
    print("all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
