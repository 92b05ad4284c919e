#!/usr/bin/env bash
# `cpack` of the main build (its install rules, no rebuild): the two .debs and the
# tarball are written; each .deb's Depends is the one dpkg-shlibdeps computed
# (LibTorch, Boost's program_options, spdlog, libcurl, ...), not empty; the
# runtime package holds the program, both helpers, the core libraries and our
# plugins under /usr; the dev package the SDK, the core's headers and the CMake
# package, and depends on the runtime of its own version. Prints the sizes.
# Usage: package_build.sh <build dir> <output dir> <cpack>
set -euo pipefail
BUILD="$1" OUT="$2" CPACK="$3"
source "$(dirname "${BASH_SOURCE[0]}")/../lib/test_lib.sh"
rm -rf "$OUT" && mkdir -p "$OUT"
(cd "$BUILD" && "$CPACK" -B "$OUT") >"$OUT/cpack.log" 2>&1 || { cat "$OUT/cpack.log"; fail "cpack"; }
VERSION=$(sed -n 's/^project(trainhook VERSION \([0-9.]*\) .*/\1/p' "$(dirname "${BASH_SOURCE[0]}")/../../CMakeLists.txt")
ARCH=$(dpkg --print-architecture)
RUNTIME="$OUT/trainhook_${VERSION}_${ARCH}.deb" DEV="$OUT/trainhook-dev_${VERSION}_${ARCH}.deb"
TARBALL="$OUT/trainhook-${VERSION}-Linux.tar.gz"
for f in "$RUNTIME" "$DEV" "$TARBALL"; do [[ -f "$f" ]] || { ls "$OUT"; fail "$(basename "$f") not written"; }; done

dpkg-deb --info "$RUNTIME" >"$OUT/runtime.info"
cat "$OUT/runtime.info"
depends=$(sed -n 's/^ Depends: //p' "$OUT/runtime.info")
for lib in libtorch libboost-program-options libspdlog libcurl libc6 libstdc++6; do
  grep -q "$lib" <<<"$depends" || fail "the runtime's Depends lacks $lib (dpkg-shlibdeps): $depends"
done
dpkg-deb --contents "$RUNTIME" | awk '{print $6}' >"$OUT/runtime.files"
for f in ./usr/bin/trainhook ./usr/lib/libtrainhook.so ./usr/lib/libtrainhook_base.so \
         ./usr/libexec/trainhook/trainhook-plugin-scanner ./usr/libexec/trainhook/trainhook-plugin-runner \
         ./usr/libexec/trainhook/trainhook-plugin-check \
         ./usr/lib/trainhook/plugins/libtrainhook_early_stopping.so ./usr/lib/trainhook/plugins/libtrainhook_jsonl.so \
         ./usr/lib/trainhook/plugins/trainhook-plugins.sha256; do
  grep -qxF "$f" "$OUT/runtime.files" || fail "the runtime package lacks $f"
done
grep -q '^./usr/include/\|^./usr/lib/cmake/' "$OUT/runtime.files" && fail "the runtime package holds headers or CMake files"

dpkg-deb --info "$DEV" >"$OUT/dev.info"
grep -qF "trainhook (= $VERSION)" "$OUT/dev.info" || { cat "$OUT/dev.info"; fail "trainhook-dev does not depend on trainhook (= $VERSION)"; }
dpkg-deb --contents "$DEV" | awk '{print $6}' >"$OUT/dev.files"
for f in ./usr/include/trainhook/abi.h ./usr/include/trainhook/plugin.hpp ./usr/include/trainhook/trainer/checkpoint_io.hpp \
         ./usr/lib/cmake/Trainhook/TrainhookConfig.cmake ./usr/lib/cmake/Trainhook/TrainhookPluginPackage.cmake \
         ./usr/lib/libtrainhook_plugin_support.a ./usr/lib/libtrainhook_testkit_host.a; do
  grep -qxF "$f" "$OUT/dev.files" || fail "the dev package lacks $f"
done
grep -q '^./usr/bin/\|^./usr/lib/trainhook/plugins/.' "$OUT/dev.files" && fail "the dev package holds the program or plugins"
ls -l "$RUNTIME" "$DEV" "$TARBALL" | awk '{printf "size %s %d bytes\n", $9, $5}'
echo "ok   packages in $OUT"
