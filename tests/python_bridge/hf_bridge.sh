#!/usr/bin/env bash
# Runs one case of hf_bridge_check.py (or, with "mlflow", run_mlflow_bridge_test.py)
# with the package from the source tree (python/) and the core library of this
# build. The HF venv: TRAINHOOK_HF_VENV, else <source>/build/hf-venv (scripts/venv hf);
# the test venv (mlflow server): TRAINHOOK_TEST_VENV, else <source>/build/venv.
# usage: hf_bridge.sh <source dir> <libtrainhook_base.so> <digits.csv> <work dir> <case> [--c_plugin_dir DIR]
set -euo pipefail
SRC="$1" CORE="$2" DIGITS="$3" WORK="$4" CASE="$5"
shift 5
HF_VENV="${TRAINHOOK_HF_VENV:-$SRC/build/hf-venv}"
if [[ ! -x "$HF_VENV/bin/python" ]]; then
  echo "FAIL: no HF venv at $HF_VENV (run scripts/venv hf, or set TRAINHOOK_HF_VENV)" >&2
  exit 1
fi
if [[ ! -f "$DIGITS" ]]; then
  echo "FAIL: no digits data at $DIGITS (scripts/install-deps writes it)" >&2
  exit 1
fi
export TRAINHOOK_LIBRARY="$CORE" PYTHONPATH="$SRC/python${PYTHONPATH:+:$PYTHONPATH}"
# A registry cache of this test's own: the scan of the plugin folders is really done.
export TRAINHOOK_REGISTRY_CACHE="$WORK/registry-cache.json"
mkdir -p "$WORK"
TEST_VENV="${TRAINHOOK_TEST_VENV:-$SRC/build/venv}"
if [[ "$CASE" == mlflow || "$CASE" == tensorboard ]] && [[ ! -x "$TEST_VENV/bin/mlflow" ]]; then
  echo "FAIL: no test venv (mlflow, tensorboard) at $TEST_VENV (run scripts/venv test, or set TRAINHOOK_TEST_VENV)" >&2
  exit 1
fi
if [[ "$CASE" == mlflow ]]; then
  exec "$TEST_VENV/bin/python" "$SRC/tests/python_bridge/run_mlflow_bridge_test.py" \
    --hf_python "$HF_VENV/bin/python" --work "$WORK" --digits "$DIGITS"
fi
if [[ "$CASE" == tensorboard ]]; then
  # The run in the HF venv, its event file read back by TensorBoard's own readers
  # (tests/tensorboard/check_events.py, the check the C++ trainer's runs pass).
  "$HF_VENV/bin/python" "$SRC/tests/python_bridge/hf_bridge_check.py" tensorboard_run --digits "$DIGITS" \
    --work "$WORK"
  exec "$TEST_VENV/bin/python" "$SRC/tests/tensorboard/check_events.py" "$WORK/tensorboard" --trainer-output
fi
exec "$HF_VENV/bin/python" "$SRC/tests/python_bridge/hf_bridge_check.py" "$CASE" --digits "$DIGITS" \
  --work "$WORK" "$@"
