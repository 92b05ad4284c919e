#!/usr/bin/env bash
# A plugin-only project against a COPIED install prefix, on a machine where the
# core's dependencies and DLPack cannot be found:
#  1. cmake --install <build> --prefix <tmp>/prefix, then copy it to <tmp>/copy
#     (a prefix that was moved: nothing may point back at the build tree)
#  2. configure examples/c_plugin (C only) and examples/third_party_plugin (C++),
#     both `find_package(Trainhook <0.x> REQUIRED COMPONENTS sdk)`, with:
#       - CMAKE_PREFIX_PATH = the copy only, and /usr, /usr/local ignored
#         (CMAKE_IGNORE_PREFIX_PATH), so the system's spdlog, nlohmann_json and
#         LibTorch packages are invisible to config-mode searches;
#       - tripwire Find<Pkg>.cmake modules for Torch, spdlog, nlohmann_json,
#         Threads and dlpack first on CMAKE_MODULE_PATH: any find_package of them
#         stops the configure with "TRIPWIRE";
#     and check the caches hold no Torch_DIR / spdlog_DIR / nlohmann_json_DIR;
#  3. build both and check, from the compiler's own dependency files, that
#     dlpack/dlpack.h came from the copy's include/trainhook/third_party and
#     never from /usr/include;
#  4. `cpack` packs the C example (library, README, licence) as the guide says;
#  5. the copy's `trainhook plugins --plugin_dir` loads both libraries.
# Also checks the tripwire itself fires: the same configure without
# `COMPONENTS sdk` (which looks for the core's dependencies) must trip it.
# What it does not prove: that the compiler would succeed with /usr/include/dlpack
# deleted (a test cannot uninstall a Debian package); it proves that header is
# not the one read.
# Usage: sdk_only_package_test.sh <build dir> <source dir> <cmake> <shared-library suffix>
set -euo pipefail
BUILD="$1" SRC="$2" CMAKE="$3" SUFFIX="$4"
TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT
source "$(dirname "${BASH_SOURCE[0]}")/../lib/test_lib.sh"

"$CMAKE" --install "$BUILD" --prefix "$TMP/prefix" >"$TMP/install.log" 2>&1 || { cat "$TMP/install.log"; fail "install"; }
cp -a "$TMP/prefix" "$TMP/copy"
rm -rf "$TMP/prefix"
PREFIX="$TMP/copy"
SHIPPED="$PREFIX/include/trainhook/third_party/dlpack/dlpack.h"
[[ -f "$SHIPPED" ]] || fail "the install does not ship dlpack/dlpack.h at $SHIPPED"
[[ -f "$PREFIX/include/trainhook/third_party/dlpack/LICENSE" ]] || fail "DLPack's licence is not installed"

mkdir -p "$TMP/tripwire"
for pkg in Torch spdlog nlohmann_json Threads dlpack DLPack; do
  echo "message(FATAL_ERROR \"TRIPWIRE: find_package(${pkg}) was called\")" >"$TMP/tripwire/Find${pkg}.cmake"
done

configure() {  # <source> <binary dir> [extra -D...]
  local src="$1" bin="$2"
  shift 2
  "$CMAKE" -S "$src" -B "$bin" -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_PREFIX_PATH="$PREFIX" -DCMAKE_IGNORE_PREFIX_PATH="/usr;/usr/local" \
    -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF -DCMAKE_MODULE_PATH="$TMP/tripwire" "$@"
}

# The tripwire works: the plain find_package(Trainhook) looks for the core.
mkdir -p "$TMP/plain"
cat >"$TMP/plain/CMakeLists.txt" <<'CMAKE'
cmake_minimum_required(VERSION 3.18)
project(plain LANGUAGES C)
find_package(Trainhook 0.2 REQUIRED)
CMAKE
if configure "$TMP/plain" "$TMP/plain-build" >"$TMP/plain.log" 2>&1; then
  cat "$TMP/plain.log"
  fail "the tripwire did not fire for find_package(Trainhook) without components"
fi
grep -q "TRIPWIRE" "$TMP/plain.log" || { cat "$TMP/plain.log"; fail "the plain configure failed for another reason"; }

# The real package in a project with no languages (no CMAKE_SIZEOF_VOID_P).
mkdir -p "$TMP/nolang"
cat >"$TMP/nolang/CMakeLists.txt" <<'CMAKE'
cmake_minimum_required(VERSION 3.18)
project(nolang LANGUAGES NONE)
find_package(Trainhook 0.5 REQUIRED COMPONENTS sdk)
message(STATUS "TRAINHOOK ${Trainhook_VERSION} ABI ${TRAINHOOK_ABI_VERSION}")
CMAKE
configure "$TMP/nolang" "$TMP/nolang-build" >"$TMP/nolang.log" 2>&1 || { cat "$TMP/nolang.log"; fail "LANGUAGES NONE"; }
grep -q "TRAINHOOK 0\.[0-9]*\.[0-9]* ABI 1\.[0-9]*" "$TMP/nolang.log" || { cat "$TMP/nolang.log"; fail "LANGUAGES NONE: not found"; }

# examples/third_party_plugin without acme_logger (the plugin on Trainhook::support).
for ex in c_plugin third_party_plugin; do
  configure "$SRC/examples/$ex" "$TMP/$ex" -DACME_WITH_LOGGER=OFF >"$TMP/$ex.configure.log" 2>&1 ||
    { cat "$TMP/$ex.configure.log"; fail "configure examples/$ex with COMPONENTS sdk"; }
  for var in Torch_DIR spdlog_DIR nlohmann_json_DIR; do
    if grep -q "^$var:" "$TMP/$ex/CMakeCache.txt"; then fail "examples/$ex: $var is in the cache"; fi
  done
  "$CMAKE" --build "$TMP/$ex" >"$TMP/$ex.build.log" 2>&1 || { cat "$TMP/$ex.build.log"; fail "build examples/$ex"; }
  DEPS="$(find "$TMP/$ex" -name '*.o.d' -print0 | xargs -0 cat)"
  [[ -n "$DEPS" ]] || fail "examples/$ex: no compiler dependency files to check"
  grep -qF "$SHIPPED" <<<"$DEPS" || { echo "$DEPS"; fail "examples/$ex did not read the shipped dlpack.h"; }
  if grep -q "/usr/include/dlpack" <<<"$DEPS"; then fail "examples/$ex read /usr/include/dlpack"; fi
  # The C example's entry is the SDK's TH_PLUGIN_ENTRY: its header is installed with the SDK.
  if [[ $ex == c_plugin ]]; then
    grep -qF "$PREFIX/include/trainhook/plugin_entry.h" <<<"$DEPS" ||
      { echo "$DEPS"; fail "examples/c_plugin did not read the installed trainhook/plugin_entry.h"; }
  fi
done

# The C example's packaging (docs/plugins.md, "Packaging a pack"): a tarball
# with the library where the trainer looks and the README and licence beside it.
CPACK="$(dirname "$CMAKE")/cpack"
(cd "$TMP/c_plugin" && "$CPACK" -G TGZ) >"$TMP/cpack.log" 2>&1 || { cat "$TMP/cpack.log"; fail "cpack"; }
TGZ="$(ls "$TMP"/c_plugin/loss_guard_plugin-1.0.0-*.tar.gz)"
LISTING="$(tar -tzf "$TGZ")"
echo "$LISTING"
for f in "lib/trainhook/plugins/libtrainhook_loss_guard$SUFFIX" share/doc/loss_guard_plugin/README.md \
  share/doc/loss_guard_plugin/LICENSE; do
  grep -qE "^[^/]+/$f\$" <<<"$LISTING" || fail "the tarball lacks $f"
done

OUT="$(env -u TRAINHOOK_PLUGIN_PATH TRAINHOOK_REGISTRY_CACHE=off "$PREFIX/bin/trainhook" plugins \
  --plugin_dir "$TMP/c_plugin" --plugin_dir "$TMP/third_party_plugin")" || true
echo "$OUT"
grep -qF "$TMP/c_plugin/libtrainhook_loss_guard$SUFFIX" <<<"$OUT" || fail "loss_guard is not listed"
grep -qF "plugin loss_guard 1.0.0, ABI 1.0" <<<"$OUT" || fail "loss_guard not loaded (declares ABI 1.0)"
grep -qF "plugin acme_metrics 1.0.0" <<<"$OUT" || fail "acme_metrics not loaded"
grep -qF "REFUSED" <<<"$OUT" && fail "a file was refused"
echo "sdk-only package: ok"
