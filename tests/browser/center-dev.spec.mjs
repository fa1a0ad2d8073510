// The dev loop's consent from the host UI: `apphost dev` (a second process on the same data
// directory) holds a save that adds a permission; the host UI shows the held change's diff in a
// banner, and Approve installs it (`dev_consent`); Dismiss only hides the banner.
import { spawn } from "node:child_process";
import { copyFileSync, cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

import { expect, test } from "@playwright/test";

import { card, expectAccessible, FIXTURES, granted, openHost, requireCommands } from "./lib/center.mjs";
import { apphostBin, cli, startServer } from "./lib/server.mjs";

let server;
let dev;
let folder;

test.beforeEach(async () => {
  server = await startServer();
  folder = join(mkdtempSync(join(tmpdir(), "apphost-devapp-")), "hello-app");
  cpSync(join(FIXTURES, "hello-app"), folder, { recursive: true });
  dev = spawn(apphostBin(), ["--json", "--data-dir", server.data, "dev", "--no-open", folder], {
    stdio: ["ignore", "pipe", "inherit"],
    env: { ...process.env, APPHOST_SECRET_STORE: "file", APPHOST_SECRET_KEY_FILE: join(server.data, "..", "secrets.key") },
  });
  // The first pass installs the folder. `apphost dev` and the server are still opening and
  // recovering the new data directory while this polls, and a `list` racing their first
  // transactions may be refused as store.db "database is locked" (seen once in a CI run): that
  // is "not installed yet" for this wait, which keeps polling.
  const listed = () => {
    try {
      return (cli(server.data, ["list"]) ?? []).map((a) => a.name);
    } catch (error) {
      if (/database is locked/.test(String(error))) return [];
      throw error;
    }
  };
  await expect.poll(listed, { timeout: 20_000 }).toEqual(["hello-app"]);
});
test.afterEach(async () => {
  if (dev?.exitCode === null) {
    const exited = new Promise((resolve) => dev.once("exit", resolve));
    dev.kill("SIGTERM");
    await exited;
  }
  await server?.stop();
  rmSync(join(folder, ".."), { recursive: true, force: true });
});

const version = (server) => (cli(server.data, ["list"]) ?? [])[0]?.activeVersion;

test("a widening save is held; the banner shows its diff; Approve installs it", async ({ page }) => {
  await openHost(page, server);
  await requireCommands(page, ["dev_status", "dev_consent"]);
  await expect(card(page, "hello-app")).toHaveAttribute("data-dev", "true");
  const before = version(server);

  copyFileSync(join(FIXTURES, "hello-app-v2", "app.permissions.yaml"), join(folder, "app.permissions.yaml"));
  const banner = page.locator('[data-testid="dev-banner"][data-app-id="hello-app"]');
  await expect(banner).toHaveAttribute("data-status", "awaiting-consent", { timeout: 20_000 });
  await expect(banner.locator('[data-key="notes_files"]')).toHaveAttribute("data-change", "added");
  expect(version(server), "held: nothing installed yet").toBe(before);
  expect(granted(server, "hello-app", "notes_files")).not.toBe(true);
  await expectAccessible(page, "the dev banner");

  // Dismiss hides it (the change stays held); a reload shows it again.
  await banner.getByTestId("dev-dismiss").click();
  await expect(banner).toHaveCount(0);
  expect(version(server)).toBe(before);
  await page.reload();
  await expect(banner).toHaveAttribute("data-status", "awaiting-consent");

  await banner.getByTestId("dev-approve").click();
  await expect(banner).toHaveCount(0);
  await expect.poll(() => version(server)).not.toBe(before);
  expect(granted(server, "hello-app", "notes_files")).toBe(true);
  await expect(page.getByTestId("dev-consent-error")).toHaveCount(0);
});

test("a non-widening save remounts the open frame; an invalid save shows its findings and the last good version keeps running", async ({ page }) => {
  const FRAME = 'iframe[data-app-id="hello-app"][data-entry-key="notes"]';
  const pagePath = join(folder, "dist", "ui", "index.html");
  const manifestPath = join(folder, "APP.md");
  const goodManifest = readFileSync(manifestPath, "utf8");
  await openHost(page, server, "/apps/hello-app/notes");
  await requireCommands(page, ["dev_status"]);
  const frameElement = page.locator(FRAME);
  const frame = page.frameLocator(FRAME);
  await expect(frame.locator("#title")).toHaveText("Hello Notes", { timeout: 20_000 });
  // A running dev app says DEV on its tab too, not only on its card.
  const tab = page.locator('[data-testid="app-tab"][data-app-id="hello-app"][data-entry-key="notes"]');
  await expect(tab.getByTestId("tab-dev")).toHaveText("DEV");
  const firstMount = await frameElement.getAttribute("data-mount-id");
  const banner = page.locator('[data-testid="dev-banner"][data-app-id="hello-app"]');

  // Page text only: installed without consent, the open frame remounts with the new text.
  writeFileSync(pagePath, readFileSync(pagePath, "utf8").replace(">Hello Notes</h1>", ">Hello Edited</h1>"));
  await expect(frame.locator("#title")).toHaveText("Hello Edited", { timeout: 20_000 });
  const secondMount = await frameElement.getAttribute("data-mount-id");
  expect(secondMount).not.toBe(firstMount);
  await expect(banner).toHaveCount(0);
  const good = version(server);

  // A broken APP.md: the banner lists the findings; the frame keeps the last good version.
  writeFileSync(manifestPath, goodManifest.replace(/^name: hello-app$/m, "name: [not, a, name"));
  await expect(banner).toHaveAttribute("data-status", "invalid", { timeout: 20_000 });
  await expect(banner.locator(".dev-findings li").first()).toBeVisible();
  await expectAccessible(page, "the invalid-save banner");
  expect(version(server)).toBe(good);
  await expect(frameElement).toHaveAttribute("data-mount-id", secondMount);
  await expect(frame.locator("#title")).toHaveText("Hello Edited");

  // Fixed (with new text): installed again, the frame remounts, the banner goes.
  writeFileSync(pagePath, readFileSync(pagePath, "utf8").replace(">Hello Edited</h1>", ">Hello Fixed</h1>"));
  writeFileSync(manifestPath, goodManifest);
  await expect(frame.locator("#title")).toHaveText("Hello Fixed", { timeout: 20_000 });
  expect(await frameElement.getAttribute("data-mount-id")).not.toBe(secondMount);
  await expect(banner).toHaveCount(0);
});
