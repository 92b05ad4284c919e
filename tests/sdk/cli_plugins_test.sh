#!/usr/bin/env bash
# The CLI's plugin commands in the build tree:
#  - `trainhook plugins` lists the test plugins and every refusal with its reason,
#    exits 1 when a file was refused, and marks a name an earlier library overrides
#  - `trainhook <plugin command>` runs a command a plugin exports
#  - an unknown command suggests the closest one
# Usage: cli_plugins_test.sh <trainhook> <test plugin root> <shared-library suffix>
# (plugin files are libtrainhook_<name><suffix>, as plugin_file_name.hpp says)
set -euo pipefail
TH="$1" ROOT="$2" SUFFIX="$3"
fail() { echo "FAIL: $*" >&2; exit 1; }
expect() { grep -qF -- "$2" <<<"$1" || { echo "$1"; fail "missing: $2"; }; }
ERRFILE="$(mktemp)"
trap 'rm -f "$ERRFILE"' EXIT

set +e
OUT="$("$TH" plugins --plugin_dir "$ROOT/good" --plugin_dir "$ROOT/no_entry" --plugin_dir "$ROOT/abi_major" \
        --plugin_dir "$ROOT/newer_minor" --plugin_dir "$ROOT/entry_error" --plugin_dir "$ROOT/dup" 2>"$ERRFILE")"
rc=$?
set -e
[[ $rc -eq 1 ]] || fail "trainhook plugins should exit 1 when files were refused, got $rc"
expect "$(cat "$ERRFILE")" "trainhook plugins: 4 plugin file(s) on the search path were refused"
expect "$OUT" "$ROOT/good/libtrainhook_c_plugin$SUFFIX"
expect "$OUT" "integration c_counter 0.3.0"
expect "$OUT" "callback pack_recorder 2.1.0"
expect "$OUT" "command pack-hello"
expect "$OUT" "$ROOT/no_entry/libtrainhook_no_entry$SUFFIX
  REFUSED: no entry symbol trainhook_plugin_v1"
expect "$OUT" "REFUSED: ABI major version mismatch: the plugin was built for ABI 2.2"
expect "$OUT" "REFUSED: the plugin was built for ABI 1.3, newer than this trainhook's ABI 1.2"
expect "$OUT" "REFUSED: entry trainhook_plugin_v1 returned error 1: license file"
expect "$OUT" "[DUPLICATE: ignored, $ROOT/dup/libtrainhook_dup_a$SUFFIX comes first]"

# Nothing refused: exit 0. A library named first overrides the same name found later.
OUT="$("$TH" plugins --plugin_dir "$ROOT/dup/libtrainhook_dup_b$SUFFIX" --plugin_dir "$ROOT/dup")" ||
  fail "trainhook plugins failed with nothing refused"
expect "$OUT" "[OVERRIDDEN by $ROOT/dup/libtrainhook_dup_b$SUFFIX, earlier in the search path]"

set +e
ERR="$("$TH" plugins --plugin_dirr x 2>&1)"; rc=$?
set -e
[[ $rc -ne 0 ]] || fail "a bad flag was accepted"
expect "$ERR" "unknown argument '--plugin_dirr' (did you mean '--plugin_dir'?)"

set +e
HELLO="$(TRAINHOOK_PLUGIN_PATH="$ROOT/good" "$TH" pack-hello one two 2>&1)"; rc=$?
set -e
[[ $rc -eq 2 ]] || fail "pack-hello should exit with its argument count (2), got $rc: $HELLO"
expect "$HELLO" "[pack-hello] hello one two"

set +e
ERR="$(TRAINHOOK_PLUGIN_PATH="$ROOT/good" "$TH" pack-helo 2>&1)"; rc=$?
set -e
[[ $rc -eq 2 ]] || fail "an unknown command should exit 2, got $rc"
expect "$ERR" "unknown command 'pack-helo' (did you mean 'pack-hello'?)"

HELP="$(TRAINHOOK_PLUGIN_PATH="$ROOT/good" "$TH" --help)"
expect "$HELP" "pack-hello"
echo "cli plugin commands: ok"
