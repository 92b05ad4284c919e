#!/usr/bin/env bash
# Isolated callbacks (--plugin_isolation) through the real CLI and trainer:
# a plugin that segfaults, hangs or calls exit(0) at step 5 in its helper
# process is named with the event and the cause, the run goes on to its final
# model (default plugin_error_policy) or stops non-zero with its checkpoints
# intact (fail); a healthy isolated plugin's should_save, add_metric, logs and
# saved state come back as in process, its config never shows the host's
# isolation keys, and it is refused the model's tensors with a clear message;
# the tensorboard integration isolated writes what it writes in process
# (read back with the `tensorboard` package). No step depends on timing:
# `timeout` only catches a run that would hang for good.
# usage: isolation.sh <trainhook binary> <work dir> <folder of isolated_faults>
set -uo pipefail
CLI="$1"
WORK="$2"
PLUGINS="$3"
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
rm -rf "$WORK"
mkdir -p "$WORK"
KEEP_GOING=1
source "$(dirname "${BASH_SOURCE[0]}")/../lib/test_lib.sh"
VENV="$(test_venv)" || exit 1

"$HERE/../early_stopping/make_data.sh" "$WORK/data"
BASE=(train --train_file "$WORK/data/train.csv" --per_device_train_batch_size 16 --hidden_size 8
  --disable_tqdm true --do_train --max_steps 8 --logging_steps 1 --save_strategy no --seed 3
  --plugin_dir "$PLUGINS")
source "$(dirname "${BASH_SOURCE[0]}")/cli_runs.sh"
CB=(--callbacks isolated_faults)

final_model() {
  local name="$1"
  local f
  for f in model.pt model.safetensors trainer_state.json; do
    [[ -s $WORK/$name/$f ]] || {
      fail "$name: $WORK/$name/$f missing"
      return 1
    }
  done
}

# 1. A healthy isolated callback: control flags, metrics, logs and state come
#    back; it runs in another process; the tensors are refused, clearly.
run healthy "${CB[@]}" --plugin_isolation isolated_faults --plugin_config isolated_faults.save_step=3
if ((rc != 0)); then
  fail "healthy: exit $rc"
  tail -8 "$WORK/healthy.out"
else
  ok=1
  final_model healthy || ok=0
  [[ -s $WORK/healthy/checkpoint-3/trainer_state.json ]] || {
    fail "healthy: the plugin's should_save at step 3 made no checkpoint-3"
    ok=0
  }
  python3 - "$WORK/healthy/trainer_state.json" <<'PY' || ok=0
import json, sys
s = json.load(open(sys.argv[1]))
got = {e["step"]: e["isolated_metric"] for e in s["log_history"] if "isolated_metric" in e}
want = {step: step / 2 for step in range(1, 9)}
if got != want:
    sys.exit(f"FAIL healthy: isolated_metric in log_history {got}, expected {want}")
calls = s["stateful_callbacks"].get("isolated_faults", s["stateful_callbacks"].get("IsolatedFaults"))
if calls is None:
    sys.exit(f"FAIL healthy: no saved state of the isolated callback in {list(s['stateful_callbacks'])}")
PY
  has_line healthy "isolated_faults: asked for a save at step 3" || ok=0
  has_line healthy "isolated_faults: on_train_end at step 8" || ok=0
  has_line healthy "runs in its own process (plugin_isolation): the model's tensors are not shared with it; to read or write them, trust it to run in process" || ok=0
  plugin_pid=$(grep -oE "isolated_faults: created in pid [0-9]+" "$WORK/healthy.out" | grep -oE "[0-9]+$")
  log_pid=$(grep -oE "on_log at step 1 \(pid [0-9]+" "$WORK/healthy.out" | grep -oE "[0-9]+$")
  trainer_pid=$(cat "$WORK/healthy.pid")
  [[ -n $plugin_pid && $plugin_pid == "$log_pid" && $plugin_pid != "$trainer_pid" ]] || {
    fail "healthy: the plugin ran in pid $plugin_pid (create), $log_pid (on_log); the trainer is $trainer_pid"
    ok=0
  }
  ((ok)) && echo "ok healthy (plugin in pid $plugin_pid)"
fi

# 2. Faults at step 5, default policy: named, the run goes on to its final model.
check_fault() {  # name cause args...
  local name="$1" cause="$2"
  shift 2
  run "$name" "${CB[@]}" "$@"
  if ((rc != 0)); then
    fail "$name: exit $rc, expected 0 (plugin_error_policy disable)"
    tail -8 "$WORK/$name.out"
    return
  fi
  final_model "$name" || return
  # The file as the registry knows it (its canonical path).
  has_line "$name" "callback 'isolated_faults' failed in on_step_end: isolated callback 'isolated_faults' from /" || return
  has_line "$name" "/libtrainhook_isolated_faults.so, in on_step_end: its helper process $cause" || return
  has_line "$name" "(disabled for the rest of the run)" || return
  # Disabled: not called again (no second wait, no further failure lines).
  local n
  n=$(grep -cF "callback 'isolated_faults' failed" "$WORK/$name.out")
  ((n == 1)) || {
    fail "$name: $n failure lines, expected 1"
    return
  }
  grep -qF "isolated_faults: on_log at step 6" "$WORK/$name.out" && {
    fail "$name: the callback was called after it failed"
    return
  }
  echo "ok $name"
}
check_fault segv "killed by SIGSEGV" --plugin_isolation isolated_faults --plugin_config isolated_faults.fault=segv
check_fault exit "exited with status 0" --plugin_config isolated_faults.isolation=process \
  --plugin_config isolated_faults.fault=exit
start=$SECONDS
check_fault hang "did not answer within 2 s" --plugin_isolation isolated_faults \
  --plugin_config isolated_faults.fault=hang --plugin_config isolated_faults.isolation_timeout=2
((SECONDS - start < 60)) || fail "hang: the run took $((SECONDS - start)) s with a 2 s isolation timeout"

# 3. plugin_error_policy fail: the segfault stops the run, non-zero, the
#    checkpoint written before it intact.
run segv_fail "${CB[@]}" --plugin_isolation isolated_faults --plugin_config isolated_faults.fault=segv \
  --plugin_config isolated_faults.save_step=3 --plugin_error_policy fail
if ((rc == 0)); then
  fail "segv_fail: exit 0, expected non-zero"
elif ! [[ -s $WORK/segv_fail/checkpoint-3/trainer_state.json && -s $WORK/segv_fail/checkpoint-3/model.safetensors ]]; then
  fail "segv_fail: checkpoint-3 is not intact: $(ls "$WORK/segv_fail/checkpoint-3" 2>&1)"
elif has_line segv_fail "killed by SIGSEGV" && has_line segv_fail "plugin_error_policy=fail"; then
  echo "ok segv_fail (exit $rc)"
fi

# 4. A --plugin_isolation name the run does not enable is an error.
run typo "${CB[@]}" --plugin_isolation isolated_fault
if ((rc == 0)); then
  fail "typo: exit 0"
elif has_line typo "--plugin_isolation: 'isolated_fault' is not a callback of this run"; then
  echo "ok typo"
fi

# 5. Ctrl-C goes to the whole process group of the terminal: the trainer stops
#    the run, and the helper (in a group of its own, ignoring SIGINT) is still
#    there for on_train_end. setsid gives the trainer a group to signal whole.
#    While it runs: the isolated library is mapped in the helper, not the trainer.
setsid bash -c 'exec "$@"' sigint "$CLI" "${BASE[@]}" "${CB[@]}" --plugin_isolation isolated_faults \
  --output_dir "$WORK/sigint" --max_steps 100000 >"$WORK/sigint.out" 2>&1 &
pid=$!
for _ in $(seq 1 1200); do
  grep -qF "isolated_faults: on_log at step 5 " "$WORK/sigint.out" && break
  kill -0 "$pid" 2>/dev/null || break
  sleep 0.1
done
# The isolated library is loaded in the helper only, never in the trainer.
if grep -qF libtrainhook_isolated_faults "/proc/$pid/maps" 2>/dev/null; then
  fail "sigint: the trainer (pid $pid) has the isolated library loaded"
fi
kill -INT -- "-$pid" 2>/dev/null
for _ in $(seq 1 1200); do
  kill -0 "$pid" 2>/dev/null || break
  sleep 0.1
done
if kill -0 "$pid" 2>/dev/null; then
  kill -KILL -- "-$pid"
  fail "sigint: the run did not end within 120 s of SIGINT"
fi
wait "$pid"
rc=$?
if ! grep -qE "isolated_faults: on_train_end at step [0-9]+" "$WORK/sigint.out"; then
  fail "sigint: the isolated callback got no on_train_end after SIGINT (exit $rc):"
  tail -8 "$WORK/sigint.out"
elif grep -qF "callback 'isolated_faults' failed" "$WORK/sigint.out"; then
  fail "sigint: the isolated callback failed: $(grep -F "failed" "$WORK/sigint.out" | head -2)"
else
  echo "ok sigint (exit $rc)"
fi

# 6. The tensorboard integration isolated delivers what it delivers in process:
#    every number of log_history at its step (check_events.py), and the same
#    scalars as an in-process run with the same seed.
if [[ -x "$VENV/bin/python" ]]; then
  TB=(--report_to tensorboard --plugin_config tensorboard.flush_secs=0.2)
  run tb_in "${TB[@]}"
  rc_in=$rc
  run tb_iso "${TB[@]}" --plugin_isolation tensorboard
  if ((rc_in != 0 || rc != 0)); then
    fail "tensorboard: exit $rc_in in process, $rc isolated"
    tail -5 "$WORK/tb_iso.out"
  elif ! "$VENV/bin/python" "$HERE/../tensorboard/check_events.py" "$WORK/tb_iso" --trainer-output \
    >"$WORK/tb_iso.check" 2>&1; then
    fail "tensorboard: the isolated run's event file does not match its log_history:"
    tail -5 "$WORK/tb_iso.check"
  elif ! "$VENV/bin/python" "$HERE/compare_scalars.py" "$WORK/tb_in" "$WORK/tb_iso"; then
    fail "tensorboard: isolated and in-process scalars differ"
  else
    echo "ok tensorboard isolated"
  fi
else
  fail "tensorboard: no test venv at $VENV (set TRAINHOOK_TEST_VENV)"
fi

# 7. Observe-only events (ABI 1.6) through the event ring: the jsonl
#    integration isolated (its on_log observe-only) writes every record of
#    log_history, in order, as in process; and a helper that stalls on an
#    observed event loses events, which the trainer counts and reports naming
#    the callback, while the run goes on to its end.
if [[ -x "$VENV/bin/python" ]]; then
  JL=(--report_to jsonl --max_steps 60)
  run jl_in "${JL[@]}"
  rc_in=$rc
  run jl_iso "${JL[@]}" --plugin_isolation jsonl
  if ((rc_in != 0 || rc != 0)); then
    fail "jsonl: exit $rc_in in process, $rc isolated"
    tail -5 "$WORK/jl_iso.out"
  elif ! "$VENV/bin/python" - "$WORK/jl_in" "$WORK/jl_iso" <<'PY'; then
import json, sys
def history(d):
    lines = [json.loads(l) for l in open(d + "/log_history.jsonl")]
    state = json.load(open(d + "/trainer_state.json"))["log_history"]
    assert lines == state, (d, len(lines), len(state))
    return lines
inp, iso = history(sys.argv[1]), history(sys.argv[2])
steps = lambda h: [r["step"] for r in h]
assert steps(inp) == steps(iso) and len(iso) >= 60, (steps(inp), steps(iso))
assert [r.get("loss") for r in inp] == [r.get("loss") for r in iso]
PY
    fail "jsonl: the isolated run's log_history.jsonl differs from its log_history or from the in-process run's"
  elif grep -q "dropped" "$WORK/jl_iso.out"; then
    fail "jsonl: an isolated run that keeps up dropped events:"
    grep "dropped" "$WORK/jl_iso.out"
  else
    echo "ok jsonl isolated, observe-only"
  fi
else
  fail "jsonl: no test venv at $VENV (set TRAINHOOK_TEST_VENV)"
fi
# isolated_observer waits for nothing but on_train_end, so the stall fills the ring.
TRAINHOOK_ISOLATION_RING_KIB=4 run stalled --callbacks isolated_observer --plugin_isolation isolated_observer \
  --max_steps 60 --plugin_config isolated_observer.stall_ms=2000
if ((rc != 0)); then
  fail "stalled: exit $rc"
  tail -5 "$WORK/stalled.out"
else
  has_line stalled "isolated callback 'isolated_observer' from " &&
    has_line stalled "observe-only event(s) dropped in all, never delivered, because its helper fell behind" &&
    has_line stalled "isolated_faults: on_train_end at step 60" &&
    final_model stalled && echo "ok stalled observer: drops counted and reported"
fi
# A plugin that steers in an event it declared observe-only: the lost flag is
# reported as its failure, named, not dropped without a word.
run steers "${CB[@]}" --plugin_isolation isolated_faults --plugin_config isolated_faults.observe=1 \
  --plugin_config isolated_faults.steer_observed=1 \
  --max_steps 6
if ((rc != 0)); then
  fail "steers: exit $rc (plugin_error_policy disable: the run goes on)"
  tail -5 "$WORK/steers.out"
else
  has_line steers "on_log (observed, delivered without a round trip) failed: it changed TrainerControl (should_training_stop) in on_log, which it declared observe-only" &&
    echo "ok a control change in an observed event is reported"
fi

if ((failures > 0)); then
  echo "$failures isolation case(s) failed"
  exit 1
fi
echo "all isolation cases passed"
