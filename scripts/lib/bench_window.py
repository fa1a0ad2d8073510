#!/usr/bin/env python3
"""Window start-up runs for scripts/bench-window.sh (docs/benchmarks.md, "Window start-up").

    python3 bench_window.py '{"runs": N, "idle": S, "cases": [{"name", "event", "command": [...], "env": {...}}]}'

Runs every case once as a warm-up, then N rounds of one run per case (interleaved). Each run
takes the wall clock right before the spawn, waits for the stdout line
`apphost-bench: EVENT <unix ns>` (at most 60 s), and records the difference: process start to
that first paint. In the last round it waits S seconds after the paint and sums the resident
memory (VmRSS, and PSS from smaps_rollup) of the process and every descendant (WebKit's web and
network processes). Each process tree is killed after its run. Prints one JSON object:
{name: {"event", "ms": [...], "rss_kib", "pss_kib", "processes"}}.
"""
import json
import os
import select
import signal
import subprocess
import sys
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
    t0 = time.time_ns()
    child = subprocess.Popen(case["command"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
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
    return (painted - t0) / 1e6, mem


def main():
    config = json.loads(sys.argv[1])
    results = {c["name"]: {"event": c["event"], "ms": []} for c in config["cases"]}
    for case in config["cases"]:  # one warm-up run each (page cache, fontconfig)
        run_once(case, 0)
    for r in range(config["runs"]):
        for case in config["cases"]:  # interleaved: load changes hit every case alike
            last = r == config["runs"] - 1
            ms, mem = run_once(case, config["idle"] if last else 0)
            results[case["name"]]["ms"].append(ms)
            if mem:
                results[case["name"]].update(rss_kib=mem[0], pss_kib=mem[1], processes=mem[2])
    print(json.dumps(results))


main()
