// axe-core on every host page, light and dark: no serious or critical violation.
import { join } from "node:path";

import { expect, test } from "@playwright/test";

import { expectAccessible, FIXTURES, missingBackend, openHost, serve, zipFixture, type Served } from "./center-lib";

const missing = missingBackend();
let served: Served;

// One server per test: the launch token signs in once.
test.beforeEach(async () => {
  test.fixme(missing !== null, missing ?? "");
  served = await serve();
  served.cli("install", "--yes", "--sideload", join(FIXTURES, "hello-app"));
});
test.afterEach(async () => {
  await served?.stop();
});

const PAGES = [
  "#/apps",
  "#/apps/hello-app",
  "#/apps/hello-app/entries",
  "#/apps/hello-app/permissions",
  "#/apps/hello-app/data",
  "#/apps/hello-app/versions",
  "#/apps/hello-app/danger",
  "#/running",
  "#/grants",
  "#/diagnostics",
  "#/settings",
];

for (const scheme of ["light", "dark"] as const) {
  test(`every host page passes axe (${scheme})`, async ({ page }) => {
    await page.emulateMedia({ colorScheme: scheme });
    await openHost(page, served);
    await expect(page.locator("html")).toHaveAttribute("data-theme", scheme);
    const origin = new URL(page.url()).origin;
    for (const hash of PAGES) {
      await page.goto(`${origin}/${hash}`);
      await expect(page.locator("main h2:visible").first()).toBeVisible();
      // Pages load their data after the first render (no networkidle: the event long poll stays open).
      await expect(page.locator(".loading")).toHaveCount(0);
      await expectAccessible(page, `${hash} (${scheme})`);
    }
    // The running page with an app open, and the review sheet.
    await page.goto(`${origin}/#/apps`);
    await page.locator('[data-testid="app-card"][data-app-name="hello-app"] button.open-entry[data-entry-key="notes"]').click();
    await expect(page.locator('iframe[data-app-id="hello-app"]')).toBeVisible();
    await expectAccessible(page, `running (${scheme})`);
    await page.getByTestId("nav-apps").click();
    // The review sheet: its review, or its failure while the backend lacks the center commands.
    await page.getByTestId("add-app-file").setInputFiles(zipFixture("hello-app-v2"));
    await expect(page.getByTestId("review-sheet").locator("[data-phase]")).toHaveAttribute("data-phase", /^(review|failed)$/);
    await expectAccessible(page, `review sheet (${scheme})`);
    await page.getByTestId("review-cancel").click();
  });
}
