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
#   phase 1b tests/e2e/center.test.mjs (Add app by path: review sheet before anything is stored,
#            consent, open with handshake, uninstall from the danger zone; leaves no app)
#   install  apphost install --yes --sideload fixtures/packages/good/hello-app
#   phase 2  tests/e2e/app-list.test.mjs (hello-app listed, version, unsigned badge)
#   install  apphost install --yes --sideload fixtures/apps/notes
#   phase 3  tests/e2e/bridge.test.mjs (the notes app mounted in its sandboxed frame: handshake,
#            storage and persistence across a restart, isolation, spoofed messages, tampering)
#   install  fixtures/apps/conformance-app, staged with bridge-sdk/dist copied into ui/sdk/
#   phase 1c tests/e2e/open-package.test.mjs (`apphost open <file>.agentapp` starts on the
#            review sheet; nothing stored; answered once)
#   phase 1d tests/e2e/catalog.test.mjs (the Browse page over a local HTTPS catalog: install
#            through the review sheet, update with the permission diff, roll back; leaves no app)
#   phase 4  tests/e2e/conformance.test.mjs (every capability and bridge rule from inside the
#            frame, zero executions for spoofs, CSP, prompts and revocation, persistence, the CLI
#            disabling/uninstalling an app while the window shows it)
#   install  fixtures/apps/review-queue (signed, fixture key trusted) and a copy named review-peer
#   phase 5  tests/e2e/tasks.test.mjs (lime.agent tasks from the review-queue frame against a
#            stand-in OpenAI-compatible provider the test starts: streaming, approvals, cancel,
#            retry, structured output, event schema, cross-app isolation)
#   phase 6  tests/e2e/workflow.test.mjs (workflow runs started from the sample's frame, answered
#            on the Tasks page: edit + approve, reject, the app's own answer refused, an input
#            refused in the host's form, a wait that survives closing and reopening the window)
#   phase 6b tests/e2e/knowledge-tools.test.mjs (research-desk: lime.knowledge.search with
#            citations; a task with knowledge + MCP tool bindings: knowledge_search, echo, a
#            destructive tool approved in the host's prompt, the frame's approval refused,
#            citations in the events and the evidence)
#   install  fixtures/apps/standard-conformance
#   phase 7  tests/e2e/standard-conformance.test.mjs (the standard's SDK call shapes from the
#            frame, lime.ui deep link, command palette, artifact viewer)
# E2E_ONLY=workflow (comma-separated phase names) runs only those phases.
# Every process it started (Xvfb, tauri-driver, WebKitWebDriver, app windows) is stopped on exit.
# Failure artifacts (page source, screenshots, logs) go to $E2E_ARTIFACTS_DIR
# (default test-results/e2e). Exit status: 0 only if every phase passed.
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$REPO"

HARNESS_NAME=e2e
# Phase 1d's local HTTPS catalog: the window must trust its throwaway CA from the start
# (tauri-driver starts the window with this environment); catalog.test.mjs writes the CA there.
APPHOST_E2E_CATALOG_CERTS="$(mktemp -d -t apphost-e2e-catalog.XXXXXX)"
export APPHOST_E2E_CATALOG_CERTS
export APPHOST_CATALOG_CA_FILE="$APPHOST_E2E_CATALOG_CERTS/ca.pem"
# shellcheck source=scripts/lib/desktop-harness.sh
source "$REPO/scripts/lib/desktop-harness.sh"

PASSED=0
FAILED=0
# E2E_ONLY=name[,name…] runs only those phases (the names below: shell, center, …, workflow);
# the installs the others need still run.
wanted() { [ -z "${E2E_ONLY:-}" ] || [[ ",$E2E_ONLY," == *",$1,"* ]]; }
run_node_tests() {
  local name="$1" file="$2" out="$E2E_ARTIFACTS_DIR/$1.tap" status=0
  if ! wanted "$name"; then
    log "$name: skipped (E2E_ONLY=$E2E_ONLY)"
    return 0
  fi
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
run_node_tests center tests/e2e/center.test.mjs || STATUS=1
run_node_tests open-package tests/e2e/open-package.test.mjs || STATUS=1
run_node_tests catalog tests/e2e/catalog.test.mjs || STATUS=1
rm -rf "$APPHOST_E2E_CATALOG_CERTS"

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
# A second app (the same page under another name) for the cross-app isolation test.
PEER="$WORK/conformance-peer"
cp -R "$CONFORMANCE" "$PEER"
sed -i 's/^name: conformance-app$/name: conformance-peer/' "$PEER/APP.md"
log "install: apphost install --yes --sideload fixtures/apps/conformance-app (+ bridge-sdk/dist), and a copy named conformance-peer"
if [ -f "$CONFORMANCE/ui/sdk/index.js" ] && "$APPHOST_BIN" install --yes --sideload "$CONFORMANCE" \
    >"$E2E_ARTIFACTS_DIR/install-conformance.log" 2>&1 \
  && "$APPHOST_BIN" install --yes --sideload "$PEER" >>"$E2E_ARTIFACTS_DIR/install-conformance.log" 2>&1; then
  run_node_tests conformance tests/e2e/conformance.test.mjs || STATUS=1
else
  cat "$E2E_ARTIFACTS_DIR/install-conformance.log" >&2 2>/dev/null || log "error: bridge-sdk/dist could not be built"
  log "error: installing the conformance app failed; phase 4 not run"
  FAILED=$((FAILED + 1))
  STATUS=1
fi

# The sample app that uses lime.agent, signed with the TEST-ONLY fixture publisher key (trusted
# here), and a copy named review-peer (sideloaded, unsigned and unlocked: the rename changes APP.md) for the
# cross-app task isolation test. tasks.test.mjs sets the model to its own stand-in provider.
REVIEW_PEER="$WORK/review-peer"
cp -R "$REPO/fixtures/apps/review-queue" "$REVIEW_PEER"
rm -f "$REVIEW_PEER/app.signature.yaml" "$REVIEW_PEER/app.lock.json"
sed -i 's/^name: review-queue$/name: review-peer/' "$REVIEW_PEER/APP.md"
log "install: apphost install --yes fixtures/apps/review-queue (fixture key trusted), and a copy named review-peer"
if "$APPHOST_BIN" trust add "$REPO/fixtures/keys/fixture-publisher.pub.json" \
    >"$E2E_ARTIFACTS_DIR/install-review-queue.log" 2>&1 \
  && "$APPHOST_BIN" install --yes "$REPO/fixtures/apps/review-queue" >>"$E2E_ARTIFACTS_DIR/install-review-queue.log" 2>&1 \
  && "$APPHOST_BIN" install --yes --sideload "$REVIEW_PEER" >>"$E2E_ARTIFACTS_DIR/install-review-queue.log" 2>&1; then
  run_node_tests tasks tests/e2e/tasks.test.mjs || STATUS=1
else
  cat "$E2E_ARTIFACTS_DIR/install-review-queue.log" >&2
  log "error: installing review-queue failed; phase 5 not run"
  FAILED=$((FAILED + 1))
  STATUS=1
fi

# The workflow sample (`apphost new --template workflow`) and a copy with a user input and a
# timer: workflow.test.mjs makes and installs both itself and sets its own stand-in model.
run_node_tests workflow tests/e2e/workflow.test.mjs || STATUS=1

# Knowledge + MCP tools + host approval + citations: knowledge-tools.test.mjs installs
# fixtures/apps/research-desk, binds its knowledge folder, adds and grants the MCP test server's
# tools and sets its own stand-in model, all before its window starts.
run_node_tests knowledge-tools tests/e2e/knowledge-tools.test.mjs || STATUS=1

# The app written only from the standard's Capability SDK page (its SDK vendored in ui/sdk/).
log "install: apphost install --yes --sideload fixtures/apps/standard-conformance"
if "$APPHOST_BIN" install --yes --sideload "$REPO/fixtures/apps/standard-conformance" \
    >"$E2E_ARTIFACTS_DIR/install-standard-conformance.log" 2>&1; then
  run_node_tests standard-conformance tests/e2e/standard-conformance.test.mjs || STATUS=1
else
  cat "$E2E_ARTIFACTS_DIR/install-standard-conformance.log" >&2
  log "error: installing standard-conformance failed; its phase not run"
  FAILED=$((FAILED + 1))
  STATUS=1
fi

summary
exit "$STATUS"
