#!/usr/bin/env bash
# TrainhookConfigVersion.cmake decides which find_package(Trainhook <version>)
# requests this package answers (sdk/CHANGELOG.md, "The package"). Each case is
# a small CMake project against a prefix holding the version file and a stub
# config (the config's own content is tested by the install tests):
#  1. the template instantiated as package 0.4.0 (ABI 1.3), the version a pack
#     pinning `0.2...<0.4` must refuse: plain versions (same major, not older),
#     ranges with an excluded and an included upper end, a request that looks
#     like the ABI version (refused, with the warning saying which is which);
#  2. projects with `LANGUAGES NONE` (no CMAKE_SIZEOF_VOID_P) find it, and a
#     32-bit consumer is refused;
#  3. the version file this build configured answers its own version exactly
#     and refuses the next minor.
# Usage: package_version_test.sh <build dir> <source dir> <cmake>
set -euo pipefail
BUILD="$1" SRC="$2" CMAKE="$3"
TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT
KEEP_GOING=1
source "$(dirname "${BASH_SOURCE[0]}")/../lib/test_lib.sh"

# make_prefix <dir> <version file>: a package prefix whose config only says it was read.
make_prefix() {
  mkdir -p "$1/lib/cmake/Trainhook"
  cp "$2" "$1/lib/cmake/Trainhook/TrainhookConfigVersion.cmake"
  echo 'message(STATUS "TRAINHOOK CONFIG READ ${Trainhook_VERSION}")' >"$1/lib/cmake/Trainhook/TrainhookConfig.cmake"
}
sed -e 's/@PROJECT_VERSION@/0.4.0/g' -e 's/@TRAINHOOK_ABI_VERSION@/1.3/g' \
  "$SRC/cmake/TrainhookConfigVersion.cmake.in" >"$TMP/version-0.4.0.cmake"
grep -q '@' "$TMP/version-0.4.0.cmake" && fail "the template has a placeholder this test does not fill"
make_prefix "$TMP/p040" "$TMP/version-0.4.0.cmake"
make_prefix "$TMP/pbuild" "$BUILD/TrainhookConfigVersion.cmake"

n=0
# check <prefix> <accept|refuse> <find_package version> [languages] [extra cmake lines]
check() {
  local prefix="$1" want="$2" request="$3" langs="${4:-C}" extra="${5:-}"
  n=$((n + 1))
  local dir="$TMP/case$n"
  mkdir -p "$dir"
  cat >"$dir/CMakeLists.txt" <<CMAKE
cmake_minimum_required(VERSION 3.19)
project(consumer LANGUAGES $langs)
$extra
find_package(Trainhook $request QUIET)
if(Trainhook_FOUND)
  message(STATUS "FOUND \${Trainhook_VERSION}")
else()
  message(STATUS "NOT FOUND")
endif()
CMAKE
  local out
  out="$("$CMAKE" -S "$dir" -B "$dir/build" -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF \
    -DCMAKE_IGNORE_PREFIX_PATH="/usr;/usr/local" 2>&1)" || { echo "$out"; fail "case $n ($request): configure failed"; return; }
  if [[ $want == accept ]]; then
    grep -q -- "-- FOUND" <<<"$out" || { echo "$out"; fail "find_package(Trainhook $request) [$langs] refused $(basename "$prefix")"; }
    grep -q "TRAINHOOK CONFIG READ" <<<"$out" || fail "case $n: the config was not read"
  else
    grep -q -- "-- NOT FOUND" <<<"$out" || { echo "$out"; fail "find_package(Trainhook $request) [$langs] accepted $(basename "$prefix")"; }
  fi
  LAST="$out"
}

# 1. Package 0.4.0.
check "$TMP/p040" accept 0.4
check "$TMP/p040" accept 0.2
check "$TMP/p040" accept 0.4.0
check "$TMP/p040" refuse 0.5
check "$TMP/p040" refuse 0.2...\<0.4
check "$TMP/p040" refuse 0.2...0.3.9
check "$TMP/p040" refuse 0.4.1...\<0.6
check "$TMP/p040" accept 0.2...0.4
check "$TMP/p040" accept 0.2...\<0.5
check "$TMP/p040" accept 0.3...\<1.0
check "$TMP/p040" refuse 1.3
grep -q "looks like the plugin ABI version" <<<"$LAST" || { echo "$LAST"; fail "no ABI-version hint for 1.3"; }
check "$TMP/p040" accept ""

# 2. Projects with and without languages; a 32-bit consumer.
check "$TMP/p040" accept 0.3 NONE
check "$TMP/p040" accept 0.3...\<0.5 NONE
check "$TMP/p040" accept 0.3 C
check "$TMP/p040" refuse 0.3 NONE 'set(CMAKE_SIZEOF_VOID_P 4)'

# 3. This build's own version file.
VERSION="$(sed -n 's/^set(PACKAGE_VERSION "\([0-9.]*\)")$/\1/p' "$BUILD/TrainhookConfigVersion.cmake")"
[[ $VERSION =~ ^([0-9]+)\.([0-9]+)\.([0-9]+)$ ]] || fail "no package version in $BUILD/TrainhookConfigVersion.cmake"
MAJ=${BASH_REMATCH[1]} MIN=${BASH_REMATCH[2]}
check "$TMP/pbuild" accept "$VERSION EXACT"
check "$TMP/pbuild" accept "$MAJ.$MIN"
check "$TMP/pbuild" refuse "$MAJ.$((MIN + 1))"
check "$TMP/pbuild" refuse "0.2...<$MAJ.$MIN"
check "$TMP/pbuild" accept "0.2...<$MAJ.$((MIN + 1))"
echo "package version: $n cases, $failures failed"
exit $((failures > 0))
