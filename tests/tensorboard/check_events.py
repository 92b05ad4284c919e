"""Reads Trainhook's TensorBoard event files with the `tensorboard` package
(PyPI) and checks them against what was logged.

  check_events.py <output_dir> --expected expected.json
  check_events.py <output_dir> --trainer-output   (expected values from the
      run's trainer_state.json log_history and training_args.json)

Checks: exactly one event file, named events.out.tfevents.<10 digits>.<host>.<pid>...,
in <output_dir>/runs/<Mon><DD>_<HH>-<MM>-<SS>_<host>/ (or --logdir); every logged
number as a scalar at its step with the float32 value, read by both the legacy
EventAccumulator and the data provider TensorBoard serves from; the scalar tag
names; texts; the `args` text; the hparams session (start and end) and the
experiment, through TensorBoard's own hparams plugin. Exits non-zero with a
message on the first mismatch.
"""
import argparse
import glob
import json
import os
import re
import sys

import numpy as np
from tensorboard.backend.event_processing import data_provider
from tensorboard.backend.event_processing import event_accumulator
from tensorboard.backend.event_processing import plugin_event_multiplexer
from tensorboard.plugins import base_plugin
from tensorboard.plugins.hparams import hparams_plugin
from tensorboard.plugins.hparams import metadata as hparams_metadata
from tensorboard.plugins.hparams import api_pb2
from tensorboard import context as tb_context
from werkzeug.test import Client
from werkzeug.wrappers import Response


def fail(msg):
    print("check_events: FAIL: " + msg, file=sys.stderr)
    sys.exit(1)


def rewrite(key):
    if key.startswith("eval_"):
        return "eval/" + key[5:]
    if key.startswith("test_"):
        return "test/" + key[5:]
    return "train/" + key


def expected_from_trainer_output(output_dir):
    with open(os.path.join(output_dir, "trainer_state.json")) as f:
        state = json.load(f)
    with open(os.path.join(output_dir, "training_args.json")) as f:
        args = json.load(f)
    # The arguments HF's TrainingArguments lacks: written by the trainhook
    # program, absent from a run of HF's own Trainer (the Python bridge).
    ours = os.path.join(output_dir, "trainhook_args.json")
    if os.path.exists(ours):
        with open(ours) as f:
            args.update(json.load(f))
    scalars, texts = [], []
    for entry in state["log_history"]:
        step = entry["step"]
        for k, v in entry.items():
            if k == "step":
                continue
            if isinstance(v, bool):
                fail("unexpected boolean in log_history: %s" % k)
            if isinstance(v, (int, float)):
                scalars.append({"key": k, "step": step, "value": v})
            elif isinstance(v, str):
                texts.append({"key": k, "step": step, "value": v})
    # The CLI's evaluation after training (as HF's example scripts) is logged at
    # the final global_step but saved only to eval_results.json, which adds
    # eval_samples after the log, as HF's scripts do.
    eval_file = os.path.join(output_dir, "eval_results.json")
    if os.path.exists(eval_file):
        with open(eval_file) as f:
            final_eval = json.load(f)
        for k, v in final_eval.items():
            if k != "eval_samples" and isinstance(v, (int, float)) and not isinstance(v, bool):
                scalars.append({"key": k, "step": state["global_step"], "value": v})
    return {"scalars": scalars, "texts": texts, "args": args}


def hparam_value(v):
    which = v.WhichOneof("kind")
    return getattr(v, which) if which else None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("output_dir")
    ap.add_argument("--expected")
    ap.add_argument("--trainer-output", action="store_true")
    ap.add_argument("--logdir", help="folder holding the event file (default: output_dir/runs/<one folder>)")
    opts = ap.parse_args()
    if opts.expected:
        with open(opts.expected) as f:
            expected = json.load(f)
    else:
        expected = expected_from_trainer_output(opts.output_dir)

    # ---- the file and its folder ---------------------------------------------
    if opts.logdir:
        logdir = opts.logdir
    else:
        runs = glob.glob(os.path.join(opts.output_dir, "runs", "*"))
        if len(runs) != 1:
            fail("expected one run folder under %s/runs, found %s" % (opts.output_dir, runs))
        logdir = runs[0]
        if not re.fullmatch(r"(Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)\d\d_\d\d-\d\d-\d\d_.+",
                            os.path.basename(logdir)):
            fail("run folder name %r is not <Mon><DD>_<HH>-<MM>-<SS>_<host>" % os.path.basename(logdir))
    # A run has one file per writer: as HF's TensorBoardCallback, an evaluation
    # after train end (the CLI's --do_eval) opens a second file in the same folder.
    files = sorted(glob.glob(os.path.join(logdir, "*tfevents*")))
    if not files:
        fail("expected an event file in %s, found none" % logdir)
    for f in files:
        if not re.fullmatch(r"events\.out\.tfevents\.\d{10}\..+\.\d+\.\d+", os.path.basename(f)):
            fail("event file name %r has not the TensorBoard shape" % os.path.basename(f))

    # ---- legacy EventAccumulator --------------------------------------------
    acc = event_accumulator.EventAccumulator(logdir, size_guidance={"scalars": 0, "tensors": 0})
    acc.Reload()
    tags = acc.Tags()
    want = {}
    for s in expected["scalars"]:
        want.setdefault(rewrite(s["key"]), []).append((s["step"], np.float32(s["value"])))
    if set(tags["scalars"]) != set(want):
        fail("scalar tags differ: got %s, expected %s" % (sorted(tags["scalars"]), sorted(want)))
    n = 0
    for tag, points in want.items():
        got = [(e.step, np.float32(e.value)) for e in acc.Scalars(tag)]
        if len(got) != len(points):
            fail("%s: %d scalars read, %d logged" % (tag, len(got), len(points)))
        for (gs, gv), (ws, wv) in zip(got, points):
            if gs != ws or not (gv == wv or (np.isnan(gv) and np.isnan(wv))):
                fail("%s: read (step %d, %r), logged (step %d, %r)" % (tag, gs, gv, ws, wv))
            n += 1

    def text(tag):
        events = acc.Tensors(tag)
        if not events:
            fail("no text %r" % tag)
        return [(e.step, e.tensor_proto.string_val[0].decode("utf-8")) for e in events]

    for t in expected["texts"]:
        if (t["step"], t["value"]) not in text(rewrite(t["key"])):
            fail("text %s at step %d: %r not found" % (rewrite(t["key"]), t["step"], t["value"]))
    args_text = text("args")[0][1]
    if json.loads(args_text) != expected["args"]:
        fail("args text differs from the training arguments:\n%s" % args_text)
    if expected.get("model_config") and text("model_config")[0][1] != expected["model_config"]:
        fail("model_config text differs")
    failure = expected.get("failure")
    if failure:
        got = text("trainhook/failure")
        if got != [(failure["step"], failure["text"])]:
            fail("trainhook/failure text %r, expected %r" % (got, (failure["step"], failure["text"])))
    elif "trainhook/failure" in tags.get("tensors", []):
        fail("a finished run carries a trainhook/failure text")
    want_status = "STATUS_FAILURE" if failure else "STATUS_SUCCESS"

    # ---- hparams summaries ------------------------------------------------------
    content = acc.PluginTagToContent(hparams_metadata.PLUGIN_NAME)
    for tag in (hparams_metadata.SESSION_START_INFO_TAG, hparams_metadata.SESSION_END_INFO_TAG,
                hparams_metadata.EXPERIMENT_TAG):
        if tag not in content:
            fail("no %s summary" % tag)
    start = hparams_metadata.parse_session_start_info_plugin_data(content[hparams_metadata.SESSION_START_INFO_TAG])
    end = hparams_metadata.parse_session_end_info_plugin_data(content[hparams_metadata.SESSION_END_INFO_TAG])
    for k, v in expected["args"].items():
        if v is None:
            continue
        want_v = json.dumps(v, separators=(",", ":"), ensure_ascii=False) if isinstance(v, (list, dict)) else v
        if k not in start.hparams or hparam_value(start.hparams[k]) != want_v:
            fail("hparam %s: got %r, expected %r" % (k, start.hparams.get(k), want_v))
    if end.status != api_pb2.Status.Value(want_status):
        fail("session end status is %d, expected %s" % (end.status, want_status))

    # ---- what TensorBoard serves: data provider + the real hparams plugin -------
    mux = plugin_event_multiplexer.EventMultiplexer()
    mux.AddRunsFromDirectory(logdir)
    mux.Reload()
    provider = data_provider.MultiplexerDataProvider(mux, logdir)
    ctx = tb_context.RequestContext()
    served = provider.read_scalars(ctx, experiment_id="", plugin_name="scalars", downsample=10**9)
    if len(served) != 1:
        fail("data provider sees runs %s, expected one" % list(served))
    series = next(iter(served.values()))
    if set(series) != set(want):
        fail("data provider scalar tags differ: %s" % sorted(series))
    for tag, points in want.items():
        got = [(d.step, np.float32(d.value)) for d in series[tag]]
        if [s for s, _ in got] != [s for s, _ in points]:
            fail("data provider %s: steps %s, expected %s" % (tag, [s for s, _ in got], [s for s, _ in points]))

    plugin = hparams_plugin.HParamsPlugin(base_plugin.TBContext(logdir=logdir, multiplexer=mux, data_provider=provider))
    apps = plugin.get_plugin_apps()
    r = Client(apps["/experiment"], Response).post(
        "/experiment", data=json.dumps({"experimentName": ""}), content_type="application/json")
    if r.status_code != 200:
        fail("hparams /experiment: HTTP %d %s" % (r.status_code, r.get_data(as_text=True)))
    exp = json.loads(r.get_data(as_text=True))
    metric_tags = {m["name"]["tag"] for m in exp.get("metricInfos", [])}
    if metric_tags != set(want):
        fail("HPARAMS metrics %s, expected the scalar tags %s" % (sorted(metric_tags), sorted(want)))
    hp_names = {h["name"] for h in exp.get("hparamInfos", [])}
    want_names = {k for k, v in expected["args"].items() if v is not None}
    if hp_names != want_names:
        fail("HPARAMS hparams %s, expected %s" % (sorted(hp_names), sorted(want_names)))
    body = {"experimentName": "", "allowedStatuses": ["STATUS_SUCCESS", "STATUS_FAILURE", "STATUS_RUNNING",
                                                       "STATUS_UNKNOWN"],
            "colParams": [], "startIndex": 0, "sliceSize": 100}
    r = Client(apps["/session_groups"], Response).post(
        "/session_groups", data=json.dumps(body), content_type="application/json")
    if r.status_code != 200:
        fail("hparams /session_groups: HTTP %d %s" % (r.status_code, r.get_data(as_text=True)))
    groups = json.loads(r.get_data(as_text=True)).get("sessionGroups", [])
    if len(groups) != 1 or len(groups[0]["sessions"]) != 1:
        fail("expected one session in the HPARAMS tab, got %s" % groups)
    session = groups[0]["sessions"][0]
    if session.get("status") != want_status:
        fail("session status %s, expected %s" % (session.get("status"), want_status))
    last = {tag: points[-1][1] for tag, points in want.items()}
    for mv in session.get("metricValues", []):
        tag = mv["name"]["tag"]
        if np.float32(mv["value"]) != last[tag] and not np.isnan(last[tag]):
            fail("HPARAMS metric %s = %r, last logged %r" % (tag, mv["value"], last[tag]))
    if {mv["name"]["tag"] for mv in session.get("metricValues", [])} != set(want):
        fail("HPARAMS session metric values cover %s" % [mv["name"]["tag"] for mv in session["metricValues"]])

    print("check_events: OK: %d scalars in %d tags, %d texts, args, %d hparams, session %s, file %s"
          % (n, len(want), len(expected["texts"]), len(start.hparams), session["status"], files[0]))


if __name__ == "__main__":
    main()
