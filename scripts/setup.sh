#!/usr/bin/env bash
# Installs what AppHost needs to build, run and test the desktop app on Debian 12. Idempotent:
# each step checks first and only acts when something is missing. Safe as root with no stdin.
#
#   bash scripts/setup.sh
#
# 1. Debian packages (WebKitGTK 4.1 build deps, Xvfb + WebKitWebDriver for the e2e tests,
#    ImageMagick for screenshots), installed only if `dpkg -s` says they are missing.
# 2. Node.js packages: `npm ci` when node_modules is missing or package-lock.json changed
#    (@playwright/test never downloads a browser: the tests use Debian's chromium).
# 3. tauri-driver (WebDriver for Tauri), with `cargo install`, if it is not installed.
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive
export PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
say() { printf 'setup: %s\n' "$*"; }
die() { printf 'setup: error: %s\n' "$*" >&2; exit 1; }

# shared/docs/tauri-testing.md §1 and §8 (dbus-x11 and xdotool are not needed yet).
APT_PACKAGES=(
  libwebkit2gtk-4.1-dev build-essential curl wget file libxdo-dev libssl-dev
  libayatana-appindicator3-dev librsvg2-dev
  xvfb xauth x11-utils webkit2gtk-driver fonts-dejavu-core imagemagick chromium
  dbus
  # A real Secret Service for host-core's tests/secrets_keyring_service.rs (OS keyring path).
  gnome-keyring
  # Namespaces + mounts of the backend-service sandbox (crates/service-sandbox, docs/services.md).
  bubblewrap
  # The installers' test (scripts/test-packages.sh): rpm inspects and scratch-installs the .rpm,
  # xdotool finds the installed window, desktop-file-utils validates the desktop entry,
  # shared-mime-info registers the *.agentapp type, zip makes a package file.
  rpm xdotool desktop-file-utils shared-mime-info zip
  # The AppImage (scripts/lib/build_appimage.sh, docs/shipping.md): mksquashfs packs it;
  # squashfuse + fuse3 (fusermount3) let its runtime mount it (else it extracts), unsquashfs
  # lists it in the test.
  squashfs-tools squashfuse fuse3
)

as_root() {
  if [ "$(id -u)" -eq 0 ]; then
    "$@"
  elif command -v sudo >/dev/null; then
    sudo -n "$@" || die "needs root for: $* (sudo -n failed; run this script as root)"
  else
    die "needs root for: $*"
  fi
}

# --- 1. Debian packages ------------------------------------------------------------------------
missing=()
for package in "${APT_PACKAGES[@]}"; do
  dpkg -s "$package" >/dev/null 2>&1 || missing+=("$package")
done
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  missing+=(nodejs npm)
fi
if [ "${#missing[@]}" -eq 0 ]; then
  say "apt: all ${#APT_PACKAGES[@]} packages are installed"
else
  command -v apt-get >/dev/null || die "missing packages (${missing[*]}) and no apt-get: install them by hand"
  say "apt: installing ${missing[*]}"
  as_root apt-get update -qq
  as_root apt-get install -y -qq --no-install-recommends "${missing[@]}" </dev/null
fi

# --- 2. Node.js packages ---------------------------------------------------------------------
command -v node >/dev/null || die "node not found"
node_major="$(node -p 'process.versions.node.split(".")[0]')"
[ "$node_major" -ge 18 ] || die "Node.js >= 18 is needed (found $(node --version))"
stamp="$REPO/node_modules/.apphost-lock.sha256"
lock_hash="$(sha256sum "$REPO/package-lock.json" | cut -d' ' -f1)"
if [ -d "$REPO/node_modules" ] && [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$lock_hash" ]; then
  say "npm: node_modules matches package-lock.json"
else
  say "npm: npm ci (node $(node --version), npm $(npm --version 2>/dev/null))"
  (cd "$REPO" && npm ci --no-audit --no-fund)
  echo "$lock_hash" >"$stamp"
fi

# --- 3. tauri-driver ---------------------------------------------------------------------------
if command -v tauri-driver >/dev/null || [ -x "$HOME/.cargo/bin/tauri-driver" ]; then
  say "tauri-driver: installed"
else
  command -v cargo >/dev/null || die "cargo not found: install Rust (>= 1.90) with rustup first"
  say "tauri-driver: cargo install tauri-driver --locked --version ^2"
  cargo install tauri-driver --locked --version '^2'
fi

command -v cargo >/dev/null || say "warning: cargo not found: Rust >= 1.90 is needed to build AppHost"
say "done"
