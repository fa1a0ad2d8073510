// The app in the real host: `apphost dev app --serve` installs app/ on a fresh data directory.
// lime.agent needs a model, so a placeholder one is set first (`apphost model set`; nothing
// listens on it, so a task ends with an error result instead of an answer). Chromium opens the
// entry, the frame mounts, a question is kept in lime.storage (still there after the host page
// loads again) and its task runs to a result. Run: npm run test:e2e (APPHOST_BIN=… to pick apphost).
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

test("the frame mounts, a question is kept and its task ends", async ({ page }) => {
  await page.goto(host.url);
  const app = page.frameLocator(FRAME);
  await expect(app.locator("body")).toHaveAttribute("data-status", "ready", { timeout: 20_000 });
  await expect(app.locator("#last")).toHaveText("–");
  await app.locator("#question").fill("What is AppHost?");
  await app.locator("#ask").click();
  await expect(app.locator("#task")).toHaveText(/^The task ended: /, { timeout: 45_000 });

  await page.goto(host.entryUrl);
  await expect(app.locator("body")).toHaveAttribute("data-status", "ready", { timeout: 20_000 });
  await expect(app.locator("#last")).toHaveText("What is AppHost?");
});
