#!/usr/bin/env bash
# Desktop end-to-end phase: drives the real AppHost window through WebDriver under Xvfb.
#
#   APPHOST_BIN=/path/to/apphost bash scripts/e2e.sh      (or: bash scripts/e2e.sh /path/to/apphost)
#
# tauri-driver launches APPHOST_BIN (the lean `apphost` command) without arguments, which execs
# the window binary `apphost-desktop` from the same folder: the tests go through the entry point
# users type.
#
# Starts Xvfb on a free display and tauri-driver on free ports, with a fresh APPHOST_DATA_DIR:
#   phase 1  nothing installed: tests/e2e/shell.test.mjs (empty state, window title)
#   install  apphost install --yes --sideload fixtures/packages/good/hello-app
#   phase 2  tests/e2e/app-list.test.mjs (hello-app listed, version, unsigned badge)
#   install  apphost install --yes --sideload fixtures/apps/notes
#   phase 3  tests/e2e/bridge.test.mjs (the notes app mounted in its sandboxed frame: handshake,
#            storage and persistence across a restart, isolation, spoofed messages, tampering)
#   install  fixtures/apps/conformance-app, staged with bridge-sdk/dist copied into ui/sdk/
#   phase 4  tests/e2e/conformance.test.mjs (every capability and bridge rule from inside the
#            frame, zero executions for spoofs, CSP, prompts and revocation, persistence, the CLI
#            disabling/uninstalling an app while the window shows it)
# Every process it started (Xvfb, tauri-driver, WebKitWebDriver, app windows) is stopped on exit.
# Failure artifacts (page source, screenshots, logs) go to $E2E_ARTIFACTS_DIR
# (default test-results/e2e). Exit status: 0 only if every phase passed.
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$REPO"

log() { printf 'e2e: %s\n' "$*" >&2; }
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

export E2E_ARTIFACTS_DIR="${E2E_ARTIFACTS_DIR:-$REPO/test-results/e2e}"
rm -rf "$E2E_ARTIFACTS_DIR"
mkdir -p "$E2E_ARTIFACTS_DIR"
WORK="$(mktemp -d -t apphost-e2e.XXXXXX)"
export APPHOST_DATA_DIR="$WORK/data"
mkdir -p "$APPHOST_DATA_DIR"
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

# --- Xvfb on a free display -------------------------------------------------------------------
# A random display in 100-999, not the lowest free one: on a machine where several runs (or
# other people's Xvfb) start and stop displays at the same time, the low numbers are where they
# collide (a client connecting to :0 can reach a server that is just going away). A number whose
# lock file or socket (path or abstract) exists is skipped; -displayfd reports readiness.
# -noreset: without it Xvfb resets when its last client disconnects, and a window started during
# the reset (a test that restarts the app) fails with "Failed to initialize GTK".
XVFB_PID=""
for _ in $(seq 20); do
  n=$((RANDOM % 900 + 100))
  [ -e "/tmp/.X$n-lock" ] || [ -e "/tmp/.X11-unix/X$n" ] && continue
  grep -aq "/tmp/.X11-unix/X$n\$" /proc/net/unix 2>/dev/null && continue
  : >"$WORK/display"
  Xvfb ":$n" -displayfd 3 -screen 0 1280x900x24 -nolisten tcp -noreset 3>"$WORK/display" >"$E2E_ARTIFACTS_DIR/xvfb.log" 2>&1 &
  XVFB_PID=$!
  for _ in $(seq 100); do
    [ -s "$WORK/display" ] && break
    kill -0 "$XVFB_PID" 2>/dev/null || break
    sleep 0.1
  done
  [ -s "$WORK/display" ] && break
  log "Xvfb could not use :$n: $(tail -n 2 "$E2E_ARTIFACTS_DIR/xvfb.log" | tr '\n' ' ')"
  kill "$XVFB_PID" 2>/dev/null || true
  XVFB_PID=""
done
[ -n "$XVFB_PID" ] || die "Xvfb did not start on any display (see $E2E_ARTIFACTS_DIR/xvfb.log)"
export DISPLAY=":$(tr -d '[:space:]' <"$WORK/display")"
unset WAYLAND_DISPLAY
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

PASSED=0
FAILED=0
run_node_tests() {
  local name="$1" file="$2" out="$E2E_ARTIFACTS_DIR/$1.tap" status=0
  log "$name: node --test $file"
  timeout 300 node --test --test-reporter=tap --test-timeout=180000 "$file" 2>&1 | tee "$out" || status=$?
  local pass fail
  pass="$(sed -n 's/^# pass \([0-9]*\)$/\1/p' "$out" | tail -1)"
  fail="$(sed -n 's/^# fail \([0-9]*\)$/\1/p' "$out" | tail -1)"
  PASSED=$((PASSED + ${pass:-0}))
  FAILED=$((FAILED + ${fail:-0}))
  if [ "$status" -ne 0 ] && [ "${fail:-0}" -eq 0 ]; then
    FAILED=$((FAILED + 1))   # the runner itself failed (timeout, crash)
  fi
  return "$status"
}

summary() {
  if [ "$FAILED" -ne 0 ]; then
    log "artifacts in $E2E_ARTIFACTS_DIR; tauri-driver log tail:"
    tail -n 20 "$E2E_ARTIFACTS_DIR/tauri-driver.log" >&2 || true
  fi
  echo "e2e: $PASSED passed, $FAILED failed"
}

STATUS=0
run_node_tests shell tests/e2e/shell.test.mjs || STATUS=1

log "install: apphost install --yes --sideload fixtures/packages/good/hello-app"
if ! "$APPHOST_BIN" install --yes --sideload "$REPO/fixtures/packages/good/hello-app" \
    >"$E2E_ARTIFACTS_DIR/install.log" 2>&1; then
  cat "$E2E_ARTIFACTS_DIR/install.log" >&2
  log "error: installing the fixture app failed; phase 2 not run"
  FAILED=$((FAILED + 1))
  summary
  exit 1
fi
cat "$E2E_ARTIFACTS_DIR/install.log" >&2

run_node_tests app-list tests/e2e/app-list.test.mjs || STATUS=1

log "install: apphost install --yes --sideload fixtures/apps/notes"
if "$APPHOST_BIN" install --yes --sideload "$REPO/fixtures/apps/notes" \
    >"$E2E_ARTIFACTS_DIR/install-notes.log" 2>&1; then
  run_node_tests bridge tests/e2e/bridge.test.mjs || STATUS=1
else
  cat "$E2E_ARTIFACTS_DIR/install-notes.log" >&2
  log "error: installing the notes app failed; phase 3 not run"
  FAILED=$((FAILED + 1))
  STATUS=1
fi

# The conformance app imports the SDK from its own origin (its CSP allows nothing else), so the
# built SDK is copied into a staged copy of the package (the fixture itself holds no build output).
SDK_DIST="$REPO/bridge-sdk/dist"
if [ ! -f "$SDK_DIST/index.js" ]; then
  log "bridge-sdk/dist is missing: building it (npm run build -w bridge-sdk)"
  npm run --silent build -w bridge-sdk >&2 || true
fi
CONFORMANCE="$WORK/conformance-app"
cp -R "$REPO/fixtures/apps/conformance-app" "$CONFORMANCE"
mkdir -p "$CONFORMANCE/ui/sdk"
(cd "$SDK_DIST" && find . -name "*.js" -exec cp --parents {} "$CONFORMANCE/ui/sdk/" \;) 2>/dev/null || true
# Version 1.0.1 of the same package, for the test that updates the app while the window shows it.
export CONFORMANCE_UPDATE="$WORK/conformance-app-1.0.1"
cp -R "$CONFORMANCE" "$CONFORMANCE_UPDATE"
sed -i 's/^version: 1\.0\.0$/version: 1.0.1/' "$CONFORMANCE_UPDATE/APP.md"
log "install: apphost install --yes --sideload fixtures/apps/conformance-app (+ bridge-sdk/dist)"
if [ -f "$CONFORMANCE/ui/sdk/index.js" ] && "$APPHOST_BIN" install --yes --sideload "$CONFORMANCE" \
    >"$E2E_ARTIFACTS_DIR/install-conformance.log" 2>&1; then
  run_node_tests conformance tests/e2e/conformance.test.mjs || STATUS=1
else
  cat "$E2E_ARTIFACTS_DIR/install-conformance.log" >&2 2>/dev/null || log "error: bridge-sdk/dist could not be built"
  log "error: installing the conformance app failed; phase 4 not run"
  FAILED=$((FAILED + 1))
  STATUS=1
fi

summary
exit "$STATUS"
