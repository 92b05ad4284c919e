#!/usr/bin/env bash
# The plugin scan through the real CLI, with libraries that crash, hang, exit,
# abort or throw as soon as they are loaded (misbehaving_plugins.cpp):
#  1. `trainhook plugins` names each with its reason and exits 1; it never dies
#  2. a run that does not ask for them finishes, loads only what it uses, and
#     does not scan them again (the registry cache remembers them)
#  3. a run that asks for one gets an error naming the file and the reason, at once
#  4. the cache: re-scan only a changed file; damaged, off, concurrent writers
#  5. plugins.lock: a listed file loads, a changed byte is refused naming both digests
# usage: cli_plugin_scan.sh <trainhook> <test plugin root> <digits.csv> <work dir>
set -euo pipefail
TH="$1" ROOT="$2" DIGITS="$3" WORK="$4"
source "$(dirname "${BASH_SOURCE[0]}")/../lib/test_lib.sh"
expect() { grep -qF -- "$2" <<<"$1" || { echo "$1"; fail "missing: $2"; }; }
refuse() { if grep -qF -- "$2" <<<"$1"; then echo "$1"; fail "unexpected: $2"; fi; }
json_ok() { /usr/bin/python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$1" || fail "$1 is not JSON"; }
[[ -s $DIGITS ]] || fail "$DIGITS is missing; scripts/install-deps unpacks it"
export OMP_NUM_THREADS=1
rm -rf "$WORK"
mkdir -p "$WORK"
chmod 755 "$WORK"
head -n 256 "$DIGITS" > "$WORK/train.csv"
export TRAINHOOK_REGISTRY_CACHE="$WORK/registry.json"
export TRAINHOOK_PLUGIN_SCAN_TIMEOUT=2
unset TRAINHOOK_PLUGIN_PATH TRAINHOOK_PLUGIN_LOCK
BAD="$ROOT/misbehaving"
SO=so

# 1. The listing names every misbehaving library with its reason.
set +e
OUT="$("$TH" plugins --plugin_dir "$BAD" --plugin_dir "$ROOT/good" 2>"$WORK/plugins.err")"; rc=$?
set -e
[[ $rc -eq 1 ]] || { echo "$OUT"; cat "$WORK/plugins.err"; fail "trainhook plugins: exit $rc, expected 1"; }
expect "$(cat "$WORK/plugins.err")" "trainhook plugins: 7 plugin file(s) on the search path were refused"
expect "$OUT" "$BAD/libtrainhook_ctor_segv.$SO
  REFUSED: killed by SIGSEGV while loading"
expect "$OUT" "$BAD/libtrainhook_ctor_hang.$SO
  REFUSED: did not answer within 2 s while loading"
expect "$OUT" "$BAD/libtrainhook_ctor_exit.$SO
  REFUSED: exited with status 0 while loading"
expect "$OUT" "$BAD/libtrainhook_ctor_abort.$SO
  REFUSED: killed by SIGABRT while loading"
expect "$OUT" "$BAD/libtrainhook_ctor_throw.$SO
  REFUSED: killed by SIGABRT while loading"
expect "$OUT" "thrown by a static constructor"
expect "$OUT" "$BAD/libtrainhook_entry_throw.$SO
  REFUSED: the scanner failed while reading it: thrown by the entry function"
expect "$OUT" "$BAD/libtrainhook_entry_segv.$SO
  REFUSED: killed by SIGSEGV while loading"
json_ok "$TRAINHOOK_REGISTRY_CACHE"

# 2. A run that never names them: unaffected, nothing re-scanned, only the
#    library it uses (the progress printer) is loaded into the process.
ARGS=(--train_file "$WORK/train.csv" --feature_scale 0.0625 --model mlp --do_train --disable_tqdm true
  --max_steps 6 --per_device_train_batch_size 32 --save_strategy no --plugin_dir "$BAD" --plugin_dir "$ROOT/good")
"$TH" train "${ARGS[@]}" --report_to none --output_dir "$WORK/run" > "$WORK/run.log" 2>&1 ||
  { cat "$WORK/run.log"; fail "a run with misbehaving libraries on the path failed"; }
[[ -s "$WORK/run/model.safetensors" ]] || fail "the run saved no model"
LOG="$(cat "$WORK/run.log")"
expect "$LOG" "refused plugin file $BAD/libtrainhook_ctor_segv.$SO: killed by SIGSEGV while loading (remembered in the registry cache until the file changes)"
refuse "$LOG" "scanned plugin"
[[ "$(grep -c "loaded plugin" "$WORK/run.log")" -eq 1 ]] || { cat "$WORK/run.log"; fail "expected one library loaded"; }
expect "$LOG" "loaded plugin 'progress'"

# 3. Asking for one of them: an error naming the file and the reason, no hang.
for name in ctor_segv ctor_hang ctor_exit; do
  set +e
  "$TH" train "${ARGS[@]}" --callbacks "$name" --output_dir "$WORK/asked_$name" > "$WORK/asked_$name.log" 2>&1
  rc=$?
  set -e
  [[ $rc -ne 0 ]] || fail "--callbacks $name: the run succeeded"
  expect "$(cat "$WORK/asked_$name.log")" "$BAD/libtrainhook_$name.$SO was found but refused:"
done
expect "$(cat "$WORK/asked_ctor_hang.log")" "did not answer within 2 s while loading"

# 4a. Only a changed file is scanned again: the same name turns bad, then good.
mkdir -p "$WORK/changing"
cp "$ROOT/good/libtrainhook_c_plugin.$SO" "$WORK/changing/"
"$TH" plugins --plugin_dir "$WORK/changing" > "$WORK/c1.out" 2>&1 || { cat "$WORK/c1.out"; fail "changing: first"; }
cp "$BAD/libtrainhook_ctor_segv.$SO" "$WORK/changing/libtrainhook_c_plugin.$SO"
set +e
OUT="$("$TH" plugins --plugin_dir "$WORK/changing" 2>&1)"; rc=$?
set -e
[[ $rc -eq 1 ]] || { echo "$OUT"; fail "a library replaced by a crashing one was not scanned again"; }
expect "$OUT" "REFUSED: killed by SIGSEGV while loading"
cp "$ROOT/good/libtrainhook_c_plugin.$SO" "$WORK/changing/libtrainhook_c_plugin.$SO"
OUT="$("$TH" plugins --plugin_dir "$WORK/changing" 2>&1)" || { echo "$OUT"; fail "changing: back to good"; }
expect "$OUT" "integration c_counter"

# 4b. A damaged cache is rebuilt with a warning.
printf '{"host": [1, 2' > "$TRAINHOOK_REGISTRY_CACHE"
OUT="$("$TH" train "${ARGS[@]}" --report_to none --output_dir "$WORK/run_damaged" 2>&1)" ||
  { echo "$OUT"; fail "a run with a damaged registry cache failed"; }
expect "$OUT" "registry cache $TRAINHOOK_REGISTRY_CACHE is damaged"
json_ok "$TRAINHOOK_REGISTRY_CACHE"

# 4c. TRAINHOOK_REGISTRY_CACHE=off writes nothing; unset, the XDG default is used.
XDG="$WORK/xdg"
XDG_CACHE_HOME="$XDG" TRAINHOOK_REGISTRY_CACHE=off "$TH" plugins --plugin_dir "$ROOT/good" > /dev/null 2>&1 ||
  fail "plugins with the cache off"
[[ ! -e "$XDG/trainhook" ]] || fail "TRAINHOOK_REGISTRY_CACHE=off wrote $XDG/trainhook"
(unset TRAINHOOK_REGISTRY_CACHE; XDG_CACHE_HOME="$XDG" "$TH" plugins --plugin_dir "$ROOT/good" > /dev/null 2>&1) ||
  fail "plugins with the XDG cache"
json_ok "$XDG/trainhook/registry-abi1.json"

# 4d. Two scans at once into one empty cache: both succeed, the file is whole.
rm -f "$TRAINHOOK_REGISTRY_CACHE"
"$TH" plugins --plugin_dir "$ROOT/good" > "$WORK/p1.out" 2>&1 & p1=$!
"$TH" plugins --plugin_dir "$ROOT/model_access" > "$WORK/p2.out" 2>&1 & p2=$!
wait $p1 || { cat "$WORK/p1.out"; fail "concurrent scan 1"; }
wait $p2 || { cat "$WORK/p2.out"; fail "concurrent scan 2"; }
json_ok "$TRAINHOOK_REGISTRY_CACHE"
grep -qF "libtrainhook_c_plugin.$SO" "$TRAINHOOK_REGISTRY_CACHE" || fail "scan 1 lost from the cache"
grep -qF "libtrainhook_c_grad_norm.$SO" "$TRAINHOOK_REGISTRY_CACHE" || fail "scan 2 lost from the cache"

# 5. plugins.lock: listed files load; one changed byte is refused, both digests named.
DEFAULT_DIR="$(cd "$(dirname "$TH")/../lib/trainhook/plugins" && pwd)"
mkdir -p "$WORK/pinned"
cp "$ROOT/good/libtrainhook_c_plugin.$SO" "$WORK/pinned/"
sha256sum "$WORK/pinned/"*.$SO "$DEFAULT_DIR/"*.$SO > "$WORK/plugins.lock"
export TRAINHOOK_PLUGIN_LOCK="$WORK/plugins.lock"
OUT="$("$TH" plugins --plugin_dir "$WORK/pinned" 2>&1)" || { echo "$OUT"; fail "pinned files were refused"; }
expect "$OUT" "integration c_counter"
"$TH" train "${ARGS[@]/$BAD/$WORK/pinned}" --report_to c_counter --output_dir "$WORK/run_pinned" \
  > "$WORK/run_pinned.log" 2>&1 || { cat "$WORK/run_pinned.log"; fail "a run with a pinned plugin failed"; }
listed="$(sha256sum "$WORK/pinned/libtrainhook_c_plugin.$SO" | cut -c1-64)"
printf '\x01' | dd of="$WORK/pinned/libtrainhook_c_plugin.$SO" bs=1 seek=200 conv=notrunc status=none
changed="$(sha256sum "$WORK/pinned/libtrainhook_c_plugin.$SO" | cut -c1-64)"
[[ "$listed" != "$changed" ]] || fail "the byte flip changed nothing"
set +e
OUT="$("$TH" train "${ARGS[@]/$BAD/$WORK/pinned}" --report_to c_counter --output_dir "$WORK/run_pinned2" 2>&1)"
rc=$?
set -e
[[ $rc -ne 0 ]] || fail "a changed pinned plugin was used"
expect "$OUT" "its SHA-256 differs from the plugin lock file: $WORK/plugins.lock:1 lists $listed, the file has $changed"
cp "$ROOT/good/libtrainhook_test_pack.$SO" "$WORK/pinned/"
set +e
OUT="$("$TH" plugins --plugin_dir "$WORK/pinned" 2>&1)"; rc=$?
set -e
[[ $rc -eq 1 ]] || fail "an unlisted file was accepted"
expect "$OUT" "REFUSED: not listed in the plugin lock file $WORK/plugins.lock (TRAINHOOK_PLUGIN_LOCK)"
echo "cli plugin scan: ok"
