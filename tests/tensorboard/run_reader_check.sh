#!/usr/bin/env bash
# Plays a run through the tensorboard plugin (tensorboard_driver) and reads the
# event files back with the real `tensorboard` package from the test venv.
#   run_reader_check.sh <tensorboard_driver> <tensorboard plugin library>
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../lib/test_lib.sh"
VENV="$(test_venv)" || exit 1
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
unset TENSORBOARD_LOGGING_DIR
"$1" "$WORK/out" "$2"
"$VENV/bin/python" "$HERE/check_events.py" "$WORK/out" --expected "$WORK/out/expected.json"
