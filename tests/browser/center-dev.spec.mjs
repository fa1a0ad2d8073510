// The dev loop's consent from the host UI: `apphost dev` (a second process on the same data
// directory) holds a save that adds a permission; the host UI shows the held change's diff in a
// banner, and Approve installs it (`dev_consent`); Dismiss only hides the banner.
import { spawn } from "node:child_process";
import { copyFileSync, cpSync, mkdtempSync, rmSync } from "node:fs";
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
  // The first pass installs the folder.
  await expect.poll(() => (cli(server.data, ["list"]) ?? []).map((a) => a.name), { timeout: 20_000 }).toEqual(["hello-app"]);
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
