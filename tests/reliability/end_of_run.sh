#!/usr/bin/env bash
# The end of a run against plugins that misbehave there ("the final
# model lost"): a plugin that hangs in on_train_end, one that calls exit() (exit 70), and
# a SIGINT while one hangs. In each case the final model (model.pt,
# model.safetensors) and train_results.json are on disk and the run ends:
# --callback_end_timeout bounds the wait (exit 1, the callback named), a signal
# during the wait ends it (exit 128 + signal). No step here depends on timing:
# the signal is sent once the plugin says it is in on_train_end, and `timeout`
# only catches a run that would hang for good.
# usage: end_of_run.sh <trainhook binary> <work dir> <folder of end_of_run_plugin>
source "$(dirname "${BASH_SOURCE[0]}")/cli_case_setup.sh"
BASE=(train --train_file "$WORK/train.csv" --per_device_train_batch_size 8 --hidden_size 8 --disable_tqdm true
  --do_train --max_steps 3 --logging_steps 1 --plugin_dir "$PLUGINS")

no_raw_output() {
  local name="$1" file="$2"
  if grep -qE "terminate called|Exception raised from|frame #[0-9]|c10::Error" "$file"; then
    fail "$name: raw library output: $(grep -m2 -E "terminate|Exception raised|frame #|c10::" "$file")"
    return 1
  fi
}

# 1. A callback that never returns from on_train_end: the bound ends the wait.
timeout 120 "$CLI" "${BASE[@]}" --output_dir "$WORK/hang" --callbacks end_hang --callback_end_timeout 2 \
  >"$WORK/hang.out" 2>&1
rc=$?
want="callback 'end_hang' did not finish on_train_end within --callback_end_timeout 2 s; the final model and train results were saved in $WORK/hang before on_train_end"
if ((rc == 124)); then
  fail "hang: the run did not end within 120 s"
elif ((rc != 1)); then
  fail "hang: exit $rc, expected 1"
  tail -5 "$WORK/hang.out"
elif ! grep -qF -- "$want" "$WORK/hang.out"; then
  fail "hang: no line '$want':"
  tail -5 "$WORK/hang.out"
elif final_files hang "$WORK/hang" && no_raw_output hang "$WORK/hang.out"; then
  echo "ok hang"
fi

# 2. A callback that calls exit(3) in on_train_end: the model was saved
# before; the run names it and exits 70 (a plugin's exit never passes for the
# run's own status).
timeout 120 "$CLI" "${BASE[@]}" --output_dir "$WORK/exit" --callbacks end_exit >"$WORK/exit.out" 2>&1
rc=$?
want="trainhook: fatal: callback 'end_exit' from $PLUGINS/libtrainhook_end_of_run.so called exit() while running on_train_end"
if ((rc == 124)); then
  fail "exit: the run did not end within 120 s"
elif ! grep -qF "end_exit: in on_train_end" "$WORK/exit.out"; then
  fail "exit: the plugin was not called at on_train_end (exit $rc):"
  tail -5 "$WORK/exit.out"
elif ((rc != 70)); then
  fail "exit: exit $rc, expected 70"
  tail -5 "$WORK/exit.out"
elif ! grep -qF -- "$want" "$WORK/exit.out"; then
  fail "exit: no line '$want':"
  tail -5 "$WORK/exit.out"
elif final_files exit "$WORK/exit"; then
  echo "ok exit (exit code $rc)"
fi

# 3. SIGINT while a callback hangs in on_train_end (no bound in sight): the
# run ends with 128 + 2 once the 10 s grace for ending callbacks is over, and
# names the callback.
timeout 120 "$CLI" "${BASE[@]}" --output_dir "$WORK/sig" --callbacks end_hang --callback_end_timeout 600 \
  >"$WORK/sig.out" 2>&1 &
pid=$!
wait_for_text "$WORK/sig.out" "end_hang: in on_train_end" "$pid"
if ! grep -qF "end_hang: in on_train_end" "$WORK/sig.out"; then
  fail "signal: the plugin never reached on_train_end:"
  tail -5 "$WORK/sig.out"
  kill "$pid" 2>/dev/null
  wait "$pid"
else
  # `timeout` forwards nothing: signal the trainer itself (timeout's child).
  child=$(pgrep -P "$pid" | head -1)
  kill -INT "${child:-$pid}"
  wait "$pid"
  rc=$?
  want="got SIGINT while callback 'end_hang' ran on_train_end"
  if ((rc != 130)); then
    fail "signal: exit $rc, expected 130"
    tail -5 "$WORK/sig.out"
  elif ! grep -qF -- "$want" "$WORK/sig.out"; then
    fail "signal: no line '$want':"
    tail -5 "$WORK/sig.out"
  elif final_files signal "$WORK/sig" && no_raw_output signal "$WORK/sig.out"; then
    echo "ok signal"
  fi
fi

# 3b. SIGINT during MLflow's end-of-run flush to a server that accepts and
# never answers (Ctrl-C there used to leave 0 records spooled): the
# trainer asks the callbacks to end now (ABI 1.2 end_requested), the MLflow
# plugin stops waiting and spools what it holds, the run exits 130 well before
# the 60 s flush timeout, with the final model saved.
port_file="$WORK/silent.port"
python3 - "$port_file" <<'PY' &
import socket, sys, time
s = socket.socket()
s.bind(("127.0.0.1", 0))
s.listen(64)
open(sys.argv[1], "w").write(str(s.getsockname()[1]))
held = []
s.settimeout(1.0)
end = time.time() + 120  # bounded: the test never needs it longer
while time.time() < end:
    try:
        held.append(s.accept()[0])  # accepted, never answered
    except socket.timeout:
        pass
PY
silent=$!
for _ in $(seq 1 100); do [[ -s $port_file ]] && break; sleep 0.1; done
start=$SECONDS
MLFLOW_TRACKING_URI="http://127.0.0.1:$(cat "$port_file")" timeout 120 "$CLI" "${BASE[@]}" --output_dir "$WORK/spool" \
  --report_to mlflow >"$WORK/spool.out" 2>&1 &
pid=$!
# The MLflow integration says when on_train_end starts waiting for its flush.
wait_for_text "$WORK/spool.out" "record(s) to be delivered before the run ends" "$pid" ||
  fail "the MLflow flush at the end of the run did not say it waits: $(tail -5 "$WORK/spool.out")"
child=$(pgrep -P "$pid" | head -1)
kill -INT "${child:-$pid}"
wait "$pid"
rc=$?
took=$((SECONDS - start))
kill "$silent" 2>/dev/null
wait "$silent" 2>/dev/null
spooled="$(cat "$WORK"/spool/mlflow_spool/*.jsonl 2>/dev/null | wc -l)"
if ((rc != 130)); then
  fail "signal during the MLflow flush: exit $rc, expected 130: $(tail -5 "$WORK/spool.out")"
elif ((took > 40)); then
  fail "signal during the MLflow flush: the run took $took s (the flush timeout is 60 s)"
elif ! grep -qF "asking the callbacks to end now" "$WORK/spool.out" ||
  ! grep -qF "(delivery was cut short by a signal)" "$WORK/spool.out"; then
  fail "signal during the MLflow flush: no report of the early end: $(tail -5 "$WORK/spool.out")"
elif ((spooled < 3)); then
  fail "signal during the MLflow flush: $spooled record(s) spooled in $WORK/spool/mlflow_spool, expected the run's"
elif final_files signal_spool "$WORK/spool" && no_raw_output signal_spool "$WORK/spool.out"; then
  echo "ok signal_spool ($spooled records spooled, exit $rc after $took s)"
fi

# 4. The setting is checked.
"$CLI" "${BASE[@]}" --output_dir "$WORK/bad" --callback_end_timeout -1 >"$WORK/bad.out" 2>&1
rc=$?
if ((rc != 2)) || ! grep -qF -- "--callback_end_timeout: expected seconds in [0, 1e9] (0 = no bound), got -1" \
  "$WORK/bad.out"; then
  fail "bad setting: exit $rc: $(tail -2 "$WORK/bad.out")"
else
  echo "ok bad_setting"
fi

if ((failures > 0)); then
  echo "$failures end-of-run case(s) failed"
  exit 1
fi
echo "all end-of-run cases passed"
