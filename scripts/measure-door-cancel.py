#!/usr/bin/env python3
# Measures Ctrl-C on a handed-over `apphost services call` (docs/services.md, "Cancelling a running call"): with
# `apphost serve` running on a fresh data dir, the time from SIGINT to the relay test service
# reading `$/cancelRequest`, and, as the same-run reference, a whole handed-over `services call
# echo` command. Needs `cargo build -p apphost -p service-sandbox` (the binary and the sandbox
# shim). Usage: N=20 python3 scripts/measure-door-cancel.py
import os, shutil, signal, subprocess, sys, tempfile, time
REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TARGET = os.environ.get("CARGO_TARGET_DIR", os.path.expanduser("~/.cache/apphost-target"))
BIN = os.environ.get("APPHOST_BIN", f"{TARGET}/debug/apphost")
N = int(os.environ.get("N", "20"))
w = tempfile.mkdtemp()
env = dict(os.environ, APPHOST_SECRET_STORE="file", APPHOST_SECRET_KEY_FILE=f"{w}/keys/secrets.key",
           XDG_CONFIG_HOME=f"{w}/config")
def dflt(): signal.signal(signal.SIGINT, signal.SIG_DFL)
A = [BIN, "--json", "--data-dir", f"{w}/data"]
pkg = f"{w}/pkg"
shutil.copytree(f"{REPO}/fixtures/apps/doc-parser", pkg)
shutil.rmtree(f"{pkg}/services/parser"); os.makedirs(f"{pkg}/services/relay")
shutil.copy(f"{REPO}/fixtures/services/relay.py", f"{pkg}/services/relay/relay.py")
m = open(f"{pkg}/APP.md").read().replace("name: doc-parser", "name: relay-app").replace(
    "  - key: parser\n", "  - key: relay\n").replace("services/parser/parser.py", "services/relay/relay.py").replace(
    "timeoutMs: 5000", "timeoutMs: 30000")
open(f"{pkg}/APP.md", "w").write(m)
subprocess.run(A + ["install", pkg, "--yes", "--sideload"], env=env, check=True, stdout=subprocess.DEVNULL)
serve = subprocess.Popen(A + ["serve"], env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
serve.stdout.readline()
subprocess.run(A + ["services", "start", "relay-app", "relay"], env=env, check=True, stdout=subprocess.DEVNULL)
d = f"{w}/data/apps/relay-app/services/relay"
def size(p):
    try: return os.path.getsize(p)
    except OSError: return 0
cancel, echo = [], []
try:
    for i in range(N):
        t = time.perf_counter()
        subprocess.run(A + ["services", "call", "relay-app", "relay", "echo", "{}"], env=env, check=True,
                       stdout=subprocess.DEVNULL)
        echo.append((time.perf_counter() - t) * 1000)
        for f in ("hanging", "cancelled"):
            try: os.remove(f"{d}/{f}")
            except OSError: pass
        c = subprocess.Popen(A + ["services", "call", "relay-app", "relay", "hang-noted"], env=env,
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, preexec_fn=dflt)
        while size(f"{d}/hanging") == 0: time.sleep(0.001)
        t = time.perf_counter()
        c.send_signal(signal.SIGINT)
        while size(f"{d}/cancelled") == 0:
            time.sleep(0.0005)
            if time.perf_counter() - t > 40: sys.exit("no cancel")
        cancel.append((time.perf_counter() - t) * 1000)
        c.wait()
finally:
    serve.kill(); shutil.rmtree(w, ignore_errors=True)
def spread(xs):
    xs = sorted(xs); return f"min {xs[0]:.1f} / median {xs[len(xs)//2]:.1f} / max {xs[-1]:.1f} ms"
print(f"n={N}; SIGINT -> $/cancelRequest read by the service: {spread(cancel)}")
print(f"n={N}; reference, a whole handed-over `services call echo` command: {spread(echo)}")
