// Host UI first render with N installed apps (docs/benchmarks.md): Debian's Chromium loads
// ui-host/dist from a local static server; a stub `__TAURI__` (the desktop transport) answers
// list_apps with N synthetic apps at once and every other command with null, so the figure is the
// UI's own cost (load, parse, first card, all cards), not the backend's.
//
//   node ui-host/bench/first-render.mjs [N=500] [runs=5]
// Needs `npm run build -w ui-host` and playwright-core (a dependency of @playwright/test).
import { createServer } from "node:http";
import { readFileSync, existsSync } from "node:fs";
import { dirname, join, extname } from "node:path";
import { fileURLToPath } from "node:url";

const dist = join(dirname(fileURLToPath(import.meta.url)), "..", "dist");
const N = Number(process.argv[2] ?? 500);
const RUNS = Number(process.argv[3] ?? 5);
let chromium;
try {
  ({ chromium } = await import("playwright-core"));
} catch {
  console.error("first-render: playwright-core is not installed (npm ci installs it with @playwright/test)");
  process.exit(2);
}
if (!existsSync(join(dist, "main.js"))) {
  console.error("first-render: build the UI first (npm run build -w ui-host)");
  process.exit(2);
}

const types = { ".js": "text/javascript", ".css": "text/css", ".html": "text/html" };
const server = createServer((req, res) => {
  const path = new URL(req.url ?? "/", "http://x").pathname;
  const file = join(dist, path === "/" ? "index.html" : path);
  if (!file.startsWith(dist) || !existsSync(file)) {
    res.statusCode = 404;
    res.end();
    return;
  }
  res.setHeader("content-type", types[extname(file)] ?? "application/octet-stream");
  res.end(readFileSync(file));
});
await new Promise((ok) => server.listen(0, "127.0.0.1", ok));
const url = `http://127.0.0.1:${server.address().port}/#/apps`;

function stub(n) {
  const apps = Array.from({ length: n }, (_, i) => ({
    name: `bench-app-${i}`,
    displayName: `Bench App ${i}`,
    description: `Synthetic app number ${i} for the first-render benchmark.`,
    activeVersion: "1.0.0",
    versions: ["1.0.0"],
    enabled: true,
    trust: i % 3 === 0 ? "trusted" : "unsigned",
    sideloaded: i % 3 !== 0,
    readiness: i % 7 === 0 ? "needs-setup" : "ready",
    packageHash: "sha256:00",
    installedAt: "2026-11-23T00:00:00Z",
    updatedAt: "2026-11-23T00:00:00Z",
    entries: [{ key: "main", kind: "page", title: "Main", mountable: true }],
  }));
  window.__TAURI__ = {
    core: {
      invoke: async (cmd, args) => {
        const command = cmd === "host_call" ? args.command : cmd;
        if (command === "list_apps") return apps;
        if (command === "next_events") return new Promise(() => undefined);
        return null;
      },
    },
  };
}

const browser = await chromium.launch({ executablePath: process.env.CHROMIUM ?? "/usr/bin/chromium", args: ["--no-sandbox"] });
const rows = [];
for (let run = 0; run <= RUNS; run++) {
  const context = await browser.newContext({ viewport: { width: 1100, height: 800 } });
  const page = await context.newPage();
  await page.addInitScript(stub, N);
  await page.goto(url);
  const t = await page.evaluate(
    (n) =>
      new Promise((resolve) => {
        let first = null;
        const tick = () => {
          const count = document.querySelectorAll('[data-testid="app-card"]').length;
          if (count > 0 && first === null) first = performance.now();
          if (count >= n) resolve({ first, all: performance.now(), dcl: performance.getEntriesByType("navigation")[0].domContentLoadedEventEnd });
          else requestAnimationFrame(tick);
        };
        tick();
      }),
    N,
  );
  // Typing in the search box over N apps: input to the next painted frame.
  const search = await page.evaluate(async () => {
    const input = document.querySelector('[data-testid="app-search"]');
    const start = performance.now();
    input.value = "Bench App 4";
    input.dispatchEvent(new Event("input", { bubbles: true }));
    await new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
    return performance.now() - start;
  });
  if (run > 0) rows.push({ ...t, search }); // run 0 warms the browser's caches
  await context.close();
}
await browser.close();
server.close();

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const fmt = (k) => `${median(rows.map((r) => r[k])).toFixed(0)} ms (min ${Math.min(...rows.map((r) => r[k])).toFixed(0)}, max ${Math.max(...rows.map((r) => r[k])).toFixed(0)})`;
console.log(`host UI first render, ${N} apps, ${RUNS} runs (from navigation start):`);
console.log(`  DOMContentLoaded   ${fmt("dcl")}`);
console.log(`  first card painted ${fmt("first")}`);
console.log(`  all ${N} cards      ${fmt("all")}`);
console.log(`  search keystroke   ${fmt("search")} (input to the next painted frame)`);
