// The permission prompt in the browser mode (`apphost serve`), as tests/e2e/conformance.test.mjs
// checks it in the desktop window: the conformance app's `prompt` entry holds an optional storage
// permission (scratch_storage). Its first call waits for the user: the host UI shows the prompt
// (and a marker on the app's tab); Deny answers APP_E002 and grants nothing; a new mount asks
// again; Allow always grants it (the grants page and `apphost grants` agree) and the call runs.
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";

import { expect, test } from "@playwright/test";

import { expectAccessible, granted } from "./lib/center.mjs";
import { cli, REPO, startServer } from "./lib/server.mjs";

test.describe.configure({ mode: "serial" });

const APP = "conformance-app";
const FRAME = `iframe[data-app-id="${APP}"][data-entry-key="prompt"]`;
let server;
let page;
let staged;

/** The conformance app with the built SDK in ui/sdk/ (as scripts/e2e.sh stages it). */
function stageConformanceApp() {
  const dist = join(REPO, "bridge-sdk", "dist");
  if (!existsSync(join(dist, "index.js"))) throw new Error("bridge-sdk/dist is missing: run `npm run build` first");
  const folder = join(mkdtempSync(join(tmpdir(), "apphost-conformance-")), APP);
  cpSync(join(REPO, "fixtures", "apps", APP), folder, { recursive: true });
  for (const file of readdirSync(dist, { recursive: true })) {
    if (!String(file).endsWith(".js")) continue;
    const to = join(folder, "ui", "sdk", relative(dist, join(dist, String(file))));
    mkdirSync(join(to, ".."), { recursive: true });
    cpSync(join(dist, String(file)), to);
  }
  return folder;
}

const frame = () => page.frameLocator(FRAME);
const row = (name) => frame().locator(`#results tr[data-test="${name}"]`);
const prompt = () => page.locator('[data-testid="permission-prompt"]');
const tab = () => page.locator(`[data-testid="app-tab"][data-app-id="${APP}"][data-entry-key="prompt"]`);

/** Opens the prompt entry from its deep link (a new mount each time). */
async function openPromptEntry() {
  await page.goto(`${server.origin}/apps/${APP}/prompt`);
  await expect(row("prompt.scratch")).toBeAttached({ timeout: 20_000 });
}

/** Clicks the check's Run button in the frame; returns the run count it had before. */
async function run(name) {
  const before = Number(await row(name).getAttribute("data-runs"));
  await frame().locator(`button[data-run="${name}"]`).click();
  return before;
}

/** Waits for the check's run after `before` to finish; returns its detail text. */
async function finished(name, before) {
  await expect.poll(async () => Number(await row(name).getAttribute("data-runs")), { timeout: 20_000 }).toBeGreaterThan(before);
  await expect(row(name)).not.toHaveAttribute("data-result", "running", { timeout: 20_000 });
  return (await row(name).locator("td.detail").textContent()).trim();
}

test.beforeAll(async ({ browser }) => {
  staged = stageConformanceApp();
  server = await startServer();
  cli(server.data, ["install", "--yes", "--sideload", staged]);
  page = await (await browser.newContext()).newPage();
  await page.goto(server.signIn("/"));
  await expect(page.locator("#app-list")).toBeAttached();
});

test.afterAll(async () => {
  await page?.context().close();
  if (server) expect(await server.stop()).toBe(0);
  if (staged) rmSync(join(staged, ".."), { recursive: true, force: true });
});

test("Deny: the prompt shows in the host UI and on the tab; the app gets APP_E002 and no grant exists", async () => {
  await openPromptEntry();
  expect(granted(server, APP, "scratch_storage")).not.toBe(true);
  const before = await run("prompt.scratch");

  await expect(prompt()).toBeVisible({ timeout: 10_000 });
  await expect(prompt().locator("h2")).toContainText(/scratch_storage/i);
  await expect(tab().locator('[data-testid="tab-prompt"]')).toBeVisible();
  await expect(row("prompt.scratch")).toHaveAttribute("data-result", "running");
  await expectAccessible(page, "the open permission prompt");

  await page.locator("#prompt-deny").click();
  await expect(prompt()).toHaveCount(0);
  expect(await finished("prompt.scratch", before)).toBe("APP_E002");
  await expect(tab().locator('[data-testid="tab-prompt"]')).toHaveCount(0);
  expect(granted(server, APP, "scratch_storage")).not.toBe(true);

  // Denied for this mount: the next call is refused without asking again.
  const again = await run("prompt.scratch");
  expect(await finished("prompt.scratch", again)).toBe("APP_E002");
  await expect(prompt()).toHaveCount(0);
});

test("again on a new mount: Allow always grants it; the capability works without another prompt", async () => {
  await openPromptEntry();
  const before = await run("prompt.scratch");
  await expect(prompt()).toBeVisible({ timeout: 10_000 });
  await page.locator("#prompt-allow-always").click();
  await expect(prompt()).toHaveCount(0);
  expect(await finished("prompt.scratch", before)).toBe("ok");
  expect(granted(server, APP, "scratch_storage")).toBe(true);

  const silent = await run("prompt.scratch");
  expect(await finished("prompt.scratch", silent)).toBe("ok");
  await expect(prompt()).toHaveCount(0);

  // The grants page says so too.
  await page.getByRole("link", { name: "Grants" }).click();
  await expect(
    page.locator(`[data-testid="grant-row"][data-app-id="${APP}"][data-key="scratch_storage"]`),
  ).toHaveAttribute("data-granted", "true");
});
