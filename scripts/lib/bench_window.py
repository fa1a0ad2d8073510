#!/usr/bin/env python3
"""Window start-up runs for scripts/bench-window.sh (docs/benchmarks.md, "Window start-up").

    python3 bench_window.py '{"runs": N, "idle": S, "cases": [{"name", "event", "command": [...], "env": {...}}]}'

Runs every case once as a warm-up, then N rounds of one run per case (interleaved). Each run
takes the wall clock right before the spawn, waits for the stdout line
`apphost-bench: EVENT <unix ns>` (at most 60 s), and records the difference: process start to
that first paint. In the last round it waits S seconds after the paint and sums the resident
memory (VmRSS, and PSS from smaps_rollup) of the process and every descendant (WebKit's web and
network processes). Each process tree is killed after its run. A case whose env sets
APPHOST_TRACE_START also records the window's start-up milestones (its stderr lines
`apphost-start: <ms> <unix ns> <what>`, src-tauri/src/desktop/start_trace.rs) as ms since the
spawn. Prints one JSON object:
{name: {"event", "ms": [...], "rss_kib", "pss_kib", "processes", "trace": {what: [ms, ...]}}}.
"""
import json
import os
import select
import signal
import subprocess
import sys
import tempfile
import time


def descendants(pid):
    children = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            children.setdefault(int(fields[1]), []).append(int(entry))
        except (OSError, IndexError):
            pass
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        todo.extend(children.get(p, []))
    return out


def memory(pids):
    rss = pss = 0
    for p in pids:
        try:
            with open(f"/proc/{p}/status") as f:
                for line in f:
                    if line.startswith("VmRSS:"):
                        rss += int(line.split()[1])
            with open(f"/proc/{p}/smaps_rollup") as f:
                for line in f:
                    if line.startswith("Pss:"):
                        pss += int(line.split()[1])
        except OSError:
            pass
    return rss, pss


def run_once(case, measure_idle):
    env = dict(os.environ, **case.get("env", {}))
    trace = tempfile.TemporaryFile() if env.get("APPHOST_TRACE_START") else None
    t0 = time.time_ns()
    child = subprocess.Popen(case["command"], stdout=subprocess.PIPE,
                             stderr=trace if trace else subprocess.DEVNULL,
                             start_new_session=True, bufsize=0, env=env)
    deadline = time.monotonic() + 60
    painted, mem = None, None
    try:
        pending = b""
        while painted is None:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([child.stdout], [], [], left)[0]:
                break
            chunk = os.read(child.stdout.fileno(), 4096)
            if not chunk:
                break
            pending += chunk
            *lines, pending = pending.split(b"\n")
            for line in lines:
                parts = line.decode(errors="replace").split()
                if parts[:2] == ["apphost-bench:", case["event"]]:
                    painted = int(parts[2])
                    break
        if painted is None:
            sys.exit(f"bench_window: {case['name']}: no '{case['event']}' line")
        if measure_idle > 0:
            time.sleep(measure_idle)
            tree = descendants(child.pid)
            mem = (*memory(tree), len(tree))
    finally:
        try:
            os.killpg(child.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        child.wait()
        time.sleep(0.3)
    return (painted - t0) / 1e6, mem, milestones(trace, t0)


def milestones(trace, t0):
    """The `apphost-start: <ms> <unix ns> <what>` stderr lines: {what: ms since the spawn}."""
    if trace is None:
        return {}
    trace.seek(0)
    out = {}
    for line in trace.read().decode(errors="replace").splitlines():
        parts = line.split(maxsplit=3)
        if len(parts) == 4 and parts[0] == "apphost-start:" and parts[2].isdigit():
            out.setdefault(parts[3], (int(parts[2]) - t0) / 1e6)
    trace.close()
    return out


def main():
    config = json.loads(sys.argv[1])
    results = {c["name"]: {"event": c["event"], "ms": []} for c in config["cases"]}
    for case in config["cases"]:  # one warm-up run each (page cache, fontconfig)
        run_once(case, 0)
    for r in range(config["runs"]):
        for case in config["cases"]:  # interleaved: load changes hit every case alike
            last = r == config["runs"] - 1
            ms, mem, marks = run_once(case, config["idle"] if last else 0)
            results[case["name"]]["ms"].append(ms)
            for what, at in marks.items():
                results[case["name"]].setdefault("trace", {}).setdefault(what, []).append(at)
            if mem:
                results[case["name"]].update(rss_kib=mem[0], pss_kib=mem[1], processes=mem[2])
    print(json.dumps(results))


main()
