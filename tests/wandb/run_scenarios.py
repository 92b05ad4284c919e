"""Integration scenarios of the wandb plugin against the test receiver.

Each scenario starts a Receiver (wandb_receiver.py) on 127.0.0.1, runs a
training driver that loads the built plugin (the real `trainhook train` CLI
with --report_to wandb when --cli is given, else wandb_driver through the C
ABI), then checks what the receiver stored: every line exactly once, in
order, at the right offsets. The receiver is always stopped (finally).

usage: run_scenarios.py --scenario NAME --driver PATH --plugin PATH [--cli PATH]
"""

import argparse
import glob
import json
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "testkit"))
from wandb_receiver import Receiver  # noqa: E402
from wait_until import wait_until  # noqa: E402

KEY = "test-key-0123456789abcdef"
N = 20  # training logs per run; an eval log every 4th, then train_* and predict
LINES = N + N // 4 + 2


def fail(msg):
    raise AssertionError(msg)


class Ctx:
    def __init__(self, args, tmp):
        self.args = args
        self.tmp = tmp
        self.runs = 0

    def out_dir(self):
        self.runs += 1
        d = os.path.join(self.tmp, "out%d" % self.runs)
        os.makedirs(d, exist_ok=True)
        return d

    def config(self, receiver, **extra):
        c = {"base_url": receiver.url() if receiver else "http://127.0.0.1:9",
             "transmit_interval": 0.05, "backoff_initial": 0.1, "backoff_max": 0.5,
             "finish_timeout": 60, "request_timeout": 5}
        c.update(extra)
        return c

    def train(self, config, n=N, end=True, env_extra=None, expect_rc=0, out=None, flags=()):
        out = out or self.out_dir()
        env = dict(os.environ)
        for k in list(env):
            if k.startswith("WANDB_"):
                del env[k]
        env["WANDB_API_KEY"] = KEY
        env.update(env_extra or {})
        cmd = [self.args.driver, "train", self.args.plugin, json.dumps(config), out, str(n)]
        if not end:
            cmd.append("--no-end")
        cmd += list(flags)
        p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=150)
        sys.stderr.write(p.stderr)
        if p.returncode != expect_rc:
            fail("driver exited %d (expected %d): %s" % (p.returncode, expect_rc, p.stderr[-2000:]))
        if KEY in p.stdout or KEY in p.stderr:
            fail("the API key was printed")
        return out, p.stderr

    def sync(self, receiver, *dirs, expect_rc=0):
        env = dict(os.environ)
        env["WANDB_API_KEY"] = KEY
        env.pop("WANDB_BASE_URL", None)
        cmd = [self.args.driver, "sync", self.args.plugin, "--base-url", receiver.url(),
               "--backoff-initial", "0.1", "--backoff-max", "0.5", "--max-wait", "60"] + list(dirs)
        p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=150)
        sys.stderr.write(p.stderr)
        if p.returncode != expect_rc:
            fail("wandb-sync exited %d (expected %d): %s" % (p.returncode, expect_rc, p.stderr[-2000:]))
        return p.stderr


def offline_dirs(out):
    return sorted(glob.glob(os.path.join(out, "wandb", "offline-run-*")))


def strip_times(line):
    d = json.loads(line)
    d.pop("_runtime", None)
    d.pop("_timestamp", None)
    return d


def check_run(store, lines=LINES, first_step=0, complete=0):
    """Every line exactly once, in order, nothing beyond, and well formed."""
    if store.conflicts:
        fail("a line position was written with different texts: %r" % store.conflicts[:2])
    hist = store.history_lines()
    if len(hist) != lines or len(store.history) != lines:
        fail("expected %d history lines, stored %d contiguous / %d total" % (lines, len(hist), len(store.history)))
    steps = [json.loads(l)["_step"] for l in hist]
    if steps != list(range(first_step, first_step + lines)):
        fail("_step out of order: %r" % steps)
    prev_ts = 0
    for l in hist:
        d = json.loads(l)
        for k in ("_runtime", "_timestamp"):
            if k not in d:
                fail("line lacks %s: %s" % (k, l))
        if d["_timestamp"] < prev_ts:
            fail("_timestamp goes back: %s" % l)
        prev_ts = d["_timestamp"]
    if complete is not None and store.complete != complete:
        fail("run not complete with exitcode %r (got %r)" % (complete, store.complete))
    if store.after_complete:
        fail("%d request(s) after the run completed" % store.after_complete)
    return hist


def check_content(hist, first_global_step=1):
    """HF WandbCallback semantics on the driver's log sequence."""
    train = [json.loads(l) for l in hist if "train/loss" in l]
    evals = [json.loads(l) for l in hist if "eval/loss" in l]
    if len(train) != N or len(evals) != N // 4:
        fail("expected %d train and %d eval lines, got %d/%d" % (N, N // 4, len(train), len(evals)))
    if [t["train/global_step"] for t in train] != list(range(first_global_step, first_global_step + N)):
        fail("train/global_step wrong: %r" % [t["train/global_step"] for t in train])
    t0 = train[0]
    for k in ("train/grad_norm", "train/learning_rate", "train/epoch"):
        if k not in t0:
            fail("missing %s in %r" % (k, t0))
    if abs(t0["train/loss"] - 1.0) > 1e-12:
        fail("train/loss value: %r" % t0)
    final = json.loads(hist[-2])
    for k in ("train_runtime", "train_loss", "total_flos", "train/train_runtime", "train/train_loss"):
        if k in final:
            fail("summary-only key %s was logged as history: %r" % (k, final))
    if "train/global_step" not in final or "train/epoch" not in final:
        fail("the final log line lacks train/global_step or epoch: %r" % final)
    pred = json.loads(hist[-1])
    if pred.get("test/loss") != 0.75 or "train/global_step" in pred:
        fail("predict line wrong: %r" % pred)


def check_summary(store):
    s = json.loads(store.summary_line())
    for k, v in (("train_runtime", 12.5), ("train_loss", 0.25), ("total_flos", 12345),
                 ("train_samples_per_second", 80), ("train_steps_per_second", 8), ("test/loss", 0.75)):
        if s.get(k) != v:
            fail("summary %s = %r, expected %r (summary %r)" % (k, s.get(k), v, s))
    if "_step" not in s or "_runtime" not in s:
        fail("summary lacks _step/_runtime: %r" % s)


def check_config(store):
    c = store.config
    if not isinstance(c, dict) or c.get("learning_rate") != {"value": 0.001}:
        fail("config not {k: {value: v}}: %r" % c)
    if "hub_token" in c:
        fail("a secret-looking training argument was sent")


# ---- scenarios ----------------------------------------------------------------

def check_last_request(store, exitcode):
    """The run's last file_stream request is the end mark: complete, with the exit code."""
    last = store.last_request or {}
    if last.get("complete") is not True or last.get("exitcode") != exitcode:
        fail("the last file_stream request is not complete with exitcode %r: %r"
             % (exitcode, {k: v for k, v in last.items() if k != "files"}))


def scenario_online(ctx, rx):
    out, log = ctx.train(ctx.config(rx, run_id="online1", project="p1"))
    (ent, proj, run), store = rx.only_run()
    if (ent, proj, run) != ("test-entity", "p1", "online1"):
        fail("run stored under %r" % ((ent, proj, run),))
    hist = check_run(store)
    check_last_request(store, 0)
    if "wandb run online1 FINISHED: %d history lines delivered, 0 spooled" % LINES not in log:
        fail("no end-of-run line for a delivered run: " + log[-800:])
    check_content(hist)
    check_summary(store)
    check_config(store)
    if store.display_name != "driver-run":
        fail("displayName %r" % store.display_name)
    if offline_dirs(out):
        fail("an online run that was delivered left an offline spool")
    if rx.auth_failures:
        fail("auth failures")


def scenario_end(ctx, rx):
    # The default transmit interval (15 s) against a healthy receiver: the end
    # of the run must not wait it out. Measured in the driver from the
    # train_end call to the callback's destruction (the end of the process's
    # work); a bound on a wait, not a benchmark. Then HF's evaluate() after
    # training (on_evaluate + on_log) must reach the history and the summary,
    # and the end mark comes after it.
    # 20 ms of "compute" after each log: the first request leaves early and the
    # rest of the logs wait for the next interval, the backlog at train end.
    out, log = ctx.train(ctx.config(rx, run_id="end1", transmit_interval=15),
                         flags=["--eval-after-end", "--log-gap-ms", "20"])
    marks = [l for l in log.splitlines() if l.startswith("driver: end_to_exit_s=")]
    if len(marks) != 1:
        fail("the driver did not report its end time: " + log[-800:])
    waited = float(marks[0].split("=", 1)[1])
    if waited >= 2.0:
        fail("train end to exit took %.1f s against a healthy receiver (bound 2 s)" % waited)
    _, store = rx.only_run()
    hist = check_run(store, lines=LINES + 1)
    check_content(hist[:-1])
    last = json.loads(hist[-1])
    if last.get("eval/loss") != 0.125 or last.get("train/global_step") != N or "eval/runtime" not in last:
        fail("the evaluate() after training is not the last history line: %r" % last)
    s = json.loads(store.summary_line())
    if s.get("eval/loss") != 0.125 or s.get("_step") != LINES:
        fail("the summary lacks the evaluate() after training: %r" % s)
    if "wandb run end1 FINISHED: %d history lines delivered, 0 spooled" % (LINES + 1) not in log:
        fail("no end-of-run line: " + log[-800:])
    if offline_dirs(out):
        fail("a delivered run left an offline spool")


def scenario_retries(ctx, rx):
    rx.faults = {1: {"status": 500}, 2: {"status": 429, "retry_after": 1}, 3: {"drop": True},
                 4: {"store_then_drop": True}, 5: {"status": 503}, 7: {"store_then_drop": True},
                 8: {"status": 502}}
    rx.graphql_faults = {1: {"status": 500}}
    # A small request bound makes the run take many requests, so the faults
    # hit the middle of the stream too; memory_records=4 keeps all but a few
    # undelivered lines in the disk spill, which is sent first.
    out, log = ctx.train(ctx.config(rx, run_id="retry1", max_request_bytes=800, memory_records=4))
    _, store = rx.only_run()
    check_content(check_run(store))
    check_summary(store)
    if rx.file_stream_requests < 9:
        fail("expected the scripted faults to be exercised, only %d requests" % rx.file_stream_requests)
    if offline_dirs(out):
        fail("retryable failures must not send the run offline")


def scenario_retry_after(ctx, rx):
    # A 429 with Retry-After holds for the next request on every path.
    # The default-like 15 s transmit interval sends the first lines early and the
    # rest in the end-of-run drain; a small request bound and memory_records=2
    # make the drain many requests from a full backlog (the disk spill first).
    # Every odd file_stream request is a 429 with Retry-After: 1, so faults fall
    # on the early send, the drain and the backlog sends. A lower bound only.
    rx.faults = {n: {"status": 429, "retry_after": 1} for n in range(1, 12, 2)}
    out, log = ctx.train(ctx.config(rx, run_id="ra1", transmit_interval=15, max_request_bytes=600,
                                    memory_records=2, backoff_initial=0.05, backoff_max=0.1))
    _, store = rx.only_run()
    check_content(check_run(store))
    gaps = rx.retry_after_gaps()
    if len(gaps) < 4:
        fail("expected at least 4 answers with Retry-After to be exercised, got %r" % gaps)
    early = [g for g in gaps if g[3] is not None and g[3] < g[2]]
    if early:
        fail("requests sent before Retry-After had passed (kind, number, retry_after s, gap s): %r" % early)
    if any(g[3] is None for g in gaps[:-1]):
        fail("the client stopped after a Retry-After before the run was delivered: %r" % gaps)
    if offline_dirs(out):
        fail("429s must not send the run offline")
    print("ok: %d answers with Retry-After: 1, next request after %s s" %
          (len(gaps), ", ".join("%.2f" % g[3] for g in gaps if g[3] is not None)))


def scenario_away(ctx, rx):
    rx.faults = {2: {"away": 10}}
    out, log = ctx.train(ctx.config(rx, run_id="away1", backoff_max=1.0, offline_after=90, max_request_bytes=600,
                                     memory_records=4))
    _, store = rx.only_run()
    check_content(check_run(store))
    if rx.away_events != 1:
        fail("the receiver did not go away; the fault was not exercised")
    if "answers again" not in log:
        fail("no recovery message in the log")
    if offline_dirs(out):
        fail("a 10 s outage must not send the run offline")


def scenario_offline_sync(ctx, rx):
    # The same run online (reference) and offline + wandb-sync, under two ids.
    ctx.train(ctx.config(rx, run_id="ref1"))
    out, log = ctx.train(ctx.config(rx, run_id="off1", mode="offline"))
    if rx.run("test-entity", "trainhook", "off1") is not None:
        fail("offline mode contacted the server")
    dirs = offline_dirs(out)
    if len(dirs) != 1 or not dirs[0].endswith("-off1"):
        fail("expected one offline-run-*-off1 folder, got %r" % dirs)
    for f in ("run.json", "history.jsonl", "summary.json", "exit.json"):
        if not os.path.exists(os.path.join(dirs[0], f)):
            fail("offline run lacks " + f)
    ctx.sync(rx, os.path.join(out, "wandb"))
    ref = check_run(rx.run("test-entity", "trainhook", "ref1"))
    got = check_run(rx.run("test-entity", "trainhook", "off1"))
    if [strip_times(l) for l in ref] != [strip_times(l) for l in got]:
        fail("offline + wandb-sync history differs from the online one")
    check_summary(rx.run("test-entity", "trainhook", "off1"))
    check_config(rx.run("test-entity", "trainhook", "off1"))
    # Syncing again sends nothing new and changes nothing.
    before = rx.file_stream_requests
    ctx.sync(rx, dirs[0])
    if rx.file_stream_requests != before:
        fail("a second wandb-sync sent requests again")
    check_run(rx.run("test-entity", "trainhook", "off1"))


def scenario_resume(ctx, rx):
    ctx.train(ctx.config(rx, run_id="res1"), n=N)
    first = len(rx.run("test-entity", "trainhook", "res1").history_lines())
    out, log = ctx.train(ctx.config(rx, run_id="res1", resume="must"), n=N)
    store = rx.run("test-entity", "trainhook", "res1")
    hist = check_run(store, lines=2 * first)
    if "resuming run res1 at history line %d" % first not in log:
        fail("no resume message: " + log[-500:])
    # Both halves are complete runs of the driver, second continues _step.
    check_content(hist[:first])
    check_content(hist[first:])
    # never on an existing run: refused, stop requested, nothing overwritten.
    out, log = ctx.train(ctx.config(rx, run_id="res1", resume="never"), n=4)
    if "[wandb] stop requested:" not in log or "already exists" not in log:
        fail("resume=never on an existing run was not refused: " + log[-800:])
    check_run(rx.run("test-entity", "trainhook", "res1"), lines=2 * first)


def scenario_fatal_4xx(ctx, rx):
    rx.faults = {1: {"status": 403}}
    out, log = ctx.train(ctx.config(rx, run_id="deny1"))
    if rx.file_stream_requests != 1:
        fail("a 403 was retried: %d file_stream requests" % rx.file_stream_requests)
    if log.count("scripted failure 403") != 1 or log.count("refused the history upload") != 1:
        fail("the refusal was not reported exactly once with the server's message: " + log[-1500:])
    dirs = offline_dirs(out)
    if len(dirs) != 1:
        fail("the refused lines were not kept in an offline spool: %r" % dirs)
    rx.faults = {}
    ctx.sync(rx, dirs[0])
    store = rx.run("test-entity", "trainhook", "deny1")
    check_content(check_run(store))
    check_summary(store)


def scenario_unreachable(ctx, rx):
    # Down for longer than offline_after: the rest goes to the spool.
    rx.faults = {2: {"away": 8}}
    out, log = ctx.train(ctx.config(rx, run_id="gone1", offline_after=2, max_request_bytes=600,
                                     memory_records=4))
    dirs = offline_dirs(out)
    if len(dirs) != 1 or "unreachable" not in log or rx.away_events != 1:
        fail("an unreachable server did not send the run to the spool: %r" % dirs)
    wait_until(rx.is_up, timeout=30, poll=0.2)
    ctx.sync(rx, dirs[0])
    store = rx.run("test-entity", "trainhook", "gone1")
    check_content(check_run(store))
    check_summary(store)


def scenario_failed(ctx, rx):
    # EXCEPTION instead of train end: the run ends at once with exit code 1
    # and the reason in the summary.
    out, log = ctx.train(ctx.config(rx, run_id="failed1"), flags=["--fail", "boom: loss exploded\nsecond line"])
    _, store = rx.only_run()
    check_content(check_run(store, complete=1))
    check_last_request(store, 1)
    s = json.loads(store.summary_line())
    if s.get("trainhook/failure") != "error at step %d: boom: loss exploded\nsecond line" % N:
        fail("the summary lacks the failure reason: %r" % s.get("trainhook/failure"))
    want = ("wandb run failed1 FAILED (error at step %d: boom: loss exploded ...): %d history lines delivered, "
            "0 spooled" % (N, LINES))
    if want not in log:
        fail("no end-of-run line for a failed run (%r): %s" % (want, log[-800:]))
    if offline_dirs(out):
        fail("a delivered failed run left an offline spool")


def scenario_signal(ctx, rx):
    # A first SIGINT stopped training (checkpoint saved, train end): the exit
    # code the wandb client sends for a KeyboardInterrupt, 255.
    out, log = ctx.train(ctx.config(rx, run_id="sig1"), flags=["--stop-signal", "2"])
    _, store = rx.only_run()
    check_content(check_run(store, complete=255))
    check_last_request(store, 255)
    if "wandb run sig1 KILLED (stopped by signal 2): %d history lines delivered, 0 spooled" % LINES not in log:
        fail("no end-of-run line for a run stopped by a signal: " + log[-800:])


def scenario_down_at_end(ctx, rx):
    # The receiver never answers: the end line says nothing was delivered, how
    # many lines wait in which folder, and the command that sends them; the
    # command then does.
    rx.faults = {1: {"away": 10}}
    out, log = ctx.train(ctx.config(rx, run_id="down1", offline_after=1, finish_timeout=3),
                         flags=["--fail", "data error"])
    dirs = offline_dirs(out)
    if len(dirs) != 1:
        fail("no offline run folder: %r" % dirs)
    ends = [l for l in log.splitlines() if "wandb run down1 " in l]
    last = ends[-1] if ends else ""
    want = "wandb run down1 FAILED (error at step %d: data error): 0 history lines delivered, %d spooled in %s; " \
           "send them later: `trainhook wandb-sync %s`" % (N, LINES, dirs[0], dirs[0])
    if want not in last:
        fail("end line %r lacks %r" % (last, want))
    wait_until(rx.is_up, timeout=60, poll=0.2)
    rx.faults = {}
    ctx.sync(rx, dirs[0])
    store = rx.run("test-entity", "trainhook", "down1")
    check_content(check_run(store, complete=1))
    check_last_request(store, 1)


def scenario_disabled(ctx, rx):
    env = {"WANDB_MODE": "disabled"}
    out, log = ctx.train({"base_url": rx.url()}, env_extra=env)
    if rx.graphql_requests or rx.file_stream_requests or os.path.exists(os.path.join(out, "wandb")):
        fail("WANDB_MODE=disabled did something")


def scenario_config_errors(ctx, rx):
    out = ctx.out_dir()
    env = dict(os.environ)
    env = {k: v for k, v in env.items() if not k.startswith("WANDB_")}
    for config, needle in (({"base_url": rx.url()}, "WANDB_API_KEY is not set"),
                           ({"mode": "sometimes"}, "plugin_config wandb.mode: expected one of online, offline"),
                           ({"projcet": "x", "mode": "offline"},
                            "plugin_config wandb: unknown key 'projcet' (did you mean 'project'?)")):
        p = subprocess.run([ctx.args.driver, "train", ctx.args.plugin, json.dumps(config), out, "1"], env=env,
                           capture_output=True, text=True, timeout=60)
        if p.returncode != 5 or needle not in p.stderr:
            fail("config %r: expected a create error with %r, got rc %d: %s" % (config, needle, p.returncode,
                                                                                p.stderr))


# ---- through the real CLI (trainhook train --report_to wandb, trainhook wandb-sync)

def cli_env():
    env = {k: v for k, v in os.environ.items() if not k.startswith("WANDB_")}
    env["WANDB_API_KEY"] = KEY
    return env


def cli(ctx, args, env=None, failing=False):
    """Runs the CLI; it must succeed, or with failing=True exit non-zero (a failed run)."""
    cmd = [ctx.args.cli] + args
    p = subprocess.run(cmd, env=env or cli_env(), capture_output=True, text=True, timeout=150)
    sys.stderr.write(p.stdout[-3000:] + p.stderr[-3000:])
    if (p.returncode != 0) != failing:
        fail("%s exited %d (expected %s)" % (" ".join(args[:2]), p.returncode, "non-zero" if failing else "0"))
    if KEY in p.stdout or KEY in p.stderr:
        fail("the API key was printed")
    return p.stdout + p.stderr


def cli_train(ctx, rx, out, *plugin_config, extra_args=(), report_to=("wandb",), failing=False):
    data = os.path.join(ctx.tmp, "train.csv")
    if not os.path.exists(data):
        import random
        rnd = random.Random(11)
        with open(data, "w") as f:
            for _ in range(128):
                a, b = rnd.uniform(-1, 1), rnd.uniform(-1, 1)
                f.write("%.4f,%.4f,%d\n" % (a, b, int(a + b > 0)))
    args = ["train", "--train_file", data, "--validation_file", data, "--do_train", "--output_dir", out,
            "--per_device_train_batch_size", "16", "--max_steps", "12", "--logging_steps", "2",
            "--eval_strategy", "steps", "--eval_steps", "4", "--disable_tqdm", "true", "--seed", "3",
            "--hidden_size", "16", "--run_name", "cli-run", "--report_to"] + list(report_to) + list(extra_args)
    if ctx.args.plugin_dir:
        args += ["--plugin_dir", ctx.args.plugin_dir]
    for kv in ("base_url=" + rx.url(), "transmit_interval=0.05", "backoff_initial=0.1", "backoff_max=0.5") + \
            plugin_config:
        args += ["--plugin_config", "wandb." + kv]
    return cli(ctx, args, failing=failing)


def folder_files(d):
    """{relative path: bytes} of every file under d."""
    out = {}
    for root, _, files in os.walk(d):
        for name in files:
            full = os.path.join(root, name)
            with open(full, "rb") as f:
                out[os.path.relpath(full, d).replace(os.sep, "/")] = f.read()
    return out


def check_artifacts(store, expected):
    """expected: {artifact name: folder}; every file's bytes arrived, nothing else."""
    want = {}
    for name, d in expected.items():
        files = folder_files(d)
        if not files:
            fail("nothing to compare: %s is empty" % d)
        for rel, data in files.items():
            want[(name, rel)] = data
    if set(store.artifacts) != set(want):
        fail("artifact files: missing %r, unexpected %r" % (sorted(set(want) - set(store.artifacts))[:5],
                                                           sorted(set(store.artifacts) - set(want))[:5]))
    for key, data in want.items():
        if store.artifacts[key] != data:
            fail("artifact file %s/%s: %d bytes arrived, %d on disk, or different bytes" %
                 (key[0], key[1], len(store.artifacts[key]), len(data)))
    return len(want)


def scenario_cli(ctx, rx):
    # (4. below: the same run isolated.)
    # 1. Online, with faults: the server's history equals the trainer's log_history;
    #    WANDB_LOG_MODEL=checkpoint uploads every checkpoint folder (one PUT
    #    answered 500 and one dropped: retried, nothing lost).
    rx.faults = {1: {"status": 503}, 2: {"drop": True}}
    rx.put_faults = {1: {"status": 500}, 3: {"drop": True}, 5: {"store_then_drop": True}}
    out = os.path.join(ctx.tmp, "online")
    cli_train(ctx, rx, out, "run_id=cli1", "max_request_bytes=400", "log_model=checkpoint",
              extra_args=("--save_steps", "4"))
    with open(os.path.join(out, "trainer_state.json")) as f:
        log_history = json.load(f)["log_history"]
    # eval_strategy implies do_eval (as in HF): the evaluation after training
    # follows trainer_state.json's log_history as one more history line.
    with open(os.path.join(out, "eval_results.json")) as f:
        final_eval = json.load(f)
    store = rx.run("test-entity", "trainhook", "cli1")
    hist = check_run(store, lines=len(log_history) + 1)
    last = json.loads(hist[-1])
    for k, v in final_eval.items():
        if k in ("epoch", "eval_samples") or not k.startswith("eval_"):
            continue
        key = k.replace("eval_", "eval/", 1)
        if key not in last or abs(last[key] - v) > 1e-9 * max(1.0, abs(v)):
            fail("post-train evaluate() %s=%r but the last history line has %r" % (k, v, last.get(key)))
    for entry, line in zip(log_history, hist):
        d = json.loads(line)
        if d["train/global_step"] != entry["step"]:
            fail("train/global_step %r != log_history step %r" % (d["train/global_step"], entry["step"]))
        for k, v in entry.items():
            if k == "step":
                continue
            if k in ("train_runtime", "train_samples_per_second", "train_steps_per_second", "train_loss",
                     "total_flos"):
                if k in d or "train/" + k in d:
                    fail("summary-only key %s in history" % k)
                continue
            key = k.replace("eval_", "eval/", 1) if k.startswith("eval_") else "train/" + k
            if key not in d or abs(d[key] - v) > 1e-9 * max(1.0, abs(v)):
                fail("log_history %s=%r but history line has %r" % (k, v, d.get(key)))
    summary = json.loads(store.summary_line())
    for k in ("train_runtime", "train_loss", "total_flos", "train_samples_per_second"):
        if k not in summary:
            fail("summary lacks %s: %r" % (k, summary))
    if store.display_name != "cli-run" or store.config.get("max_steps") != {"value": 12}:
        fail("run metadata: %r %r" % (store.display_name, store.config))
    if offline_dirs(out):
        fail("online CLI run left a spool")
    ckpts = sorted(d for d in os.listdir(out) if d.startswith("checkpoint-"))
    if ckpts != ["checkpoint-12", "checkpoint-4", "checkpoint-8"]:
        fail("expected checkpoints 4, 8, 12, got %r" % ckpts)
    n = check_artifacts(store, {c: os.path.join(out, c) for c in ckpts})
    if store.artifact_puts < n + 1 or rx.put_requests < n + 3:
        fail("the scripted PUT faults were not exercised (%d stored, %d requests for %d files)" %
             (store.artifact_puts, rx.put_requests, n))
    rx.put_faults = {}
    # 2. Offline, then `trainhook wandb-sync`: same lines at the same offsets.
    rx.faults = {}
    out2 = os.path.join(ctx.tmp, "offline")
    cli_train(ctx, rx, out2, "run_id=cli2", "mode=offline")
    if rx.run("test-entity", "trainhook", "cli2") is not None:
        fail("offline mode contacted the server")
    # Plugin commands find their library on TRAINHOOK_PLUGIN_PATH and the default folder.
    env = cli_env()
    if ctx.args.plugin_dir:
        env["TRAINHOOK_PLUGIN_PATH"] = ctx.args.plugin_dir
    log = cli(ctx, ["wandb-sync", "--base-url", rx.url(), os.path.join(out2, "wandb")], env=env)
    got = check_run(rx.run("test-entity", "trainhook", "cli2"), lines=len(log_history) + 1)
    timing = ("_runtime", "_timestamp", "eval/runtime", "eval/samples_per_second", "eval/steps_per_second")

    def shape(line):
        d = json.loads(line)
        return sorted(k for k in d if k not in timing), d["_step"], d["train/global_step"]
    if [shape(l) for l in hist] != [shape(l) for l in got]:
        fail("offline + wandb-sync history differs from the online one")
    if "history lines" not in log:
        fail("wandb-sync said nothing: " + log)
    # 3. WANDB_LOG_MODEL=end: only the model the run ends with (its last checkpoint).
    out3 = os.path.join(ctx.tmp, "end")
    cli_train(ctx, rx, out3, "run_id=cli3", "log_model=end", extra_args=("--save_steps", "4"))
    store3 = rx.run("test-entity", "trainhook", "cli3")
    check_run(store3, lines=len(log_history) + 1)
    check_artifacts(store3, {"model": os.path.join(out3, "checkpoint-12")})
    # 4. Isolated (--plugin_isolation wandb: its on_log and on_evaluate reach
    #    the helper through the event ring, without a round trip): the server
    #    gets the same history lines as from the run in process.
    out4 = os.path.join(ctx.tmp, "isolated")
    log4 = cli_train(ctx, rx, out4, "run_id=cli4", extra_args=("--plugin_isolation", "wandb"))
    store4 = rx.run("test-entity", "trainhook", "cli4")
    if store4 is None:
        fail("the isolated run reached no server run: " + log4[-1500:])
    got4 = check_run(store4, lines=len(log_history) + 1)
    if [shape(l) for l in hist] != [shape(l) for l in got4]:
        fail("the isolated run's history differs from the one in process")
    if "dropped" in log4:
        fail("the isolated run dropped observe-only events: " + log4[-1500:])


def scenario_cli_failed(ctx, rx):
    # A callback (tests/wandb/fail_at_step_plugin.c, from --plugin_dir) errs at
    # step 4 with plugin_error_policy=fail: the trainer ends the run by
    # EXCEPTION. The wandb run is complete with exitcode 1 and the reason in its
    # summary; the TensorBoard file carries the reason, read by TensorBoard's
    # own reader; both end lines say FAILED with the reason.
    if not ctx.args.cli or not ctx.args.plugin_dir:
        fail("scenario cli_failed needs --cli and --plugin_dir (the fail_at_step plugin's folder)")
    out = ctx.out_dir()
    log = cli_train(ctx, rx, out, report_to=("wandb", "tensorboard"), failing=True,
                    extra_args=("--callbacks", "fail_at_step", "--plugin_error_policy", "fail"))
    _, store = rx.only_run()
    if store.complete != 1:
        fail("the failed CLI run is not complete with exitcode 1 (got %r)" % store.complete)
    check_last_request(store, 1)
    reason = json.loads(store.summary_line()).get("trainhook/failure", "")
    if not reason.startswith("plugin at step 4: ") or "fail_at_step" not in reason:
        fail("the summary's trainhook/failure is %r" % reason)
    if not re.search(r"wandb run \S+ FAILED \(plugin at step 4: [^\n]*fail_at_step", log):
        fail("no FAILED wandb end line: " + log[-1500:])
    if not re.search(r"TensorBoard run \S+ FAILED \(plugin at step 4: [^\n]*fail_at_step", log):
        fail("no FAILED TensorBoard end line: " + log[-1500:])
    from tensorboard.backend.event_processing import event_accumulator
    runs = glob.glob(os.path.join(out, "runs", "*"))
    if len(runs) != 1:
        fail("expected one TensorBoard run folder, found %r" % runs)
    acc = event_accumulator.EventAccumulator(runs[0], size_guidance={"tensors": 0})
    acc.Reload()
    texts = [(e.step, e.tensor_proto.string_val[0].decode("utf-8")) for e in acc.Tensors("trainhook/failure")] \
        if "trainhook/failure" in acc.Tags().get("tensors", []) else []
    if len(texts) != 1 or texts[0][0] != 4 or texts[0][1] != reason:
        fail("TensorBoard's trainhook/failure text is %r, expected [(4, %r)]" % (texts, reason))


SCENARIOS = {name[len("scenario_"):]: fn for name, fn in globals().items() if name.startswith("scenario_")}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--scenario", required=True, choices=sorted(SCENARIOS))
    ap.add_argument("--driver", required=True)
    ap.add_argument("--plugin", required=True)
    ap.add_argument("--cli", help="the trainhook binary (scenario cli)")
    ap.add_argument("--plugin_dir", help="extra plugin folder for the CLI")
    args = ap.parse_args()
    rx = Receiver(KEY).start()
    try:
        with tempfile.TemporaryDirectory(prefix="wandb-it-") as tmp:
            SCENARIOS[args.scenario](Ctx(args, tmp), rx)
    finally:
        rx.stop()
    print("scenario %s: ok" % args.scenario)


if __name__ == "__main__":
    main()
