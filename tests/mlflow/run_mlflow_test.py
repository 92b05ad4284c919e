"""Integration tests of the mlflow plugin against a real `mlflow server`.

  run_mlflow_test.py integration --driver D --plugin P
  run_mlflow_test.py fault       --driver D --plugin P

The plugin runs inside mlflow_driver (C ABI, like the trainer loads it); what
it produced is read back through MLflow's REST API. The server is always
stopped (finally). Exit code 0 = pass; every failed check is printed.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mlflow_server import MlflowServer, TcpProxy  # noqa: E402

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


def integration(opts, work):
    server = MlflowServer(os.path.join(work, "server")).start()
    try:
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
    finally:
        server.stop()


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
            # Kill only once the run exists and metrics flow (the machine may be slow).
            deadline = time.time() + 120
            while time.time() < deadline:
                runs = server.runs("th-fault") if _has_experiment(server, "th-fault") else []
                if runs and server.history(runs[0]["info"]["run_id"], "loss"):
                    break
                time.sleep(0.5)
            time.sleep(3)
            server.stop()  # SIGKILL: requests in flight are lost mid-way
            proxy.go_down()
            print("server killed", flush=True)
            time.sleep(10)
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
        deadline = time.time() + 120
        while time.time() < deadline and proc.poll() is None:
            runs = server.runs("th-spool") if _has_experiment(server, "th-spool") else []
            if runs and server.history(runs[0]["info"]["run_id"], "loss"):
                break
            time.sleep(0.2)
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


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("mode", choices=["integration", "fault"])
    ap.add_argument("--driver", required=True)
    ap.add_argument("--plugin", required=True)
    ap.add_argument("--keep", action="store_true", help="keep the work folder")
    opts = ap.parse_args()
    work = tempfile.mkdtemp(prefix=f"th_mlflow_{opts.mode}_")
    try:
        (integration if opts.mode == "integration" else fault)(opts, work)
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
