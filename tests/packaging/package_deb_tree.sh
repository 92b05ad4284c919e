#!/usr/bin/env bash
# The .debs of package_build, extracted (dpkg -x, nothing installed) into one
# temporary root:
#  1. <root>/usr/bin/trainhook lists our plugins from <root>/usr/lib/trainhook/plugins,
#     found with no environment variable (scanned by the packaged scanner), and
#     trains the digits MLP;
#  2. examples/third_party_plugin, as the dev package ships it, configures and
#     builds against <root>/usr alone, and its trainhook_package_plugins() makes
#     acme-pack_<version>_<arch>.deb: Depends trainhook (>= this version), its
#     plugins in Trainhook's plugin folder;
#  3. that .deb extracted into the same root: the trainer finds and loads the
#     pack's plugins there by default, and a run reports to acme_metrics.
# Usage: package_deb_tree.sh <packages dir> <source dir> <cmake> <digits.csv>
set -euo pipefail
PKGS="$1" SRC="$2" CMAKE="$3" DIGITS="$4"
TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT
source "$(dirname "${BASH_SOURCE[0]}")/../lib/test_lib.sh"
source "$(dirname "${BASH_SOURCE[0]}")/package_lib.sh"
VERSION=$(sed -n 's/^project(trainhook VERSION \([0-9.]*\) .*/\1/p' "$SRC/CMakeLists.txt")
ARCH=$(dpkg --print-architecture)
ROOT="$TMP/root"
dpkg -x "$PKGS/trainhook_${VERSION}_${ARCH}.deb" "$ROOT"
dpkg -x "$PKGS/trainhook-dev_${VERSION}_${ARCH}.deb" "$ROOT"
TH="$ROOT/usr/bin/trainhook"
PLUGINS="$ROOT/usr/lib/trainhook/plugins"

LISTING="$(cd "$TMP" && clean_env "$TH" plugins 2>&1)" || { echo "$LISTING"; fail "trainhook plugins"; }
plugins_listed "$LISTING" "$PLUGINS"
train_digits "$TH" "$TMP/digits"

# The pack, from the copy the dev package ships (where docs/plugins.md points).
EXAMPLE="$ROOT/usr/share/doc/trainhook/examples/third_party_plugin"
"$CMAKE" -S "$EXAMPLE" -B "$TMP/pack" -DCMAKE_PREFIX_PATH="$ROOT/usr" -DCMAKE_BUILD_TYPE=Release \
  >"$TMP/pack-configure.log" 2>&1 || { cat "$TMP/pack-configure.log"; fail "configure the pack against $ROOT/usr"; }
"$CMAKE" --build "$TMP/pack" -j 2 >"$TMP/pack-build.log" 2>&1 || { cat "$TMP/pack-build.log"; fail "build the pack"; }
(cd "$TMP/pack" && "$(dirname "$CMAKE")/cpack" -G DEB) >"$TMP/pack-cpack.log" 2>&1 ||
  { cat "$TMP/pack-cpack.log"; fail "cpack of the pack"; }
PACK_DEB="$TMP/pack/acme-pack_1.0.0_${ARCH}.deb"
[[ -f "$PACK_DEB" ]] || { ls "$TMP/pack"; fail "the pack's .deb is not $PACK_DEB"; }
dpkg-deb --info "$PACK_DEB" | tee "$TMP/pack.info"
grep -qF "trainhook (>= $VERSION)" "$TMP/pack.info" || fail "the pack's Depends lacks trainhook (>= $VERSION)"
grep -q '^ Depends:.*libcurl' "$TMP/pack.info" || fail "the pack's Depends lacks what acme_logger links (libcurl)"
dpkg-deb --contents "$PACK_DEB" | awk '{print $6}' >"$TMP/pack.files"
for name in acme_metrics acme_logger; do
  grep -qxF "./usr/lib/trainhook/plugins/libtrainhook_$name.so" "$TMP/pack.files" ||
    { cat "$TMP/pack.files"; fail "the pack's .deb does not put libtrainhook_$name.so in Trainhook's plugin folder"; }
done

dpkg -x "$PACK_DEB" "$ROOT"
LISTING="$(cd "$TMP" && clean_env "$TH" plugins 2>&1)" || { echo "$LISTING"; fail "trainhook plugins with the pack"; }
echo "$LISTING" | grep -i acme
grep -qF "plugin acme_metrics 1.0.0" <<<"$LISTING" || fail "acme_metrics not loaded from $PLUGINS"
grep -qF "plugin acme_logger 1.0.0" <<<"$LISTING" || fail "acme_logger not loaded from $PLUGINS"
plugins_listed "$LISTING" "$PLUGINS"
train_digits "$TH" "$TMP/digits-pack" --report_to jsonl,acme_metrics
echo "ok   the extracted packages train, and the pack's .deb is found and loads"
