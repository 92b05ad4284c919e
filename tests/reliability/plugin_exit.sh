#!/usr/bin/env bash
# "No silent end": a plugin that calls exit(0) or quick_exit(0) during
# training, on the training thread inside an event or on its own thread, no
# longer ends the run with status 0. The run names the callback and the event
# (or, from the plugin's own thread, says so and names the last callback call
# and the plugin files) and exits 70; the checkpoints already written stay
# complete. Nothing waits on timing: `timeout` only catches a run that hangs.
# usage: plugin_exit.sh <trainhook binary> <work dir> <folder of run_faults_plugin>
source "$(dirname "${BASH_SOURCE[0]}")/cli_case_setup.sh"
BASE=(train --train_file "$WORK/train.csv" --per_device_train_batch_size 8 --hidden_size 8 --disable_tqdm true
  --do_train --max_steps 20 --save_steps 2 --logging_steps 1 --plugin_dir "$PLUGINS")
LIB="$PLUGINS/libtrainhook_run_faults.so"

# check <case> <callback> <expected stderr text>...: runs the callback, wants exit 70 and each text.
check() {
  local name="$1" callback="$2"
  shift 2
  timeout 120 "$CLI" "${BASE[@]}" --output_dir "$WORK/$name" --callbacks "$callback" \
    >"$WORK/$name.out" 2>"$WORK/$name.err"
  local rc=$?
  if ((rc == 124)); then
    fail "$name: the run did not end within 120 s"
    return
  fi
  if ((rc != 70)); then
    fail "$name: exit $rc, expected 70: $(tail -3 "$WORK/$name.err")"
    return
  fi
  local text
  for text in "$@"; do
    if ! grep -qF -- "$text" "$WORK/$name.err"; then
      fail "$name: stderr lacks '$text': $(tail -3 "$WORK/$name.err")"
      return
    fi
  done
  # The checkpoints written before the exit are complete.
  local ck
  for ck in "$WORK/$name"/checkpoint-*; do
    if ! (cd "$ck" && sha256sum --quiet -c checkpoint.sha256) >/dev/null 2>&1; then
      fail "$name: $ck does not verify"
      return
    fi
  done
  [[ -d $WORK/$name/checkpoint-2 ]] || {
    fail "$name: no checkpoint-2 before the exit: $(ls "$WORK/$name")"
    return
  }
  echo "ok $name"
}

tail_text="the run did not finish (files saved before are intact, nothing more is saved); exit status 70"
check step_exit step_exit \
  "trainhook: fatal: callback 'step_exit' from $LIB called exit() while running on_step_end" "$tail_text"
check step_quick_exit step_quick_exit \
  "trainhook: fatal: callback 'step_quick_exit' from $LIB called quick_exit() while running on_step_end" \
  "$tail_text"
check thread_exit thread_exit \
  "trainhook: fatal: exit() was called outside any callback call (from a plugin's own thread, for instance) during the run; the last callback call was 'thread_exit' from $LIB (on_step_end); plugin files loaded: $LIB" \
  "$tail_text"

# A run without such a plugin still ends 0 (its own return is not a plugin's exit).
timeout 120 "$CLI" "${BASE[@]}" --max_steps 3 --output_dir "$WORK/clean" >"$WORK/clean.out" 2>"$WORK/clean.err"
rc=$?
if ((rc != 0)) || grep -qF "trainhook: fatal" "$WORK/clean.err"; then
  fail "clean: exit $rc: $(tail -3 "$WORK/clean.err")"
else
  echo "ok clean"
fi

if ((failures > 0)); then
  echo "$failures plugin-exit case(s) failed"
  exit 1
fi
echo "all plugin-exit cases passed"
