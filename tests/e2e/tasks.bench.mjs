// lime.agent in the real window (a bench, not a test: nothing is asserted on the figures):
//   BENCH_FILE=tests/e2e/tasks.bench.mjs APPHOST_BIN=… bash scripts/bench-bridge.sh
// It trusts the fixture key, installs fixtures/apps/review-queue and points the model at a
// stand-in OpenAI-compatible provider (tests/e2e/lib/stand-in-openai.mjs) it starts, then, from
// inside the review-queue frame:
// 1. Delta latency: BENCH_REPS (3) tasks, each answered with BENCH_DELTAS (1000) text deltas sent
//    BENCH_DELTA_GAP_MS (5) apart; each delta carries the wall-clock time the stand-in wrote it
//    (`Date.now()` aligned on a tick + `process.hrtime`); the frame stamps its arrival with
//    `performance.timeOrigin + performance.now()` at the top of its message listener. Both are
//    CLOCK_REALTIME-based on one machine; WebKitGTK coarsens performance.now() to 1 ms (see
//    docs/benchmarks.md), so single figures are ±1 ms; the page's two clocks are compared too.
// 2. startTask -> host:response: BENCH_STARTS (50) tasks, one after the other (each waits for
//    its result), timed in the frame.
// 3. Baseline in the same window: BENCH_BASELINE_CALLS (1000) sequential `lime.storage.get`
//    round trips from the same frame (frame -> host page -> Rust -> host page -> frame): the
//    bridge without the agent; half of it approximates one host -> frame delivery.
// Prints Markdown tables and one BENCH_JSON line; fails only on errors or lost deltas.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";

import { APPHOST_BIN, withApp } from "./lib/harness.mjs";
import { StandInProvider, wallClock } from "./lib/stand-in-openai.mjs";
import { REPO, call, enterQueue } from "./lib/tasks.mjs";
import { waitFor } from "./lib/webdriver.mjs";

const DELTAS = Number(process.env.BENCH_DELTAS ?? 1000);
const REPS = Number(process.env.BENCH_REPS ?? 3);
const GAP_MS = Number(process.env.BENCH_DELTA_GAP_MS ?? 5);
const STARTS = Number(process.env.BENCH_STARTS ?? 50);
const BASELINE_CALLS = Number(process.env.BENCH_BASELINE_CALLS ?? 1000);
const APP = "review-queue";

const cli = (...args) => execFileSync(APPHOST_BIN, args, { encoding: "utf8", timeout: 60_000, stdio: ["ignore", "pipe", "pipe"] });

function stats(values) {
  const s = [...values].sort((a, b) => a - b);
  const q = (p) => s[Math.min(s.length - 1, Math.floor(p * s.length))];
  return { n: s.length, min: s[0], median: q(0.5), p99: q(0.99), max: s[s.length - 1], mean: s.reduce((a, b) => a + b, 0) / s.length };
}
const f = (x, d = 2) => x.toFixed(d);
const sign = (x) => (x >= 0 ? "+" : "−") + f(Math.abs(x));
const row = (s) => `${f(s.min)} / ${f(s.median)} / ${f(s.p99)} / ${f(s.max)} (mean ${f(s.mean)})`;

/** The window process (carries the run's marker) and its threads, by name. */
function windowThreads() {
  const marker = `APPHOST_E2E_RUN=${process.env.APPHOST_E2E_RUN}`;
  for (const pid of readdirSync("/proc").filter((p) => /^\d+$/.test(p))) {
    try {
      if (readFileSync(`/proc/${pid}/comm`, "utf8").trim() !== "apphost-desktop") continue;
      if (!readFileSync(`/proc/${pid}/environ`, "utf8").split("\0").includes(marker)) continue;
      const byName = new Map();
      for (const tid of readdirSync(`/proc/${pid}/task`)) {
        const name = readFileSync(`/proc/${pid}/task/${tid}/comm`, "utf8").trim();
        byName.set(name, (byName.get(name) ?? 0) + 1);
      }
      return { pid: Number(pid), total: [...byName.values()].reduce((a, b) => a + b, 0), byName: Object.fromEntries(byName) };
    } catch {
      // gone or not ours
    }
  }
  return null;
}

/** Starts a task from the frame; resolves with its id and the frame-timed startTask round trip. */
async function start(app, input) {
  const r = await call(app, "lime.agent", "startTask", { input });
  assert.ok(r.ok, `startTask failed: ${JSON.stringify(r.error)}`);
  return { taskId: r.ok.taskId, ms: r.at - r.sent };
}

async function waitDone(app, taskId, timeoutMs = 120_000) {
  return waitFor(
    () => app.execute("return window.__e2e.events.some((x) => x.event.taskId === arguments[0] && x.event.type === 'result');", [taskId]),
    { timeoutMs, intervalMs: 50, what: `the result of ${taskId}` },
  );
}

test("lime.agent in the window: provider delta -> host:event in the frame, startTask -> host:response, vs a bridge round trip", async (t) => {
  const provider = new StandInProvider();
  const base = await provider.start();
  try {
    cli("trust", "add", join(REPO, "fixtures/keys/fixture-publisher.pub.json"));
    cli("install", "--yes", join(REPO, "fixtures/apps/review-queue"));
    cli("model", "set", "--base-url", base, "--model", "stand-in", "--no-api-key");
  } catch (e) {
    throw new Error(`setting up review-queue failed: ${e.stderr ?? e}`);
  }

  await withApp(
    t,
    async (app) => {
      await enterQueue(app, APP);
      // Warm-up: the agent runtime opens on the first task; a few deltas and a few calls.
      provider.reply({ deltas: Array.from({ length: 50 }, () => "w"), delayMs: 1 });
      await waitDone(app, (await start(app, "warm-up")).taskId);
      await call(app, "lime.storage", "set", { key: "bench", value: "a small value for the bench" });
      for (let i = 0; i < 50; i++) await call(app, "lime.storage", "get", { key: "bench" });

      // --- 1. delta latency, BENCH_REPS tasks of DELTAS deltas -------------------------------
      const stamp = () => `|${wallClock().toFixed(3)}|`;
      const threadsBefore = windowThreads();
      let threadsDuring = null;
      const reps = [];
      const toRuntime = [];
      const toFrame = [];
      let ordered = true;
      let lost = 0;
      for (let rep = 0; rep < REPS; rep++) {
        provider.reply({ deltas: Array.from({ length: DELTAS }, () => () => stamp()), delayMs: GAP_MS });
        const { taskId } = await start(app, `stream the bench deltas, rep ${rep}`);
        await new Promise((r) => setTimeout(r, Math.min(2000, (DELTAS * GAP_MS) / 2)));
        threadsDuring = windowThreads();
        await waitDone(app, taskId, 60_000 + DELTAS * (GAP_MS + 50));
        const got = await app.execute(
          `return window.__e2e.events.filter((x) => x.event.taskId === arguments[0] && x.event.type === "assistant:delta")
             .map((x) => [x.event.payload.text, x.at, Date.parse(x.event.at)]);`,
          [taskId],
        );
        const sent = got.map(([text]) => Number(/^\|([\d.]+)\|$/.exec(text)?.[1]));
        ordered &&= sent.every((v, i) => i === 0 || v > sent[i - 1]);
        lost += DELTAS - got.length;
        reps.push(got.map(([, at], i) => at - sent[i]));
        // The fact's own time (\`at\`, whole ms, written when the runtime records the delta):
        // splits each latency into provider -> runtime and runtime -> frame.
        toRuntime.push(...got.map(([, , recorded], i) => recorded - sent[i]));
        toFrame.push(...got.map(([, at, recorded]) => at - recorded));
      }
      const latencies = reps.flat();
      // The page's two clocks: Date.now() against performance.timeOrigin + performance.now().
      const skew = await app.execute(`const out = []; for (let i = 0; i < 200; i++) out.push(Date.now() - (performance.timeOrigin + performance.now())); return out;`);

      // --- 2. startTask -> host:response -------------------------------------------------------
      const starts = [];
      for (let i = 0; i < STARTS; i++) {
        provider.reply({ deltas: ["ok"] });
        const s = await start(app, `bench start ${i}`);
        starts.push(s.ms);
        await waitDone(app, s.taskId);
      }

      // --- 3. baseline: lime.storage.get round trips from the same frame ---------------------
      const rtts = [];
      for (let i = 0; i < BASELINE_CALLS; i++) {
        const r = await call(app, "lime.storage", "get", { key: "bench" });
        assert.equal(r.ok, "a small value for the bench");
        rtts.push(r.at - r.sent);
      }

      // --- report ----------------------------------------------------------------------------
      const d = stats(latencies);
      const st = stats(starts);
      const rt = stats(rtts);
      const sk = stats(skew);
      const lines = [];
      lines.push(`\n#### ${REPS} tasks × ${DELTAS} deltas, ${GAP_MS} ms apart; ${STARTS} starts; ${BASELINE_CALLS} baseline calls\n`);
      lines.push("| what | n | min / median / p99 / max (mean), ms |");
      lines.push("| --- | --- | --- |");
      lines.push(`| provider delta written -> \`host:event\` in the frame | ${d.n} of ${REPS * DELTAS} (${ordered ? "in order" : "OUT OF ORDER"}) | ${row(d)} |`);
      reps.forEach((r, i) => lines.push(`| … task ${i + 1} alone | ${r.length} | ${row(stats(r))} |`));
      lines.push(`| … of which stand-in write -> the fact's \`at\` (ms-truncated, so up to 1 ms low) | ${toRuntime.length} | ${row(stats(toRuntime))} |`);
      lines.push(`| … of which the fact's \`at\` -> the frame (up to 1 ms high) | ${toFrame.length} | ${row(stats(toFrame))} |`);
      lines.push(`| \`startTask\` -> \`host:response\` (frame clock) | ${st.n} | ${row(st)} |`);
      lines.push(`| baseline: \`lime.storage.get\` round trip from the same frame (frame clock) | ${rt.n} | ${row(rt)} |`);
      lines.push(`| baseline, half a round trip (≈ one host -> frame delivery) | ${rt.n} | ${f(rt.min / 2)} / ${f(rt.median / 2)} / ${f(rt.p99 / 2)} / ${f(rt.max / 2)} (mean ${f(rt.mean / 2)}) |`);
      lines.push(`\nDelta latency over half a bridge round trip: median ${f(d.median / (rt.median / 2), 1)}×, p99 ${f(d.p99 / (rt.p99 / 2), 1)}×; against a whole one: median ${sign(d.median - rt.median)} ms, p99 ${sign(d.p99 - rt.p99)} ms.`);
      lines.push(`startTask over a storage round trip: median ${f(st.median / rt.median, 1)}×.`);
      lines.push(`Page clocks: Date.now() - (timeOrigin + performance.now()) min / median / max ${f(sk.min)} / ${f(sk.median)} / ${f(sk.max)} ms.`);
      const th = (x) => (x ? `${x.total} (${Object.entries(x.byName).sort((a, b) => b[1] - a[1]).map(([n, c]) => `${n} ${c}`).join(", ")})` : "?");
      lines.push(`Window process threads: before the streams ${th(threadsBefore)}; during the last one ${th(threadsDuring)}.`);
      lines.push(`Machine: ${readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ")} load, node ${process.version}; stand-in: one node thread.`);
      console.log(lines.join("\n"));
      console.log("BENCH_JSON " + JSON.stringify({ reps: REPS, deltas: DELTAS, gapMs: GAP_MS, delta: d, perTask: reps.map(stats), toRuntime: stats(toRuntime), toFrame: stats(toFrame), ordered, lost, start: st, baseline: rt, skew: sk, threads: threadsDuring }));
      assert.equal(lost, 0, "every delta reached the frame");
      assert.ok(ordered, "deltas arrived in order");
    },
    ["open", APP, "--entry", "queue"],
  );
  await provider.stop();
});
