#!/usr/bin/env bash
# The out-of-tree plugin, end to end, against an INSTALLED Trainhook:
#  1. cmake --install <build> --prefix <tmp>/prefix
#  2. configure/build examples/third_party_plugin with find_package(Trainhook)
#  3. the installed `trainhook plugins --plugin_dir` loads it; the installed
#     trainer finds its own plugins in its default folder
#  4. a short training run with --report_to acme_metrics writes its summary
# Usage: out_of_tree_plugin_test.sh <build dir> <source dir> <cmake> <shared-library suffix>
# (trainhook_add_plugin names the plugin libtrainhook_<name><suffix>)
set -euo pipefail
BUILD="$1" SRC="$2" CMAKE="$3" SUFFIX="$4"
TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

"$CMAKE" --install "$BUILD" --prefix "$TMP/prefix" >"$TMP/install.log" 2>&1 || { cat "$TMP/install.log"; fail "install"; }
TH="$TMP/prefix/bin/trainhook"
[[ -x "$TH" ]] || fail "installed CLI missing at $TH"

"$CMAKE" -S "$SRC/examples/third_party_plugin" -B "$TMP/example" -DCMAKE_PREFIX_PATH="$TMP/prefix" \
  -DCMAKE_BUILD_TYPE=Release >"$TMP/configure.log" 2>&1 || { cat "$TMP/configure.log"; fail "configure example"; }
"$CMAKE" --build "$TMP/example" >"$TMP/build.log" 2>&1 || { cat "$TMP/build.log"; fail "build example"; }
LIB="$TMP/example/libtrainhook_acme_metrics$SUFFIX"
[[ -f "$LIB" ]] || fail "example plugin not built at $LIB"

OUT="$(env -u TRAINHOOK_PLUGIN_PATH "$TH" plugins --plugin_dir "$TMP/example")"
echo "$OUT"
grep -qF "$LIB" <<<"$OUT" || fail "the plugin file is not listed"
grep -qF "plugin acme_metrics 1.0.0, ABI 1.2" <<<"$OUT" || fail "acme_metrics not loaded"
grep -qF "integration acme_metrics 1.0.0" <<<"$OUT" || fail "acme_metrics callback not listed"
grep -qF "$TMP/prefix/lib/trainhook/plugins  (default)" <<<"$OUT" || fail "default folder is not the installed one"
grep -qF "REFUSED" <<<"$OUT" && fail "a file was refused"

# A short run of the installed trainer reporting to the third-party integration.
python3 - "$TMP/train.csv" <<'PY'
import random, sys
random.seed(0)
with open(sys.argv[1], "w") as f:
    for _ in range(64):
        a, b = random.uniform(-1, 1), random.uniform(-1, 1)
        f.write(f"{a:.4f},{b:.4f},{int(a + b > 0)}\n")
PY
env -u TRAINHOOK_PLUGIN_PATH "$TH" train --do_train --train_file "$TMP/train.csv" --output_dir "$TMP/run" \
  --max_steps 4 --logging_steps 1 --save_strategy no --per_device_train_batch_size 8 --disable_tqdm true \
  --plugin_dir "$TMP/example" --report_to acme_metrics --plugin_config acme_metrics.file=summary.json \
  >"$TMP/train.log" 2>&1 || { cat "$TMP/train.log"; fail "training run"; }
[[ -f "$TMP/run/summary.json" ]] || { cat "$TMP/train.log"; fail "acme_metrics wrote no summary"; }
python3 - "$TMP/run/summary.json" <<'PY' || fail "summary content"
import json, sys
s = json.load(open(sys.argv[1]))
assert s["loss"]["count"] == 4, s
assert s["loss"]["min"] <= s["loss"]["last"] <= s["loss"]["max"], s
print("summary ok:", sorted(s))
PY
echo "out-of-tree plugin: ok"
