// axe-core on every host page of the app center, light and dark: no serious or critical
// violation. Pages whose commands the backend lacks are checked with their error boxes.

import { expect, test } from "@playwright/test";

import { expectAccessible, openHost, zipFixture } from "./lib/center.mjs";
import { startServer } from "./lib/server.mjs";

let server;

test.beforeEach(async () => {
  server = await startServer({ install: ["fixtures/packages/good/hello-app"] });
});
test.afterEach(async () => {
  await server?.stop();
});

const PAGES = [
  "#/apps",
  "#/apps/hello-app",
  "#/apps/hello-app/entries",
  "#/apps/hello-app/permissions",
  "#/apps/hello-app/data",
  "#/apps/hello-app/tasks",
  "#/apps/hello-app/versions",
  "#/apps/hello-app/danger",
  "#/running",
  "#/grants",
  "#/diagnostics",
  "#/settings",
  "#/tasks",
];

for (const scheme of ["light", "dark"]) {
  test(`every host page passes axe (${scheme})`, async ({ page }) => {
    await page.emulateMedia({ colorScheme: scheme });
    await openHost(page, server);
    await expect(page.locator("html")).toHaveAttribute("data-theme", scheme);
    for (const hash of PAGES) {
      await page.goto(`${server.origin}/${hash}`);
      await expect(page.locator("main h2:visible").first()).toBeVisible();
      // Pages load their data after the first render (no networkidle: the event long poll stays open).
      await expect(page.locator(".loading")).toHaveCount(0);
      await expectAccessible(page, `${hash} (${scheme})`);
    }
    // The running page with an app open, and the review sheet (its review, or its failure while
    // the backend lacks the center commands).
    await page.goto(`${server.origin}/#/apps`);
    await page.locator('[data-testid="app-card"][data-app-name="hello-app"] button.open-entry[data-entry-key="notes"]').click();
    await expect(page.locator('iframe[data-app-id="hello-app"]')).toBeVisible();
    await expectAccessible(page, `running (${scheme})`);
    await page.getByTestId("nav-apps").click();
    await page.getByTestId("add-app-file").setInputFiles(zipFixture("hello-app-v2"));
    await expect(page.getByTestId("review-sheet").locator("[data-phase]")).toHaveAttribute("data-phase", /^(review|failed)$/);
    await expectAccessible(page, `review sheet (${scheme})`);
    await page.getByTestId("review-cancel").click();
  });
}
