// The dev console (issue 23): `apphost dev <folder> --serve` on a fixture app with every silent
// failure (a <form> without ui.frame.forms, an inline script, an inline style, a remote image, an
// uncaught exception, an unhandled rejection, a refused call): each is exactly one line on dev's
// output (stderr, with file and line where the browser gives them) and one entry of the overlay
// on the app's tab. Adversarial: an installed (non-dev) app's frame posting dev reports is
// ignored; a flood is rate-limited; a 1 MB message is cut. Figure: reload after save, median
// and max over SAVES saves (the time from the write to the new text in the remounted frame).
import { spawn } from "node:child_process";
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";

import { expect, test } from "@playwright/test";

import { apphostBin, cli, REPO } from "./lib/server.mjs";

const APP = "dev-console-app";
const FIXTURE = join(REPO, "tests", "browser", "fixtures", APP);
const SDK = join(REPO, "fixtures", "apps", "notes", "ui", "sdk");
const FRAME = `iframe[data-app-id="${APP}"][data-entry-key="main"][data-mount-id]`;
const SAVES = 20;

let root;
let folder;
let data;
let dev;
let devErr = "";
let signIn;
let origin;

test.beforeEach(async () => {
  root = mkdtempSync(join(tmpdir(), "apphost-devconsole-"));
  folder = join(root, "app");
  data = join(root, "data");
  cpSync(FIXTURE, folder, { recursive: true });
  cpSync(SDK, join(folder, "ui", "sdk"), { recursive: true });
  devErr = "";
  dev = spawn(apphostBin(), ["--json", "--data-dir", data, "dev", folder, "--serve"], {
    stdio: ["ignore", "pipe", "pipe"],
    env: { ...process.env, APPHOST_SECRET_STORE: "file", APPHOST_SECRET_KEY_FILE: join(root, "secrets.key") },
  });
  dev.stderr.on("data", (d) => (devErr += d));
  const first = await new Promise((resolve, reject) => {
    createInterface({ input: dev.stdout }).once("line", resolve);
    dev.once("exit", (code) => reject(new Error(`apphost dev --serve exited with ${code}: ${devErr}`)));
  });
  const url = new URL(JSON.parse(first).url);
  signIn = (path) => `${url.origin}${path}?token=${url.searchParams.get("token")}`;
  origin = url.origin;
});

test.afterEach(async () => {
  if (dev?.exitCode === null) {
    const exited = new Promise((resolve) => dev.once("exit", resolve));
    dev.kill("SIGTERM");
    await exited;
  }
  rmSync(root, { recursive: true, force: true });
});

/** dev's output lines of the dev console for `app`. */
const consoleLines = (app = APP) => devErr.split("\n").filter((l) => l.startsWith(`dev: ${app}: `));

async function openDevApp(page) {
  await page.goto(signIn(`/apps/${APP}/main`));
  const frame = page.frameLocator(FRAME);
  await expect(frame.locator("body")).toHaveAttribute("data-status", "ready", { timeout: 20_000 });
  return frame;
}

const EXPECTED = {
  "form without ui.frame.forms": /<form> element\(s\) cannot be submitted: the app does not declare ui\.frame\.forms at \S+\/index\.html/,
  "inline script": /the CSP blocked inline \(script-src-elem\).* at \S+\/index\.html:7/,
  "inline style": /the CSP blocked inline \(style-src-elem\).* at \S+\/index\.html:6/,
  "remote image": /the CSP blocked https:\/\/example\.com\/remote\.png \(img-src\)/,
  "uncaught exception": /uncaught error: .*boom from app\.js at \S+\/app\.js:\d+:\d+/,
  "unhandled rejection": /unhandled promise rejection: Error: nobody catches this rejection/,
  "refused call": /refused call lime\.storage\.get: \S+ \[capability\.not_declared\]/,
};

test("each silent failure is one line on apphost dev --serve's output and one overlay entry", async ({ page }) => {
  await openDevApp(page);
  const missing = () => Object.entries(EXPECTED).filter(([, re]) => !consoleLines().some((l) => re.test(l))).map(([k]) => k);
  await expect.poll(missing, { timeout: 20_000, message: () => devErr }).toEqual([]);
  // Late duplicates would show up meanwhile.
  await page.waitForTimeout(500);
  for (const [what, re] of Object.entries(EXPECTED)) {
    expect(consoleLines().filter((l) => re.test(l)), `${what}:\n${consoleLines().join("\n")}`).toHaveLength(1);
  }
  expect(consoleLines(), consoleLines().join("\n")).toHaveLength(Object.keys(EXPECTED).length);
  const overlay = page.locator(`[data-testid="dev-console"][data-app-id="${APP}"]`);
  await expect(overlay).toBeVisible();
  const entries = overlay.getByTestId("dev-console-line");
  await expect(entries).toHaveCount(Object.keys(EXPECTED).length);
  for (const re of Object.values(EXPECTED)) {
    await expect(entries.filter({ hasText: re })).toHaveCount(1);
  }
});

test("a non-dev app's frame posting dev reports is ignored; a flood is rate-limited; a 1 MB message is cut", async ({ page }) => {
  cli(data, ["install", "--yes", "--sideload", join(REPO, "fixtures", "packages", "good", "hello-app")]);
  await openDevApp(page);
  await expect.poll(() => consoleLines().length, { timeout: 20_000 }).toBe(Object.keys(EXPECTED).length);
  const devFrame = page.frames().find((f) => f.url().includes("dev-console-app"));
  expect(devFrame, page.frames().map((f) => f.url()).join(" ")).toBeDefined();

  // A flood: 300 reports at once. A burst passes; the rest is dropped, and said once later.
  await devFrame.evaluate(() => {
    for (let i = 0; i < 300; i++) parent.postMessage({ apphostDevConsole: 1, kind: "error", message: `flood ${i}` }, "*");
  });
  await page.waitForTimeout(1500);
  const flood = () => consoleLines().filter((l) => l.includes("flood "));
  expect(flood().length).toBeGreaterThan(0);
  expect(flood().length).toBeLessThanOrEqual(22);
  // A 1 MB message, with markup: one bounded line, and the overlay shows it as text.
  await devFrame.evaluate(() => {
    parent.postMessage({ apphostDevConsole: 1, kind: "error", message: `<img src=x onerror=alert(1)>${"M".repeat(1_000_000)}` }, "*");
  });
  await expect.poll(() => consoleLines().filter((l) => l.includes("<img src=x")).length, { timeout: 10_000 }).toBe(1);
  const big = consoleLines().find((l) => l.includes("<img src=x"));
  expect(big.length).toBeLessThan(500);
  expect(big).toContain("…");
  await expect.poll(() => consoleLines().some((l) => /more report\(s\) dropped/.test(l))).toBe(true);
  await expect(page.locator('[data-testid="dev-console"] img')).toHaveCount(0);

  // The installed app: its pages carry no dev console, and what its frame posts is ignored.
  // Signed in already (the token is used once): the deep link alone.
  await page.goto(`${origin}/apps/hello-app/notes`);
  const hello = page.frameLocator('iframe[data-app-id="hello-app"][data-mount-id]');
  await expect(hello.locator("#title")).toHaveText("Hello Notes", { timeout: 20_000 });
  const helloFrame = page.frames().find((f) => f.url().includes("hello-app"));
  expect(await helloFrame.evaluate(() => document.querySelector('script[src*="__apphost"]'))).toBeNull();
  await helloFrame.evaluate(() => {
    for (const kind of ["error", "csp", "rejection", "form"]) {
      parent.postMessage({ apphostDevConsole: 1, kind, message: "forged by an installed app" }, "*");
    }
  });
  await page.waitForTimeout(1000);
  expect(consoleLines("hello-app")).toEqual([]);
  expect(devErr).not.toContain("forged by an installed app");
  await expect(page.locator('[data-testid="dev-console"][data-app-id="hello-app"]')).toHaveCount(0);
});

test("a page whose script never runs: the overlay says the app never connected, with validate's likely causes", async ({ page }) => {
  const pagePath = join(folder, "ui", "index.html");
  // Only the inline script is left: the CSP blocks it, so nothing ever says app:ready.
  writeFileSync(pagePath, readFileSync(pagePath, "utf8").replace('<script type="module" src="app.js"></script>', ""));
  await expect.poll(() => consoleLines().some((l) => l.includes("updated to")) || /"event":"updated"/.test(devErr), { timeout: 20_000 }).toBe(true);
  await page.goto(signIn(`/apps/${APP}/main`));
  const entry = page.locator('[data-testid="dev-console-line"][data-kind="never-connected"]');
  await expect(entry).toHaveCount(1, { timeout: 20_000 });
  await expect(entry).toContainText(/the app never connected \(no handshake within 5 s\); likely causes: .*index\.html/);
  expect(consoleLines().filter((l) => l.includes("never connected"))).toHaveLength(1);
});

test("figure: reload after save in apphost dev --serve", async ({ page }) => {
  test.setTimeout(SAVES * 10_000);
  const frame = await openDevApp(page);
  const pagePath = join(folder, "ui", "index.html");
  const original = readFileSync(pagePath, "utf8");
  const times = [];
  for (let n = 1; n <= SAVES; n++) {
    const title = `Saved ${n}`;
    const started = performance.now();
    writeFileSync(pagePath, original.replace(">Dev console failures</h1>", `>${title}</h1>`));
    await expect(frame.locator("#title")).toHaveText(title, { timeout: 10_000 });
    times.push(performance.now() - started);
  }
  times.sort((a, b) => a - b);
  const median = times[Math.floor(times.length / 2)];
  const max = times.at(-1);
  const figure = `reload after save (apphost dev --serve): median ${median.toFixed(0)} ms, max ${max.toFixed(0)} ms over ${SAVES} saves`;
  console.log(figure);
  test.info().annotations.push({ type: "figure", description: figure });
  expect(median).toBeLessThan(5_000);
});
