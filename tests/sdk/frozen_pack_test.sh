#!/usr/bin/env bash
# A pack written against package 0.1.0 (tests/sdk/frozen_pack_0_1, kept byte for
# byte) still configures, builds, installs and loads against TODAY's installed
# package:
#  1. cmake --install <build> --prefix <tmp>/prefix
#  2. configure/build the frozen pack with find_package(Trainhook 0.1): its
#     target_compile_definitions/install(TARGETS) on the 0.1 target name work
#  3. `cmake --install` of the pack puts it in the trainer's default folder
#     (its own install line names ${TRAINHOOK_PLUGIN_DIR})
#  4. the installed `trainhook plugins` lists it there, stamped with the SDK's ABI
#  5. a short training run with --report_to acme_metrics writes its summary
# Usage: frozen_pack_test.sh <build dir> <source dir> <cmake> <shared-library suffix>
set -euo pipefail
BUILD="$1" SRC="$2" CMAKE="$3" SUFFIX="$4"
TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT
source "$(dirname "${BASH_SOURCE[0]}")/../lib/test_lib.sh"

"$CMAKE" --install "$BUILD" --prefix "$TMP/prefix" >"$TMP/install.log" 2>&1 || { cat "$TMP/install.log"; fail "install"; }
TH="$TMP/prefix/bin/trainhook"
[[ -x "$TH" ]] || fail "installed CLI missing at $TH"
ABI="$(sed -n 's/^#define TRAINHOOK_ABI_VERSION_MAJOR \([0-9]*\)$/\1/p' "$SRC/sdk/include/trainhook/abi.h").$(
  sed -n 's/^#define TRAINHOOK_ABI_VERSION_MINOR \([0-9]*\)$/\1/p' "$SRC/sdk/include/trainhook/abi.h")"

# The pack is copied out of the source tree first, as a vendor's checkout would be.
cp -r "$SRC/tests/sdk/frozen_pack_0_1" "$TMP/pack"
"$CMAKE" -S "$TMP/pack" -B "$TMP/pack-build" -DCMAKE_PREFIX_PATH="$TMP/prefix" -DCMAKE_BUILD_TYPE=Release \
  >"$TMP/configure.log" 2>&1 || { cat "$TMP/configure.log"; fail "configure the 0.1 pack"; }
grep -q "acme_metrics" "$TMP/pack-build/Makefile" || fail "no target acme_metrics in the pack's build"
"$CMAKE" --build "$TMP/pack-build" >"$TMP/build.log" 2>&1 || { cat "$TMP/build.log"; fail "build the 0.1 pack"; }
LIB="$TMP/pack-build/libtrainhook_acme_metrics$SUFFIX"
[[ -f "$LIB" ]] || fail "0.1 pack not built at $LIB"
# Hidden visibility still applies to the 0.1 target: only the entry is exported.
EXPORTED="$(nm -D --defined-only "$LIB" | awk '$2 == "T" {print $3}')"
[[ "$EXPORTED" == "trainhook_plugin_v1" ]] || fail "exports more than the entry: $EXPORTED"

"$CMAKE" --install "$TMP/pack-build" --prefix "$TMP/pack-prefix" >"$TMP/pack-install.log" 2>&1 ||
  { cat "$TMP/pack-install.log"; fail "install the 0.1 pack"; }
INSTALLED="$TMP/prefix/lib/trainhook/plugins/libtrainhook_acme_metrics$SUFFIX"
[[ -f "$INSTALLED" ]] || { cat "$TMP/pack-install.log"; fail "not installed into the trainer's plugin folder"; }

OUT="$(env -u TRAINHOOK_PLUGIN_PATH TRAINHOOK_REGISTRY_CACHE=off "$TH" plugins)" || true
echo "$OUT"
grep -qF "$INSTALLED" <<<"$OUT" || fail "the installed 0.1 pack is not listed"
grep -qF "plugin acme_metrics 1.0.0, ABI $ABI" <<<"$OUT" || fail "acme_metrics not loaded with ABI $ABI"
grep -qF "integration acme_metrics 1.0.0" <<<"$OUT" || fail "acme_metrics callback not listed"
grep -qF "REFUSED" <<<"$OUT" && fail "a file was refused"

python3 - "$TMP/train.csv" <<'PY'
import random, sys
random.seed(0)
with open(sys.argv[1], "w") as f:
    for _ in range(64):
        a, b = random.uniform(-1, 1), random.uniform(-1, 1)
        f.write(f"{a:.4f},{b:.4f},{int(a + b > 0)}\n")
PY
env -u TRAINHOOK_PLUGIN_PATH TRAINHOOK_REGISTRY_CACHE=off "$TH" train --do_train --train_file "$TMP/train.csv" \
  --output_dir "$TMP/run" --max_steps 3 --logging_steps 1 --save_strategy no --per_device_train_batch_size 8 \
  --disable_tqdm true --report_to acme_metrics --plugin_config acme_metrics.file=summary.json \
  >"$TMP/train.log" 2>&1 || { cat "$TMP/train.log"; fail "training run"; }
python3 - "$TMP/run/summary.json" <<'PY' || { cat "$TMP/train.log"; fail "summary content"; }
import json, sys
s = json.load(open(sys.argv[1]))
assert s["loss"]["count"] == 3, s
print("summary ok:", sorted(s))
PY
echo "frozen 0.1 pack: ok"
