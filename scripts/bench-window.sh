#!/usr/bin/env bash
# Window start-up benchmark (docs/benchmarks.md, "Window start-up"): AppHost's window against a
# minimal Tauri window (tools/min-window: same tauri, toolchain, profile and target folder),
# built and measured in the same run.
#
#   bash scripts/bench-window.sh [RUNS]        (default 15; BENCH_PROFILE=debug for a debug build)
#
# Cases, interleaved round by round after one warm-up each, under Xvfb:
#   min-window   process start -> its static page's first paint
#   static-snapshot  the same minimal window loading a static HTML snapshot of the app center's
#                first view (same DOM and CSS, no script; captured from apphost-desktop once
#                before the rounds): what the WebView needs to paint that page at all
#   shell        apphost-desktop: process start -> the host UI's first render (its script ran,
#                the list still loading)
#   center       apphost-desktop: process start -> the app center's first paint (the app list,
#                two apps installed, on screen)
#   deep-link    apphost-desktop with APPHOST_OPEN_APP=notes (what `apphost open notes` execs):
#                process start -> the notes frame's first bridge message (its script ran) + 2
#                animation frames
# "First paint" is two requestAnimationFrame callbacks after the event, reported by the page
# through a command (APPHOST_BENCH_PAINT turns apphost-desktop's probe on, src-tauri/src/desktop/
# bench.rs); the script subtracts the wall clock it took right before spawning. Idle memory:
# RSS and PSS summed over the window and its WebKit processes, 6 s after the last round's paint
# (after the update check the UI starts 3 s after its first paint).
# Prints min / median / max per case, the ratios of the medians to the minimal window, the
# center's ratios to the minimal window and to the static snapshot (of the medians, and the
# per-round ratios' min / median / max), and the load average over the rounds.
# BENCH_TRACE=1 also prints, per apphost case, the median time from the spawn to each start-up
# milestone the window traces (APPHOST_TRACE_START, src-tauri/src/desktop/start_trace.rs).
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
RUNS="${1:-15}"
PROFILE="${BENCH_PROFILE:-release}"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/apphost-target}"
flag=()
[ "$PROFILE" = release ] && flag=(--release)

cd "$REPO"
[ -f ui-host/dist/index.html ] || npm run build >/dev/null
# BENCH_NO_BUILD=1 measures the binaries already in the target folder (a release build with the
# update key compiled in is not rebuilt without it).
if [ -z "${BENCH_NO_BUILD:-}" ]; then
  cargo build --locked "${flag[@]}" -p apphost -p apphost-desktop
  cargo build --locked "${flag[@]}" --manifest-path tools/min-window/Cargo.toml
fi

WORK="$(mktemp -d -t apphost-bench-window.XXXXXX)"
XVFB_PID=""
cleanup() { [ -n "$XVFB_PID" ] && kill "$XVFB_PID" 2>/dev/null; rm -rf "$WORK"; }
trap cleanup EXIT
# Copies: the shared target's binaries may be rebuilt by another build meanwhile.
mkdir -p "$WORK/bin"
cp "$CARGO_TARGET_DIR/$PROFILE/apphost" "$CARGO_TARGET_DIR/$PROFILE/apphost-desktop" \
   "$CARGO_TARGET_DIR/$PROFILE/min-window" "$WORK/bin/"

export APPHOST_DATA_DIR="$WORK/data"
for app in fixtures/packages/good/hello-app fixtures/apps/notes; do
  "$WORK/bin/apphost" install --yes --sideload "$REPO/$app" >/dev/null
done

# shellcheck source=lib/xvfb.sh
source "$REPO/scripts/lib/xvfb.sh"
start_xvfb "$WORK" "$WORK/xvfb.log" || true
[ -n "$XVFB_PID" ] || { echo "bench-window: no Xvfb display" >&2; exit 1; }

echo "machine: $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg); profile: $PROFILE; runs: $RUNS"
echo "binaries: apphost-desktop $(( $(stat -c %s "$WORK/bin/apphost-desktop") / 1024 )) KiB, min-window $(( $(stat -c %s "$WORK/bin/min-window") / 1024 )) KiB"
config=$(python3 - "$WORK/bin" "$RUNS" <<'PY'
import json, os, sys
b, runs = sys.argv[1], int(sys.argv[2])
probe = {"APPHOST_BENCH_PAINT": "1"}
if os.environ.get("BENCH_TRACE"):
    probe["APPHOST_TRACE_START"] = "1"  # start-up milestones (desktop/start_trace.rs)
trace = {k: v for k, v in probe.items() if k == "APPHOST_TRACE_START"}
snap = os.path.join(os.path.dirname(b), "snapshot")
print(json.dumps({"runs": runs, "idle": 6, "snapshot": {
    "case": {"name": "capture", "event": "center", "command": [f"{b}/apphost-desktop"],
             "env": {"APPHOST_BENCH_PAINT": "1"}},
    "out": snap, "css": "ui-host/dist/styles.css", "probe": "tools/min-window/dist/paint.js"},
    "cases": [
    {"name": "min-window", "event": "center", "command": [f"{b}/min-window"], "env": trace},
    {"name": "static-snapshot", "event": "center", "command": [f"{b}/min-window"],
     "env": dict(trace, MIN_WINDOW_PAGE=snap)},
    {"name": "shell", "event": "shell", "command": [f"{b}/apphost-desktop"], "env": probe},
    {"name": "center", "event": "center", "command": [f"{b}/apphost-desktop"], "env": probe},
    {"name": "deep-link", "event": "app", "command": [f"{b}/apphost-desktop"],
     "env": dict(probe, APPHOST_OPEN_APP="notes")},
]}))
PY
)
python3 "$REPO/scripts/lib/bench_window.py" "$config" > "$WORK/result.json"
python3 - "$WORK/result.json" <<'PY'
import json, statistics, sys
r = json.load(open(sys.argv[1]))
load = r.pop("_load")
print(f"load average (1 min) over the rounds: {min(load):.2f}-{max(load):.2f}, median {statistics.median(load):.2f}")
base = statistics.median(r["min-window"]["ms"])
for name, c in r.items():
    t = sorted(c["ms"])
    med = statistics.median(t)
    mem = f'; idle RSS {c["rss_kib"]/1024:.0f} MiB, PSS {c["pss_kib"]/1024:.0f} MiB ({c["processes"]} processes)' if c.get("rss_kib") else ""
    print(f"  {name:15s} min {t[0]:7.1f}  median {med:7.1f}  max {t[-1]:7.1f} ms  ({len(t)} runs; "
          f"median / min-window {med/base:.2f}x){mem}")
print("ratios (of the medians; per round: min / median / max of that round's ratio):")
pairs = [(n, ref) for n in ("shell", "center", "deep-link") for ref in ("min-window", "static-snapshot")]
for name, ref in pairs + [("static-snapshot", "min-window")]:
    a, b = r[name]["ms"], r[ref]["ms"]
    paired = sorted(x / y for x, y in zip(a, b))
    print(f"  {name:15s} / {ref:15s} {statistics.median(a) / statistics.median(b):.2f}x  "
          f"(per round {paired[0]:.2f} / {statistics.median(paired):.2f} / {paired[-1]:.2f}; "
          f"of the minima {min(a) / min(b):.2f}, of the maxima {max(a) / max(b):.2f})")
for name, c in r.items():
    if c.get("trace"):
        marks = sorted((statistics.median(v), k, len(v)) for k, v in c["trace"].items())
        print(f"  {name} milestones (median ms since the spawn; runs that reached it):")
        for med, what, n in marks:
            print(f"    {med:7.1f}  {what}  ({n})")
print("raw: " + json.dumps({k: [round(x, 1) for x in v["ms"]] for k, v in r.items()}))
PY
