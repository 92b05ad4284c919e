"""The prometheus plugin against the real tools (Debian's `prometheus` 2.42 and
`prometheus-pushgateway` 1.5), through the real CLI:

1. a Pushgateway and a Prometheus server scraping the exporter every second
   start on 127.0.0.1 free ports (temp TSDB folder; both stopped at the end);
2. `trainhook train ... --report_to prometheus` runs with a run_name holding a
   quote, a backslash and a newline, pushing every second, `linger` 60;
3. while it trains, a few scrapers connect and never read: some send a whole
   request, some half of one. The run must still complete (within the test's
   bound, no timing assertion) and Prometheus' later scrapes must still work:
   the run only ends once a scrape has read its final values (linger);
4. Prometheus: the target was seen healthy ("up" in /api/v1/targets),
   trainhook_loss etc. carry the run_name and job labels (the run_name read
   back exactly), and their last values equal the last log_history entries of
   trainer_state.json; trainhook_up ends at 0; the counters match the steps;
5. the Pushgateway holds the group with the job label, push_time_seconds, the
   final values and trainhook_last_success_timestamp_seconds.

usage: run_prometheus_test.py --cli build/bin/trainhook --work DIR
"""
import argparse
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import threading
import time
import urllib.parse
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "testkit"))
from free_port import free_port  # noqa: E402
from wait_until import wait_until  # noqa: E402

RUN_NAME = 'r"un\\x\ny'
JOB = "th-test"
STEPS = 8000  # a few seconds of training: several scrapes at 1 s happen during it


def escaped_run_name():
    """RUN_NAME as a label value of the text format."""
    return RUN_NAME.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def fail(msg):
    print("FAIL: " + msg, file=sys.stderr)
    sys.exit(1)


def get(url, timeout=5):
    with urllib.request.urlopen(url, timeout=timeout) as r:
        return r.read().decode()


def get_ok(url):
    try:
        get(url)
        return True
    except Exception:
        return False


def query(prom, expr):
    body = json.loads(get(prom + "/api/v1/query?query=" + urllib.parse.quote(expr)))
    if body.get("status") != "success":
        fail("query %s: %s" % (expr, body))
    return body["data"]["result"]


def start(cmd, log):
    return subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT)


def stop(p):
    if p is not None and p.poll() is None:
        p.terminate()
        try:
            p.wait(timeout=20)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()


def write_data(work):
    # A small learnable task (label = x1 > x2), deterministic, as tests/tensorboard does.
    import random
    rnd = random.Random(11)
    rows = []
    for _ in range(256):
        a, b = rnd.random(), rnd.random()
        rows.append("%.5f,%.5f,%d" % (a, b, int(a > b)))
    with open(os.path.join(work, "train.csv"), "w") as f:
        f.write("\n".join(rows[:192]) + "\n")
    with open(os.path.join(work, "valid.csv"), "w") as f:
        f.write("\n".join(rows[192:]) + "\n")


def listening(port):
    try:
        socket.create_connection(("127.0.0.1", port), timeout=1).close()
        return True
    except OSError:
        return False


def stalled_scrapers(port, stop_event, held, probe):
    """As soon as the exporter listens (a bare TCP connect: a scrape would
    count as the final read of `linger`), 4 clients send a whole request and
    never read, 1 sends half a request and never more. Then one scrape of our
    own must still be answered, while the run still trains (trainhook_up 1)."""
    if not wait_until(lambda: stop_event.is_set() or listening(port), 120, 0.02) or stop_event.is_set():
        return
    for i in range(5):
        s = socket.create_connection(("127.0.0.1", port), timeout=5)
        if i < 4:
            s.sendall(b"GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: keep-alive\r\n\r\n")
        else:
            s.sendall(b"GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        held.append(s)
    try:
        probe.append(get("http://127.0.0.1:%d/metrics" % port, timeout=10))
    except Exception as e:
        probe.append("scrape failed: %r" % e)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cli", required=True)
    ap.add_argument("--work", required=True)
    a = ap.parse_args()
    for tool in ("prometheus", "prometheus-pushgateway"):
        if shutil.which(tool) is None:
            fail("%s is not installed (scripts/install-deps installs it)" % tool)
    shutil.rmtree(a.work, ignore_errors=True)
    os.makedirs(a.work)
    write_data(a.work)
    exporter, prom_port, pgw_port = free_port(), free_port(), free_port()
    prom = "http://127.0.0.1:%d" % prom_port
    pgw = "http://127.0.0.1:%d" % pgw_port
    with open(os.path.join(a.work, "prometheus.yml"), "w") as f:
        # honor_labels: the exporter's own job label stays (as for a Pushgateway).
        f.write("global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n"
                "scrape_configs:\n  - job_name: trainhook\n    honor_labels: true\n"
                "    static_configs:\n      - targets: ['127.0.0.1:%d']\n" % exporter)
    procs = []
    held = []
    stop_event = threading.Event()
    try:
        pgw_log = open(os.path.join(a.work, "pushgateway.log"), "w")
        # Debian's default persists to /var/lib/prometheus/pushgateway.data: a
        # file of this test's own, so no earlier run's groups are read back.
        procs.append(start(["prometheus-pushgateway", "--web.listen-address=127.0.0.1:%d" % pgw_port,
                            "--persistence.file=" + os.path.join(a.work, "pushgateway.data")], pgw_log))
        prom_log = open(os.path.join(a.work, "prometheus.log"), "w")
        procs.append(start(["prometheus", "--config.file=" + os.path.join(a.work, "prometheus.yml"),
                            "--storage.tsdb.path=" + os.path.join(a.work, "tsdb"),
                            "--web.listen-address=127.0.0.1:%d" % prom_port], prom_log))
        if not wait_until(lambda: get_ok(pgw + "/-/ready"), 60):
            fail("the Pushgateway did not get ready; see pushgateway.log")
        if not wait_until(lambda: get_ok(prom + "/-/ready"), 60):
            fail("Prometheus did not get ready; see prometheus.log")

        out = os.path.join(a.work, "out")
        cmd = [a.cli, "train", "--train_file", os.path.join(a.work, "train.csv"),
               "--validation_file", os.path.join(a.work, "valid.csv"), "--do_train",
               "--output_dir", out, "--run_name", RUN_NAME, "--per_device_train_batch_size", "16",
               "--per_device_eval_batch_size", "16", "--max_steps", str(STEPS), "--logging_steps", "100",
               "--eval_strategy", "steps", "--eval_steps", "2000", "--save_strategy", "no",
               "--disable_tqdm", "true", "--seed", "3", "--report_to", "prometheus",
               "--plugin_config", "prometheus.listen=127.0.0.1:%d" % exporter,
               "--plugin_config", "prometheus.job=" + JOB,
               "--plugin_config", "prometheus.pushgateway_url=" + pgw,
               "--plugin_config", "prometheus.push_interval=1",
               "--plugin_config", "prometheus.linger=60"]
        train_log = open(os.path.join(a.work, "train.log"), "w")
        probe = []
        scrapers = threading.Thread(target=stalled_scrapers, args=(exporter, stop_event, held, probe))
        healthy = []

        def watch_targets():
            while not stop_event.is_set():
                try:
                    for t in json.loads(get(prom + "/api/v1/targets"))["data"]["activeTargets"]:
                        if t["scrapeUrl"].startswith("http://127.0.0.1:%d/" % exporter) and t["health"] == "up":
                            healthy.append(t)
                except Exception:
                    pass
                time.sleep(0.05)

        watcher = threading.Thread(target=watch_targets)
        trainer = start(cmd, train_log)
        procs.append(trainer)
        scrapers.start()
        watcher.start()
        try:
            code = trainer.wait(timeout=240)
        except subprocess.TimeoutExpired:
            fail("the run did not end within 240 s (stalled scrapers blocked it?); see %s/train.log" % a.work)
        stop_event.set()
        scrapers.join()
        watcher.join()
        log = open(os.path.join(a.work, "train.log")).read()
        if code != 0:
            fail("trainhook train exited with %d:\n%s" % (code, log))
        if len(held) != 5:
            fail("the stalled scrapers never connected (%d connections)" % len(held))
        up_line = 'trainhook_up{job="%s",run_name="%s"} 1' % (JOB, escaped_run_name())
        if not probe or up_line not in probe[0]:
            fail("a scrape beside the stalled clients, during training, did not answer with %s: %s" %
                 (up_line, probe[0][:300] if probe else "no scrape"))
        if not healthy:
            fail("Prometheus never showed the exporter's target as up in /api/v1/targets")
        print("target seen healthy: lastError=%r" % healthy[-1].get("lastError"))

        counts = re.search(r"(\d+) of (\d+) pushes to ", log)
        if not counts or counts.group(1) != counts.group(2) or int(counts.group(1)) < 2:
            fail("the end line does not say that every push (at least 2) succeeded:\n" + log)
        if "no scrape read the final values" in log:
            fail("no scrape read the final values during linger:\n" + log)

        # The final scrape ended the linger; wait until Prometheus has stored it.
        sel = '{job="%s"}' % JOB
        if not wait_until(lambda: [r for r in query(prom, "trainhook_up" + sel) if r["value"][1] == "0"], 30):
            fail("trainhook_up never reached 0 in Prometheus: %s" % query(prom, "trainhook_up" + sel))
        history = json.load(open(os.path.join(out, "trainer_state.json")))["log_history"]
        last = {}
        for entry in history:
            for k, v in entry.items():
                if k != "step" and isinstance(v, (int, float)) and not isinstance(v, bool):
                    last[k] = v
        for key in ("loss", "learning_rate", "grad_norm", "epoch", "eval_loss", "train_runtime"):
            if key not in last:
                fail("%s is not in log_history: %s" % (key, history[-1]))
        checked = []
        for key, want in sorted(last.items()):
            name = "trainhook_" + "".join(c if c.isalnum() or c == "_" else "_" for c in key)
            result = query(prom, name + sel)
            if len(result) != 1:
                fail("%s: expected one series, got %s" % (name, result))
            labels = result[0]["metric"]
            if labels.get("run_name") != RUN_NAME or labels.get("job") != JOB:
                fail("%s: labels %s (run_name must read back as %r, job %r)" % (name, labels, RUN_NAME, JOB))
            got = float(result[0]["value"][1])
            if abs(got - float(want)) > 1e-12 * max(1.0, abs(float(want))):
                fail("%s: Prometheus has %r, log_history's last %s is %r" % (name, got, key, want))
            checked.append(key)
        print("last values equal log_history for", checked)
        steps = query(prom, "trainhook_steps_total" + sel)
        if float(steps[0]["value"][1]) != STEPS:
            fail("trainhook_steps_total is %s, expected %d" % (steps, STEPS))
        samples = float(query(prom, "trainhook_samples_total" + sel)[0]["value"][1])
        if samples != STEPS * 16:
            fail("trainhook_samples_total is %s, expected %d" % (samples, STEPS * 16))
        count = float(query(prom, "trainhook_step_duration_seconds_count" + sel)[0]["value"][1])
        if count != STEPS:
            fail("trainhook_step_duration_seconds_count is %s, expected %d" % (count, STEPS))
        stamp = float(query(prom, "trainhook_last_step_timestamp_seconds" + sel)[0]["value"][1])
        if not (time.time() - 600 < stamp <= time.time()):
            fail("trainhook_last_step_timestamp_seconds %s is not a recent unix time" % stamp)

        # The Pushgateway: its API (exact label values) and its /metrics text.
        groups = json.loads(get(pgw + "/api/v1/metrics"))["data"]
        group = [g for g in groups if g["labels"].get("job") == JOB and g["labels"].get("run_name") == RUN_NAME]
        if len(group) != 1:
            fail("the Pushgateway has no group job=%s,run_name=%r: %s" % (JOB, RUN_NAME, [g["labels"] for g in groups]))
        g = group[0]

        def pushed(name):
            return float(g[name]["metrics"][0]["value"])

        if pushed("trainhook_up") != 0 or pushed("trainhook_steps_total") != STEPS:
            fail("the final push is not the final state: %s" % json.dumps(g)[:2000])
        if abs(pushed("trainhook_loss") - last["loss"]) > 1e-12 * max(1.0, abs(last["loss"])):
            fail("pushed trainhook_loss %s != %s" % (pushed("trainhook_loss"), last["loss"]))
        if "trainhook_last_success_timestamp_seconds" not in g:
            fail("a finished run's final push lacks trainhook_last_success_timestamp_seconds")
        text = get(pgw + "/metrics")
        escaped = escaped_run_name()
        for series in ("push_time_seconds", "trainhook_up", "trainhook_loss"):
            lines = [l for l in text.splitlines() if l.startswith(series + "{") and 'job="%s"' % JOB in l
                     and 'run_name="%s"' % escaped in l]
            if len(lines) != 1:
                fail("the Pushgateway's /metrics has no %s{job=%s,run_name=%s}: %s" %
                     (series, JOB, escaped, [l for l in text.splitlines() if l.startswith(series)]))
        print("ok: Prometheus scraped and the Pushgateway received the run (%s)" %
              [l for l in log.splitlines() if "pushes to" in l][-1].strip())
    finally:
        stop_event.set()
        for s in held:
            s.close()
        for p in reversed(procs):
            stop(p)


if __name__ == "__main__":
    main()
