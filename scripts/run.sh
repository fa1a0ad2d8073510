#!/usr/bin/env bash
# Builds and runs AppHost (release): the desktop window, or the CLI when given arguments.
#
#   bash scripts/run.sh              open the window
#   bash scripts/run.sh list         any CLI command (see: bash scripts/run.sh --help)
#
# Runs scripts/setup.sh first (installs only what is missing), builds the host UI and both
# binaries (`apphost`, the command line, and `apphost-desktop`, the window it execs when run
# without arguments), then starts `apphost`. Builds go to $CARGO_TARGET_DIR (default ~/.cache/apphost-target).
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$REPO"

bash scripts/setup.sh
echo "run: npm run build"
npm run build --silent
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/apphost-target}"
echo "run: cargo build --release (target dir $CARGO_TARGET_DIR)"
cargo build --release
BIN="$CARGO_TARGET_DIR/release/apphost"

if [ "$#" -eq 0 ] && [ -z "${DISPLAY:-}" ] && [ -z "${WAYLAND_DISPLAY:-}" ]; then
  cat >&2 <<HINT
run: there is no display here (DISPLAY and WAYLAND_DISPLAY are unset), so the window cannot open.
run: use the command line instead, for example:
  $BIN --help
  $BIN list
  $BIN inspect fixtures/packages/good/hello-app
  (or: bash scripts/run.sh <command> ...)
HINT
fi
echo "run: $BIN $*"
exec "$BIN" "$@"
