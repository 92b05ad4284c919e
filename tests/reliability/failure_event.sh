#!/usr/bin/env bash
# A run that ends by an error tells its callbacks once (ABI 1.3 on_exception),
# through the real CLI, with a C plugin that reads th_failure behind
# TH_HAS_FIELD (failure_probe_plugin.c): a callback failing under
# plugin_error_policy=fail (kind plugin; in process and isolated, where the
# failure crosses the socket), a checkpoint that cannot be written (kind
# error), a second SIGTERM (kind signal, exit 143 as before), a second SIGTERM
# while a callback hangs in on_exception (the watchdog ends the run, 143), and
# a callback that hangs in on_exception (--callback_end_timeout bounds it).
# on_train_end never follows, the error printed and the exit status are those
# of the error. No step depends on timing: signals are sent once the output
# says the run got there, and `timeout` only catches a run that would hang.
# usage: failure_event.sh <trainhook binary> <work dir> <folder of failure_probe_plugin>
source "$(dirname "${BASH_SOURCE[0]}")/cli_case_setup.sh"
BASE=(train --train_file "$WORK/train.csv" --per_device_train_batch_size 8 --hidden_size 8 --disable_tqdm true
  --do_train --logging_steps 1 --save_strategy no --plugin_dir "$PLUGINS")

# Waits (at most 120 s) until `file` holds `text` or process `pid` has ended.
wait_for_line() {
  local file="$1" text="$2" pid="$3"
  for _ in $(seq 1 1200); do
    grep -qF -- "$text" "$file" 2>/dev/null && return 0
    kill -0 "$pid" 2>/dev/null || return 1
    sleep 0.1
  done
  return 1
}

# check <name> <out file> <rc> <expected rc> <expected probe line> [<expected error line>]
check() {
  local name="$1" out="$2" rc="$3" want_rc="$4" probe="$5" error="${6:-}"
  local n
  n=$(grep -c "failure_probe: on_exception" "$out")
  if ((rc == 124)); then
    fail "$name: the run did not end within 120 s"
  elif ((rc != want_rc)); then
    fail "$name: exit $rc, expected $want_rc: $(tail -5 "$out")"
  elif ((n != 1)); then
    fail "$name: on_exception heard $n times, expected once: $(grep "on_exception" "$out")"
  elif ! grep -qxF -- "$probe" "$out"; then
    fail "$name: no line '$probe'; got: $(grep "on_exception" "$out")"
  elif grep -qF "failure_probe: on_train_end" "$out"; then
    fail "$name: on_train_end followed on_exception"
  elif [[ -n $error ]] && ! grep -qxF -- "$error" "$out"; then
    fail "$name: the error printed is not '$error': $(tail -3 "$out")"
  elif grep -qE "terminate called|Exception raised from|frame #[0-9]" "$out"; then
    fail "$name: raw library output: $(grep -m2 -E "terminate|Exception raised|frame #" "$out")"
  else
    echo "ok $name"
  fi
}

# 1. A callback fails under plugin_error_policy=fail at step 2.
msg="callback 'step_fail' failed in on_step_end: step_fail: failing at step 2 as asked [TH_ERROR]"
FAILURE_PROBE_FAIL_AT=2 timeout 120 "$CLI" "${BASE[@]}" --max_steps 6 --output_dir "$WORK/plugin" \
  --callbacks failure_probe,step_fail --plugin_error_policy fail >"$WORK/plugin.out" 2>&1
check plugin "$WORK/plugin.out" $? 1 "failure_probe: on_exception kind=plugin step=2 message=$msg" \
  "trainhook train: error: $msg"

# 2. The same with the probe in its own process: th_failure crosses the socket.
FAILURE_PROBE_FAIL_AT=2 timeout 120 "$CLI" "${BASE[@]}" --max_steps 6 --output_dir "$WORK/isolated" \
  --callbacks failure_probe,step_fail --plugin_error_policy fail --plugin_isolation failure_probe \
  >"$WORK/isolated.out" 2>&1
check isolated "$WORK/isolated.out" $? 1 "failure_probe: on_exception kind=plugin step=2 message=$msg" \
  "trainhook train: error: $msg"

# 3. The checkpoint of step 2 cannot be written (a dangling symlink holds its
# name, so the finished checkpoint cannot be renamed into place): an error out
# of the training loop, kind error, the message as printed.
mkdir -p "$WORK/ckpt"
ln -s "$WORK/nowhere" "$WORK/ckpt/checkpoint-2"
timeout 120 "$CLI" "${BASE[@]}" --max_steps 6 --output_dir "$WORK/ckpt" --overwrite_output_dir true \
  --save_strategy steps --save_steps 2 --callbacks failure_probe >"$WORK/ckpt.out" 2>&1
rc=$?
printed=$(grep -m1 "^trainhook train: error: " "$WORK/ckpt.out" | sed 's/^trainhook train: error: //')
if [[ $printed != *"cannot rename"*"checkpoint-2"* ]]; then
  fail "checkpoint: not the rename error (exit $rc): $(tail -3 "$WORK/ckpt.out")"
else
  check checkpoint "$WORK/ckpt.out" "$rc" 1 "failure_probe: on_exception kind=error step=2 message=$printed"
fi

# Starts a slow run (300 ms per step; after a first signal the probe holds the
# step until a second one) in the background: $pid (timeout's) and $child (the trainer).
start_slow() {
  local name="$1"
  shift
  FAILURE_PROBE_STEP_MS=300 FAILURE_PROBE_HOLD=${HOLD:-1} timeout 120 "$CLI" "${BASE[@]}" --max_steps 1000 \
    --output_dir "$WORK/$name" "$@" >"$WORK/$name.out" 2>&1 &
  pid=$!
  wait_for_line "$WORK/$name.out" "failure_probe: step 2" "$pid"
  # `timeout` forwards nothing: signal the trainer itself (timeout's child).
  child=$(pgrep -P "$pid" | head -1)
  child=${child:-$pid}
}

# 4. A second SIGTERM: on_exception kind signal at the next event, exit 143,
# well before the watchdog's 10 s.
start_slow second --callbacks failure_probe
kill -TERM "$child"
wait_for_line "$WORK/second.out" "failure_probe: holding" "$pid"
started=$SECONDS
kill -TERM "$child"
wait "$pid"
rc=$?
took=$((SECONDS - started))
steps=$(grep -c "failure_probe: step" "$WORK/second.out")
why="stopped by a second SIGTERM: the run was ended at once, without a checkpoint"
check second_signal "$WORK/second.out" "$rc" 143 "failure_probe: on_exception kind=signal step=$steps message=$why"
if grep -qF "did not end within" "$WORK/second.out" || ((took > 8)); then
  fail "second_signal: the watchdog ended the run (after $took s) instead of the training thread"
fi

# 5. A second SIGTERM while a callback hangs in on_exception: the watchdog
# ends the process 10 s later with the same status.
start_slow watchdog --callbacks failure_probe,exception_hang --callback_end_timeout 600
kill -TERM "$child"
wait_for_line "$WORK/watchdog.out" "failure_probe: holding" "$pid"
kill -TERM "$child"
wait "$pid"
rc=$?
if ((rc != 143)); then
  fail "watchdog: exit $rc, expected 143: $(tail -5 "$WORK/watchdog.out")"
elif ! grep -qF "exception_hang: in on_exception" "$WORK/watchdog.out" ||
  ! grep -qF "trainhook: the run did not end within 10 s of the second signal; exiting now" "$WORK/watchdog.out"; then
  fail "watchdog: not ended by the watchdog: $(tail -5 "$WORK/watchdog.out")"
else
  echo "ok watchdog"
fi

# 6. A callback that hangs in on_exception after a plugin failure: the bound
# ends it, naming the callback and the error, exit 1.
FAILURE_PROBE_FAIL_AT=2 timeout 120 "$CLI" "${BASE[@]}" --max_steps 6 --output_dir "$WORK/hang" \
  --callbacks failure_probe,step_fail,exception_hang --plugin_error_policy fail --callback_end_timeout 2 \
  >"$WORK/hang.out" 2>&1
rc=$?
want="callback 'exception_hang' did not finish on_exception within --callback_end_timeout; exiting without waiting"
want+=" for it; the run failed: $msg"
if ((rc != 1)); then
  fail "hang: exit $rc, expected 1: $(tail -5 "$WORK/hang.out")"
elif ! grep -qF -- "$want" "$WORK/hang.out"; then
  fail "hang: no line '$want': $(tail -3 "$WORK/hang.out")"
else
  echo "ok hang"
fi

# 7. A first SIGTERM is no failure: a checkpoint, on_train_end, exit 143.
HOLD=0 start_slow first --callbacks failure_probe
kill -TERM "$child"
wait "$pid"
rc=$?
if ((rc != 143)); then
  fail "first_signal: exit $rc, expected 143: $(tail -5 "$WORK/first.out")"
elif grep -qF "on_exception" "$WORK/first.out" || ! grep -qF "failure_probe: on_train_end" "$WORK/first.out"; then
  fail "first_signal: expected on_train_end and no on_exception: $(grep failure_probe: "$WORK/first.out" | tail -3)"
elif ! ls -d "$WORK"/first/checkpoint-* >/dev/null 2>&1; then
  fail "first_signal: no checkpoint saved"
else
  echo "ok first_signal"
fi

if ((failures > 0)); then
  echo "$failures failure-event case(s) failed"
  exit 1
fi
echo "all failure-event cases passed"
