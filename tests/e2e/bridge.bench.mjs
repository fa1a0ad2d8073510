// Bridge benchmark in the real window (not part of the test command): run through
// scripts/bench-bridge.sh, which starts Xvfb and tauri-driver and installs the apps.
//
// 1. Round trip of `lime.storage.get` from the notes app's frame (postMessage to the host page,
//    the relay's `bridge_message` invoke, BridgeHost and dispatch in Rust, the answer posted back
//    into the frame) against a bare Tauri `invoke('launch_target')` from the host page (the
//    guard and command dispatch, answering `null` without touching the store), interleaved in the
//    same window: BENCH_REPS repetitions of BENCH_CALLS sequential calls on each side. Every call
//    must be answered with the stored value (no loss). WebKitGTK clamps performance.now() to
//    1 ms, so calls are timed in batches of BENCH_BATCH and per-call p50/p99 come from the
//    batch means.
// 2. Idle memory: PSS (smaps_rollup) summed over the window process and every process under it
//    (WebKit's web and network processes), with no app mounted, then with 3 apps mounted, in
//    the same window.
// Prints Markdown tables (and one JSON line) for docs/benchmarks.md; fails only on errors or
// lost calls, never for a missed target.
import assert from "node:assert/strict";
import { readFileSync, readdirSync } from "node:fs";
import { test } from "node:test";

import { waitForLoaded, withApp } from "./lib/harness.mjs";
import { waitFor } from "./lib/webdriver.mjs";


const REPS = Number(process.env.BENCH_REPS ?? 5);
const CALLS = Number(process.env.BENCH_CALLS ?? 2000);
const BATCH = Number(process.env.BENCH_BATCH ?? 10);
const SETTLE_MS = Number(process.env.BENCH_SETTLE_MS ?? 3000);
const MEMORY_APPS = (process.env.BENCH_MEMORY_APPS ?? "notes,hello-app,notes-copy").split(",");
const FRAME = 'iframe[data-app-id="notes"][data-entry-key="notes"]';
const VALUE = "a small note for the bench";

/** Runs `calls` sequential calls in the page, timed in batches; polled, so no script timeout. */
const HOST_LOOP = `
  const [calls, batch, body] = arguments;
  const state = (window.__bench = { done: false, batches: [], lost: 0, wrong: 0, failure: null });
  const invoke = window.__TAURI_INTERNALS__.invoke;
  (async () => {
    for (let i = 0; i < calls; i += batch) {
      const t0 = performance.now();
      for (let j = 0; j < batch && i + j < calls; j++) {
        const v = body === undefined ? await invoke("launch_target") : await invoke("bridge_refused", body);
        if (v !== null) state.wrong++;
      }
      state.batches.push(performance.now() - t0);
    }
  })().then(() => { state.done = true; }, (e) => { state.failure = String(e); state.done = true; });
`;

const FRAME_LOOP = `
  const [calls, batch, expected] = arguments;
  const q = new URLSearchParams(location.search);
  const appId = q.get("app"), entryKey = q.get("entry");
  const state = (window.__bench = { done: false, batches: [], lost: 0, wrong: 0, failure: null });
  if (!window.__benchPending) {
    window.__benchPending = new Map();
    window.addEventListener("message", (e) => {
      if (e.source !== parent || !e.data) return;
      const resolve = window.__benchPending.get(e.data.requestId);
      if (resolve) { window.__benchPending.delete(e.data.requestId); resolve(e.data); }
    });
  }
  window.__benchSeq = window.__benchSeq ?? 0;
  const call = () => new Promise((resolve) => {
    const requestId = "bench-" + ++window.__benchSeq;
    const timer = setTimeout(() => { window.__benchPending.delete(requestId); resolve(null); }, 10000);
    window.__benchPending.set(requestId, (m) => { clearTimeout(timer); resolve(m); });
    parent.postMessage({ protocol: "lime.agentApp.bridge", version: 1, type: "capability:invoke",
      requestId, appId, entryKey,
      payload: { capability: "lime.storage", method: "get", args: { key: "bench" } } }, "*");
  });
  (async () => {
    for (let i = 0; i < calls; i += batch) {
      const t0 = performance.now();
      for (let j = 0; j < batch && i + j < calls; j++) {
        const m = await call();
        if (m === null) state.lost++;
        else if (m.type !== "host:response" || m.payload?.value !== expected) state.wrong++;
      }
      state.batches.push(performance.now() - t0);
    }
  })().then(() => { state.done = true; }, (e) => { state.failure = String(e); state.done = true; });
`;

/**
 * The relay's own invoke, from the host page: exactly the `bridge_message` the relay sends for
 * the frame's `lime.storage.get` (same mount, origin and message text), without the two
 * postMessage hops; the answer's post action is checked, not executed. It splits the frame's
 * round trip into IPC + Rust (this) and the WebKit/relay part (the rest).
 */
const RELAY_LOOP = `
  const [calls, batch, expected, selector] = arguments;
  const state = (window.__bench = { done: false, batches: [], lost: 0, wrong: 0, failure: null });
  const invoke = window.__TAURI_INTERNALS__.invoke;
  const frame = document.querySelector(selector);
  const mountId = frame.dataset.mountId;
  const u = new URL(frame.src);
  const origin = u.protocol + "//" + u.host;
  const appId = frame.dataset.appId, entryKey = frame.dataset.entryKey;
  window.__benchSeq = window.__benchSeq ?? 0;
  (async () => {
    for (let i = 0; i < calls; i += batch) {
      const t0 = performance.now();
      for (let j = 0; j < batch && i + j < calls; j++) {
        const data = JSON.stringify({ protocol: "lime.agentApp.bridge", version: 1, type: "capability:invoke",
          requestId: "relay-" + ++window.__benchSeq, appId, entryKey,
          payload: { capability: "lime.storage", method: "get", args: { key: "bench" } } });
        const out = await invoke("bridge_message", { mountId, origin, data });
        const m = out && out[0] && out[0].message;
        if (!m || m.type !== "host:response" || m.payload?.value !== expected) state.wrong++;
      }
      state.batches.push(performance.now() - t0);
    }
  })().then(() => { state.done = true; }, (e) => { state.failure = String(e); state.done = true; });
`;

async function runLoop(app, script, args, what) {
  await app.execute(script, args);
  const deadline = Date.now() + 900_000;
  for (;;) {
    // Errors are not retried: a failing probe must fail the bench, not spin.
    const state = await app.execute("return window.__bench && window.__bench.done ? window.__bench : null;");
    if (state) {
      assert.equal(state.failure, null, `${what}: ${state.failure}`);
      console.error(`# ${what}: ${args[0]} calls in ${state.batches.reduce((a, b) => a + b, 0).toFixed(0)} ms`);
      return state;
    }
    assert.ok(Date.now() < deadline, `${what} did not finish`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

function quantile(sorted, q) {
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
}

/** Per-call figures of one side over every repetition (batch means). */
function perCall(reps) {
  const batches = reps.flatMap((r) => r.batches.map((b) => b / BATCH)).sort((a, b) => a - b);
  return {
    p50: quantile(batches, 0.5),
    p99: quantile(batches, 0.99),
    max: batches[batches.length - 1],
    mean: batches.reduce((a, b) => a + b, 0) / batches.length,
  };
}

function spread(values) {
  const s = [...values].sort((a, b) => a - b);
  return { min: s[0], median: s[Math.floor(s.length / 2)], max: s[s.length - 1] };
}

const f = (x, d = 3) => x.toFixed(d);

/** The window process: carries the run's marker, and is apphost-desktop. */
function windowPid() {
  const marker = `APPHOST_E2E_RUN=${process.env.APPHOST_E2E_RUN}`;
  for (const pid of readdirSync("/proc").filter((p) => /^\d+$/.test(p))) {
    try {
      const comm = readFileSync(`/proc/${pid}/comm`, "utf8").trim();
      if (!comm.startsWith("apphost")) continue;
      const env = readFileSync(`/proc/${pid}/environ`, "utf8").split("\0");
      if (env.includes(marker)) return Number(pid);
    } catch {
      // gone or not ours
    }
  }
  return null;
}

/** PSS (kB) of `root` and every process below it, by process name. */
function pssTree(root) {
  const parent = new Map();
  for (const pid of readdirSync("/proc").filter((p) => /^\d+$/.test(p))) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      parent.set(Number(pid), ppid);
    } catch {
      // gone
    }
  }
  const inTree = (pid) => {
    for (let p = pid, hops = 0; p > 1 && hops < 64; p = parent.get(p) ?? 0, hops++) {
      if (p === root) return true;
    }
    return false;
  };
  const out = [];
  for (const pid of parent.keys()) {
    if (!inTree(pid)) continue;
    try {
      const rollup = readFileSync(`/proc/${pid}/smaps_rollup`, "utf8");
      const pss = Number(/^Pss:\s+(\d+) kB/m.exec(rollup)?.[1] ?? 0);
      const comm = readFileSync(`/proc/${pid}/comm`, "utf8").trim();
      out.push({ pid, comm, pss });
    } catch {
      // gone, or a kernel thread without smaps
    }
  }
  return out;
}

const total = (tree) => tree.reduce((a, p) => a + p.pss, 0);

test("bridge round trip in the real window vs a bare invoke, and idle memory", async (t) => {
  await withApp(t, async (app) => {
    assert.equal(await waitForLoaded(app), "ready");
    const pid = windowPid();
    assert.ok(pid, "found the window process");

    // --- idle memory, nothing mounted -------------------------------------------------------
    await new Promise((r) => setTimeout(r, SETTLE_MS));
    const idle = pssTree(pid);

    // --- open notes from its card; store the value the bench reads --------------------------
    await app.click(
      await app.waitForElement('li.app-row[data-app-name="notes"] button.open-entry[data-entry-key="notes"]'),
    );
    const frame = await app.waitForElement(FRAME, 20_000);
    await app.switchToFrame(frame);
    await waitFor(
      async () => (await app.execute("return document.body && document.body.dataset.status")) === "ready",
      { timeoutMs: 20_000, what: "the notes handshake" },
    );
    const stored = await app.executeAsync(`
      const done = arguments[arguments.length - 1];
      const q = new URLSearchParams(location.search);
      window.addEventListener("message", (e) => { if (e.data && e.data.requestId === "bench-set") done(e.data.type); });
      parent.postMessage({ protocol: "lime.agentApp.bridge", version: 1, type: "capability:invoke",
        requestId: "bench-set", appId: q.get("app"), entryKey: q.get("entry"),
        payload: { capability: "lime.storage", method: "set", args: { key: "bench", value: arguments[0] } } }, "*");`,
      [VALUE]);
    assert.equal(stored, "host:response");

    // --- warm-up, then interleaved repetitions ---------------------------------------------
    await runLoop(app, FRAME_LOOP, [200, BATCH, VALUE], "frame warm-up");
    await app.switchToTop();
    await runLoop(app, HOST_LOOP, [200, BATCH], "host warm-up");
    await runLoop(app, RELAY_LOOP, [200, BATCH, VALUE, FRAME], "relay warm-up");
    const host = [];
    const guest = [];
    const relayed = [];
    const bodied = [];
    // A command with a JSON body of a bridge message's size that takes the bridge mutex and
    // only counts a refusal (\`bridge_refused\`, answers null): splits "an invoke with
    // arguments" from the bridge's own work.
    const BODY = { mountId: null, reason: "bench." + "x".repeat(250), bytes: 0 };
    for (let rep = 0; rep < REPS; rep++) {
      await app.switchToTop();
      host.push(await runLoop(app, HOST_LOOP, [CALLS, BATCH], `host rep ${rep}`));
      relayed.push(await runLoop(app, RELAY_LOOP, [CALLS, BATCH, VALUE, FRAME], `relay rep ${rep}`));
      bodied.push(await runLoop(app, HOST_LOOP, [CALLS, BATCH, BODY], `host_call rep ${rep}`));
      await app.switchToFrame(await app.find(FRAME));
      guest.push(await runLoop(app, FRAME_LOOP, [CALLS, BATCH, VALUE], `frame rep ${rep}`));
    }
    await app.switchToTop();
    const lost = guest.reduce((a, r) => a + r.lost, 0);
    const wrong = [...guest, ...host, ...relayed].reduce((a, r) => a + r.wrong, 0);

    const sum = (r) => r.batches.reduce((a, b) => a + b, 0);
    const ratios = guest.map((g, i) => sum(g) / sum(host[i]));
    const hostPc = perCall(host);
    const guestPc = perCall(guest);
    const hostMs = spread(host.map((r) => sum(r) / CALLS));
    const guestMs = spread(guest.map((r) => sum(r) / CALLS));
    const ratio = spread(ratios);
    const relayRatios = relayed.map((r, i) => sum(r) / sum(host[i]));
    const relayPc = perCall(relayed);
    const relayMs = spread(relayed.map((r) => sum(r) / CALLS));
    const relayRatio = spread(relayRatios);
    const bodyRatio = spread(bodied.map((r, i) => sum(r) / sum(host[i])));
    const bodyPc = perCall(bodied);
    const bodyMs = spread(bodied.map((r) => sum(r) / CALLS));

    // --- idle memory with 3 apps mounted -------------------------------------------------
    // The host UI shows one app at a time; the two others get frames built from Rust's mounts
    // exactly as the relay's attach() builds them (their messages are not relayed).
    const mounted = await app.executeAsync(
      `const done = arguments[arguments.length - 1];
       const apps = arguments[0];
       (async () => {
         const invoke = window.__TAURI_INTERNALS__.invoke;
         const out = [];
         for (const name of apps.slice(1)) {
           const list = await invoke("list_apps");
           const a = list.find((x) => x.name === name);
           const entry = a.entries.find((e) => e.mountable).key;
           const m = await invoke("mount_entry", { appId: name, entryKey: entry });
           const frame = document.createElement("iframe");
           frame.setAttribute("sandbox", m.sandbox);
           frame.setAttribute("referrerpolicy", "no-referrer");
           frame.className = "app-frame";
           frame.dataset.appId = m.appId;
           frame.dataset.entryKey = m.entryKey;
           frame.src = m.url;
           document.getElementById("surface-frames").append(frame);
           out.push(m.appId);
         }
         return out;
       })().then((v) => done({ ok: v }), (e) => done({ err: String(e) }));`,
      [MEMORY_APPS],
    );
    assert.ok(mounted.ok, `mounting the other apps failed: ${mounted.err}`);
    await new Promise((r) => setTimeout(r, SETTLE_MS));
    const frames = await app.execute("return document.querySelectorAll('iframe.app-frame').length;");
    const busy = pssTree(pid);

    // --- report ------------------------------------------------------------------------------
    const lines = [];
    lines.push(`\n#### Round trip, ${REPS} repetitions × ${CALLS} sequential calls per side (batches of ${BATCH})\n`);
    lines.push("| path | threads | ms per call, median of reps [min … max] | p50 / p99 / max per call (batch means), ms | lost | ratio vs bare invoke, median [min … max] |");
    lines.push("| --- | --- | --- | --- | --- | --- |");
    lines.push(`| bare \`invoke('launch_target')\` from the host page (baseline) | page: 1 JS thread; Rust: Tauri's async runtime | ${f(hostMs.median)} [${f(hostMs.min)} … ${f(hostMs.max)}] | ${f(hostPc.p50)} / ${f(hostPc.p99)} / ${f(hostPc.max)} | – | 1 (baseline) |`);
    lines.push(`| \`lime.storage.get\` from the notes frame through the bridge | frame + page: 1 WebKit web process; Rust: Tauri's async runtime, bridge mutex | ${f(guestMs.median)} [${f(guestMs.min)} … ${f(guestMs.max)}] | ${f(guestPc.p50)} / ${f(guestPc.p99)} / ${f(guestPc.max)} | ${lost} of ${REPS * CALLS} | **${f(ratio.median, 2)}×** [${f(ratio.min, 2)} … ${f(ratio.max, 2)}] |`);
    lines.push(`| the relay's \`bridge_message\` invoke for the same call, from the host page (no postMessage hops; split, not a target) | page: 1 JS thread; Rust: Tauri's async runtime, bridge mutex | ${f(relayMs.median)} [${f(relayMs.min)} … ${f(relayMs.max)}] | ${f(relayPc.p50)} / ${f(relayPc.p99)} / ${f(relayPc.max)} | – | ${f(relayRatio.median, 2)}× [${f(relayRatio.min, 2)} … ${f(relayRatio.max, 2)}] |`);
    lines.push(`| \`invoke('bridge_refused', {…})\`: a JSON body of a bridge message's size, the bridge mutex, answers null (split, not a target) | page: 1 JS thread; Rust: Tauri's async runtime | ${f(bodyMs.median)} [${f(bodyMs.min)} … ${f(bodyMs.max)}] | ${f(bodyPc.p50)} / ${f(bodyPc.p99)} / ${f(bodyPc.max)} | – | ${f(bodyRatio.median, 2)}× [${f(bodyRatio.min, 2)} … ${f(bodyRatio.max, 2)}] |`);
    const byComm = (tree) => {
      const m = new Map();
      for (const p of tree) m.set(p.comm, (m.get(p.comm) ?? 0) + p.pss);
      return [...m].map(([c, k]) => `${c} ${(k / 1024).toFixed(1)}`).join(", ");
    };
    lines.push(`\n#### Idle memory (PSS, smaps_rollup, window process + every process under it; ${SETTLE_MS / 1000} s settle)\n`);
    lines.push("| state | processes | PSS total MiB | by process, MiB |");
    lines.push("| --- | --- | --- | --- |");
    lines.push(`| no app mounted | ${idle.length} | ${(total(idle) / 1024).toFixed(1)} | ${byComm(idle)} |`);
    lines.push(`| ${frames} apps mounted (${MEMORY_APPS.join(", ")}) | ${busy.length} | ${(total(busy) / 1024).toFixed(1)} | ${byComm(busy)} |`);
    lines.push(`\n3 apps mounted / none: ${(total(busy) / total(idle)).toFixed(2)}× (+${((total(busy) - total(idle)) / 1024).toFixed(1)} MiB)`);
    console.log(lines.join("\n"));
    console.log(
      "BENCH_JSON " +
        JSON.stringify({ reps: REPS, calls: CALLS, batch: BATCH, ratios, relayRatios, host: hostPc, guest: guestPc, relay: relayPc, lost, wrong,
          memory: { idle: total(idle), mounted: total(busy), frames } }),
    );
    assert.equal(lost, 0, "calls were lost");
    assert.equal(wrong, 0, "calls answered with the wrong value");
  });
});
