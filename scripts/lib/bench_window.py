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
{name: {"event", "ms": [...], "rss_kib", "pss_kib", "processes", "trace": {what: [ms, ...]}},
 "_load": [the 1-minute load average before each round and after the last]}.

An optional "snapshot": {"case": {...}, "out": folder, "css": file, "probe": file} runs its case
once before everything else (apphost-desktop with APPHOST_BENCH_SNAPSHOT=<out>/captured.html:
the center's HTML when the app list first showed) and turns the capture into <out>/index.html,
the same DOM without any script (the module script and its preloads removed), with the minimal
window's paint probe (`probe`) as its only script and `css` beside it as styles.css; a case
running min-window with MIN_WINDOW_PAGE=<out> paints it.
"""
import json
import os
import re
import select
import shutil
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


def static_snapshot(snap):
    """Captures the app center's first view and writes it as a static page (see the docstring)."""
    out = snap["out"]
    os.makedirs(out, exist_ok=True)
    captured = os.path.join(out, "captured.html")
    case = dict(snap["case"], env=dict(snap["case"].get("env", {}), APPHOST_BENCH_SNAPSHOT=captured))
    run_once(case, 0)
    with open(captured, encoding="utf-8") as f:
        html = f.read()
    html = re.sub(r"<script\b[^>]*>.*?</script>", "", html, flags=re.S | re.I)
    html = re.sub(r"<link\b[^>]*rel=\"modulepreload\"[^>]*>", "", html, flags=re.I)
    html = html.replace("<head>", '<head><script src="/paint.js"></script>', 1)
    with open(os.path.join(out, "index.html"), "w", encoding="utf-8") as f:
        f.write("<!DOCTYPE html>" + html)
    shutil.copy(snap["css"], os.path.join(out, "styles.css"))
    shutil.copy(snap["probe"], os.path.join(out, "paint.js"))


def load_average():
    with open("/proc/loadavg") as f:
        return float(f.read().split()[0])


def main():
    config = json.loads(sys.argv[1])
    if config.get("snapshot"):
        static_snapshot(config["snapshot"])
    results = {c["name"]: {"event": c["event"], "ms": []} for c in config["cases"]}
    load = []
    for case in config["cases"]:  # one warm-up run each (page cache, fontconfig)
        run_once(case, 0)
    for r in range(config["runs"]):
        load.append(load_average())
        for case in config["cases"]:  # interleaved: load changes hit every case alike
            last = r == config["runs"] - 1
            ms, mem, marks = run_once(case, config["idle"] if last else 0)
            results[case["name"]]["ms"].append(ms)
            for what, at in marks.items():
                results[case["name"]].setdefault("trace", {}).setdefault(what, []).append(at)
            if mem:
                results[case["name"]].update(rss_kib=mem[0], pss_kib=mem[1], processes=mem[2])
    load.append(load_average())
    results["_load"] = load
    print(json.dumps(results))


main()
