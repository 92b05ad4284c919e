#!/usr/bin/env bash
# What an in-process plugin does to the process, and what the run keeps anyway
# (docs/reliability.md, "What an in-process plugin can do to the process"):
#   - a daemon forked in on_train_begin that outlives the run does not keep
#     output_dir locked: the next run into the folder is not refused; one
#     cloned past the atfork handlers does, and the refusal names it;
#   - a child that returns from a plugin call into the trainer ends at once
#     (status 71), named; only the run's own process reaches on_train_end;
#   - SIGTERM/SIGINT set to SIG_IGN or to a non-chaining handler in create, in
#     on_train_begin or from the plugin's own thread: a SIGTERM during training
#     still saves a checkpoint and exits 143, with a warning naming the plugin;
#   - descriptors 1 and 2 closed in create: put back, warned, and no console
#     line lands in a data file of output_dir (--report_to jsonl); descriptor 1
#     closed later, in on_step_end (checked at the step's end) and in on_log
#     (checked after the call): the same, and the console keeps the run's lines;
#   - umask(0777) in on_step_end: put back and warned; later files readable;
#   - RLIMIT_FSIZE lowered in create: put back and warned, the run completes;
#     the user's own `ulimit -f`: the write fails naming the file and the
#     limit (exit 1), never a bare SIGXFSZ (153);
#   - chdir() in create with a relative --output_dir: the files land in the
#     folder the user named.
# Every wait is for a line or a process, bounded; `timeout` catches a hang.
# usage: host_contain.sh <trainhook binary> <work dir> <folder of host_contain_plugin>
source "$(dirname "${BASH_SOURCE[0]}")/cli_case_setup.sh"
# Absolute, as the run shows them (it makes its path arguments absolute at start).
CLI="$(cd "$(dirname "$CLI")" && pwd)/$(basename "$CLI")"
PLUGINS="$(cd "$PLUGINS" && pwd)"
BASE=(train --train_file "$WORK/train.csv" --per_device_train_batch_size 8 --hidden_size 8 --disable_tqdm true
  --do_train --logging_steps 1 --plugin_dir "$PLUGINS")
LIB="$PLUGINS/libtrainhook_host_contain.so"

# Daemons the plugins leave behind: ended whatever happens to the script.
daemons=()
end_daemons() {
  local d
  for d in "${daemons[@]}"; do kill -9 "$d" 2>/dev/null; done
}
trap end_daemons EXIT

# gone PID: the process has ended (a zombie no longer holds descriptors).
gone() {
  ! kill -0 "$1" 2>/dev/null || grep -q '^State:[[:space:]]*Z' "/proc/$1/status" 2>/dev/null
}

# run_daemon_plugin <case> <callback>: a 4-step run with the callback; sets
# $daemon to the PID of the daemon it left (empty after a failure).
run_daemon_plugin() {
  local name="$1" callback="$2"
  daemon=""
  HOST_CONTAIN_PID_FILE="$WORK/$name.pid" timeout 120 "$CLI" "${BASE[@]}" --max_steps 4 \
    --output_dir "$WORK/$name" --callbacks "$callback" >"$WORK/$name.out" 2>"$WORK/$name.err"
  local rc=$?
  if ((rc != 0)); then
    fail "$name: the run with the daemon: exit $rc, expected 0: $(tail -3 "$WORK/$name.err")"
    return 1
  fi
  wait_for 30 "$name: the daemon's PID file" test -s "$WORK/$name.pid" || return 1
  daemon=$(cat "$WORK/$name.pid")
  daemons+=("$daemon")
  if gone "$daemon"; then
    fail "$name: the daemon (PID $daemon) is not running after the run, so the case shows nothing"
    return 1
  fi
}

# 1. A daemon forked in on_train_begin outlives the run; a later run into the
# same folder, without the plugin, is not refused.
if run_daemon_plugin daemon fork_daemon; then
  timeout 120 "$CLI" "${BASE[@]}" --max_steps 4 --output_dir "$WORK/daemon" --overwrite_output_dir true \
    >"$WORK/daemon_next.out" 2>"$WORK/daemon_next.err"
  rc=$?
  if ((rc != 0)); then
    fail "fork_daemon: the next run: exit $rc, expected 0: $(tail -3 "$WORK/daemon_next.err")"
  elif gone "$daemon"; then
    fail "fork_daemon: the daemon (PID $daemon) ended before the next run was checked"
  else
    echo "ok fork_daemon (daemon PID $daemon still running; the next run took the folder)"
  fi
  kill -9 "$daemon" 2>/dev/null
fi

# 2. A daemon cloned without the atfork handlers (a raw clone syscall) keeps
# the lock: the next run is refused, naming the daemon and saying its run has
# exited; once the daemon is gone the folder is free again.
if run_daemon_plugin raw_daemon raw_fork_daemon; then
  timeout 120 "$CLI" "${BASE[@]}" --max_steps 4 --output_dir "$WORK/raw_daemon" --overwrite_output_dir true \
    >"$WORK/raw_next.out" 2>"$WORK/raw_next.err"
  rc=$?
  want="trainhook train: error: output_dir $WORK/raw_daemon is still locked ($WORK/raw_daemon/.trainhook.lock),"
  want+=" but the run that locked it (host $(hostname), PID "
  want2="has exited: a process it started holds the lock: PID $daemon ("
  if ((rc != 1)); then
    fail "raw_fork_daemon: the next run: exit $rc, expected 1: $(tail -3 "$WORK/raw_next.err")"
  elif ! grep -qF -- "$want" "$WORK/raw_next.err" || ! grep -qF -- "$want2" "$WORK/raw_next.err"; then
    fail "raw_fork_daemon: the refusal does not name the daemon: $(tail -2 "$WORK/raw_next.err")"
  else
    kill -9 "$daemon"
    if wait_for 30 "raw_fork_daemon: the daemon to end" gone "$daemon"; then
      timeout 120 "$CLI" "${BASE[@]}" --max_steps 4 --output_dir "$WORK/raw_daemon" --overwrite_output_dir true \
        >"$WORK/raw_free.out" 2>"$WORK/raw_free.err"
      rc=$?
      if ((rc != 0)); then
        fail "raw_fork_daemon: the run after the daemon ended: exit $rc: $(tail -3 "$WORK/raw_free.err")"
      else
        echo "ok raw_fork_daemon (refused naming PID $daemon; free once it ended)"
      fi
    fi
  fi
fi

# 3. A child that returns from on_step_end into the trainer ends at once with
# 71, named; only the run's own process writes and reaches on_train_end.
name=fork_return
timeout 120 "$CLI" "${BASE[@]}" --max_steps 6 --output_dir "$WORK/$name" --callbacks fork_return \
  >"$WORK/$name.out" 2>"$WORK/$name.err"
rc=$?
child=$(sed -n 's/^fork_return: forked child PID \([0-9]*\)$/\1/p' "$WORK/$name.err")
want="trainhook: fatal: callback 'fork_return' from $LIB forked a child process (PID $child) during on_step_end"
want+=" that returned into the trainer; the child ends here with status 71 and the run goes on in PID "
ends=$(grep -c "^fork_return: on_train_end in PID" "$WORK/$name.err")
if ((rc != 0)); then
  fail "$name: exit $rc, expected 0: $(tail -3 "$WORK/$name.err")"
elif [[ -z $child ]]; then
  fail "$name: the plugin never forked: $(tail -3 "$WORK/$name.err")"
elif ! grep -qF -- "$want" "$WORK/$name.err"; then
  fail "$name: no line '$want': $(tail -3 "$WORK/$name.err")"
elif ! grep -qF "fork_return: child PID $child exited with status 71" "$WORK/$name.err"; then
  fail "$name: the child did not exit 71: $(grep 'fork_return:' "$WORK/$name.err" | tail -2)"
elif ((ends != 1)); then
  fail "$name: $ends processes reached on_train_end, expected 1"
elif ! python3 - "$WORK/$name/trainer_state.json" <<'PY'; then
import json, sys
history = json.load(open(sys.argv[1]))["log_history"]
finals = [e for e in history if "train_runtime" in e]
steps = [e["step"] for e in history if "loss" in e]
assert len(finals) == 1, finals
assert steps == sorted(set(steps)) and steps[-1] == 6, steps
PY
  fail "$name: trainer_state.json does not hold one run's log_history"
else
  echo "ok $name"
fi

# 4. SIGTERM/SIGINT taken over by a plugin: a SIGTERM during training still
# finishes the step, saves a checkpoint and exits 143. The run is slow from
# step 3 (10 ms a step, 3000 steps): without the host's fix it would train on
# for 30 s and exit 0.
# sigterm_case <callback> <warning text> [<line to wait for after step 3>]
sigterm_case() {
  local name="$1" warning="$2" ready="${3:-}"
  timeout 120 "$CLI" "${BASE[@]}" --max_steps 3000 --save_steps 100000 --output_dir "$WORK/$name" \
    --callbacks "$name" >"$WORK/$name.out" 2>"$WORK/$name.err" &
  local pid=$!
  if ! wait_for_text "$WORK/$name.err" "$name: step 3" "$pid" 120; then
    fail "$name: never reached step 3: $(tail -3 "$WORK/$name.err")"
    kill -9 "$pid" 2>/dev/null
    wait "$pid" 2>/dev/null
    return
  fi
  if [[ -n $ready ]] && ! wait_for_text "$WORK/$name.out" "$ready" "$pid" 60; then
    fail "$name: no line '$ready': $(tail -3 "$WORK/$name.out")"
    kill -9 "$pid" 2>/dev/null
    wait "$pid" 2>/dev/null
    return
  fi
  # `timeout` forwards nothing: signal the trainer itself (timeout's child).
  local trainer
  trainer=$(pgrep -P "$pid" | head -1)
  kill -TERM "${trainer:-$pid}"
  wait "$pid"
  local rc=$?
  if ((rc != 143)); then
    fail "$name: exit $rc after SIGTERM, expected 143: $(tail -3 "$WORK/$name.err")"
  elif ! grep -qF "trainhook train: stopped by SIGTERM at step" "$WORK/$name.err"; then
    fail "$name: no 'stopped by SIGTERM' line: $(tail -3 "$WORK/$name.err")"
  elif ! ls -d "$WORK/$name"/checkpoint-* >/dev/null 2>&1; then
    fail "$name: no checkpoint saved: $(ls "$WORK/$name")"
  elif ! grep -qF -- "$warning" "$WORK/$name.out"; then
    fail "$name: no warning '$warning': $(grep -i warn "$WORK/$name.out" | tail -2)"
  elif grep -qF "term_handler: swallowed a signal" "$WORK/$name.err"; then
    fail "$name: the plugin's handler got the SIGTERM"
  else
    echo "ok $name"
  fi
}
sigterm_case term_ignore_create \
  "callback 'term_ignore_create' from $LIB in create: set the handling of SIGTERM to SIG_IGN; the host put its own back"
sigterm_case term_handler_create \
  "callback 'term_handler_create' from $LIB in create: set the handling of SIGTERM to a handler in $LIB; the host put its own back"
sigterm_case term_ignore_begin \
  "callback 'term_ignore_begin' from $LIB in on_train_begin: set the handling of SIGTERM to SIG_IGN; the host put its own back"
sigterm_case term_handler_begin \
  "callback 'term_handler_begin' from $LIB in on_train_begin: set the handling of SIGTERM to a handler in $LIB; the host put its own back"
# From the plugin's own thread, after on_train_begin: the guard's check while
# training puts the handler back (the test waits for its warning, then signals).
thread_warning="the handling of SIGTERM was changed during training, to SIG_IGN"
sigterm_case term_ignore_thread "$thread_warning" "$thread_warning"

# 5. Descriptors 1 and 2 closed in create: put back and warned; the run's
# console output reaches the console, never a data file in output_dir.
name=close_stdio
timeout 120 "$CLI" "${BASE[@]}" --max_steps 6 --save_steps 3 --report_to jsonl --output_dir "$WORK/$name" \
  --callbacks close_stdio >"$WORK/$name.out" 2>"$WORK/$name.err"
rc=$?
# spdlog's console lines ("[<time>] [info] ..."), the printer's and the trainer's stderr lines.
stray=$(grep -rlI -e '\] \[info\] ' -e '\] \[warning\] ' -e '^trainhook' -e 'close_stdio: step' \
  -e "^{'epoch'" -e '^\*\*\*\*\* train metrics' "$WORK/$name" 2>/dev/null)
if ((rc != 0)); then
  fail "$name: exit $rc, expected 0: $(tail -3 "$WORK/$name.err")"
elif ! grep -qF "callback 'close_stdio' from $LIB in create: closed descriptor 1 (stdout); it was put back as it was" \
  "$WORK/$name.out" ||
  ! grep -qF "callback 'close_stdio' from $LIB in create: closed descriptor 2 (stderr); it was put back as it was" \
    "$WORK/$name.out"; then
  fail "$name: no warning for descriptors 1 and 2: $(grep -i warn "$WORK/$name.out" | tail -2)"
elif [[ -n $stray ]]; then
  fail "$name: console output inside data files: $stray"
elif ! python3 - "$WORK/$name" <<'PY'; then
import glob, json, sys
files = glob.glob(f"{sys.argv[1]}/**/*.jsonl", recursive=True)
assert files, "no .jsonl file written"
for f in files:
    for n, line in enumerate(open(f), 1):
        assert isinstance(json.loads(line), dict), f"{f}:{n}"
PY
  fail "$name: a .jsonl file holds lines that are not JSON records"
elif ! grep -qF "close_stdio: step 3" "$WORK/$name.err"; then
  fail "$name: the run's stderr lost the lines after create: $(tail -2 "$WORK/$name.err")"
else
  echo "ok $name"
fi

# 5b. Descriptor 1 closed at a later event: in on_step_end at step 2, before
# --report_to jsonl opens log_history.jsonl at the first log (step 4), and in
# on_log at step 2 (checked right after the call). Put back and warned naming
# the callback; no console line in a data file; the console keeps the lines
# printed after the close (the train metrics).
late_close_case() {
  local name="$1" logging="$2" want="$3"
  timeout 120 "$CLI" "${BASE[@]}" --max_steps 8 --save_steps 4 --logging_steps "$logging" --report_to jsonl \
    --output_dir "$WORK/$name" --callbacks "$name" >"$WORK/$name.out" 2>"$WORK/$name.err"
  local rc=$?
  local stray
  stray=$(grep -rlI -e '\] \[info\] ' -e '\] \[warning\] ' -e '^trainhook' -e "^{'" -e '^\*\*\*\*\* train metrics' \
    "$WORK/$name" 2>/dev/null)
  if ((rc != 0)); then
    fail "$name: exit $rc, expected 0: $(tail -3 "$WORK/$name.err")"
  elif ! grep -qF "closed descriptor 1" "$WORK/$name.err"; then
    fail "$name: the plugin never closed descriptor 1: $(tail -3 "$WORK/$name.err")"
  elif [[ -n $stray ]]; then
    fail "$name: console output inside data files: $stray"
  elif ! grep -qF -- "$want" "$WORK/$name.out" ||
    ! grep -qF "closed descriptor 1 (stdout); it was put back as it was" "$WORK/$name.out"; then
    fail "$name: no warning '$want ... closed descriptor 1 (stdout); it was put back as it was': $(grep -i warn "$WORK/$name.out" | tail -2)"
  elif ! grep -qF '***** train metrics *****' "$WORK/$name.out"; then
    fail "$name: the console lost the run's lines after the close (no train metrics in its stdout)"
  else
    echo "ok $name"
  fi
}
late_close_case close_stdout_step 4 "callback 'close_stdout_step' from $LIB in a per-step event"
late_close_case close_stdout_log 2 "callback 'close_stdout_log' from $LIB in on_log"

# 5c. umask(0777) in on_step_end at step 2: put back and warned; the
# checkpoint and the final model written later keep the mode the shell's
# umask gives (not 000: unreadable to every other user and job).
name=umask_step
timeout 120 "$CLI" "${BASE[@]}" --max_steps 4 --save_steps 4 --output_dir "$WORK/$name" --callbacks umask_step \
  >"$WORK/$name.out" 2>"$WORK/$name.err"
rc=$?
mode_want=$(printf '%o' $((0666 & ~$(umask))))
mode_model=$(stat -c %a "$WORK/$name/model.pt" 2>/dev/null)
mode_ckpt=$(stat -c %a "$WORK/$name/checkpoint-4/trainer_state.json" 2>/dev/null)
if ((rc != 0)); then
  fail "$name: exit $rc, expected 0: $(tail -3 "$WORK/$name.err")"
elif ! grep -qF "umask_step: set umask 0777" "$WORK/$name.err"; then
  fail "$name: the plugin never set its umask: $(tail -3 "$WORK/$name.err")"
elif [[ $mode_model != "$mode_want" || $mode_ckpt != "$mode_want" ]]; then
  fail "$name: model.pt has mode '$mode_model', checkpoint-4/trainer_state.json '$mode_ckpt', expected $mode_want"
elif ! grep -qF "callback 'umask_step' from $LIB in a per-step event" "$WORK/$name.out" ||
  ! grep -qF "set the umask to 0777 (files created after it get mode 0000); the host put back" "$WORK/$name.out"; then
  fail "$name: no warning naming the plugin and the umask: $(grep -i warn "$WORK/$name.out" | tail -2)"
else
  echo "ok $name (files $mode_want)"
fi

# 5d. RLIMIT_FSIZE: lowered to 4096 bytes by a plugin's create (put back,
# warned: the run completes), and the user's own `ulimit -f 4` (the write
# that crosses it fails naming the file and the limit: exit 1). Before, either
# ended the run with a bare SIGXFSZ (exit 153). Output goes through a pipe,
# which no file size limit applies to.
name=fsize_create
(timeout 120 "$CLI" "${BASE[@]}" --max_steps 4 --save_steps 2 --output_dir "$WORK/$name" --callbacks fsize_create \
  2>&1) | cat >"$WORK/$name.out"
rc=${PIPESTATUS[0]}
if ((rc != 0)); then
  fail "$name: exit $rc, expected 0: $(tail -3 "$WORK/$name.out")"
elif ! grep -qF "callback 'fsize_create' from $LIB in create: lowered the file size limit (RLIMIT_FSIZE) from " \
  "$WORK/$name.out" || ! grep -qF "to 4096 bytes; the host put it back" "$WORK/$name.out"; then
  fail "$name: no warning naming the plugin and the limit: $(grep -i warn "$WORK/$name.out" | tail -2)"
elif [[ ! -s $WORK/$name/model.pt || ! -d $WORK/$name/checkpoint-4 ]]; then
  fail "$name: no model.pt and checkpoint-4: $(ls "$WORK/$name")"
else
  echo "ok $name"
fi
name=ulimit_f
(
  ulimit -f 4
  exec timeout 120 "$CLI" "${BASE[@]}" --max_steps 4 --save_steps 2 --output_dir "$WORK/$name" 2>&1
) | cat >"$WORK/$name.out"
rc=${PIPESTATUS[0]}
if ((rc != 1)); then
  fail "$name: exit $rc, expected 1 (153: killed by SIGXFSZ): $(tail -3 "$WORK/$name.out")"
elif ! grep -qF "cannot write $WORK/$name/" "$WORK/$name.out" ||
  ! grep -qF '(it reached the file size limit of this process, 4096 bytes: RLIMIT_FSIZE, `ulimit -f` 4 (blocks' \
    "$WORK/$name.out"; then
  fail "$name: the error does not name the file and the limit: $(grep -i 'cannot write' "$WORK/$name.out" | tail -2)"
else
  echo "ok $name ($(grep -o "cannot write [^:]*" "$WORK/$name.out" | head -1))"
fi

# 6. chdir() in create, relative --output_dir (and --train_file): the files
# land in the folder the user named, none where the plugin went.
name=chdir_away
mkdir -p "$WORK/cwd" "$WORK/away"
(cd "$WORK/cwd" && HOST_CONTAIN_DIR="$WORK/away" timeout 120 "$CLI" "${BASE[@]}" --train_file ../train.csv \
  --max_steps 4 --save_steps 2 --output_dir rel_out --callbacks chdir_away \
  >"$WORK/$name.out" 2>"$WORK/$name.err")
rc=$?
if ((rc != 0)); then
  fail "$name: exit $rc, expected 0: $(tail -3 "$WORK/$name.err")"
elif [[ ! -s $WORK/cwd/rel_out/model.pt || ! -d $WORK/cwd/rel_out/checkpoint-4 ]]; then
  fail "$name: no model.pt and checkpoint-4 in the folder named: $(ls "$WORK/cwd/rel_out" 2>&1)"
elif [[ -n $(ls -A "$WORK/away") ]]; then
  fail "$name: files where the plugin went: $(ls -A "$WORK/away")"
elif ! grep -qF "changed the working directory from $(cd "$WORK/cwd" && pwd -P) to $(cd "$WORK/away" && pwd -P)" \
  "$WORK/$name.out"; then
  fail "$name: no warning about the working directory: $(grep -i warn "$WORK/$name.out" | tail -2)"
else
  echo "ok $name"
fi

if ((failures > 0)); then
  echo "$failures host-contain case(s) failed"
  exit 1
fi
echo "all host-contain cases passed"
