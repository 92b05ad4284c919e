#!/usr/bin/env bash
# --profile through the real CLI.
#   simple: a callback that sleeps 5 ms in on_step_end for 20 steps shows
#           100 +- 20 ms for [Callback]slow_step.on_step_end, 20 calls, in the
#           printed table and in profile.json, beside the phases of the step;
#   trace:  two ranks under `trainhook launch`: trace.json is a Chrome trace
#           with complete ("X") events of the steps on both ranks (one pid per
#           rank) and of slow_step, the jsonl integration's worker thread on
#           a track of its own (ABI 1.5 profile_span), and profile.json holds
#           both ranks;
#   ops:    LibTorch's operator profile per rank, a Chrome trace of aten ops;
#   a value --profile does not take is refused naming the flag and the choices.
# usage: profile_cli.sh <trainhook binary> <work dir> <slow_step plugin folder>
set -uo pipefail
CLI="$1"
WORK="$2"
PLUGINS="$3"
rm -rf "$WORK"
mkdir -p "$WORK"
KEEP_GOING=1
source "$(dirname "${BASH_SOURCE[0]}")/../lib/test_lib.sh"
DIGITS="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)/build/data/digits.csv"
need_file "$DIGITS" "scripts/test (build/data)"
BASE=(train --train_file "$DIGITS" --do_train --max_steps 20 --logging_steps 5 --save_steps 10
  --per_device_train_batch_size 16 --disable_tqdm true --plugin_dir "$PLUGINS" --callbacks slow_step)

# simple
if SLOW_STEP_REPORT="$WORK/slow_step_ns" "$CLI" "${BASE[@]}" --report_to none --profile simple \
  --output_dir "$WORK/simple" >"$WORK/simple.log" 2>&1; then
  python3 - "$WORK/simple.log" "$WORK/simple/profile.json" "$WORK/slow_step_ns" <<'PY' || fail "simple: the profile is wrong (above)"
import json, re, sys
log, prof = open(sys.argv[1]).read(), json.load(open(sys.argv[2]))
spent = int(open(sys.argv[3]).read()) * 1e-9  # what the plugin measured around its own sleeps
assert prof["mode"] == "simple" and prof["world_size"] == 1, prof
rows = {a["action"]: a for a in prof["ranks"][0]["actions"]}
slow = rows["[Callback]slow_step.on_step_end"]
assert slow["calls"] == 20, slow
# 20 sleeps of 5 ms: 100 ms, plus what a loaded machine oversleeps, which the
# plugin measured itself; the profile's figure is that, plus the call's own cost.
assert 0.080 <= slow["total_s"], f"slow_step on_step_end took {slow['total_s']} s in all, expected 0.1 +- 0.02"
assert 0 <= slow["total_s"] - spent <= 0.005, f"profile {slow['total_s']} s, the plugin measured {spent} s"
# Where the machine overslept less than 15 ms in all, the figure is within
# 100 +- 20 ms: the sleeps plus at most the 5 ms of calls allowed above (a
# bound at 20 ms failed once with the plugin at 119.9 ms, the profile at 120.1).
if spent <= 0.115:
    assert slow["total_s"] <= 0.120, f"slow_step on_step_end took {slow['total_s']} s in all, expected 0.1 +- 0.02"
for phase in ("get_train_batch", "training_step", "forward", "backward", "optimizer_step", "save_checkpoint",
              "write_checkpoint"):
    assert phase in rows, f"no {phase} in {sorted(rows)}"
assert rows["optimizer_step"]["calls"] == 20 and rows["save_checkpoint"]["calls"] == 2, rows
assert rows["write_checkpoint"]["calls"] == 2 and rows["write_checkpoint"]["total_s"] <= rows["save_checkpoint"]["total_s"], rows
assert 0 < slow["percent"] < 100, slow
# The table: a row for the callback with its calls and total, as in the JSON.
line = next((l for l in log.splitlines() if "[Callback]slow_step.on_step_end" in l), None)
assert line is not None, "no table row for slow_step in the log"
cells = [c.strip() for c in line.split("|")[1:-1]]
assert cells[2] == "20" and abs(float(cells[3]) - slow["total_s"]) < 1e-4, cells
assert "Mean duration (s)" in log and "Percentage %" in log
print(f"ok simple: slow_step.on_step_end 20 calls, {slow['total_s'] * 1000:.1f} ms in all "
      f"(the plugin measured {spent * 1000:.1f} ms)")
PY
  [[ ! -e "$WORK/simple/trace.json" ]] || fail "simple: wrote trace.json"
else
  fail "simple run failed: $(tail -20 "$WORK/simple.log")"
fi

# trace, two ranks
if "$CLI" launch --nproc_per_node 2 -- "${BASE[@]}" --report_to jsonl --profile trace --output_dir "$WORK/trace" \
  >"$WORK/trace.log" 2>&1; then
  python3 - "$WORK/trace/trace.json" "$WORK/trace/profile.json" <<'PY' || fail "trace: the trace is wrong (above)"
import json, sys
trace, prof = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
events = trace["traceEvents"]
complete = [e for e in events if e["ph"] == "X"]
assert all(isinstance(e["ts"], (int, float)) and e["dur"] >= 0 for e in complete)
steps = {e["pid"] for e in complete if e["name"] == "training_step"}
assert steps == {0, 1}, f"training_step events on pids {steps}, expected one pid per rank: 0 and 1"
slow = [e for e in complete if e["name"] == "[Callback]slow_step.on_step_end"]
assert len(slow) >= 20 and all(e["dur"] >= 4000 for e in slow), slow[:3]
names = {(e["pid"], e["args"]["name"]) for e in events if e["ph"] == "M" and e["name"] == "process_name"}
assert names == {(0, "rank 0"), (1, "rank 1")}, names
assert {e["args"]["name"] for e in events if e["ph"] == "M" and e["name"] == "thread_name"} >= {"training"}
assert prof["world_size"] == 2 and [r["rank"] for r in prof["ranks"]] == [0, 1], prof.keys()
# The integration's worker (rank 0 only) on its own track, named as the thread is.
worker = [e for e in complete if e["name"] == "[Worker]jsonl.deliver"]
assert worker and {e["pid"] for e in worker} == {0}, f"{len(worker)} worker spans"
tracks = {(e["pid"], e["tid"]): e["args"]["name"] for e in events if e["ph"] == "M" and e["name"] == "thread_name"}
assert {tracks[(0, e["tid"])] for e in worker} == {"th-jsonl"}, tracks
training_tid = next(e["tid"] for e in complete if e["pid"] == 0 and e["name"] == "training_step")
assert all(e["tid"] != training_tid for e in worker)
print(f"ok trace: {len(complete)} complete events, training_step on pids {sorted(steps)}, {len(slow)} slow_step spans, "
      f"{len(worker)} jsonl worker spans")
PY
else
  fail "two-rank trace run failed: $(tail -30 "$WORK/trace.log")"
fi

# ops
if "$CLI" "${BASE[@]}" --report_to none --max_steps 4 --save_strategy no --profile ops --output_dir "$WORK/ops" >"$WORK/ops.log" 2>&1; then
  grep -q "wrote the operator profile of rank 0" "$WORK/ops.log" || fail "ops: the log does not say which profiler wrote what"
  python3 - "$WORK/ops/ops_trace_rank0.json" <<'PY' || fail "ops: the operator trace is wrong (above)"
import json, sys
doc = json.load(open(sys.argv[1]))
events = doc["traceEvents"] if isinstance(doc, dict) else doc
ops = {e.get("name", "") for e in events}
assert any(n.startswith("aten::") for n in ops), sorted(ops)[:20]
print(f"ok ops: {len(events)} events, e.g. {sorted(n for n in ops if n.startswith('aten::'))[:3]}")
PY
  [[ -s "$WORK/ops/trace.json" ]] || fail "ops: no trace.json beside the operator profile"
else
  fail "ops run failed: $(tail -20 "$WORK/ops.log")"
fi

# a value the flag does not take
if "$CLI" "${BASE[@]}" --report_to none --profile fast --output_dir "$WORK/bad" >"$WORK/bad.log" 2>&1; then
  fail "--profile fast was accepted"
else
  grep -q -- "--profile" "$WORK/bad.log" && grep -q "simple" "$WORK/bad.log" ||
    fail "--profile fast: the error does not name the flag and its choices: $(cat "$WORK/bad.log")"
fi

((failures == 0)) || exit 1
echo "all profile cases passed"
