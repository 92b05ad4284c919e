#!/usr/bin/env bash
# TensorBoard through the real CLI and trainer, read back by the `tensorboard`
# package: `trainhook train ... --report_to tensorboard`, then every number of
# trainer_state.json's log_history must be a scalar at its step in the event
# file, with the args text and the hparams session; TENSORBOARD_LOGGING_DIR
# and plugin_config tensorboard.logging_dir move the files; report_to none
# writes none.
# usage: cli_tensorboard.sh TRAINHOOK_BINARY WORK_DIR
set -euo pipefail
TH="$1"
WORK="$2"
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
VENV="${TRAINHOOK_TEST_VENV:-${TRAINHOOK_SOURCE_DIR:-$HERE/../..}/build/venv}"
[[ -x "$VENV/bin/python" ]] || { echo "no test venv at $VENV (set TRAINHOOK_TEST_VENV)" >&2; exit 1; }
rm -rf "$WORK"
mkdir -p "$WORK/data"
unset TENSORBOARD_LOGGING_DIR

fail() { echo "FAIL: $*" >&2; exit 1; }

# A small learnable task (label = x1 > x2), deterministic.
awk 'BEGIN { srand(11); for (i = 0; i < 192; i++) { a = rand(); b = rand(); printf "%.5f,%.5f,%d\n", a, b, (a > b) } }' \
  > "$WORK/data/train.csv"
awk 'BEGIN { srand(12); for (i = 0; i < 48; i++) { a = rand(); b = rand(); printf "%.5f,%.5f,%d\n", a, b, (a > b) } }' \
  > "$WORK/data/valid.csv"

run() {  # out_dir args...
  local out="$1"
  shift
  "$TH" train --train_file "$WORK/data/train.csv" --validation_file "$WORK/data/valid.csv" --do_train \
    --output_dir "$out" --per_device_train_batch_size 16 --per_device_eval_batch_size 16 --max_steps 30 \
    --logging_steps 2 --eval_strategy steps --eval_steps 5 --save_strategy no --disable_tqdm true --seed 3 \
    "$@" > "$out.log" 2>&1 || { cat "$out.log" >&2; fail "trainhook train $* exited with an error"; }
}
check() {  # out_dir [checker args...]
  "$VENV/bin/python" "$HERE/check_events.py" "$@" --trainer-output 2> "$1.check" ||
    { cat "$1.log" "$1.check" >&2; fail "event files of $1 do not match its log_history"; }
  grep -v -i warn "$1.check" >&2 || true
}

# 1. Default folder: output_dir/runs/<Mon><DD>_<HH>-<MM>-<SS>_<host>/.
run "$WORK/default" --report_to tensorboard
check "$WORK/default"
echo "ok: default folder"

# 2. TENSORBOARD_LOGGING_DIR.
TENSORBOARD_LOGGING_DIR="$WORK/tb_env" run "$WORK/env" --report_to tensorboard
[[ ! -d "$WORK/env/runs" ]] || fail "TENSORBOARD_LOGGING_DIR set, but events went to output_dir/runs"
check "$WORK/env" --logdir "$WORK/tb_env"
echo "ok: TENSORBOARD_LOGGING_DIR"

# 3. plugin_config tensorboard.logging_dir wins over the environment.
TENSORBOARD_LOGGING_DIR="$WORK/tb_env2" run "$WORK/cfg" --report_to tensorboard \
  --plugin_config "tensorboard.logging_dir=$WORK/tb_cfg" --plugin_config tensorboard.flush_secs=0.2
[[ ! -d "$WORK/tb_env2" ]] || fail "plugin_config logging_dir did not override TENSORBOARD_LOGGING_DIR"
check "$WORK/cfg" --logdir "$WORK/tb_cfg"
echo "ok: plugin_config tensorboard.logging_dir"

# 4. report_to none: no event files.
run "$WORK/none" --report_to none
[[ ! -d "$WORK/none/runs" ]] || fail "report_to none wrote $WORK/none/runs"
echo "ok: report_to none"

# 5. A bad plugin_config key is refused, naming it.
if "$TH" train --train_file "$WORK/data/train.csv" --do_train --output_dir "$WORK/bad" --max_steps 2 \
     --report_to tensorboard --plugin_config tensorboard.logdir=x > "$WORK/bad.log" 2>&1; then
  fail "an unknown plugin_config key was accepted"
fi
grep -q "tensorboard.logdir" "$WORK/bad.log" || { cat "$WORK/bad.log" >&2; fail "the error does not name the key"; }
echo "ok: bad plugin_config key"
