#!/usr/bin/env bash
# The tarball of package_build, unpacked into a folder whose path has a space:
# the program finds its libraries (RPATH $ORIGIN), its plugins and its helpers
# relative to itself, with no environment variable: `trainhook plugins` lists our
# plugins from there, and the digits MLP trains with jsonl isolated (the packaged
# trainhook-plugin-runner runs it).
# Usage: package_tarball.sh <packages dir> <source dir> <digits.csv>
set -euo pipefail
PKGS="$1" SRC="$2" DIGITS="$3"
TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT
source "$(dirname "${BASH_SOURCE[0]}")/../lib/test_lib.sh"
source "$(dirname "${BASH_SOURCE[0]}")/package_lib.sh"
VERSION=$(sed -n 's/^project(trainhook VERSION \([0-9.]*\) .*/\1/p' "$SRC/CMakeLists.txt")
DIR="$TMP/unpacked here"
mkdir -p "$DIR"
tar -xzf "$PKGS/trainhook-${VERSION}-Linux.tar.gz" -C "$DIR"
PREFIX="$DIR/trainhook-${VERSION}-Linux"
TH="$PREFIX/bin/trainhook"
[[ -x "$TH" ]] || fail "no program at $TH"
LISTING="$(cd "$TMP" && clean_env "$TH" plugins 2>&1)" || { echo "$LISTING"; fail "trainhook plugins"; }
plugins_listed "$LISTING" "$PREFIX/lib/trainhook/plugins"
train_digits "$TH" "$TMP/digits" --plugin_isolation jsonl
echo "ok   the tarball unpacked in '$DIR' trains"
