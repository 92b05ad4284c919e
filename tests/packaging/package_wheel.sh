#!/usr/bin/env bash
# `pip wheel ./python` with the build backend of python/pyproject.toml
# (scikit-build-core, from build/wheel-venv: scripts/venv wheel), no build
# isolation; the wheel holds the core library, its helpers and our plugins and no
# LibTorch. Installed (pip, no index) into a fresh venv of Debian's python3 that
# sees the HF venv's packages through a .pth file, it runs inside HF's Trainer
# without TRAINHOOK_LIBRARY, PATH changes or the build tree
# (tests/python_bridge/hf_bridge_check.py, case `wheel`).
# The CMake build of the wheel is kept in <work>/wheel-build, so a second run
# compiles only what changed.
# Usage: package_wheel.sh <source dir> <digits.csv> <work dir>
set -euo pipefail
SRC="$1" DIGITS="$2" WORK="$3"
source "$(dirname "${BASH_SOURCE[0]}")/../lib/test_lib.sh"
WHEEL_VENV="${TRAINHOOK_WHEEL_VENV:-$SRC/build/wheel-venv}"
HF_VENV="${TRAINHOOK_HF_VENV:-$SRC/build/hf-venv}"
[[ -x "$WHEEL_VENV/bin/pip" ]] || fail "no wheel build venv at $WHEEL_VENV (run scripts/venv wheel)"
[[ -x "$HF_VENV/bin/python" ]] || fail "no HF venv at $HF_VENV (run scripts/venv hf)"
mkdir -p "$WORK"
rm -rf "$WORK/wheels" "$WORK/venv" "$WORK/run"
start=$SECONDS
"$WHEEL_VENV/bin/pip" wheel -q --disable-pip-version-check --no-build-isolation --no-deps -w "$WORK/wheels" \
  --config-settings=build-dir="$WORK/wheel-build" "$SRC/python" >"$WORK/wheel.log" 2>&1 ||
  { tail -40 "$WORK/wheel.log"; fail "pip wheel ./python"; }
WHEEL=$(ls "$WORK"/wheels/trainhook-*.whl)
echo "wheel $(basename "$WHEEL"), $(stat -c %s "$WHEEL") bytes, built in $((SECONDS - start)) s"
python3 -m zipfile -l "$WHEEL" | awk '{print $1}' >"$WORK/wheel.files"
for f in trainhook/_core.py trainhook/_native/lib/libtrainhook_base.so \
         trainhook/_native/libexec/trainhook/trainhook-plugin-scanner \
         trainhook/_native/lib/trainhook/plugins/libtrainhook_early_stopping.so \
         trainhook/_native/lib/trainhook/plugins/libtrainhook_jsonl.so; do
  grep -qxF "$f" "$WORK/wheel.files" || fail "the wheel lacks $f"
done
grep -E 'torch|/bin/trainhook$' "$WORK/wheel.files" && fail "the wheel holds LibTorch or the trainhook program"

/usr/bin/python3 -m venv --system-site-packages "$WORK/venv"
site() { "$1" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])'; }
site "$HF_VENV/bin/python" >"$(site "$WORK/venv/bin/python")/hf-venv.pth"
"$WORK/venv/bin/pip" install -q --disable-pip-version-check --no-deps --no-index "$WHEEL" ||
  fail "pip install of the wheel"
# Outside the source tree; nothing points at a build.
mkdir -p "$WORK/run" && cd "$WORK/run"
export PATH=/usr/bin:/bin
command -v trainhook && echo "note: a trainhook program on PATH takes precedence over the wheel's core"
env -u TRAINHOOK_LIBRARY -u TRAINHOOK_PLUGIN_PATH -u TRAINHOOK_LIBEXEC_DIR -u PYTHONPATH -u LD_LIBRARY_PATH \
  TRAINHOOK_REGISTRY_CACHE="$WORK/run/registry-cache.json" \
  "$WORK/venv/bin/python" "$SRC/tests/python_bridge/hf_bridge_check.py" wheel --digits "$DIGITS" --work "$WORK/run"
