#!/usr/bin/env bash
# Plays a run through the tensorboard plugin (tensorboard_driver) and reads the
# event files back with the real `tensorboard` package from the test venv.
#   run_reader_check.sh <tensorboard_driver> <tensorboard plugin library> [--fail MESSAGE]
# With --fail the run ends by EXCEPTION: the reader must find the failure text
# and a failed hparams session.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../lib/test_lib.sh"
VENV="$(test_venv)" || exit 1
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
unset TENSORBOARD_LOGGING_DIR
"$1" "$WORK/out" "$2" "${@:3}" 2>"$WORK/driver.log" || { cat "$WORK/driver.log" >&2; exit 1; }
cat "$WORK/driver.log" >&2
if [[ "${3:-}" == "--fail" ]] && ! grep -q "TensorBoard run .* FAILED (error at step 60: " "$WORK/driver.log"; then
  echo "no FAILED end-of-run line in the driver's log" >&2
  exit 1
fi
"$VENV/bin/python" "$HERE/check_events.py" "$WORK/out" --expected "$WORK/out/expected.json"
