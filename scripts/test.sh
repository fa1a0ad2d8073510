#!/usr/bin/env bash
# The full test suite (the README's test command; CI runs it through .ci/run).
# Installs what it needs first (scripts/setup.sh), then: formatting, lints, TypeScript checks,
# every Rust test (unit, contract, adversarial, crash-safety, CLI), the desktop end-to-end
# test that drives the real app through WebDriver under Xvfb, and the browser tests of
# `apphost serve` (Playwright in Debian's /usr/bin/chromium, tests/browser/).
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/apphost-target}"
export CARGO_TERM_COLOR="${CARGO_TERM_COLOR:-never}"
export RUST_BACKTRACE=1

step() { printf '\n==> %s\n' "$*"; }
started=$(date +%s)

step "setup (system packages, npm dependencies, tauri-driver)"
bash scripts/setup.sh

step "host UI: build and typecheck (TypeScript strict)"
npm run --silent build
npm run --silent typecheck
npm test --silent

step "cargo fmt --check"
cargo fmt --all --check

step "fuzz/ manifest parses (its own workspace, built with nightly + cargo-fuzz, see fuzz/README.md)"
cargo metadata --no-deps --format-version 1 --manifest-path fuzz/Cargo.toml > /dev/null

step "cargo clippy --all-targets -D warnings"
cargo clippy --workspace --all-targets --locked -- -D warnings

step "cargo test (unit, contract, adversarial, crash-safety, CLI)"
# The root package's dev-dependency turns on host-core's `failpoints` feature for test builds
# only, so tests/crash_safety.rs always runs here; the builds below never have crash points.
cargo test --workspace --locked

step "desktop end-to-end (WebDriver + Xvfb)"
# Both binaries: tauri-driver launches `apphost`, which execs `apphost-desktop` beside it.
cargo build --locked --bin apphost --bin apphost-desktop
# The build users get ignores APPHOST_CRASH_AT (a build with crash points would be killed here).
crash_check=$(mktemp -d)
APPHOST_CRASH_AT=1 "$CARGO_TARGET_DIR/debug/apphost" --json --data-dir "$crash_check/data" \
  install fixtures/packages/good/hello-app --yes --sideload > /dev/null
rm -rf "$crash_check"
APPHOST_BIN="$CARGO_TARGET_DIR/debug/apphost" bash scripts/e2e.sh

step "installers: .deb and .rpm built (debug), installed, window started, removed"
# Installs into /usr/bin; skipped where that is not ours to do (not root, or an apphost there).
if [ "$(id -u)" -eq 0 ] && [ ! -e /usr/bin/apphost ]; then
  bash scripts/test-packages.sh
else
  echo "skipped: needs root and no /usr/bin/apphost"
fi

step "browser tests: apphost serve in Debian's Chromium (Playwright)"
APPHOST_BIN="$CARGO_TARGET_DIR/debug/apphost" PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 \
  npx --no-install playwright test -c tests/browser

printf '\nAll tests passed in %ss.\n' "$(( $(date +%s) - started ))"
