// Host UI first render with N installed apps (docs/benchmarks.md): Debian's Chromium loads
// ui-host/dist from a local static server; a stub `__TAURI__` (the desktop transport) answers
// list_apps with N synthetic apps at once and every other command with null, so the figure is the
// UI's own cost (load, parse, first card, all cards), not the backend's.
//
// Baselines measured in the same run, interleaved with it (the machine's load moves all three
// alike): the same host UI with 0 apps (loaded and rendered: the fixed cost of the page), and a
// plain page that appends N `<li>` rows with the same text (what N rows cost the browser without
// the UI). Each run gives two ratios: first card (N apps) / empty page rendered (0 apps), and
// all N cards / N plain rows; min, median and max over the runs are printed.
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

/** The plain baseline: N `<li>` rows with a card's text, appended at once after DOMContentLoaded. */
const PLAIN_ROWS = `<!doctype html><html><head><meta charset="utf-8"><link rel="stylesheet" href="/styles.css"></head>
<body><ul id="rows"></ul><script>
addEventListener("DOMContentLoaded", () => {
  const n = Number(location.hash.slice(1));
  const ul = document.getElementById("rows");
  for (let i = 0; i < n; i++) {
    const li = document.createElement("li");
    li.className = "plain-row";
    li.textContent = "Bench App " + i + " bench-app-" + i + " v1.0.0 by Bench Publisher Synthetic app number " + i + " for the first-render benchmark. Open Main Details";
    ul.appendChild(li);
  }
});
</script></body></html>`;

const types = { ".js": "text/javascript", ".css": "text/css", ".html": "text/html" };
const server = createServer((req, res) => {
  const path = new URL(req.url ?? "/", "http://x").pathname;
  if (path === "/plain-rows.html") {
    res.setHeader("content-type", "text/html");
    res.end(PLAIN_ROWS);
    return;
  }
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
    publisher: "Bench Publisher",
    icon: i % 2 === 0 ? "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==" : undefined,
    readinessReasons: i % 7 === 0 ? ["secret api_token is not bound"] : [],
    setupActions: i % 7 === 0 ? [{ key: "api_token", title: "Bind secret api_token", kind: "configure-secret", target: "api_token" }] : [],
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

/** Time from navigation start until `count()` in the page reaches `n` (checked every frame). */
async function timeTo(page, n, selector, bodyState) {
  return page.evaluate(
    ([n, selector, bodyState]) =>
      new Promise((resolve) => {
        let first = null;
        const tick = () => {
          const count = document.querySelectorAll(selector).length;
          if (count > 0 && first === null) first = performance.now();
          const done = bodyState !== null ? document.body?.dataset.state === bodyState : count >= n;
          if (done) resolve({ first: first ?? performance.now(), all: performance.now(), dcl: performance.getEntriesByType("navigation")[0].domContentLoadedEventEnd });
          else requestAnimationFrame(tick);
        };
        tick();
      }),
    [n, selector, bodyState],
  );
}

async function measure(kind) {
  const context = await browser.newContext({ viewport: { width: 1100, height: 800 } });
  const page = await context.newPage();
  page.on("pageerror", (e) => console.error("first-render: page error", e));
  let out;
  if (kind === "plain") {
    await page.goto(url.replace("/#/apps", `/plain-rows.html#${N}`));
    out = await timeTo(page, N, "li.plain-row", null);
  } else {
    const n = kind === "empty" ? 0 : N;
    await page.addInitScript(stub, n);
    await page.goto(url);
    out = n === 0 ? await timeTo(page, 0, '[data-testid="app-card"]', "empty") : await timeTo(page, n, '[data-testid="app-card"]', null);
    if (n > 0) {
      // Typing in the search box over N apps: input to the next painted frame.
      out.search = await page.evaluate(async () => {
        const input = document.querySelector('[data-testid="app-search"]');
        const start = performance.now();
        input.value = "Bench App 4";
        input.dispatchEvent(new Event("input", { bubbles: true }));
        await new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
        return performance.now() - start;
      });
    }
  }
  await context.close();
  return out;
}

const rows = [];
for (let run = 0; run <= RUNS; run++) {
  // Interleaved, so each ratio compares measurements taken seconds apart.
  const cards = await measure("cards");
  const empty = await measure("empty");
  const plain = await measure("plain");
  if (run > 0) {
    // run 0 warms the browser's caches
    rows.push({
      dcl: cards.dcl,
      first: cards.first,
      all: cards.all,
      search: cards.search,
      empty: empty.all,
      plain: plain.all,
      firstRatio: cards.first / empty.all,
      allRatio: cards.all / plain.all,
    });
  }
}
await browser.close();
server.close();

const sorted = (k) => rows.map((r) => r[k]).sort((a, b) => a - b);
const median = (xs) => (xs.length % 2 === 1 ? xs[(xs.length - 1) / 2] : (xs[xs.length / 2 - 1] + xs[xs.length / 2]) / 2);
const fmt = (k, unit = "ms", digits = 0) => {
  const xs = sorted(k);
  const f = (x) => `${x.toFixed(digits)}${unit === "ms" ? " ms" : "×"}`;
  return `${f(median(xs))} (min ${f(xs[0])}, max ${f(xs[xs.length - 1])})`;
};
console.log(`host UI first render, ${N} apps, ${RUNS} runs (from navigation start; median (min, max)):`);
console.log(`  DOMContentLoaded              ${fmt("dcl")}`);
console.log(`  first card painted            ${fmt("first")}`);
console.log(`  all ${N} cards                 ${fmt("all")}`);
console.log(`  search keystroke              ${fmt("search")} (input to the next painted frame)`);
console.log(`  baseline: 0 apps, rendered    ${fmt("empty")}`);
console.log(`  baseline: ${N} plain <li> rows ${fmt("plain")}`);
console.log(`  ratio first card / 0 apps     ${fmt("firstRatio", "x", 2)}`);
console.log(`  ratio all cards / plain rows  ${fmt("allRatio", "x", 2)}`);
if (process.env.BENCH_JSON) console.log(JSON.stringify(rows));
