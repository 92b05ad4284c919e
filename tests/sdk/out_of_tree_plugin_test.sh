#!/usr/bin/env bash
# The out-of-tree pack, end to end, against an INSTALLED Trainhook:
#  1. cmake --install <build> --prefix <tmp>/prefix
#  2. configure/build examples/third_party_plugin (the copy installed under
#     share/doc/trainhook/examples) with find_package(Trainhook
#     0.5 COMPONENTS sdk support testkit): acme_metrics (SDK only) and
#     acme_logger (on the installed integration base, Trainhook::support); every
#     installed support header compiles from the prefix
#  3. the pack's own test (ctest in its build: test_acme_logger on the installed
#     test host, Trainhook::testkit) passes, and so does the installed
#     `trainhook plugin check` on acme_metrics
#  4. the installed `trainhook plugins --plugin_dir` loads both; the installed
#     trainer finds its own plugins in its default folder
#  5. pinning: the install wrote the trainer's own digests next to its plugins
#     (they match the installed bytes); `trainhook plugins lock` prints the
#     pack's two lines and nothing of ours; with a lock of those two lines the
#     listing refuses nothing, a pack library left out of the lock is refused
#     in one line, and one of our plugins changed after install is refused
#     against the installed digests (the last step: it damages the prefix)
#  6. a short training run with --report_to acme_metrics,acme_logger writes the
#     summary, and acme_logger delivers every log record to a receiver on
#     127.0.0.1 that refuses the first request with 503 + Retry-After (the base
#     waits and retries); its end-of-run line says so
# Usage: out_of_tree_plugin_test.sh <build dir> <source dir> <cmake> <shared-library suffix>
# (trainhook_add_plugin names the plugin libtrainhook_<name><suffix>)
set -euo pipefail
BUILD="$1" SRC="$2" CMAKE="$3" SUFFIX="$4"
TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT
source "$(dirname "${BASH_SOURCE[0]}")/../lib/test_lib.sh"

"$CMAKE" --install "$BUILD" --prefix "$TMP/prefix" >"$TMP/install.log" 2>&1 || { cat "$TMP/install.log"; fail "install"; }
TH="$TMP/prefix/bin/trainhook"
[[ -x "$TH" ]] || fail "installed CLI missing at $TH"

# The example as installed (share/doc/trainhook/examples, where docs/plugins.md points).
EXAMPLES="$TMP/prefix/share/doc/trainhook/examples"
for f in third_party_plugin/CMakeLists.txt third_party_plugin/acme_logger.cpp c_plugin/loss_guard.c layer_grad_norms.cpp; do
  [[ -f "$EXAMPLES/$f" ]] || fail "the guide's example $f is not installed in $EXAMPLES"
done
"$CMAKE" -S "$EXAMPLES/third_party_plugin" -B "$TMP/example" -DCMAKE_PREFIX_PATH="$TMP/prefix" \
  -DCMAKE_BUILD_TYPE=Release >"$TMP/configure.log" 2>&1 || { cat "$TMP/configure.log"; fail "configure example"; }
"$CMAKE" --build "$TMP/example" >"$TMP/build.log" 2>&1 || { cat "$TMP/build.log"; fail "build example"; }
LIB="$TMP/example/libtrainhook_acme_metrics$SUFFIX"
[[ -f "$LIB" ]] || fail "example plugin not built at $LIB"
LOGGER="$TMP/example/libtrainhook_acme_logger$SUFFIX"
[[ -f "$LOGGER" ]] || fail "acme_logger not built at $LOGGER"
# Hidden visibility with the static base linked in: the entry and the C++
# standard library's weak template symbols (std::..., some instantiated on the
# base's types) are all a pack exports; no symbol of the base itself leaks.
nm -D --defined-only -C "$LOGGER" >"$TMP/logger.syms"
if grep -E " [A-Za-z] ((typeinfo( name)?|vtable) for )?trainhook::" "$TMP/logger.syms"; then
  fail "acme_logger exports symbols of the integration base"
fi
grep -q " T trainhook_plugin_v1$" "$TMP/logger.syms" || fail "acme_logger does not export its entry"
(cd "$TMP/example" && "$(dirname "$CMAKE")/ctest" --output-on-failure) >"$TMP/ctest.log" 2>&1 || { cat "$TMP/ctest.log"; fail "the pack's own test"; }
grep -q "100% tests passed, 0 tests failed out of 1" "$TMP/ctest.log" || { cat "$TMP/ctest.log"; fail "the pack's test did not run"; }
# The pack author's last step (docs/plugins.md): the installed `trainhook plugin
# check` finds its helper in the prefix's libexec and passes the pack's library.
OUT="$("$TH" plugin check "$LIB" 2>&1)" || { echo "$OUT"; fail "trainhook plugin check failed on acme_metrics"; }
grep -q "^plugin check: [0-9]* PASS, [0-9]* WARN, 0 FAIL, 0 SKIP" <<<"$OUT" || { echo "$OUT"; fail "plugin check summary"; }

# Every installed support header, from the prefix alone.
mkdir -p "$TMP/headers"
{
  for h in "$TMP"/prefix/include/trainhook/support/*.hpp; do echo "#include <trainhook/support/$(basename "$h")>"; done
  echo "int main() { return 0; }"
} >"$TMP/headers/all.cpp"
cat >"$TMP/headers/CMakeLists.txt" <<'CMAKE'
cmake_minimum_required(VERSION 3.18)
project(headers LANGUAGES CXX)
set(CMAKE_CXX_STANDARD 17)
find_package(Trainhook 0.5 REQUIRED COMPONENTS sdk support)
add_executable(support_headers all.cpp)
target_link_libraries(support_headers PRIVATE Trainhook::support)
CMAKE
"$CMAKE" -S "$TMP/headers" -B "$TMP/headers/build" -DCMAKE_PREFIX_PATH="$TMP/prefix" >"$TMP/headers.log" 2>&1 &&
  "$CMAKE" --build "$TMP/headers/build" >>"$TMP/headers.log" 2>&1 || { cat "$TMP/headers.log"; fail "installed support headers"; }

OUT="$(env -u TRAINHOOK_PLUGIN_PATH "$TH" plugins --plugin_dir "$TMP/example")"
echo "$OUT"
grep -qF "$LIB" <<<"$OUT" || fail "the plugin file is not listed"
MINOR=$(sed -n 's/^#define TRAINHOOK_ABI_VERSION_MINOR \([0-9]*\)$/\1/p' "$SRC/sdk/include/trainhook/abi.h")
grep -qF "plugin acme_metrics 1.0.0, ABI 1.$MINOR" <<<"$OUT" || fail "acme_metrics not loaded (ABI 1.$MINOR expected)"
grep -qF "integration acme_metrics 1.0.0" <<<"$OUT" || fail "acme_metrics callback not listed"
grep -qF "plugin acme_logger 1.0.0, ABI 1.1" <<<"$OUT" || fail "acme_logger not loaded (declares ABI 1.1)"
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
python3 "$(dirname "${BASH_SOURCE[0]}")/log_receiver.py" "$TMP/port" "$TMP/received.jsonl" &
RECEIVER=$!
trap 'kill $RECEIVER 2>/dev/null; rm -rf "$TMP"' EXIT
wait_for 30 "the log receiver to listen" test -s "$TMP/port"
env -u TRAINHOOK_PLUGIN_PATH "$TH" train --do_train --train_file "$TMP/train.csv" --output_dir "$TMP/run" \
  --max_steps 4 --logging_steps 1 --save_strategy no --per_device_train_batch_size 8 --disable_tqdm true \
  --plugin_dir "$TMP/example" --report_to acme_metrics,acme_logger --plugin_config acme_metrics.file=summary.json \
  --plugin_config "acme_logger.url=http://127.0.0.1:$(cat "$TMP/port")/log" \
  >"$TMP/train.log" 2>&1 || { cat "$TMP/train.log"; fail "training run"; }
[[ -s "$TMP/received.jsonl.refused" ]] || { cat "$TMP/train.log"; fail "the receiver's 503 was never met"; }
python3 - "$TMP/received.jsonl" <<'PY' || { cat "$TMP/train.log"; fail "acme_logger's records"; }
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
steps = [l["step"] for l in lines if "loss" in l["values"]]
assert steps == [1, 2, 3, 4], lines
print("acme_logger delivered", len(lines), "records")
PY
grep -E "Acme run http://127.0.0.1:[0-9]+/log FINISHED: [0-9]+ records delivered, 0 spooled" "$TMP/train.log" ||
  { cat "$TMP/train.log"; fail "acme_logger's end-of-run line"; }
[[ -f "$TMP/run/summary.json" ]] || { cat "$TMP/train.log"; fail "acme_metrics wrote no summary"; }
python3 - "$TMP/run/summary.json" <<'PY' || fail "summary content"
import json, sys
s = json.load(open(sys.argv[1]))
assert s["loss"]["count"] == 4, s
assert s["loss"]["min"] <= s["loss"]["last"] <= s["loss"]["max"], s
print("summary ok:", sorted(s))
PY
# Pinning with the trainer's own digests.
PLUGIN_DIR="$TMP/prefix/lib/trainhook/plugins"
(cd "$PLUGIN_DIR" && sha256sum -c --quiet trainhook-plugins.sha256) || fail "the installed digests do not match"
grep -q "libtrainhook_progress$SUFFIX" "$PLUGIN_DIR/trainhook-plugins.sha256" || fail "progress has no installed digest"
env -u TRAINHOOK_PLUGIN_PATH "$TH" plugins lock --plugin_dir "$TMP/example" >"$TMP/acme.lock" 2>"$TMP/lock.err" ||
  { cat "$TMP/lock.err"; fail "trainhook plugins lock"; }
cat "$TMP/acme.lock" "$TMP/lock.err"
[[ $(wc -l <"$TMP/acme.lock") -eq 2 ]] || fail "plugins lock printed other than the pack's two lines"
grep -qE "^[0-9a-f]{64}  libtrainhook_acme_logger$SUFFIX\$" "$TMP/acme.lock" || fail "no lock line for acme_logger"
grep -q "of the trainer's own plugin(s) left out" "$TMP/lock.err" || fail "plugins lock did not say ours were left out"
OUT="$(env -u TRAINHOOK_PLUGIN_PATH TRAINHOOK_PLUGIN_LOCK="$TMP/acme.lock" "$TH" plugins --plugin_dir "$TMP/example" 2>&1)" ||
  { echo "$OUT"; fail "with the pack's lock lines, a library was refused"; }
grep -qF "REFUSED" <<<"$OUT" && fail "a file was refused under the lock"
grep -v acme_logger "$TMP/acme.lock" >"$TMP/partial.lock"
set +e
OUT="$(env -u TRAINHOOK_PLUGIN_PATH TRAINHOOK_PLUGIN_LOCK="$TMP/partial.lock" "$TH" plugins --plugin_dir "$TMP/example" 2>&1)"
rc=$?
set -e
((rc == 1)) || { echo "$OUT"; fail "a library left out of the lock was not refused"; }
[[ $(grep -c "^  REFUSED: " <<<"$OUT") -eq 1 ]] || { echo "$OUT"; fail "expected exactly one refusal (acme_logger)"; }
grep -qF "REFUSED: not listed in the plugin lock file $TMP/partial.lock" <<<"$OUT" || fail "acme_logger's refusal"
printf '\x01' | dd of="$PLUGIN_DIR/libtrainhook_csv$SUFFIX" bs=1 seek=300 conv=notrunc status=none
set +e
OUT="$(env -u TRAINHOOK_PLUGIN_PATH TRAINHOOK_PLUGIN_LOCK="$TMP/acme.lock" "$TH" plugins --plugin_dir "$TMP/example" 2>&1)"
rc=$?
set -e
((rc == 1)) || { echo "$OUT"; fail "a changed plugin of ours was accepted under the lock"; }
[[ $(grep -c "^  REFUSED: " <<<"$OUT") -eq 1 ]] || { echo "$OUT"; fail "expected exactly one refusal (csv)"; }
grep -qF "REFUSED: its SHA-256 differs from the trainer's own plugin digests: $PLUGIN_DIR/trainhook-plugins.sha256:" <<<"$OUT" ||
  { echo "$OUT"; fail "the changed csv plugin's refusal"; }
echo "out-of-tree plugin: ok"
