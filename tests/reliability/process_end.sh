#!/usr/bin/env bash
# In-process plugins that misbehave outside any callback call, through the
# real CLI: a thread of the plugin's own that crashes mid-run (named by the
# address: plugin, file, SIGSEGV; exit 139), a library destructor and a
# destroy() that crash after a complete run (named, "the run's results are
# complete", exit 0: the run's own status), and a destroy() that never
# returns (bounded by --callback_end_timeout, named, exit 0, the output_dir
# lock released: the next run into that folder is not refused). `timeout`
# only catches a run that would hang for good; nothing waits on a delay.
# usage: process_end.sh <trainhook binary> <work dir> <folder of process_end_plugin>
source "$(dirname "${BASH_SOURCE[0]}")/cli_case_setup.sh"
BASE=(train --train_file "$WORK/train.csv" --per_device_train_batch_size 8 --hidden_size 8 --disable_tqdm true
  --do_train --logging_steps 1 --plugin_dir "$PLUGINS")
LIB="$PLUGINS/libtrainhook_process_end.so"

# has NAME FILE TEXT: FILE holds TEXT, or the case fails showing the file's end.
has() {
  grep -qF -- "$3" "$2" && return 0
  fail "$1: no line '$3':"
  tail -5 "$2" >&2
  return 1
}

# 1. A thread the plugin started in on_train_begin crashes at step 2, after
# the callback that started it returned: the crash is named by the faulting
# instruction's address, the process dies of SIGSEGV (139) as before, and the
# run is not reported complete (it is not).
timeout 120 "$CLI" "${BASE[@]}" --max_steps 100000 --output_dir "$WORK/thread" --callbacks thread_crash \
  >"$WORK/thread.out" 2>&1
rc=$?
want="trainhook: fatal: SIGSEGV (invalid memory access) in plugin code: plugin 'process_end' from $LIB, outside any callback call (on a thread of its own, say); found by the faulting instruction"
if ((rc == 124)); then
  fail "thread: the run did not end within 120 s"
elif ! has thread "$WORK/thread.out" "thread_crash: writing through a null pointer from its own thread"; then
  :
elif ((rc != 139)); then
  fail "thread: exit $rc, expected 139 (128 + SIGSEGV)"
  tail -5 "$WORK/thread.out" >&2
elif has thread "$WORK/thread.out" "$want"; then
  if grep -qF "results are complete" "$WORK/thread.out"; then
    fail "thread: a run that died mid-training was called complete"
  elif [[ -e $WORK/thread/model.pt ]]; then
    fail "thread: the run saved its final model, so the crash did not come mid-run"
  else
    echo "ok thread_crash"
  fi
fi

# 2. The library destructor crashes when the library is unloaded after a
# complete run (at exit: plugin libraries are never unloaded before): the
# model and results are saved, the line names the plugin and says the
# results are complete, and the run exits 0, its own status.
timeout 120 "$CLI" "${BASE[@]}" --max_steps 3 --output_dir "$WORK/unload" --callbacks unload_crash \
  >"$WORK/unload.out" 2>&1
rc=$?
want="trainhook: fatal: SIGSEGV (invalid memory access) in plugin code: plugin 'process_end' from $LIB, while the process ends (its library's destructors run at exit); found by the faulting instruction; the run's results are complete: everything it writes is in $WORK/unload (the final model and results were saved before); exiting with the run's status 0 instead of dying of the signal"
if ((rc == 124)); then
  fail "unload: the run did not end within 120 s"
elif ! has unload "$WORK/unload.out" "unload_crash: writing through a null pointer in the library destructor"; then
  :
elif ((rc != 0)); then
  fail "unload: exit $rc, expected 0 (the run's own status)"
  tail -5 "$WORK/unload.out" >&2
elif has unload "$WORK/unload.out" "$want" && final_files unload "$WORK/unload" &&
  has unload "$WORK/unload.out" "***** train metrics *****"; then
  echo "ok unload_crash"
fi

# 3. destroy() crashes after a complete run: named by the callback call (its
# destroy), the results complete, exit 0.
timeout 120 "$CLI" "${BASE[@]}" --max_steps 3 --output_dir "$WORK/destroy" --callbacks destroy_crash \
  >"$WORK/destroy.out" 2>&1
rc=$?
want="trainhook: fatal: SIGSEGV (invalid memory access) in plugin code: callback 'destroy_crash' from $LIB, while running destroy; the run's results are complete: everything it writes is in $WORK/destroy"
if ((rc == 124)); then
  fail "destroy: the run did not end within 120 s"
elif ! has destroy "$WORK/destroy.out" "destroy_crash: writing through a null pointer in destroy()"; then
  :
elif ((rc != 0)); then
  fail "destroy: exit $rc, expected 0 (the run's own status)"
  tail -5 "$WORK/destroy.out" >&2
elif has destroy "$WORK/destroy.out" "$want" && final_files destroy "$WORK/destroy"; then
  echo "ok destroy_crash"
fi

# 4. destroy() never returns: after --callback_end_timeout 2 the plugin is
# named and the process exits 0 without waiting for it; its output_dir lock
# went with it, so the next run into the same folder is not refused.
start=$SECONDS
timeout 120 "$CLI" "${BASE[@]}" --max_steps 3 --output_dir "$WORK/hang" --callbacks destroy_hang \
  --callback_end_timeout 2 >"$WORK/hang.out" 2>&1
rc=$?
took=$((SECONDS - start))
want="plugin 'process_end' ($LIB) did not finish destroy within --callback_end_timeout 2 s (callback 'destroy_hang'); the run's results are complete: everything it writes is in $WORK/hang; exiting with status 0 without waiting for it"
if ((rc == 124)); then
  fail "hang: the run did not end within 120 s"
elif ! has hang "$WORK/hang.out" "destroy_hang: in destroy(), never returning"; then
  :
elif ((rc != 0)); then
  fail "hang: exit $rc, expected 0 (the run's own status)"
  tail -5 "$WORK/hang.out" >&2
elif has hang "$WORK/hang.out" "$want" && final_files hang "$WORK/hang"; then
  "$CLI" "${BASE[@]}" --max_steps 3 --output_dir "$WORK/hang" --overwrite_output_dir >"$WORK/hang_next.out" 2>&1
  rc=$?
  if grep -qF "is in use by another run" "$WORK/hang_next.out"; then
    fail "hang: the next run into $WORK/hang was refused: the lock outlived the run"
  elif ((rc != 0)); then
    fail "hang: the next run into $WORK/hang exited $rc: $(tail -3 "$WORK/hang_next.out")"
  else
    echo "ok destroy_hang (exit $rc after $took s; the next run into the folder ran)"
  fi
fi

# 5. The library destructor calls exit(3) after a complete run (at exit, after
# the callbacks were destroyed): named, and the process ends with the run's
# status 0, not 3.
timeout 120 "$CLI" "${BASE[@]}" --max_steps 3 --output_dir "$WORK/unload_exit" --callbacks exit_at_unload \
  >"$WORK/unload_exit.out" 2>&1
rc=$?
want="trainhook: exit() was called while the process ended (after its callbacks were destroyed, in exit()), by plugin 'process_end' from $LIB (its library's destructors run at exit; found by a return address on the calling thread's stack); the run's results are complete: everything it writes is in $WORK/unload_exit; exiting with the run's status 0, not the one it passed"
if ((rc == 124)); then
  fail "unload_exit: the run did not end within 120 s"
elif ! has unload_exit "$WORK/unload_exit.out" "exit_at_unload: calling exit(3) in the library destructor"; then
  :
elif ((rc != 0)); then
  fail "unload_exit: exit $rc, expected 0 (the run's own status)"
  tail -5 "$WORK/unload_exit.out" >&2
elif has unload_exit "$WORK/unload_exit.out" "$want" && final_files unload_exit "$WORK/unload_exit"; then
  echo "ok exit_at_unload"
fi

# 6. A worker thread of a vendor library the plugin brought in crashes at step
# 2: one its library links (DT_NEEDED), one its create() dlopen()s. Neither
# the faulting instruction nor any frame of that thread is in the plugin's own
# library; the line names the plugin and the vendor library all the same.
vendor_case() {
  local name="$1" vendor="$2"
  timeout 120 "$CLI" "${BASE[@]}" --max_steps 100000 --output_dir "$WORK/$name" --callbacks "$name" \
    >"$WORK/$name.out" 2>&1
  local rc=$?
  local want="trainhook: fatal: SIGSEGV (invalid memory access) in plugin code: plugin 'process_end' from $LIB (in "
  local want2="/$vendor, a library its load or its callbacks' creation brought into the process), outside any callback call (on a thread of its own, say); found by the faulting instruction"
  if ((rc == 124)); then
    fail "$name: the run did not end within 120 s"
  elif ! has "$name" "$WORK/$name.out" "vendor worker: writing through a null pointer"; then
    :
  elif ((rc != 139)); then
    fail "$name: exit $rc, expected 139 (128 + SIGSEGV)"
    tail -5 "$WORK/$name.out" >&2
  elif has "$name" "$WORK/$name.out" "$want" && has "$name" "$WORK/$name.out" "$want2"; then
    echo "ok $name"
  fi
}
vendor_case vendor_crash libprocess_end_vendor.so
vendor_case lazy_crash libprocess_end_lazy.so

if ((failures > 0)); then
  echo "$failures process-end case(s) failed"
  exit 1
fi
echo "all process-end cases passed"
