#!/usr/bin/env bash
# One writer per output_dir: while a run holds output_dir (the flock on
# output_dir/.trainhook.lock), a second run into it is refused at once, naming
# the holder's host and PID, before it reads or writes anything there; an
# evaluation-only run is not refused by the lock; once the holder is killed
# with kill -9 the kernel has released the lock and the next run takes the
# folder and resumes from its checkpoint. The holder waits in a plugin
# (hold_run) and the test waits for its line, never for a delay.
# usage: output_dir_lock.sh <trainhook binary> <work dir> <folder of run_faults_plugin>
source "$(dirname "${BASH_SOURCE[0]}")/cli_case_setup.sh"
OUT="$WORK/out"
BASE=(train --train_file "$WORK/train.csv" --per_device_train_batch_size 8 --hidden_size 8 --disable_tqdm true
  --max_steps 6 --save_steps 2 --logging_steps 1 --plugin_dir "$PLUGINS" --output_dir "$OUT")

# 1. The holder: trains, saves checkpoint-2, then waits in on_step_end at step 3.
"$CLI" "${BASE[@]}" --do_train --callbacks hold_run >"$WORK/holder.out" 2>"$WORK/holder.err" &
holder=$!
if ! wait_for_text "$WORK/holder.err" "hold_run: holding at step 3" "$holder"; then
  fail "holder: never reached step 3: $(tail -3 "$WORK/holder.err")"
  kill -9 "$holder" 2>/dev/null
  wait "$holder" 2>/dev/null
  echo "1 output_dir-lock case(s) failed"
  exit 1
fi
echo "ok holder (pid $holder holds $OUT)"

# 2. A second training run into the same folder: refused at once, the holder
# named, nothing read or written (no resume detection, no new files).
before="$(cd "$OUT" && find . | sort)"
start=$SECONDS
timeout 60 "$CLI" "${BASE[@]}" --do_train >"$WORK/second.out" 2>"$WORK/second.err"
rc=$?
after="$(cd "$OUT" && find . | sort)"
want="trainhook train: error: output_dir $OUT is in use by another run (host $(hostname), PID $holder, lock $OUT/.trainhook.lock)"
if ((rc != 1)); then
  fail "second run: exit $rc, expected 1: $(tail -3 "$WORK/second.err")"
elif ! grep -qF -- "$want" "$WORK/second.err"; then
  fail "second run: no line '$want': $(tail -3 "$WORK/second.err")"
elif grep -qF "checkpoint detected" "$WORK/second.err" "$WORK/second.out"; then
  fail "second run: looked for a checkpoint before it was refused"
elif [[ $before != "$after" ]]; then
  fail "second run: output_dir changed: $(diff <(echo "$before") <(echo "$after"))"
elif ((SECONDS - start > 30)); then
  fail "second run: took $((SECONDS - start)) s to be refused"
else
  echo "ok refused"
fi

# 3. An evaluation-only run only reads: the lock does not refuse it (it fails
# for want of a trained model.pt, which is another message).
timeout 120 "$CLI" "${BASE[@]}" --do_eval --validation_file "$WORK/train.csv" >"$WORK/eval.out" 2>"$WORK/eval.err"
rc=$?
if grep -qF "is in use by another run" "$WORK/eval.err"; then
  fail "eval-only run: refused by the lock: $(tail -2 "$WORK/eval.err")"
else
  echo "ok eval_only_not_locked (exit $rc)"
fi

# 4. kill -9 the holder: the kernel releases the lock; the next run takes the
# folder and resumes from checkpoint-2.
kill -9 "$holder"
wait "$holder" 2>/dev/null
timeout 120 "$CLI" "${BASE[@]}" --do_train >"$WORK/next.out" 2>"$WORK/next.err"
rc=$?
if ((rc != 0)); then
  fail "next run: exit $rc, expected 0: $(tail -3 "$WORK/next.err")"
elif ! grep -qF "checkpoint detected, resuming training at $OUT/checkpoint-2" "$WORK/next.err" "$WORK/next.out"; then
  fail "next run: did not resume from checkpoint-2: $(tail -3 "$WORK/next.err")"
elif ! grep -qE "^pid [0-9]+$" "$OUT/.trainhook.lock"; then
  fail "next run: the lock file does not name a PID: $(cat "$OUT/.trainhook.lock")"
elif [[ ! -s $OUT/model.pt ]]; then
  fail "next run: no model.pt"
else
  echo "ok next_run_resumes"
fi

if ((failures > 0)); then
  echo "$failures output_dir-lock case(s) failed"
  exit 1
fi
echo "all output_dir-lock cases passed"
