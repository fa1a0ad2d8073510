#!/usr/bin/env bash
# Installs the packages scripts/package.sh built, checks them, and removes them again
# (docs/shipping.md, "Install test"). Run by scripts/test.sh; needs root, Xvfb and xdotool
# (scripts/setup.sh installs them), and rpm for the .rpm checks.
#
#   bash scripts/test-packages.sh [PACKAGE_DIR]
#
# PACKAGE_DIR   where the .deb, .rpm and .AppImage are (default: builds them with `package.sh --debug`
#               into a temporary folder).
#
# .deb: dpkg -i; `apphost --version` from the PATH is /usr/bin/apphost; the desktop entry,
# the MIME type (the shared-mime-info trigger registers *.agentapp) and the icons are in place;
# the installed window starts under Xvfb (its X window "AppHost" appears) and `apphost open
# <package>` starts it too; dpkg -r and dpkg -P leave none of the package's files behind and
# the MIME type is unregistered again.
# .rpm: the file list matches the .deb's, the dependencies name WebKitGTK 4.1 and GTK 3, and
# the package installs into and removes from a scratch root (rpm --root, no scripts).
# .AppImage (scripts/lib/test_appimage.sh): its layout and type-2 magic, `--version` and the
# window from it (FUSE mount and extract-and-run, nothing left behind), --appimage-extract,
# and self-update from a loopback feed: a good signed update replaces the file; tampered, wrong-key,
# wrongly versioned and older updates are refused and leave it unchanged.
# Prints "N passed, M failed" last; exits non-zero on any failure.
set -uo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
WORK="$(mktemp -d -t apphost-pkgtest.XXXXXX)"
PKG_DIR="${1:-}"
passed=0
failed=0
XVFB_PID=""
WINDOW_PID=""

cleanup() {
  [ -n "$WINDOW_PID" ] && kill "$WINDOW_PID" 2>/dev/null
  [ -n "$XVFB_PID" ] && kill "$XVFB_PID" 2>/dev/null
  [ -n "${HTTP_PID:-}" ] && kill "$HTTP_PID" 2>/dev/null
  if dpkg -s apphost >/dev/null 2>&1; then dpkg -P apphost >/dev/null 2>&1; fi
  rm -rf "$WORK"
}
trap cleanup EXIT

ok() { passed=$((passed + 1)); printf 'ok    %s\n' "$*"; }
bad() { failed=$((failed + 1)); printf 'FAIL  %s\n' "$*"; }
check() {  # check DESCRIPTION COMMAND...
  local what="$1"; shift
  if "$@" >"$WORK/out" 2>&1; then ok "$what"; else bad "$what"; sed 's/^/      /' "$WORK/out" | tail -20; fi
}
finish() {
  printf '\n%d passed, %d failed\n' "$passed" "$failed"
  [ "$failed" -eq 0 ]
  exit $?
}

[ "$(id -u)" -eq 0 ] || { echo "test-packages: needs root (dpkg -i)" >&2; exit 1; }
for tool in dpkg Xvfb xdotool mksquashfs; do
  command -v "$tool" >/dev/null || { echo "test-packages: $tool not found (bash scripts/setup.sh)" >&2; exit 1; }
done
if dpkg -s apphost >/dev/null 2>&1 || [ -e /usr/bin/apphost ]; then
  echo "test-packages: apphost is already installed here; remove it first (dpkg -P apphost)" >&2
  exit 1
fi

# A release is refused before anything is built when the update signing key is missing.
check "package.sh --release without the signing key is refused (exit 3)" \
  sh -c "env -u TAURI_SIGNING_PRIVATE_KEY bash '$REPO/scripts/package.sh' --release; [ \$? -eq 3 ]"

if [ -z "$PKG_DIR" ]; then
  PKG_DIR="$WORK/packages"
  PACKAGE_OUT="$PKG_DIR" bash "$REPO/scripts/package.sh" --debug || { bad "package.sh --debug"; finish; }
fi
DEB="$(ls "$PKG_DIR"/*.deb 2>/dev/null | head -1)"
RPM="$(ls "$PKG_DIR"/*.rpm 2>/dev/null | head -1)"
[ -f "$DEB" ] || { bad "a .deb in $PKG_DIR"; finish; }

# --- .deb ----------------------------------------------------------------------------------
# The files the package owns (checked again after removal).
dpkg-deb -c "$DEB" | awk '$1 !~ /^d/ {print $6}' | sed 's|^\./||; s|^/*|/|' > "$WORK/deb-files"
check "deb lists its files ($(wc -l < "$WORK/deb-files"))" test -s "$WORK/deb-files"
for f in /usr/bin/apphost /usr/bin/apphost-desktop /usr/share/applications/apphost.desktop \
         /usr/share/mime/packages/apphost.xml /usr/share/icons/hicolor/128x128/apps/apphost-desktop.png \
         /usr/share/icons/hicolor/32x32/apps/apphost-desktop.png; do
  check "deb carries $f" grep -qx "$f" "$WORK/deb-files"
done
check "deb depends on WebKitGTK 4.1 and GTK 3" \
  sh -c "dpkg-deb -f '$DEB' Depends | grep -q libwebkit2gtk-4.1-0 && dpkg-deb -f '$DEB' Depends | grep -q libgtk-3-0"

check "dpkg -i" dpkg -i "$DEB"
check "apphost on the PATH is /usr/bin/apphost" sh -c '[ "$(command -v apphost)" = /usr/bin/apphost ]'
check "apphost --version" sh -c 'apphost --version | grep -q "^apphost "'
check "apphost-desktop beside apphost" test -x /usr/bin/apphost-desktop
check "desktop entry: Exec with %f and the MIME type" \
  sh -c 'grep -qx "Exec=apphost-desktop %f" /usr/share/applications/apphost.desktop &&
         grep -qx "MimeType=application/vnd.agentapp+zip;" /usr/share/applications/apphost.desktop'
if command -v desktop-file-validate >/dev/null; then
  check "desktop entry validates" desktop-file-validate /usr/share/applications/apphost.desktop
fi
if command -v update-mime-database >/dev/null; then
  # dpkg runs shared-mime-info's trigger for /usr/share/mime/packages.
  check "*.agentapp is registered as application/vnd.agentapp+zip" \
    grep -q 'application/vnd.agentapp+zip:\*\.agentapp' /usr/share/mime/globs2
fi

# The installed window under Xvfb.
# shellcheck source=lib/xvfb.sh
source "$REPO/scripts/lib/xvfb.sh"
start_xvfb "$WORK" "$WORK/xvfb.log" || { bad "Xvfb starts"; sed 's/^/      /' "$WORK/xvfb.log"; finish; }
window_appears() {  # window_appears COMMAND...: starts it, waits up to 60 s for the "AppHost" window
  "$@" >"$WORK/window.log" 2>&1 &
  WINDOW_PID=$!
  local found=1
  for _ in $(seq 600); do
    if xdotool search --name '^AppHost$' >/dev/null 2>&1; then found=0; break; fi
    kill -0 "$WINDOW_PID" 2>/dev/null || break
    sleep 0.1
  done
  kill "$WINDOW_PID" 2>/dev/null; wait "$WINDOW_PID" 2>/dev/null
  WINDOW_PID=""
  [ "$found" -eq 0 ] || { tail -20 "$WORK/window.log"; return 1; }
  # The window is gone with its process.
  for _ in $(seq 50); do xdotool search --name '^AppHost$' >/dev/null 2>&1 || return 0; sleep 0.1; done
  return 1
}
export APPHOST_DATA_DIR="$WORK/data"
check "the installed apphost-desktop opens its window under Xvfb" window_appears /usr/bin/apphost-desktop
(cd "$REPO/fixtures/packages/good/hello-app" && zip -qr "$WORK/hello.agentapp" .)
check "apphost open <file>.agentapp opens the window" window_appears apphost open "$WORK/hello.agentapp"
check "the window installed nothing by itself" sh -c "! apphost --json list | grep -q hello"
kill "$XVFB_PID" 2>/dev/null; XVFB_PID=""

check "dpkg -r" dpkg -r apphost
check "dpkg -P" dpkg -P apphost
left=()
while read -r f; do [ -e "$f" ] && left+=("$f"); done < "$WORK/deb-files"
check "no file of the package is left (${#left[@]} left: ${left[*]:-none})" test "${#left[@]}" -eq 0
check "apphost is no longer on the PATH" sh -c '! command -v apphost'
if command -v update-mime-database >/dev/null; then
  check "*.agentapp is unregistered" sh -c "! grep -q 'vnd.agentapp' /usr/share/mime/globs2"
fi

# --- .rpm ----------------------------------------------------------------------------------
if [ -f "$RPM" ] && command -v rpm >/dev/null; then
  rpm -qpl "$RPM" 2>/dev/null | sort > "$WORK/rpm-files"
  check "rpm carries the deb's files" sh -c "sort '$WORK/deb-files' | comm -3 - '$WORK/rpm-files' | (! grep .)"
  # The bundler states them as shared-library requirements (any distribution's package of them).
  check "rpm requires WebKitGTK 4.1 and GTK 3" \
    sh -c "rpm -qpR '$RPM' 2>/dev/null | grep -q 'libwebkit2gtk-4.1.so.0' && rpm -qpR '$RPM' 2>/dev/null | grep -q 'libgtk-3.so.0'"
  ROOT="$WORK/rpmroot"
  mkdir -p "$ROOT"
  check "rpm installs into a scratch root" sh -c "rpm --root '$ROOT' --initdb && rpm --root '$ROOT' -i --nodeps --noscripts '$RPM'"
  check "the rpm's apphost runs" sh -c "'$ROOT/usr/bin/apphost' --version | grep -q '^apphost '"
  check "rpm -e removes every file" sh -c "rpm --root '$ROOT' -e apphost && ! find '$ROOT/usr' -type f | grep ."
else
  bad "an .rpm and the rpm tool (apt-get install rpm)"
fi

# --- .AppImage -----------------------------------------------------------------------------
# shellcheck source=lib/test_appimage.sh
source "$REPO/scripts/lib/test_appimage.sh"
finish
