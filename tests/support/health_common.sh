# Shared by the training-health plugin tests (tests/{nan_guard,ema,
# reduce_lr_on_plateau,grad_stats}/cli_*.sh): arguments, data, helpers.
# usage (sourced): health_common.sh <bin/trainhook> <digits.csv> <work dir>
set -euo pipefail
TH=${1:?bin/trainhook}
DIGITS=${2:?digits.csv}
WORK=${3:?work dir}
HEALTH_HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
export OMP_NUM_THREADS=1
source "$(dirname "${BASH_SOURCE[0]}")/../lib/test_lib.sh"
VENV="$(test_venv)" || exit 1
[[ -s $DIGITS ]] || fail "$DIGITS is missing; scripts/install-deps unpacks it"
[[ -x "$VENV/bin/python" ]] || fail "no test venv at $VENV (set TRAINHOOK_TEST_VENV)"
rm -rf "$WORK"
mkdir -p "$WORK"
head -n 512 "$DIGITS" >"$WORK/train.csv"
sed -n 513,640p "$DIGITS" >"$WORK/val.csv"
BASE=(--train_file "$WORK/train.csv" --validation_file "$WORK/val.csv" --feature_scale 0.0625 --model mlp
  --do_train --disable_tqdm true --seed 5 --per_device_train_batch_size 32 --per_device_eval_batch_size 64)

# run <out_dir> args...: trainhook train, output in <out_dir>.log; fails the test on an error.
run() {
  local out="$1"
  shift
  "$TH" train "${BASE[@]}" --output_dir "$out" "$@" >"$out.log" 2>&1 ||
    { cat "$out.log" >&2; fail "trainhook train $* exited with an error"; }
}

# py <python code> args...: runs code with the test venv's python (json, sys imported).
py() {
  local code="$1"
  shift
  "$VENV/bin/python" -c "import json, sys, math
$code" "$@"
}
