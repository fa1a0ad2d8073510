# Shared harness of the desktop scripts (scripts/e2e.sh, scripts/bench-bridge.sh): sourced, not
# run. The caller sets REPO (and cd's there) and HARNESS_NAME (log prefix, default artifacts dir
# test-results/$HARNESS_NAME, temp dir name). It checks APPHOST_BIN (or $1) and the tools, makes
# a fresh APPHOST_DATA_DIR under $WORK, starts Xvfb on a free display and tauri-driver on free
# ports (exporting DISPLAY and WEBDRIVER_URL), and installs a cleanup trap that stops every
# process carrying this run's marker.
# shellcheck shell=bash
log() { printf '%s: %s\n' "$HARNESS_NAME" "$*" >&2; }
die() { log "error: $*"; exit 1; }

APPHOST_BIN="${APPHOST_BIN:-${1:-}}"
if [ -z "$APPHOST_BIN" ]; then
  APPHOST_BIN="${CARGO_TARGET_DIR:-$REPO/target}/debug/apphost"
  log "APPHOST_BIN not set, using $APPHOST_BIN"
fi
[ -x "$APPHOST_BIN" ] || die "APPHOST_BIN=$APPHOST_BIN is not an executable (build it with cargo build)"
APPHOST_BIN="$(cd "$(dirname "$APPHOST_BIN")" && pwd)/$(basename "$APPHOST_BIN")"
export APPHOST_BIN
[ -x "$(dirname "$APPHOST_BIN")/apphost-desktop" ] \
  || die "$(dirname "$APPHOST_BIN")/apphost-desktop is missing: apphost opens the window by running it (build both with cargo build)"

TAURI_DRIVER="$(command -v tauri-driver || true)"
[ -n "$TAURI_DRIVER" ] || { [ -x "$HOME/.cargo/bin/tauri-driver" ] && TAURI_DRIVER="$HOME/.cargo/bin/tauri-driver"; }
[ -n "$TAURI_DRIVER" ] || die "tauri-driver not found: run scripts/setup.sh"
for tool in Xvfb WebKitWebDriver node; do
  command -v "$tool" >/dev/null || die "$tool not found: run scripts/setup.sh"
done

export E2E_ARTIFACTS_DIR="${E2E_ARTIFACTS_DIR:-$REPO/test-results/$HARNESS_NAME}"
rm -rf "$E2E_ARTIFACTS_DIR"
mkdir -p "$E2E_ARTIFACTS_DIR"
WORK="$(mktemp -d -t "apphost-$HARNESS_NAME.XXXXXX")"
export APPHOST_DATA_DIR="$WORK/data"
mkdir -p "$APPHOST_DATA_DIR"
# host:download writes here, never into the user's real Downloads folder.
export XDG_DOWNLOAD_DIR="$WORK/downloads"
# Every process started below inherits this marker, so cleanup can find exactly our processes
# (the app windows are grandchildren of tauri-driver and survive it).
export APPHOST_E2E_RUN="e2e-$$-$RANDOM$RANDOM"

XVFB_PID=""
DRIVER_PID=""

# Collects into MARKED the live processes carrying our marker, except this shell and Xvfb.
# (No command substitution or pipeline here: those would be marked processes themselves.)
scan_marked() {
  MARKED=()
  local environ pid
  for environ in /proc/[0-9]*/environ; do
    pid="${environ#/proc/}"; pid="${pid%/environ}"
    { [ "$pid" = "$$" ] || [ "$pid" = "${XVFB_PID:-}" ]; } && continue
    if grep -qzxF "APPHOST_E2E_RUN=$APPHOST_E2E_RUN" "$environ" 2>/dev/null; then
      MARKED+=("$pid")
    fi
  done
}

cleanup() {
  local status=$?
  trap - EXIT INT TERM
  [ -n "$DRIVER_PID" ] && kill "$DRIVER_PID" 2>/dev/null || true
  scan_marked
  if [ "${#MARKED[@]}" -gt 0 ]; then
    log "stopping leftover processes:" $(ps -o pid=,comm= -p "$(IFS=,; echo "${MARKED[*]}")" 2>/dev/null)
    kill "${MARKED[@]}" 2>/dev/null || true
    sleep 1
    scan_marked
    [ "${#MARKED[@]}" -eq 0 ] || kill -9 "${MARKED[@]}" 2>/dev/null || true
  fi
  [ -n "$XVFB_PID" ] && kill "$XVFB_PID" 2>/dev/null || true
  wait 2>/dev/null || true
  if [ "${E2E_KEEP_DATA:-0}" = 1 ]; then
    log "kept data directory $APPHOST_DATA_DIR"
  else
    rm -rf "$WORK"
  fi
  exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

free_port() {
  node -e 'const s=require("net").createServer();s.listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})'
}

# --- Xvfb on a free display (scripts/lib/xvfb.sh) ----------------------------------------------
# shellcheck source=xvfb.sh
source "$(dirname "${BASH_SOURCE[0]}")/xvfb.sh"
start_xvfb "$WORK" "$E2E_ARTIFACTS_DIR/xvfb.log" \
  || die "Xvfb did not start on any display (see $E2E_ARTIFACTS_DIR/xvfb.log)"
log "Xvfb on DISPLAY=$DISPLAY (pid $XVFB_PID)"

# --- tauri-driver (it starts WebKitWebDriver on the native port) ----------------------------
DRIVER_PORT="$(free_port)"
NATIVE_PORT="$(free_port)"
while [ "$NATIVE_PORT" = "$DRIVER_PORT" ]; do NATIVE_PORT="$(free_port)"; done
"$TAURI_DRIVER" --port "$DRIVER_PORT" --native-port "$NATIVE_PORT" >"$E2E_ARTIFACTS_DIR/tauri-driver.log" 2>&1 &
DRIVER_PID=$!
export WEBDRIVER_URL="http://127.0.0.1:$DRIVER_PORT"
for _ in $(seq 100); do
  if node -e 'fetch(process.argv[1]+"/status",{signal:AbortSignal.timeout(1000)}).then(r=>process.exit(r.ok?0:1),()=>process.exit(1))' "$WEBDRIVER_URL"; then
    break
  fi
  kill -0 "$DRIVER_PID" 2>/dev/null || die "tauri-driver exited: $(cat "$E2E_ARTIFACTS_DIR/tauri-driver.log")"
  sleep 0.1
done
node -e 'fetch(process.argv[1]+"/status").then(r=>process.exit(r.ok?0:1),()=>process.exit(1))' "$WEBDRIVER_URL" \
  || die "tauri-driver did not answer on $WEBDRIVER_URL: $(cat "$E2E_ARTIFACTS_DIR/tauri-driver.log")"
log "tauri-driver on $WEBDRIVER_URL (pid $DRIVER_PID, WebKitWebDriver on port $NATIVE_PORT)"
log "app: $APPHOST_BIN   data: $APPHOST_DATA_DIR"
