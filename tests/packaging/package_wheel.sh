#!/usr/bin/env bash
# `pip wheel ./python` with the build backend of python/pyproject.toml
# (scikit-build-core, from build/wheel-venv: scripts/venv wheel), no build
# isolation; the wheel holds the core library, its helpers and our plugins, none
# of which links LibTorch, and no LibTorch. Installed (pip, no index) into a fresh
# venv of Debian's python3 that sees the HF venv's packages through a .pth file,
# it runs inside HF's Trainer without TRAINHOOK_LIBRARY, PATH changes or the build
# tree (tests/python_bridge/hf_bridge_check.py, case `wheel`); TRAINHOOK_LIBRARY
# and a `trainhook` program on PATH still win over the wheel's own core; and a
# missing -dev package is named by the configure step.
#
# The wheel's CMake build is kept in <wheel build dir> (the main build's
# wheel-build/), so a second run compiles only what changed; ccache
# (scripts/lib/ccache-env.sh) serves a fresh one. That folder sits as deep as the
# main build's core/, so the core's objects compiled there hit the same cache
# entries (ccache keys on paths relative to CCACHE_BASEDIR and the working folder).
# Warnings are errors here, as in the main build (whose flags it then shares).
# Usage: package_wheel.sh <source dir> <digits.csv> <work dir> <wheel build dir> <libtrainhook_base.so of the build>
set -euo pipefail
SRC="$1" DIGITS="$2" WORK="$3" WHEEL_BUILD="$4" BUILD_CORE="$5"
source "$(dirname "${BASH_SOURCE[0]}")/../lib/test_lib.sh"
ROOT="$SRC" source "$SRC/scripts/lib/ccache-env.sh"
export CMAKE_BUILD_PARALLEL_LEVEL="${CMAKE_BUILD_PARALLEL_LEVEL:-$(nproc)}"
WHEEL_VENV="${TRAINHOOK_WHEEL_VENV:-$SRC/build/wheel-venv}"
HF_VENV="${TRAINHOOK_HF_VENV:-$SRC/build/hf-venv}"
[[ -x "$WHEEL_VENV/bin/pip" ]] || fail "no wheel build venv at $WHEEL_VENV (run scripts/venv wheel)"
[[ -x "$HF_VENV/bin/python" ]] || fail "no HF venv at $HF_VENV (run scripts/venv hf)"
[[ -f "$DIGITS" ]] || fail "no digits data at $DIGITS (scripts/install-deps writes it)"
mkdir -p "$WORK"
rm -rf "$WORK/wheels" "$WORK/venv" "$WORK/run" "$WORK/missing-build" "$WORK/prefix"
pip_wheel() {
  "$WHEEL_VENV/bin/pip" wheel -v --disable-pip-version-check --no-build-isolation --no-deps "$@" "$SRC/python"
}

start=$SECONDS
pip_wheel -w "$WORK/wheels" --config-settings=build-dir="$WHEEL_BUILD" \
  --config-settings=cmake.define.TRAINHOOK_WERROR=ON >"$WORK/wheel.log" 2>&1 ||
  { tail -40 "$WORK/wheel.log"; fail "pip wheel ./python (log: $WORK/wheel.log)"; }
WHEEL=$(ls "$WORK"/wheels/trainhook-*.whl)
echo "wheel $(basename "$WHEEL"), $(stat -c %s "$WHEEL") bytes, built in $((SECONDS - start)) s" \
  "($(grep -c 'Building C' "$WORK/wheel.log" || true) compiler runs)"
# Nothing of LibTorch is configured for it, so nothing of it is compiled: no
# compile line of the wheel's build has LibTorch's headers.
grep -q 'TRAINHOOK_WITH_TORCH:BOOL=OFF' "$WHEEL_BUILD/CMakeCache.txt" || fail "the wheel's build has TRAINHOOK_WITH_TORCH on"
if grep -rl --include=build.ninja --include=flags.make 'torch/csrc' "$WHEEL_BUILD"; then
  fail "the wheel's build compiles with LibTorch's headers"
fi
python3 -m zipfile -l "$WHEEL" | awk 'NR > 1 {print $1}' >"$WORK/wheel.files"
for f in trainhook/_core.py trainhook/_native/lib/libtrainhook_base.so \
         trainhook/_native/libexec/trainhook/trainhook-plugin-scanner \
         trainhook/_native/libexec/trainhook/trainhook-plugin-runner \
         trainhook/_native/lib/trainhook/plugins/libtrainhook_early_stopping.so \
         trainhook/_native/lib/trainhook/plugins/libtrainhook_jsonl.so; do
  grep -qxF "$f" "$WORK/wheel.files" || fail "the wheel lacks $f"
done
if grep -E 'torch[^/]*\.so|/bin/trainhook$|/include/' "$WORK/wheel.files"; then
  fail "the wheel holds LibTorch, the trainhook program or headers"
fi

/usr/bin/python3 -m venv --system-site-packages "$WORK/venv"
site() { "$1" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])'; }
site "$HF_VENV/bin/python" >"$(site "$WORK/venv/bin/python")/hf-venv.pth"
"$WORK/venv/bin/pip" install -q --disable-pip-version-check --no-deps --no-index "$WHEEL" ||
  fail "pip install of the wheel"
# None of the installed libraries links LibTorch.
native="$(site "$WORK/venv/bin/python")/trainhook/_native"
for f in "$native"/lib/*.so "$native"/lib/trainhook/plugins/*.so "$native"/libexec/trainhook/*; do
  if ldd "$f" | grep -E 'libtorch|libc10'; then fail "$f links LibTorch"; fi
  if ldd "$f" | grep 'not found'; then fail "$f: a library it links is not found"; fi
done

# The plugins' digests (plugin pinning) are of the bytes the wheel holds (its
# build installs them stripped: scikit-build-core's install.strip).
(cd "$native/lib/trainhook/plugins" && sha256sum -c --quiet trainhook-plugins.sha256) ||
  fail "the wheel's trainhook-plugins.sha256 does not match its plugins"

# Outside the source tree; nothing points at a build.
mkdir -p "$WORK/run" && cd "$WORK/run"
clean() {
  env -u TRAINHOOK_LIBRARY -u TRAINHOOK_PLUGIN_PATH -u TRAINHOOK_LIBEXEC_DIR -u PYTHONPATH -u LD_LIBRARY_PATH \
    TRAINHOOK_REGISTRY_CACHE="$WORK/run/registry-cache.json" "$@"
}
if PATH=/usr/bin:/bin command -v trainhook; then
  fail "a trainhook program on /usr/bin:/bin would take precedence over the wheel's core; the test needs none"
fi
core_path=("$WORK/venv/bin/python" -c 'from trainhook import _core; print(_core.core().path)')
clean PATH=/usr/bin:/bin "$WORK/venv/bin/python" "$SRC/tests/python_bridge/hf_bridge_check.py" wheel \
  --digits "$DIGITS" --work "$WORK/run" || fail "the wheel inside HF's Trainer"

# What takes precedence over the wheel's own core (docs/python.md): TRAINHOOK_LIBRARY,
# then the lib/ of a `trainhook` program on PATH.
got=$(clean PATH=/usr/bin:/bin TRAINHOOK_LIBRARY="$BUILD_CORE" "${core_path[@]}")
[[ "$got" == "$BUILD_CORE" ]] || fail "TRAINHOOK_LIBRARY=$BUILD_CORE, yet the core loaded is $got"
mkdir -p "$WORK/prefix/bin" "$WORK/prefix/lib"
printf '#!/bin/sh\nexit 0\n' >"$WORK/prefix/bin/trainhook" && chmod +x "$WORK/prefix/bin/trainhook"
ln -s "$BUILD_CORE" "$WORK/prefix/lib/libtrainhook_base.so"
got=$(clean PATH="$WORK/prefix/bin:/usr/bin:/bin" "${core_path[@]}")
[[ "$got" == "$WORK/prefix/lib/libtrainhook_base.so" ]] ||
  fail "with a trainhook program in $WORK/prefix/bin on PATH, the core loaded is $got"
echo "ok   TRAINHOOK_LIBRARY, then a trainhook program on PATH, take precedence over the wheel's core"

# A missing -dev package is named (spdlog hidden from CMake as if libspdlog-dev were absent).
if pip_wheel -w "$WORK/missing-wheels" --config-settings=build-dir="$WORK/missing-build" \
  --config-settings=cmake.define.CMAKE_DISABLE_FIND_PACKAGE_spdlog=ON >"$WORK/missing.log" 2>&1; then
  fail "pip wheel built without spdlog"
fi
grep -q 'apt-get install.*libspdlog-dev' "$WORK/missing.log" ||
  { tail -20 "$WORK/missing.log"; fail "the failed build does not name libspdlog-dev"; }
echo "ok   a missing -dev package is named: $(grep -m1 -o 'apt-get install.*' "$WORK/missing.log")"
