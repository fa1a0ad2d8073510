// The app in the real host: `apphost dev app --serve` installs app/ on a fresh data directory;
// Chromium opens the entry, the frame mounts, a click is stored in lime.storage and is still
// there after the host page loads again. Run: npm run test:e2e (APPHOST_BIN=… to pick apphost).
import { expect, test } from "@playwright/test";

import { startHost } from "./host.mjs";

const FRAME = 'iframe[data-app-id="{{name}}"][data-entry-key="main"]';
let host;

test.beforeAll(async () => {
  host = await startHost({ app: "{{name}}", entry: "main" });
});
test.afterAll(async () => {
  await host?.stop();
});

test("the frame mounts and a click survives a reload", async ({ page }) => {
  await page.goto(host.url);
  const app = page.frameLocator(FRAME);
  await expect(app.locator("body")).toHaveAttribute("data-status", "ready", { timeout: 20_000 });
  await expect(app.locator("#clicks")).toHaveText("0 clicks");
  await app.locator("#count").click();
  await expect(app.locator("#clicks")).toHaveText("1 click");

  await page.goto(host.entryUrl);
  await expect(app.locator("body")).toHaveAttribute("data-status", "ready", { timeout: 20_000 });
  await expect(app.locator("#clicks")).toHaveText("1 click");
  await expect(app.locator("#error")).toHaveText("");
});
