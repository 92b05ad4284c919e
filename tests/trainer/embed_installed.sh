#!/usr/bin/env bash
# The core as a CMake package, against an INSTALLED Trainhook only:
#  1. cmake --install <build> --prefix <tmp>/prefix
#  2. examples/embed_trainer configures with find_package(Trainhook) from that
#     prefix, compiles with no source-tree include path, links
#     Trainhook::trainhook and trains
#  3. Trainhook_VERSION and TRAINHOOK_ABI_VERSION are both visible; asking
#     find_package(Trainhook <ABI version>) says which is which
#  4. a plugin built with trainhook_add_plugin honours cmake --install --prefix
# Usage: embed_installed.sh <build dir> <source dir> <cmake> <work dir>
set -euo pipefail
BUILD="$1" SRC="$2" CMAKE="$3" WORK="$4"
rm -rf "$WORK"
mkdir -p "$WORK"
source "$(dirname "${BASH_SOURCE[0]}")/../lib/test_lib.sh"

"$CMAKE" --install "$BUILD" --prefix "$WORK/prefix" >"$WORK/install.log" 2>&1 ||
  { cat "$WORK/install.log"; fail "install"; }
for f in include/trainhook/trainer/trainer.hpp include/trainhook/abi.h lib/cmake/Trainhook/TrainhookCoreTargets.cmake; do
  [[ -f "$WORK/prefix/$f" ]] || fail "the install lacks $f"
done

"$CMAKE" -S "$SRC/examples/embed_trainer" -B "$WORK/embed" -DCMAKE_PREFIX_PATH="$WORK/prefix" \
  -DCMAKE_BUILD_TYPE=Release -DCMAKE_EXPORT_COMPILE_COMMANDS=ON >"$WORK/configure.log" 2>&1 ||
  { cat "$WORK/configure.log"; fail "configure embed_trainer from the prefix"; }
"$CMAKE" --build "$WORK/embed" >"$WORK/build.log" 2>&1 || { cat "$WORK/build.log"; fail "build embed_trainer"; }
# No include path into the source or build tree: only the prefix (and system dirs).
# (The work folder, and so the prefix, may lie inside the build tree: its paths are allowed.)
if grep -oE -- "-(I|isystem) ?[^ ]+" "$WORK/embed/compile_commands.json" | grep -vF "$WORK/prefix" |
  grep -E "$SRC/(core|sdk)|$BUILD"; then
  fail "embed_trainer compiled with source/build-tree include paths"
fi
grep -q -- "$WORK/prefix/include" "$WORK/embed/compile_commands.json" ||
  fail "embed_trainer did not compile against the prefix's headers"
"$WORK/embed/embed_trainer" "$WORK/embed_out" >"$WORK/run.log" 2>&1 || { cat "$WORK/run.log"; fail "run embed_trainer"; }
echo "embed_trainer built from $WORK/prefix and ran: $(tail -1 "$WORK/run.log")"

# Versions: the package's and the plugin ABI's, and the hint for the mix-up.
mkdir -p "$WORK/versions"
cat >"$WORK/versions/CMakeLists.txt" <<'CM'
cmake_minimum_required(VERSION 3.18)
project(versions LANGUAGES CXX)
find_package(Trainhook REQUIRED)
message(STATUS "package=${Trainhook_VERSION} abi=${TRAINHOOK_ABI_VERSION}")
CM
"$CMAKE" -S "$WORK/versions" -B "$WORK/versions/b" -DCMAKE_PREFIX_PATH="$WORK/prefix" >"$WORK/versions.log" 2>&1 ||
  { cat "$WORK/versions.log"; fail "find_package(Trainhook)"; }
pkg=$(sed -n 's/.*package=\([0-9.]*\) abi=.*/\1/p' "$WORK/versions.log")
abi=$(sed -n 's/.*package=[0-9.]* abi=\([0-9.]*\).*/\1/p' "$WORK/versions.log")
[[ -n $pkg && -n $abi && $pkg != "$abi" ]] || fail "Trainhook_VERSION '$pkg' / TRAINHOOK_ABI_VERSION '$abi'"
echo "Trainhook_VERSION $pkg, TRAINHOOK_ABI_VERSION $abi"
mkdir -p "$WORK/abi"
sed "s/find_package(Trainhook REQUIRED)/find_package(Trainhook $abi REQUIRED)/" "$WORK/versions/CMakeLists.txt" \
  >"$WORK/abi/CMakeLists.txt"
if "$CMAKE" -S "$WORK/abi" -B "$WORK/abi/b" -DCMAKE_PREFIX_PATH="$WORK/prefix" >"$WORK/abi.log" 2>&1; then
  [[ ${abi%%.*} == "${pkg%%.*}" ]] || fail "find_package(Trainhook $abi) accepted package $pkg"
else
  tr -s ' \n' ' ' <"$WORK/abi.log" | grep -q "looks like the plugin ABI version" ||
    { cat "$WORK/abi.log"; fail "no message telling the ABI version from the package version"; }
  echo "find_package(Trainhook $abi): explained"
fi

# A plugin installed with trainhook_add_plugin lands under the --prefix given.
"$CMAKE" -S "$SRC/examples/third_party_plugin" -B "$WORK/plugin" -DCMAKE_PREFIX_PATH="$WORK/prefix" \
  -DCMAKE_BUILD_TYPE=Release >"$WORK/plugin.log" 2>&1 && "$CMAKE" --build "$WORK/plugin" >>"$WORK/plugin.log" 2>&1 ||
  { cat "$WORK/plugin.log"; fail "build the third-party plugin"; }
"$CMAKE" --install "$WORK/plugin" --prefix "$WORK/other" >>"$WORK/plugin.log" 2>&1 ||
  { cat "$WORK/plugin.log"; fail "install the third-party plugin"; }
found=$(find "$WORK/other" -name 'libtrainhook_acme_metrics*')
[[ $found == "$WORK/other/lib/trainhook/plugins/"* ]] || fail "plugin installed at '$found', not under --prefix $WORK/other"
echo "plugin installed under --prefix: $found"
echo "PASS"
