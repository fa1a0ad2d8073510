#!/usr/bin/env bash
# Builds AppHost's type-2 AppImage without any download (docs/shipping.md, "AppImage"); called by
# scripts/package.sh.
#
#   bash scripts/lib/build_appimage.sh BIN_DIR OUT_FILE
#
# BIN_DIR   holds the stripped `apphost` and `apphost-desktop`.
# OUT_FILE  the .AppImage to write.
#
# 1. the AppDir: AppRun (src-tauri/packaging/AppRun), apphost.desktop + apphost-desktop.png +
#    .DirIcon at its root (what AppImage tools read), usr/bin/{apphost,apphost-desktop},
#    usr/share/{applications,icons/hicolor,mime/packages} as in the deb;
# 2. its squashfs (`mksquashfs`, gzip, all files owned by root);
# 3. the runtime (tools/appimage-runtime, built here in release) with the type-2 magic
#    `AI\x02` written at offset 8 (ELF padding), followed by the squashfs.
# Needs mksquashfs (apt squashfs-tools; scripts/setup.sh).
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
BIN_DIR="$1"
OUT_FILE="$2"
command -v mksquashfs >/dev/null || { echo "appimage: mksquashfs not found (apt install squashfs-tools)" >&2; exit 1; }
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/apphost-target}"

echo "appimage: building the runtime (tools/appimage-runtime)"
cargo build --locked --release --manifest-path "$REPO/tools/appimage-runtime/Cargo.toml"
RUNTIME="$CARGO_TARGET_DIR/release/appimage-runtime"

WORK="$(mktemp -d -t apphost-appimage.XXXXXX)"
trap 'rm -rf "$WORK"' EXIT
APPDIR="$WORK/AppDir"
PKG="$REPO/src-tauri/packaging"
mkdir -p "$APPDIR/usr/bin" "$APPDIR/usr/share/applications" "$APPDIR/usr/share/mime/packages"
install -m 755 "$BIN_DIR/apphost" "$BIN_DIR/apphost-desktop" "$APPDIR/usr/bin/"
install -m 755 "$PKG/AppRun" "$APPDIR/AppRun"
sed -e 's/{{exec}}/apphost-desktop/g' -e 's/{{icon}}/apphost-desktop/g' "$PKG/apphost.desktop" \
  > "$APPDIR/usr/share/applications/apphost.desktop"
cp "$APPDIR/usr/share/applications/apphost.desktop" "$APPDIR/apphost.desktop"
install -m 644 "$PKG/apphost-mime.xml" "$APPDIR/usr/share/mime/packages/apphost.xml"
for size in 16 24 32 48 64; do
  mkdir -p "$APPDIR/usr/share/icons/hicolor/${size}x${size}/apps"
  install -m 644 "$REPO/src-tauri/icons/${size}x${size}.png" \
    "$APPDIR/usr/share/icons/hicolor/${size}x${size}/apps/apphost-desktop.png"
done
mkdir -p "$APPDIR/usr/share/icons/hicolor/128x128/apps"
install -m 644 "$REPO/icons/icon.png" "$APPDIR/usr/share/icons/hicolor/128x128/apps/apphost-desktop.png"
install -m 644 "$REPO/icons/icon.png" "$APPDIR/apphost-desktop.png"
ln -s apphost-desktop.png "$APPDIR/.DirIcon"

echo "appimage: squashfs"
mksquashfs "$APPDIR" "$WORK/image.squashfs" -comp gzip -all-root -noappend -no-progress -quiet >/dev/null

cp "$RUNTIME" "$WORK/runtime"
printf 'AI\002' | dd of="$WORK/runtime" bs=1 seek=8 conv=notrunc status=none
cat "$WORK/runtime" "$WORK/image.squashfs" > "$OUT_FILE.part"
chmod 755 "$OUT_FILE.part"
mv "$OUT_FILE.part" "$OUT_FILE"
echo "appimage: $OUT_FILE"
