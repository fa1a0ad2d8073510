#!/usr/bin/env bash
# Start-up benchmark of the lean `apphost` command (docs/benchmarks.md, "Command start-up").
#
#   bash scripts/bench-startup.sh [APPHOST_BIN] [AGENTAPP_REF_DIR]
#
# APPHOST_BIN        the binary to measure (default $CARGO_TARGET_DIR/release/apphost; build it
#                    with `cargo build --release -p apphost`).
# AGENTAPP_REF_DIR   a checkout of the standard's repository (limecloud/agentapp, agentapp-ref
#                    0.10.0): bin/agentapp-ref.mjs is the baseline and
#                    docs/examples/content-factory-app the package. Without it only the
#                    `--version` figures are taken.
#
# Measures, in one run: `apphost --version` (hyperfine: min/median/max wall time; /usr/bin/time:
# peak RSS), then `apphost inspect --json` against `node agentapp-ref.mjs project` on the same
# folder, interleaved by hyperfine, with the ratio of the medians. Thread counts come from strace
# (clone calls). Wall times suffer on a loaded machine; the cpu ratio less so. Needs hyperfine, /usr/bin/time (GNU time), strace and node.
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BIN="${1:-${APPHOST_BIN:-${CARGO_TARGET_DIR:-$HOME/.cache/apphost-target}/release/apphost}}"
REF="${2:-${AGENTAPP_REF_DIR:-}}"
RUNS="${BENCH_RUNS:-200}"
[ -x "$BIN" ] || { echo "bench: $BIN is not an executable (cargo build --release -p apphost)" >&2; exit 1; }
for tool in hyperfine /usr/bin/time strace; do
  command -v "$tool" >/dev/null || { echo "bench: $tool not found (apt-get install hyperfine time strace)" >&2; exit 1; }
done

WORK="$(mktemp -d -t apphost-bench.XXXXXX)"
trap 'rm -rf "$WORK"' EXIT
export APPHOST_DATA_DIR="$WORK/data"
# A data directory with a store in it (host.db), as after any install: inspect reads the trusted
# keys and limits from it.
"$BIN" list >/dev/null

median_ms() { python3 -c 'import json,sys; r=json.load(open(sys.argv[1]))["results"][int(sys.argv[2])]; print("%.2f" % (r["median"]*1000))' "$@"; }
summary() {
  python3 - "$1" <<'PY'
import json, sys
for r in json.load(open(sys.argv[1]))["results"]:
    t = sorted(r["times"])
    print(f'  {r["command"]}: min {t[0]*1000:.2f} ms, median {r["median"]*1000:.2f} ms, '
          f'max {t[-1]*1000:.2f} ms, mean {r["mean"]*1000:.2f} ± {r["stddev"]*1000:.2f} ms; '
          f'cpu (user+sys, mean) {(r["user"]+r["system"])*1000:.2f} ms ({len(t)} runs)')
PY
}
peak_rss() {  # peak RSS in KiB, the highest of 20 runs
  local max=0 kb
  for _ in $(seq 20); do
    /usr/bin/time -f '%M' -o "$WORK/rss" "$@" >/dev/null 2>&1 || true
    kb="$(tail -1 "$WORK/rss")"
    [ "$kb" -gt "$max" ] && max="$kb"
  done
  echo "$max"
}
threads() {  # threads the process tree had: 1 + clone calls that made a thread
  strace -f -qq -e trace=clone,clone3 -o "$WORK/strace" "$@" >/dev/null 2>&1 || true
  echo $(( 1 + $(grep -c 'CLONE_THREAD' "$WORK/strace" || true) ))
}

echo "machine: $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg); binary: $BIN"
echo "ldd: $(ldd "$BIN" | wc -l) shared objects"

echo "== apphost --version"
hyperfine -N --warmup 20 --runs "$RUNS" --export-json "$WORK/version.json" "$BIN --version" >/dev/null
summary "$WORK/version.json"
echo "  peak RSS: $(peak_rss "$BIN" --version) KiB; threads: $(threads "$BIN" --version)"

[ -n "$REF" ] || { echo "(no AGENTAPP_REF_DIR: inspect comparison skipped)"; exit 0; }
PKG="$REF/docs/examples/content-factory-app"
CLI="$REF/bin/agentapp-ref.mjs"
[ -d "$PKG" ] && [ -f "$CLI" ] || { echo "bench: $PKG or $CLI missing" >&2; exit 1; }
echo "== inspect content-factory-app ($(find "$PKG" -type f | wc -l) files): apphost vs agentapp-ref $(node "$CLI" 2>&1 | head -1 | awk '{print $2}') (node $(node --version))"
hyperfine -N -i --warmup 5 --runs "${BENCH_INSPECT_RUNS:-50}" --export-json "$WORK/inspect.json" \
  "$BIN inspect --json $PKG" "node $CLI project $PKG" >/dev/null
summary "$WORK/inspect.json"
a="$(median_ms "$WORK/inspect.json" 0)"; n="$(median_ms "$WORK/inspect.json" 1)"
echo "  ratio of medians (agentapp-ref project / apphost inspect): $(python3 -c "print(f'{$n/$a:.1f}x')")"
python3 - "$WORK/inspect.json" <<'PY'
import json, sys
a, n = json.load(open(sys.argv[1]))["results"]
cpu = lambda r: r["user"] + r["system"]
print(f"  ratio of mean cpu time: {cpu(n)/cpu(a):.1f}x")
PY
echo "  peak RSS: apphost $(peak_rss "$BIN" inspect --json "$PKG") KiB, agentapp-ref $(peak_rss node "$CLI" project "$PKG") KiB"
echo "  threads: apphost $(threads "$BIN" inspect --json "$PKG"), agentapp-ref $(threads node "$CLI" project "$PKG")"
