// Dev loop in the real window: `apphost dev` watches a 5 MB copy of hello-app (renamed hello-dev) on the window's data
// directory while the window shows its entry; each save is timed until the window has loaded the
// remounted frame (a new iframe[data-app-id=hello-dev] fired `load`), clocked in the page
// (Date.now(), the same clock as this process).
//   BENCH_FILE=tests/e2e/dev-loop.bench.mjs APPHOST_BIN=… bash scripts/bench-bridge.sh
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { cpSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { createInterface } from "node:readline";
import { test } from "node:test";
import { fileURLToPath } from "node:url";

import { APPHOST_BIN, withApp } from "./lib/harness.mjs";
import { waitFor } from "./lib/webdriver.mjs";

const REPO = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const SAVES = Number(process.env.DEV_LOOP_SAVES ?? 10);

test("dev loop: save -> remounted frame loaded in the window (5 MB app)", async (t) => {
  const folder = join(mkdtempSync(join(tmpdir(), "apphost-devloop-")), "hello-dev");
  cpSync(join(REPO, "fixtures/packages/good/hello-app"), folder, { recursive: true });
  const manifest = join(folder, "APP.md");
  writeFileSync(manifest, readFileSync(manifest, "utf8").replace(/^name: hello-app$/m, "name: hello-dev"));
  let seed = 0x2545f491;
  for (let i = 0; i < 5; i++) {
    const bytes = Buffer.alloc(1_000_000);
    for (let j = 0; j < bytes.length; j++) {
      seed ^= seed << 13;
      seed ^= seed >>> 17;
      seed ^= seed << 5;
      bytes[j] = seed & 0xff;
    }
    writeFileSync(join(folder, `dist/ui/asset${i}.bin`), bytes);
  }
  const dev = spawn(APPHOST_BIN, ["dev", "--no-open", "--json", folder], { stdio: ["ignore", "pipe", "inherit"] });
  const events = [];
  createInterface({ input: dev.stdout }).on("line", (line) => {
    try {
      events.push(JSON.parse(line));
    } catch {
      /* not an event line */
    }
  });
  try {
    await waitFor(async () => events.some((e) => e.event === "installed"), { timeoutMs: 60_000, what: "apphost dev to install" });
    await withApp(
      t,
      async (app) => {
        await app.waitForElement('iframe[data-app-id="hello-dev"]', 20_000);
        await app.execute(`
          window.__loads = [];
          new MutationObserver((records) => {
            for (const r of records) for (const n of r.addedNodes) {
              const frames = n.matches?.('iframe[data-app-id="hello-dev"]') ? [n] : [...(n.querySelectorAll?.('iframe[data-app-id="hello-dev"]') ?? [])];
              for (const f of frames) f.addEventListener("load", () => window.__loads.push(Date.now()), { once: true });
            }
          }).observe(document.body, { childList: true, subtree: true });`);
        const wall = [];
        for (let i = 0; i < SAVES; i++) {
          await new Promise((resolve) => setTimeout(resolve, 500));
          const before = await app.execute("return window.__loads.length;");
          const t0 = Date.now();
          writeFileSync(join(folder, "dist/ui/index.html"), `<!doctype html><p>save ${i}</p>`);
          const loaded = await waitFor(
            async () => {
              const loads = await app.execute("return window.__loads;");
              return loads.length > before ? loads[before] : null;
            },
            { timeoutMs: 20_000, intervalMs: 20, what: `the remounted frame after save ${i}` },
          );
          wall.push(loaded - t0);
        }
        wall.sort((a, b) => a - b);
        assert.equal(wall.length, SAVES);
        console.log(
          `# dev loop in the window, 5 MB app, ${SAVES} saves: save -> remounted frame loaded min ${wall[0]} / median ${wall[Math.floor(SAVES / 2)]} / max ${wall[SAVES - 1]} ms`,
        );
      },
      ["open", "hello-dev", "--entry", "notes"],
    );
  } finally {
    dev.kill();
  }
});
