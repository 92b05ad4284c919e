#!/usr/bin/env bash
# The plugin scan through the real CLI, with libraries that crash, hang, exit,
# abort or throw as soon as they are loaded (misbehaving_plugins.cpp):
#  1. `trainhook plugins` names each with its reason and exits 1; it never dies
#  2. a run that does not ask for them finishes, loads only what it uses, and
#     does not scan them again (the registry cache remembers them)
#  3. a run that asks for one gets an error naming the file and the reason, at once
#  4. the cache: re-scan only a changed file; damaged, off, concurrent writers
#  5. plugins.lock: a listed file loads, a changed byte is refused naming both digests
#  6. the cache trusts only scanned bytes: a library copied over in place (size,
#     inode, mtime kept) is scanned again; bytes the stat key cannot tell apart
#     are caught by their SHA-256 before a run loads them; a timeout verdict is
#     judged again under a higher limit; a constructor's daemon ends with its
#     scan, which is no timeout; a FIFO as cache path is ignored with a warning
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
unset TRAINHOOK_PLUGIN_LOCK

# 6a. A library copied over in place, size, inode and mtime kept (its ctime
#     moves): scanned again; the run loads and reports the new one.
REPL="$WORK/replaced/libtrainhook_replaceable.$SO"
mkdir -p "$WORK/replaced"
cp "$ROOT/replaceable_1/libtrainhook_replaceable.$SO" "$REPL"
size=0
for v in 1 2 3; do
  s="$(stat -c %s "$ROOT/replaceable_$v/libtrainhook_replaceable.$SO")"
  ((s > size)) && size=$s
done
truncate -s "$size" "$REPL"  # the variants are built to one size; padding keeps it so if not
in_place() {  # in_place VARIANT: its bytes into $REPL, same inode and size, times set back
  touch -r "$REPL" "$WORK/stamp"
  dd if="$ROOT/replaceable_$1/libtrainhook_replaceable.$SO" of="$REPL" conv=notrunc status=none
  touch -r "$WORK/stamp" "$REPL"
}
RUN=(--train_file "$WORK/train.csv" --feature_scale 0.0625 --model mlp --do_train --disable_tqdm true
  --max_steps 2 --per_device_train_batch_size 32 --save_strategy no --report_to none --plugin_dir "$WORK/replaced"
  --callbacks replaceable_cb)
run_replaceable() {  # run_replaceable NAME WHAT: a short run that loads it; its log in $LOG
  "$TH" train "${RUN[@]}" --output_dir "$WORK/$1" > "$WORK/$1.log" 2>&1 || { cat "$WORK/$1.log"; fail "$2"; }
  LOG="$(cat "$WORK/$1.log")"
}
OUT="$("$TH" plugins --plugin_dir "$WORK/replaced" 2>&1)" || { echo "$OUT"; fail "replaceable: first scan"; }
expect "$OUT" "callback replaceable_cb 1.0.0"
before="$(stat -c '%s %i %y' "$REPL")"
in_place 2
[[ "$(stat -c '%s %i %y' "$REPL")" == "$before" ]] || fail "the in-place copy changed size, inode or mtime"
run_replaceable run_replaced "a run with a library replaced in place failed"
expect "$LOG" "scanned plugin 'replaceable' 2.0.0"
expect "$LOG" "loaded plugin 'replaceable' 2.0.0"
expect "$LOG" "[replaceable_cb] variant=2"

# 6b. Bytes the stat key cannot tell apart (variant 3 differs from 1 only in
#     code; the cache entry is given the file's current key, as when its ctime
#     did not move): a listing trusts the key, a run that loads it checks the
#     SHA-256, scans it again and loads what it scanned.
in_place 1
"$TH" plugins --plugin_dir "$WORK/replaced" > /dev/null 2>&1 || fail "replaceable: scan of variant 1"
in_place 3
/usr/bin/python3 - "$TRAINHOOK_REGISTRY_CACHE" "$REPL" <<'PY' || fail "could not rewrite the cache entry"
import json, os, sys
cache, lib = sys.argv[1], os.path.realpath(sys.argv[2])
doc = json.load(open(cache))
st = os.stat(lib)
hits = [e for e in doc["libraries"] if e["path"] == lib]
assert hits, "no entry for " + lib
for e in hits:
    e.update(size=st.st_size, mtime_ns=st.st_mtime_ns, ctime_ns=st.st_ctime_ns, inode=st.st_ino)
json.dump(doc, open(cache, "w"))
PY
OUT="$("$TH" plugins --plugin_dir "$WORK/replaced" 2>&1)" || { echo "$OUT"; fail "replaceable: listing"; }
refuse "$OUT" "scanned plugin"
run_replaceable run_code_changed "a run with a library changed in code only failed"
expect "$LOG" "plugin file $WORK/replaced/libtrainhook_replaceable.$SO changed since it was scanned (SHA-256"
expect "$LOG" "[replaceable_cb] variant=3"
refuse "$LOG" "variant=1"

# 6c. A timeout verdict under TRAINHOOK_PLUGIN_SCAN_TIMEOUT=1 holds under 1 s,
#     and is judged again when the limit is raised, as the refusal advises.
export TRAINHOOK_TEST_SCAN_GATE="$WORK/gate"
set +e
OUT="$(TRAINHOOK_PLUGIN_SCAN_TIMEOUT=1 "$TH" plugins --plugin_dir "$ROOT/scan_gated" 2>&1)"; rc=$?
set -e
[[ $rc -eq 1 ]] || { echo "$OUT"; fail "a library that does not answer was accepted"; }
expect "$OUT" "REFUSED: did not answer within 1 s while loading"
touch "$WORK/gate"
set +e
OUT="$(TRAINHOOK_PLUGIN_SCAN_TIMEOUT=1 "$TH" plugins --plugin_dir "$ROOT/scan_gated" 2>&1)"; rc=$?
set -e
[[ $rc -eq 1 ]] || { echo "$OUT"; fail "the timeout verdict was not remembered under the same limit"; }
OUT="$(TRAINHOOK_PLUGIN_SCAN_TIMEOUT=5 "$TH" plugins --plugin_dir "$ROOT/scan_gated" 2>&1)" ||
  { echo "$OUT"; fail "a raised scan limit was not honoured"; }
expect "$OUT" "callback scan_gated 1.0.0"
refuse "$OUT" "REFUSED"
unset TRAINHOOK_TEST_SCAN_GATE

# 6d. A constructor forks a daemon that keeps the scanner's pipes: the scan
#     answers (no timeout) and the daemon ends with it.
export TRAINHOOK_TEST_DAEMON_PID_FILE="$WORK/daemon.pid"
OUT="$(TRAINHOOK_PLUGIN_SCAN_TIMEOUT=60 "$TH" plugins --plugin_dir "$ROOT/scan_daemon" 2>&1)" ||
  { echo "$OUT"; fail "a library whose constructor forks a daemon was refused"; }
unset TRAINHOOK_TEST_DAEMON_PID_FILE
expect "$OUT" "callback scan_daemon 1.0.0"
daemon="$(cat "$WORK/daemon.pid")"
[[ $daemon -gt 1 ]] || fail "no daemon pid"
daemon_gone() { ! kill -0 "$daemon" 2>/dev/null || [[ "$(awk '{print $3}' "/proc/$daemon/stat" 2>/dev/null)" == Z ]]; }
wait_for 10 "the daemon $daemon to end with its scan" daemon_gone

# 6e. A FIFO as the cache path: a warning naming it, the run goes on, the FIFO stays.
mkfifo "$WORK/cache.fifo"
OUT="$(TRAINHOOK_REGISTRY_CACHE="$WORK/cache.fifo" timeout 120 "$TH" train "${ARGS[@]}" --report_to none \
  --output_dir "$WORK/run_fifo" 2>&1)" || { echo "$OUT"; fail "a run with a FIFO as registry cache failed"; }
expect "$OUT" "registry cache $WORK/cache.fifo is a FIFO, not a regular file; ignoring it"
[[ -p "$WORK/cache.fifo" ]] || fail "the FIFO was replaced"
echo "cli plugin scan: ok"
