#!/usr/bin/env bash
# Bridge benchmark in the real window (docs/benchmarks.md, "Bridge round trip and idle memory"):
#
#   APPHOST_BIN=/path/to/apphost bash scripts/bench-bridge.sh      (or: ... bench-bridge.sh /path/to/apphost)
#
# Same harness as scripts/e2e.sh (Xvfb on a free display, tauri-driver on free ports, a fresh
# APPHOST_DATA_DIR, every process it started stopped on exit). Installs fixtures/apps/notes,
# fixtures/packages/good/hello-app and a copy of notes named notes-copy, then runs
# ${BENCH_FILE:-tests/e2e/bridge.bench.mjs}, which prints Markdown tables. Knobs: BENCH_REPS (5),
# BENCH_CALLS (2000 per repetition and side), BENCH_BATCH (10), BENCH_SETTLE_MS (3000).
# Not part of scripts/test.sh: a benchmark reports ratios, it does not pass or fail on them
# (exit status non-zero only on errors or lost calls).

set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$REPO"

HARNESS_NAME=bench-bridge
# shellcheck source=scripts/lib/desktop-harness.sh
source "$REPO/scripts/lib/desktop-harness.sh"


install_pkg() {
  log "install: $1"
  "$APPHOST_BIN" install --yes --sideload "$1" >>"$E2E_ARTIFACTS_DIR/install.log" 2>&1 \
    || { cat "$E2E_ARTIFACTS_DIR/install.log" >&2; die "installing $1 failed"; }
}
install_pkg "$REPO/fixtures/apps/notes"
install_pkg "$REPO/fixtures/packages/good/hello-app"
mkdir -p "$WORK/notes-copy"
cp -r "$REPO/fixtures/apps/notes/." "$WORK/notes-copy/"
sed -i 's/^name: notes$/name: notes-copy/' "$WORK/notes-copy/APP.md"
install_pkg "$WORK/notes-copy"

log "machine: $(nproc) cpus, load $(cut -d' ' -f1-3 /proc/loadavg); app: $APPHOST_BIN"
timeout 1800 node --test --test-reporter=spec --test-timeout=1700000 ${BENCH_FILE:-tests/e2e/bridge.bench.mjs} 2>&1 \
  | tee "$E2E_ARTIFACTS_DIR/bench.log"
STATUS=${PIPESTATUS[0]}
log "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
exit "$STATUS"
