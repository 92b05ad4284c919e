#!/usr/bin/env bash
# `trainhook plugin check` as a pack's CI runs it:
#  - the examples pass (exit 0): examples/c_plugin (with its README's key
#    table), and both plugins of examples/third_party_plugin (acme_logger
#    pointed at a port where nothing listens, so its records go to its spool
#    under output_dir)
#  - a plugin that ignores unknown plugin_config keys passes with a WARN
#  - each careless plugin fails (exit 1) and the FAIL names the check of the
#    rule it breaks, with what it found; one that writes PASS lines onto the
#    checker's result channel, then crashes or exits, fails all the same
#  - it loads a library as the trainer does: a pack whose plugin needs the
#    library beside it through RUNPATH $ORIGIN passes; that helper library,
#    no plugin, fails with the trainer's ELF pre-check message
#  - usage errors exit 2 naming the file or the argument
# Usage: plugin_check_test.sh <trainhook> <plugin folder> <loss_guard library> <source root>
#        <tests/sdk's C plugin, which ignores unknown plugin_config keys>
#        <tests/plugin_host's origin_pack plugin, its helper library beside it>
set -uo pipefail
TH="$1" PLUGINS="$2" LOSS_GUARD="$3" SRC="$4" LAX_KEYS="$5" ORIGIN_PACK="$6"
KEEP_GOING=1
source "$(dirname "${BASH_SOURCE[0]}")/../lib/test_lib.sh"
LIB=libtrainhook_careless.so

# check EXPECTED_STATUS NAME ARGS...: runs the check; its output in $OUT.
check() {
  local want=$1 name=$2
  shift 2
  OUT="$("$TH" plugin check "$@" 2>&1)"
  local rc=$?
  if [[ $rc -ne $want ]]; then
    echo "$OUT"
    fail "$name: exit status $rc, expected $want"
  fi
}
# expect_line NAME REGEX: a line of $OUT matches.
expect_line() {
  grep -qE -- "$2" <<<"$OUT" || { echo "$OUT"; fail "$1: no line matching: $2"; }
}
# only_fail NAME CHECK: CHECK fails, and no other check does.
only_fail() {
  expect_line "$1" "^FAIL  $2 "
  local others
  others="$(grep -E '^FAIL  ' <<<"$OUT" | grep -vE "^FAIL  $2 ")"
  [[ -z $others ]] || { echo "$OUT"; fail "$1: other checks failed too: $others"; }
}

# ---- the examples pass -------------------------------------------------------
check 0 loss_guard "$LOSS_GUARD" --readme "$SRC/examples/c_plugin/README.md" --timeout 60
expect_line loss_guard "^PASS  entry_table "
expect_line loss_guard "callback loss_guard 1.0.0: stops training when the logged loss"
expect_line loss_guard "loss_guard: keys: max_loss"
expect_line loss_guard "^PASS  readme_table "
expect_line loss_guard "^PASS  hostile_inputs "
expect_line loss_guard "ok: rank 1 of a world of 4"
expect_line loss_guard "^PASS  observe_only "
expect_line loss_guard "loss_guard: declares no event observe-only"
expect_line loss_guard "^plugin check: 16 PASS, 0 WARN, 0 FAIL, 0 SKIP"

# A README whose key table drifted from the declaration: the keys on both sides are named.
README="$(mktemp)"
trap 'rm -f "$README"' EXIT
printf '# loss_guard\n\n| key | default | meaning |\n|---|---|---|\n| `max_los` | 1e6 | a typo |\n\nText.\n' >"$README"
check 1 readme_drift "$LOSS_GUARD" --readme "$README" --timeout 60
only_fail readme_drift readme_table
expect_line readme_drift "differs from the declaration: not documented: max_loss; documented but not declared: max_los"

check 0 acme_metrics "$PLUGINS/acme_metrics/libtrainhook_acme_metrics.so" --timeout 60
expect_line acme_metrics "integration acme_metrics 1.0.0"
expect_line acme_metrics "acme_metrics: keys: file"
expect_line acme_metrics "^PASS  files_in_cwd "

PORT=$(free_port)
check 0 acme_logger "$PLUGINS/acme_logger/libtrainhook_acme_logger.so" --timeout 60 \
  --plugin_config "acme_logger.url=http://127.0.0.1:$PORT/" --plugin_config acme_logger.max_attempts=1
expect_line acme_logger "acme_logger: keys: url, max_attempts, queue_size"
expect_line acme_logger "^PASS  threads_left "
expect_line acme_logger "acme_logger: observes on_log \(isolated, delivered without a round trip\)"
expect_line acme_logger "trainer of ABI 1.1 \(absent optional fields\)"

# Without its required url, acme_logger cannot even be created: the events fail saying how to give it.
check 1 acme_logger_unconfigured "$PLUGINS/acme_logger/libtrainhook_acme_logger.so" --timeout 60
expect_line acme_logger_unconfigured "^FAIL  events "
expect_line acme_logger_unconfigured "acme_logger.url: required"
expect_line acme_logger_unconfigured "--plugin_config acme_logger.KEY=VALUE"

# A callback that ignores unknown keys passes with a WARN (exit 0) saying what that costs its users.
check 0 lax_keys "$LAX_KEYS" --timeout 60
expect_line lax_keys "^WARN  config_keys "
expect_line lax_keys "c_counter: accepts the unknown key .* a typo in its plugin_config goes unnoticed"

# ---- careless plugins fail, each naming its check --------------------------
# careless KIND CHECK REGEX [ARGS...]: the careless plugin of KIND fails CHECK
# alone, with a line matching REGEX.
careless() {
  local kind=$1 rule=$2 line=$3
  shift 3
  check 1 "$kind" "$PLUGINS/$kind/$LIB" --timeout 60 "$@"
  only_fail "$kind" "$rule"
  expect_line "$kind" "$line"
}
careless throws exceptions "careless.on_log at step [0-9]+ let a C\\+\\+ exception out through the C ABI \\(std::runtime_error: careless: a log record"
expect_line throws "^SKIP  events .*|stopped: careless.on_log at step 2 threw \\(see exceptions\\)"

# Thrown below a noexcept function: std::terminate's SIGABRT inside the call.
careless aborts exceptions "killed by SIGABRT in careless.on_log at step 2: std::terminate"
expect_line aborts "^SKIP  events "

careless thread threads_left "thread\(s\) still running 1 s after destroy"

careless sigterm signal_handlers "changed the disposition of SIGTERM"
# Installed in create and left there: the call that did it is named.
expect_line sigterm "careless.create at step 0: changed the disposition of SIGTERM \(still so when it returned\)"

careless writes_cwd files_in_cwd "instead of th_host.output_dir: careless_summary.txt"

careless slow event_time "OVER careless.on_step_end: 60 calls, mean [0-9.]+ ms" --step_budget_ms 5
expect_line slow "^SKIP  memory_growth .*|too slow to measure"

careless leaks memory_growth "memory grows with every step: .* over [0-9]+ steps \(4[0-9]{3} bytes per step"

careless closes_stderr std_descriptors "fd 2 \(stderr\) closed"

careless chdir working_directory "changed from .*/cwd to .*/output_dir"

careless steers_observed observe_only "careless.on_log at step [0-9]+, declared observe-only, set should_save"

careless steers_side_by_side observe_only "careless.on_save at step [0-9]+, declared side by side, set should_training_stop"

# SIGTERM ignored inside on_step_end and put back before it returns: seen while the call runs.
careless ignores_sigterm signal_handlers \
  "careless.on_step_end at step [0-9]+: changed the disposition of SIGTERM while it ran \(put back before it returned\)" \
  --step_budget_ms 20
expect_line ignores_sigterm "put back by the end of the run, but changed inside a plugin call"

# PASS lines for every check written onto every pipe it holds (the result
# channel among them), then a crash or an exit: none of them counts, and the
# group it was in fails with how the helper ended.
check 1 forges "$PLUGINS/forges/$LIB" --timeout 60
expect_line forges "^trainhook plugin check .*/forges/$LIB"
expect_line forges "^FAIL  events "
expect_line forges "killed by SIGSEGV in careless.on_train_begin at step 0; [0-9]+ line\(s\) on the checker's result channel \(fd 3\) were not the checker's"
expect_line forges "^plugin check: [0-9]+ PASS, [0-9]+ WARN, [1-9][0-9]* FAIL"
check 1 forges_exits "$PLUGINS/forges_exits/$LIB" --timeout 60
expect_line forges_exits "^FAIL  events "
expect_line forges_exits "the helper exited with status 0 before the end of its group in careless.on_train_begin at step 0 \(the plugin ended the process\)"

# A hang: the group is killed at --timeout and the event it hung in is named.
check 1 hangs "$PLUGINS/hangs/$LIB" --timeout 3
expect_line hangs "^FAIL  events "
expect_line hangs "no answer within 3 s: hung in careless.on_evaluate at step 4"

# A crash: the signal and the event.
check 1 crashes "$PLUGINS/crashes/$LIB" --timeout 60
expect_line crashes "^FAIL  events "
expect_line crashes "killed by SIGSEGV in careless.on_save at step 4"
expect_line crashes "^SKIP  resume "

# ---- loaded as the trainer loads it ------------------------------------------
# Through /proc/self/fd/N, after what it needs beside it through $ORIGIN.
check 0 origin_pack "$ORIGIN_PACK" --timeout 60
expect_line origin_pack "^PASS  entry_table "
expect_line origin_pack "^PASS  events "
# The ELF pre-check of the trainer, before anything of the file is loaded.
check 1 not_a_plugin "$(dirname "$ORIGIN_PACK")/libtrainhook_origin_dep.so" --timeout 60
expect_line not_a_plugin "^FAIL  entry_table "
expect_line not_a_plugin "cannot be loaded: no entry symbol trainhook_plugin_v1 \(not a Trainhook plugin"

# ---- usage errors ------------------------------------------------------------
check 2 missing_file "$PLUGINS/no_such_library.so"
expect_line missing_file "no_such_library.so: no such file"
check 2 bad_flag "$LOSS_GUARD" --step_budget 3
expect_line bad_flag "unknown argument '--step_budget' \(did you mean '--step_budget_ms'\?\)"
check 2 no_library
expect_line no_library "which plugin library"

exit $((failures > 0))
