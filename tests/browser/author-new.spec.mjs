// `apphost new` to a running app (issue 23's figure): a fresh project from the page template,
// `apphost dev <project>/app --serve` on a fresh data directory, the entry's deep link in
// Chromium, until the app's frame has mounted and its page connected through the SDK
// (`body[data-status="ready"]` inside the frame). The time from the start of `apphost new` to
// that moment is printed (median and max over RUNS fresh projects; target: under 3 s); building
// AppHost and starting Chromium are not in it. tests/author_new.rs runs each template's own
// tests; this spec is the timing, in the suite's browser step.
import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";

import { expect, test } from "@playwright/test";

import { apphostBin } from "./lib/server.mjs";

const RUNS = 5;

async function newToMountedFrame(page, n) {
  const root = mkdtempSync(join(tmpdir(), "apphost-new-"));
  const env = { ...process.env, APPHOST_SECRET_STORE: "file", APPHOST_SECRET_KEY_FILE: join(root, "secrets.key") };
  let dev;
  try {
    const started = performance.now();
    const made = spawnSync(apphostBin(), ["--json", "new", `timed-app-${n}`, "--dir", root], { encoding: "utf8", env });
    expect(made.status, made.stderr).toBe(0);
    const { appId, package: pkg } = JSON.parse(made.stdout);
    dev = spawn(apphostBin(), ["--json", "--data-dir", join(root, "data"), "dev", pkg, "--serve"], { stdio: ["ignore", "pipe", "pipe"], env });
    let devErr = "";
    dev.stderr.on("data", (d) => (devErr += d));
    const first = await new Promise((resolve, reject) => {
      createInterface({ input: dev.stdout }).once("line", resolve);
      dev.once("exit", (code) => reject(new Error(`apphost dev --serve exited with ${code}: ${devErr}`)));
    });
    const url = new URL(JSON.parse(first).url);
    await page.goto(`${url.origin}/apps/${appId}/main?token=${url.searchParams.get("token")}`);
    const frame = page.frameLocator(`iframe[data-app-id="${appId}"][data-entry-key="main"][data-mount-id]`);
    await expect(frame.locator("body")).toHaveAttribute("data-status", "ready", { timeout: 20_000 });
    const ms = performance.now() - started;
    await expect(frame.locator("#clicks")).toHaveText("0 clicks");
    return ms;
  } finally {
    if (dev?.exitCode === null) {
      const exited = new Promise((resolve) => dev.once("exit", resolve));
      dev.kill("SIGTERM");
      await exited;
    }
    rmSync(root, { recursive: true, force: true });
  }
}

test("apphost new to the first mounted frame in apphost dev --serve", async ({ page }) => {
  test.setTimeout(30_000 * RUNS);
  const times = [];
  for (let n = 0; n < RUNS; n++) times.push(await newToMountedFrame(page, n));
  times.sort((a, b) => a - b);
  const median = times[Math.floor(times.length / 2)];
  const max = times.at(-1);
  const figure = `apphost new → first mounted frame: median ${median.toFixed(0)} ms, max ${max.toFixed(0)} ms over ${RUNS} runs (target < 3000 ms)`;
  console.log(figure);
  test.info().annotations.push({ type: "figure", description: figure });
  // Generous bound for a loaded machine; the figure above is what to compare with the target.
  expect(median).toBeLessThan(10_000);
});

// The workflow template (issue 20/23): a fresh project's page mounts in `apphost dev --serve`
// (a placeholder model set first: its workflow's agent step needs one), its Run action is on the
// app's Entries tab, and a run started from the page shows on the host's Tasks page.
test("apphost new --template workflow: the page mounts and its run shows on the Tasks page", async ({ page }) => {
  test.setTimeout(90_000);
  const root = mkdtempSync(join(tmpdir(), "apphost-new-wf-"));
  const env = { ...process.env, APPHOST_SECRET_STORE: "file", APPHOST_SECRET_KEY_FILE: join(root, "secrets.key") };
  const data = join(root, "data");
  let dev;
  try {
    const made = spawnSync(apphostBin(), ["--json", "new", "wf-app", "--template", "workflow", "--dir", root], { encoding: "utf8", env });
    expect(made.status, made.stderr).toBe(0);
    const { appId, package: pkg } = JSON.parse(made.stdout);
    const model = spawnSync(apphostBin(), ["--json", "--data-dir", data, "model", "set", "--base-url", "http://127.0.0.1:9/v1", "--model", "placeholder", "--no-api-key"], { encoding: "utf8", env });
    expect(model.status, model.stderr).toBe(0);
    dev = spawn(apphostBin(), ["--json", "--data-dir", data, "dev", pkg, "--serve"], { stdio: ["ignore", "pipe", "pipe"], env });
    let devErr = "";
    dev.stderr.on("data", (d) => (devErr += d));
    const first = await new Promise((resolve, reject) => {
      createInterface({ input: dev.stdout }).once("line", resolve);
      dev.once("exit", (code) => reject(new Error(`apphost dev --serve exited with ${code}: ${devErr}`)));
    });
    const url = new URL(JSON.parse(first).url);
    await page.goto(`${url.origin}/apps/${appId}/main?token=${url.searchParams.get("token")}`);
    const frame = page.frameLocator(`iframe[data-app-id="${appId}"][data-entry-key="main"][data-mount-id]`);
    await expect(frame.locator("body")).toHaveAttribute("data-status", "ready", { timeout: 20_000 });
    await frame.locator("#topic").fill("owls");
    await frame.locator("#run").click();
    // No model answers (a placeholder): the agent step fails and the run ends.
    await expect(frame.locator("#run-status")).toHaveText(/^The run ended: /, { timeout: 45_000 });
    await page.goto(`${url.origin}/#/apps/${appId}/entries`);
    await expect(page.getByTestId("run-workflow")).toBeVisible({ timeout: 20_000 });
    await page.goto(`${url.origin}/#/tasks`);
    await expect(page.getByTestId("run-row").first()).toBeVisible({ timeout: 20_000 });
  } finally {
    if (dev?.exitCode === null) {
      const exited = new Promise((resolve) => dev.once("exit", resolve));
      dev.kill("SIGTERM");
      await exited;
    }
    rmSync(root, { recursive: true, force: true });
  }
});
