#!/usr/bin/env bash
# Start-up benchmark of `apphost serve` (docs/benchmarks.md, "`apphost serve` start-up").
#
#   bash scripts/bench-serve.sh [APPHOST_BIN] [RUNS]
#
# Measures, interleaved in one run, the wall time from spawning the process to reading the first
# line of its stdout for `apphost --json serve` (the `{"url","port","pid"}` line: the server is
# listening) and for `apphost --version` (the baseline: process start, clap, one line), each RUNS
# times (default 50, after 3 warm-up runs of each); prints min/median/max and the ratio of the
# medians. Every server is stopped with SIGTERM and must exit 0. The data directory holds an
# initialised store (`host.db`), as after any install. Needs python3.
set -euo pipefail
BIN="${1:-${APPHOST_BIN:-${CARGO_TARGET_DIR:-$HOME/.cache/apphost-target}/release/apphost}}"
RUNS="${2:-${BENCH_RUNS:-50}}"
[ -x "$BIN" ] || { echo "bench: $BIN is not an executable (cargo build --release -p apphost)" >&2; exit 1; }
WORK="$(mktemp -d -t apphost-bench-serve.XXXXXX)"
trap 'rm -rf "$WORK"' EXIT
export APPHOST_DATA_DIR="$WORK/data"
"$BIN" list >/dev/null
python3 - "$BIN" "$RUNS" <<'PY'
import json, os, signal, statistics, subprocess, sys, time

binary, runs = sys.argv[1], int(sys.argv[2])

def first_line(args, stop):
    t0 = time.perf_counter()
    p = subprocess.Popen([binary, *args], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    line = p.stdout.readline()
    dt = (time.perf_counter() - t0) * 1000
    if stop:
        p.send_signal(signal.SIGTERM)
    code = p.wait(timeout=10)
    assert code == 0, (args, code)
    assert line, args
    if stop:
        first = json.loads(line)
        assert first["pid"] == p.pid and first["url"].startswith("http://127.0.0.1:"), first
    return dt

serve, version = [], []
for i in range(3 + runs):
    a = first_line(["--json", "serve"], True)
    b = first_line(["--version"], False)
    if i >= 3:
        serve.append(a)
        version.append(b)

def row(name, xs):
    return f"| {name} | {min(xs):.2f} ms | {statistics.median(xs):.2f} ms | {max(xs):.2f} ms |"

print(f"runs: {runs} each, interleaved; load average {os.getloadavg()[0]:.1f}")
print("| command (spawn → first stdout line) | min | median | max |")
print("| --- | --- | --- | --- |")
print(row("`apphost --json serve`", serve))
print(row("`apphost --version`", version))
print(f"ratio of medians serve / --version: {statistics.median(serve) / statistics.median(version):.2f}x; "
      f"min {min(serve) / min(version):.2f}x")
PY
