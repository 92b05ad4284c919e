#!/usr/bin/env bash
# Runs a Python script with the HF venv's python (python3-torch 1.13 +
# transformers 4.47.1, made by scripts/venv hf): TRAINHOOK_HF_VENV, else
# <source>/build/hf-venv.  usage: hf_python.sh <script.py> [args...]
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
VENV="${TRAINHOOK_HF_VENV:-${TRAINHOOK_SOURCE_DIR:-$HERE/../..}/build/hf-venv}"
if [[ ! -x "$VENV/bin/python" ]]; then
  echo "FAIL: no HF venv at $VENV (run scripts/venv hf, or set TRAINHOOK_HF_VENV)" >&2
  exit 1
fi
exec "$VENV/bin/python" "$@"
