#!/usr/bin/env bash
# Installers for end users (docs/shipping.md): builds `.deb` and `.rpm` packages of AppHost with
# Tauri's bundler and a type-2 `.AppImage` (scripts/lib/build_appimage.sh) into dist/packages/.
#
#   bash scripts/package.sh [--debug | --release] [--bundles deb,rpm,appimage]
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
# The AppImage is not built by Tauri's bundler (it downloads linuxdeploy and the AppImage runtime
# from GitHub at bundle time): scripts/lib/build_appimage.sh assembles the AppDir, packs it with
# mksquashfs and prepends AppHost's own runtime (tools/appimage-runtime). A release signs it too
# and the feed gains `linux-x86_64-appimage`, which the AppImage's self-update installs
# (docs/shipping.md, "AppImage").
#
# Environment: CARGO_TARGET_DIR (default ~/.cache/apphost-target), PACKAGE_OUT (default
# dist/packages), APPHOST_DOWNLOAD_BASE (release: the URL prefix latest.json gives for each
# package and as the download page; default: the feed URL's folder).
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PROFILE=release
BUNDLES=deb,rpm,appimage
while [ $# -gt 0 ]; do
  case "$1" in
    --debug) PROFILE=debug ;;
    --release) PROFILE=release ;;
    --bundles) BUNDLES="$2"; shift ;;
    -h|--help) sed -n '2,29p' "$0"; exit 0 ;;
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

VERSION="$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -1)"
rm -f "$OUT"/*.deb "$OUT"/*.rpm "$OUT"/*.AppImage "$OUT"/*.sig "$OUT"/latest.json
# Tauri's bundler makes the deb and rpm; the AppImage is ours (see the header).
TAURI_BUNDLES="$(tr ',' '\n' <<<"$BUNDLES" | grep -vx appimage | paste -sd, -)"
if [ -n "$TAURI_BUNDLES" ]; then
  echo "package: bundling $TAURI_BUNDLES"
  bundle_profile=()
  [ "$PROFILE" = debug ] && bundle_profile=(--debug)
  # Signing is done below, per package, so the bundler's own updater signing is off.
  (cd src-tauri && CARGO_TARGET_DIR="$STAGE/target" TAURI_SIGNING_PRIVATE_KEY= \
    "$TAURI" bundle --bundles "$TAURI_BUNDLES" "${bundle_profile[@]}" --config "$STAGE/config.json")
  find "$STAGE/target/$PROFILE/bundle" -maxdepth 2 -type f \( -name '*.deb' -o -name '*.rpm' \) \
    -exec mv {} "$OUT/" \;
fi
if tr ',' '\n' <<<"$BUNDLES" | grep -qx appimage; then
  echo "package: building the AppImage"
  bash "$REPO/scripts/lib/build_appimage.sh" "$STAGE/target/$PROFILE" "$OUT/apphost_${VERSION}_amd64.AppImage"
fi
rm -rf "$STAGE"

if [ "$PROFILE" = release ]; then
  BASE="${APPHOST_DOWNLOAD_BASE:-${APPHOST_UPDATE_ENDPOINT%/*}}"
  # --app-version binds each signature to this version (the AppImage's updater requires it).
  for f in "$OUT"/*.deb "$OUT"/*.rpm "$OUT"/*.AppImage; do
    [ -f "$f" ] && "$TAURI" signer sign --app-version "$VERSION" "$f" >/dev/null
  done
  python3 "$REPO/scripts/lib/update_feed.py" "$OUT" "$VERSION" "$BASE" > "$OUT/latest.json"
  "$TAURI" signer sign "$OUT/latest.json" >/dev/null
fi

echo "package: done ($PROFILE) in $OUT"
for f in "$OUT"/*; do
  [ -f "$f" ] && printf '  %-60s %8s KiB\n' "$(basename "$f")" "$(( $(stat -c %s "$f") / 1024 ))"
done
