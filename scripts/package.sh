#!/usr/bin/env bash
# Installers for end users (docs/shipping.md): builds `.deb` and `.rpm` packages of AppHost with
# Tauri's bundler into dist/packages/.
#
#   bash scripts/package.sh [--debug | --release] [--bundles deb,rpm]
#
# --release (the default) builds optimised binaries and refuses to run without the update
#           signing key TAURI_SIGNING_PRIVATE_KEY (and TAURI_SIGNING_PRIVATE_KEY_PASSWORD when
#           it has one), its public key APPHOST_UPDATE_PUBKEY (compiled in: the only key the
#           update check accepts) and the feed URL APPHOST_UPDATE_ENDPOINT. It signs every
#           package (<file>.sig, minisign), writes latest.json (the update feed) and signs it
#           (latest.json.sig) (docs/shipping.md).
# --debug   reuses the shared debug build (what the install test packages); unsigned.
#
# Each package carries both binaries side by side in /usr/bin (`apphost`, the command on the
# PATH, execs `apphost-desktop` from its own folder), the desktop entry (MimeType=
# application/vnd.agentapp+zip; Exec=apphost-desktop %f opens the review sheet for a package),
# the shared-mime-info type for `*.agentapp` and the icon set. Binaries are stripped of debug
# information and symbols before they are packaged (a debug build's binaries are hundreds of MiB otherwise).
#
# The AppImage is not built: Tauri bundles it with linuxdeploy and the AppImage runtime, both
# downloaded from GitHub at bundle time, and no package registry this project can use carries
# them (docs/shipping.md, "AppImage").
#
# Environment: CARGO_TARGET_DIR (default ~/.cache/apphost-target), PACKAGE_OUT (default
# dist/packages), APPHOST_DOWNLOAD_BASE (release: the URL prefix latest.json gives for each
# package and as the download page; default: the feed URL's folder).
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PROFILE=release
BUNDLES=deb,rpm
while [ $# -gt 0 ]; do
  case "$1" in
    --debug) PROFILE=debug ;;
    --release) PROFILE=release ;;
    --bundles) BUNDLES="$2"; shift ;;
    -h|--help) sed -n '2,27p' "$0"; exit 0 ;;
    *) echo "package: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
  shift
done

if [ "$PROFILE" = release ]; then
  # A release signs its packages and its update feed, and carries the key that checks the feed
  # and the feed's URL: without any of them it is refused (docs/shipping.md, "Updates").
  for var in TAURI_SIGNING_PRIVATE_KEY APPHOST_UPDATE_PUBKEY APPHOST_UPDATE_ENDPOINT; do
    if [ -z "${!var:-}" ]; then
      echo "package: a release needs $var (the update signing key, its public key compiled into" \
           "the window, the update feed URL; see docs/shipping.md). Use --debug for an unsigned test build." >&2
      exit 3
    fi
  done
  export APPHOST_UPDATE_PUBKEY APPHOST_UPDATE_ENDPOINT
  # The key itself or a path to it (tauri signer sign takes the content).
  if [ -f "$TAURI_SIGNING_PRIVATE_KEY" ]; then
    TAURI_SIGNING_PRIVATE_KEY="$(cat "$TAURI_SIGNING_PRIVATE_KEY")"
  fi
  export TAURI_SIGNING_PRIVATE_KEY TAURI_SIGNING_PRIVATE_KEY_PASSWORD="${TAURI_SIGNING_PRIVATE_KEY_PASSWORD:-}"
fi

export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/apphost-target}"
OUT="${PACKAGE_OUT:-$REPO/dist/packages}"
TAURI="$REPO/node_modules/.bin/tauri"
[ -x "$TAURI" ] || { echo "package: $TAURI missing: run npm ci at the repository root" >&2; exit 1; }

cd "$REPO"
echo "package: building the host UI"
npm run build >/dev/null
echo "package: building apphost and apphost-desktop ($PROFILE)"
cargo_profile=()
[ "$PROFILE" = release ] && cargo_profile=(--release)
cargo build --locked -p apphost -p apphost-desktop "${cargo_profile[@]}"

# The bundler takes the binaries from <target>/<profile>/: give it a target folder of its own
# holding stripped copies, so the shared target stays untouched.
STAGE="$OUT/.stage"
rm -rf "$STAGE"
mkdir -p "$STAGE/target/$PROFILE" "$OUT"
for bin in apphost apphost-desktop; do
  cp "$CARGO_TARGET_DIR/$PROFILE/$bin" "$STAGE/target/$PROFILE/$bin"
  strip "$STAGE/target/$PROFILE/$bin"
done
# "apphost" names the package (apt install apphost) and its files; the window's title and the
# desktop entry's Name= stay "AppHost".
cat > "$STAGE/config.json" <<JSON
{
  "productName": "apphost",
  "bundle": {
    "linux": {
      "deb": { "files": { "/usr/bin/apphost": "$STAGE/target/$PROFILE/apphost" } },
      "rpm": { "files": { "/usr/bin/apphost": "$STAGE/target/$PROFILE/apphost" } }
    }
  }
}
JSON

echo "package: bundling $BUNDLES"
bundle_profile=()
[ "$PROFILE" = debug ] && bundle_profile=(--debug)
# Signing is done below, per package; the bundler's own signing applies to updater artifacts
# (AppImage only on Linux), which are not built here.
(cd src-tauri && CARGO_TARGET_DIR="$STAGE/target" TAURI_SIGNING_PRIVATE_KEY= \
  "$TAURI" bundle --bundles "$BUNDLES" "${bundle_profile[@]}" --config "$STAGE/config.json")

rm -f "$OUT"/*.deb "$OUT"/*.rpm "$OUT"/*.sig "$OUT"/latest.json
find "$STAGE/target/$PROFILE/bundle" -maxdepth 2 -type f \( -name '*.deb' -o -name '*.rpm' \) \
  -exec mv {} "$OUT/" \;
rm -rf "$STAGE"

if [ "$PROFILE" = release ]; then
  VERSION="$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -1)"
  BASE="${APPHOST_DOWNLOAD_BASE:-${APPHOST_UPDATE_ENDPOINT%/*}}"
  for f in "$OUT"/*.deb "$OUT"/*.rpm; do
    "$TAURI" signer sign "$f" >/dev/null
  done
  python3 "$REPO/scripts/lib/update_feed.py" "$OUT" "$VERSION" "$BASE" > "$OUT/latest.json"
  "$TAURI" signer sign "$OUT/latest.json" >/dev/null
fi

echo "package: done ($PROFILE) in $OUT"
for f in "$OUT"/*; do
  [ -f "$f" ] && printf '  %-60s %8s KiB\n' "$(basename "$f")" "$(( $(stat -c %s "$f") / 1024 ))"
done
