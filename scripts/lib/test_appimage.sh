# The AppImage part of scripts/test-packages.sh (sourced there: uses its check/ok/bad,
# window_appears, WORK, PKG_DIR and REPO; docs/shipping.md, "AppImage").
#
# - the file: ELF with the type-2 magic AI\x02 at offset 8, a squashfs at --appimage-offset
#   holding AppRun, the desktop entry (MIME type), icons, .DirIcon and both binaries;
# - `<AppImage> --version` answers through the AppImage's `apphost`, mounted (FUSE) and with
#   APPIMAGE_EXTRACT_AND_RUN=1; nothing is left in TMPDIR afterwards;
# - `--appimage-extract` writes squashfs-root/;
# - the window opens under Xvfb from the AppImage, both ways, and its run folder goes with it;
# - self-update (Tauri's updater) against a loopback HTTP feed, the user's confirmation given
#   with the keyboard (Enter on the focused "Install and restart"): a newer AppImage signed with
#   the key replaces the file; changed bytes, another key, a signature for another version and
#   an older feed are refused and the file is unchanged.

AI="$(ls "$PKG_DIR"/*.AppImage 2>/dev/null | head -1)"
if [ ! -f "$AI" ]; then
  bad "an .AppImage in $PKG_DIR"
  return 0
fi
AI_TMP="$WORK/ai-tmp"
mkdir -p "$AI_TMP"
nothing_left() { [ -z "$(ls -A "$AI_TMP")" ] || { sleep 1; [ -z "$(ls -A "$AI_TMP")" ]; } || { ls -la "$AI_TMP"; return 1; }; }

check "AppImage: ELF with the type-2 magic AI\\x02 at offset 8" \
  sh -c "[ \"\$(head -c 4 '$AI' | od -An -tx1 | tr -d ' ')\" = 7f454c46 ] &&
         [ \"\$(head -c 11 '$AI' | tail -c 3 | od -An -tx1 | tr -d ' ')\" = 414902 ]"
OFFSET="$("$AI" --appimage-offset 2>/dev/null)"
check "AppImage: --appimage-offset names the squashfs ($OFFSET)" \
  sh -c "[ \"\$(dd if='$AI' bs=1 skip='$OFFSET' count=4 status=none)\" = hsqs ]"
if command -v unsquashfs >/dev/null; then
  unsquashfs -o "$OFFSET" -lc "$AI" 2>/dev/null | sed 's|^squashfs-root||' > "$WORK/ai-files"
  for f in /AppRun /apphost.desktop /apphost-desktop.png /usr/bin/apphost /usr/bin/apphost-desktop \
           /usr/share/applications/apphost.desktop /usr/share/mime/packages/apphost.xml \
           /usr/share/icons/hicolor/128x128/apps/apphost-desktop.png \
           /usr/share/icons/hicolor/32x32/apps/apphost-desktop.png; do
    check "AppImage carries $f" grep -qx "$f" "$WORK/ai-files"
  done
  check "AppImage carries .DirIcon" sh -c "unsquashfs -o '$OFFSET' -ll '$AI' 2>/dev/null | grep -q '/.DirIcon -> apphost-desktop.png'"
fi

export TMPDIR="$AI_TMP"
check "AppImage --version (mounted when FUSE is usable) answers through its apphost" sh -c "'$AI' --version | grep -q '^apphost '"
check "  and leaves nothing in TMPDIR" nothing_left
check "AppImage --version with APPIMAGE_EXTRACT_AND_RUN=1" \
  sh -c "APPIMAGE_EXTRACT_AND_RUN=1 '$AI' --version | grep -q '^apphost '"
check "  and the extracted folder is deleted after exit" nothing_left
check "AppImage --appimage-extract-and-run --version" \
  sh -c "'$AI' --appimage-extract-and-run --version | grep -q '^apphost '"
check "  and the extracted folder is deleted after exit" nothing_left
mkdir -p "$WORK/ai-extract"
check "AppImage --appimage-extract writes squashfs-root/" \
  sh -c "cd '$WORK/ai-extract' && '$AI' --appimage-extract >/dev/null &&
         [ -x squashfs-root/AppRun ] && [ -x squashfs-root/usr/bin/apphost-desktop ] &&
         grep -qx 'MimeType=application/vnd.agentapp+zip;' squashfs-root/apphost.desktop &&
         squashfs-root/usr/bin/apphost --version | grep -q '^apphost '"
check "AppImage: an unknown --appimage-* option is refused" sh -c "! '$AI' --appimage-bogus 2>/dev/null"

# --- the window ---------------------------------------------------------------------------------
start_xvfb "$WORK" "$WORK/xvfb.log" || { bad "Xvfb starts"; sed 's/^/      /' "$WORK/xvfb.log"; finish; }
export APPHOST_DATA_DIR="$WORK/ai-data"
check "the AppImage opens its window under Xvfb (mounted when FUSE is usable)" window_appears "$AI"
check "  and its mount (or folder) is gone after the window closed" nothing_left
check "the AppImage opens its window with APPIMAGE_EXTRACT_AND_RUN=1" \
  window_appears env APPIMAGE_EXTRACT_AND_RUN=1 "$AI"
check "  and the extracted folder is deleted after the window closed" nothing_left

# --- self-update ----------------------------------------------------------------------------------
TAURI="$REPO/node_modules/.bin/tauri"
UPD="$WORK/ai-update"
SRV="$UPD/srv"
mkdir -p "$UPD" "$SRV"
export TAURI_SIGNING_PRIVATE_KEY_PASSWORD=""
"$TAURI" signer generate --ci -p "" -w "$UPD/release.key" >/dev/null 2>&1
"$TAURI" signer generate --ci -p "" -w "$UPD/other.key" >/dev/null 2>&1
sign() {  # sign KEY VERSION FILE: FILE.sig (Tauri's base64 form, bound to VERSION)
  "$TAURI" signer sign -f "$1" --app-version "$2" "$3" >/dev/null 2>&1
}
PORT=$(( 20000 + RANDOM % 20000 ))
python3 -m http.server --bind 127.0.0.1 "$PORT" --directory "$SRV" >/dev/null 2>"$UPD/http.log" &
HTTP_PID=$!
# A newer AppImage: this one with bytes appended (still the same ELF and squashfs).
cp "$AI" "$UPD/new.AppImage"
printf 'apphost-update-test 0.2.0\n' >> "$UPD/new.AppImage"
publish() {  # publish CASE FEED_VERSION APPIMAGE SIGNATURE_FILE: a signed feed under /CASE/
  mkdir -p "$SRV/$1"
  cp "$3" "$SRV/$1/apphost.AppImage"
  python3 - "$SRV/$1/latest.json" "$2" "http://127.0.0.1:$PORT/$1/apphost.AppImage" "$4" <<'PY'
import json, sys
path, version, url, sig = sys.argv[1:5]
feed = {"version": version, "notes": "test", "pub_date": "2026-11-26T00:00:00Z",
        "downloadPage": "https://example.invalid/apphost",
        "platforms": {"linux-x86_64-appimage": {"url": url, "signature": open(sig).read().strip()}}}
json.dump(feed, open(path, "w"))
PY
  "$TAURI" signer sign -f "$UPD/release.key" "$SRV/$1/latest.json" >/dev/null 2>&1
}
cp "$UPD/new.AppImage" "$UPD/good.AppImage"; sign "$UPD/release.key" 0.2.0 "$UPD/good.AppImage"
publish good 0.2.0 "$UPD/good.AppImage" "$UPD/good.AppImage.sig"
cp "$UPD/good.AppImage" "$UPD/tampered.AppImage"
printf 'X' | dd of="$UPD/tampered.AppImage" bs=1 seek=$(( $(stat -c %s "$UPD/good.AppImage") - 3 )) conv=notrunc status=none
publish tampered 0.2.0 "$UPD/tampered.AppImage" "$UPD/good.AppImage.sig"
cp "$UPD/new.AppImage" "$UPD/other.AppImage"; sign "$UPD/other.key" 0.2.0 "$UPD/other.AppImage"
publish wrongkey 0.2.0 "$UPD/other.AppImage" "$UPD/other.AppImage.sig"
cp "$UPD/new.AppImage" "$UPD/replay.AppImage"; sign "$UPD/release.key" 0.0.9 "$UPD/replay.AppImage"
publish replay 0.2.0 "$UPD/replay.AppImage" "$UPD/replay.AppImage.sig"
publish older 0.0.9 "$UPD/replay.AppImage" "$UPD/replay.AppImage.sig"

# update_run CASE: runs a copy of the AppImage against /CASE/latest.json under Xvfb, presses
# Enter on its window until the AppImage is downloaded (the user's confirmation), then waits for
# the outcome; leaves the copy in $UPD/CASE.installed and the window's log in $UPD/CASE.log.
update_run() {
  local case="$1" installed="$UPD/$1.installed"
  cp "$AI" "$installed"
  APPHOST_DATA_DIR="$UPD/$case.data" APPHOST_DEBUG_UPDATE_PUBKEY="$(cat "$UPD/release.key.pub")" \
  APPHOST_UPDATE_URL="http://127.0.0.1:$PORT/$case/latest.json" \
    "$installed" >"$UPD/$case.log" 2>&1 &
  local pid=$! wid="" downloaded=1
  for _ in $(seq 300); do
    wid="$(xdotool search --name '^AppHost$' 2>/dev/null | head -1)"
    [ -n "$wid" ] && break
    sleep 0.1
  done
  # The check runs 3 s after the first paint; the prompt's button takes the focus.
  # Enter stops once the updater fetched the feed (its second fetch: the first is the notice's
  # check), so a later "Restart now" is never pressed.
  for _ in $(seq 40); do
    [ "$(grep -c "GET /$case/latest.json HTTP" "$UPD/http.log")" -ge 2 ] && break
    if [ -n "$wid" ]; then
      xdotool windowfocus "$wid" >/dev/null 2>&1
      xdotool key --clearmodifiers Return >/dev/null 2>&1
    fi
    sleep 0.5
  done
  for _ in $(seq 150); do
    grep -q "AppImage update" "$UPD/$case.log" && { downloaded=0; break; }
    sleep 0.1
  done
  kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null
  for _ in $(seq 50); do xdotool search --name '^AppHost$' >/dev/null 2>&1 || break; sleep 0.1; done
  return "$downloaded"
}
unchanged() { cmp -s "$AI" "$UPD/$1.installed" || { echo "the AppImage file changed"; return 1; }; }

update_run good
check "self-update: a newer AppImage signed with the key replaces the file" \
  sh -c "cmp '$UPD/good.AppImage' '$UPD/good.installed' && grep -q 'AppImage updated to 0.2.0' '$UPD/good.log'"
check "  the file keeps its mode (executable)" test -x "$UPD/good.installed"
check "  and the updated AppImage runs" sh -c "'$UPD/good.installed' --version | grep -q '^apphost '"
for case in tampered:update.bad_signature wrongkey:update.wrong_key replay:update.bad_signature; do
  name="${case%%:*}"; code="${case#*:}"
  update_run "$name"
  check "self-update refuses $name ($code) after the user confirmed" \
    sh -c "grep -q 'AppImage update refused: $code' '$UPD/$name.log' || { tail -5 '$UPD/$name.log'; exit 1; }"
  check "  and the $name AppImage file is unchanged" unchanged "$name"
done
update_run older
check "self-update: an older signed feed offers nothing (checked, nothing downloaded)" \
  sh -c "grep -q 'GET /older/latest.json.sig' '$UPD/http.log' && ! grep -q 'GET /older/apphost.AppImage' '$UPD/http.log'"
check "  and the file is unchanged" unchanged older

kill "$HTTP_PID" 2>/dev/null
kill "$XVFB_PID" 2>/dev/null; XVFB_PID=""
unset TMPDIR TAURI_SIGNING_PRIVATE_KEY_PASSWORD
