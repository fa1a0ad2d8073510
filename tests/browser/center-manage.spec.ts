// Managing installed apps in the browser: revoke on the grants page, update with the permission
// diff and rollback, and each uninstall mode showing its plan before it runs.
import { existsSync } from "node:fs";
import { join } from "node:path";

import { expect, test } from "@playwright/test";

import { card, FIXTURES, missingBackend, openHost, requireCommands, review, serve, zipFixture, type Served } from "./center-lib";

const missing = missingBackend();
let served: Served;

test.beforeEach(async () => {
  test.fixme(missing !== null, missing ?? "");
  served = await serve();
  served.cli("install", "--yes", "--sideload", join(FIXTURES, "hello-app"));
});
test.afterEach(async () => {
  await served?.stop();
});

test("revoke on the grants page", async ({ page }) => {
  await openHost(page, served);
  await requireCommands(page, ["list_grants", "revoke"]);
  await page.getByTestId("nav-grants").click();
  const row = page.locator('[data-testid="grant-row"][data-app-id="hello-app"][data-key="notes_storage"]');
  await expect(row).toHaveAttribute("data-granted", "true");
  await row.getByTestId("grant-revoke").click();
  await expect(row).toHaveAttribute("data-granted", "false");
  await page.reload();
  await expect(row).toHaveAttribute("data-granted", "false");
  // The CLI sees it: "-" where a granted permission shows its grant.
  expect(served.cli("grants", "hello-app")).toMatch(/^notes_storage\s+storage\s+required\s+-\s/m);
});

test("update shows the permission diff and asks again; rollback goes back", async ({ page }) => {
  await openHost(page, served);
  await requireCommands(page, ["upload_package", "review_install", "install", "app_detail", "rollback"]);
  await review(page, zipFixture("hello-app-v2"));
  const sheet = page.getByTestId("review-sheet");
  await expect(sheet.getByRole("heading", { name: /^Update / })).toBeVisible();
  await expect(sheet.locator('[data-testid="review-permission"][data-key="notes_files"]')).toHaveAttribute("data-change", "added");
  await sheet.getByTestId("review-consent").click();
  await expect(card(page, "hello-app").locator(".app-version")).toHaveAttribute("data-version", "1.1.0");

  await page.goto(`${new URL(page.url()).origin}/#/apps/hello-app/versions`);
  await page.getByTestId("rollback").click();
  await expect(card(page, "hello-app").locator(".app-version")).toHaveAttribute("data-version", "1.0.0");
});

for (const mode of ["keep-data", "delete-data", "export"] as const) {
  test(`uninstall (${mode}) shows its cleanup plan before it runs`, async ({ page }) => {
    await openHost(page, served);
    await requireCommands(page, ["app_detail", "uninstall_plan", "uninstall"]);
    await card(page, "hello-app").getByTestId("app-details").click();
    await page.getByTestId("detail-tab-danger").click();
    await page.getByTestId(`uninstall-plan-${mode}`).click();
    await expect(page.getByTestId("uninstall-plan")).toBeVisible();
    expect(served.cli("list")).toContain("hello-app");
    const exportPath = join(served.dataDir, "..", `export-${Date.now()}.zip`);
    if (mode === "export") {
      await expect(page.getByTestId("uninstall-confirm")).toBeDisabled();
      await page.getByTestId("export-path").fill(exportPath);
    }
    await page.getByTestId("uninstall-confirm").click();
    await expect(card(page, "hello-app")).toHaveCount(0);
    expect(served.cli("list")).not.toContain("hello-app");
    if (mode === "export") {
      expect(existsSync(exportPath)).toBe(true);
    }
  });
}
