// The app in the real host: `apphost dev app --serve` installs app/ on a fresh data directory.
// lime.agent needs a model, so a placeholder one is set first (`apphost model set`; nothing
// listens on it, so the workflow's agent step fails and the run ends `failed` instead of waiting
// for your review). Chromium opens the page, the frame mounts, a run starts through
// lime.workflow.start and the page follows it to its end; the run is on the host's Tasks page.
// Run: npm run test:e2e (APPHOST_BIN=… to pick apphost).
import { expect, test } from "@playwright/test";

import { apphost, startHost } from "./host.mjs";

const FRAME = 'iframe[data-app-id="{{name}}"][data-entry-key="main"]';
let host;

test.beforeAll(async () => {
  host = await startHost({
    app: "{{name}}",
    entry: "main",
    before: (h) => apphost(h, ["model", "set", "--base-url", "http://127.0.0.1:9/v1", "--model", "placeholder", "--no-api-key"]),
  });
});
test.afterAll(async () => {
  await host?.stop();
});

test("the frame mounts, starts a run and follows it to its end", async ({ page }) => {
  await page.goto(host.url);
  const app = page.frameLocator(FRAME);
  await expect(app.locator("body")).toHaveAttribute("data-status", "ready", { timeout: 20_000 });
  await expect(app.locator("#latest")).toHaveText("–");
  await app.locator("#topic").fill("owls");
  await app.locator("#run").click();
  await expect(app.locator("#run-status")).toHaveText(/^The run ended: /, { timeout: 45_000 });
  await expect(app.locator("#progress li").first()).toHaveText("Started");

  // The run is the host's too: its Tasks page lists it.
  await page.goto(`${new URL(host.entryUrl).origin}/#/tasks`);
  await expect(page.getByTestId("run-row").first()).toBeVisible({ timeout: 20_000 });
});
