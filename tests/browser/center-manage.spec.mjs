// Managing installed apps in Chromium against apphost serve: revoke on the grants page, update
// with the permission diff and rollback, and each uninstall mode showing its plan before it runs.
import { existsSync } from "node:fs";
import { join } from "node:path";

import { expect, test } from "@playwright/test";

import { card, granted, installed, openHost, requireCommands, review, zipFixture } from "./lib/center.mjs";
import { startServer } from "./lib/server.mjs";

let server;

test.beforeEach(async () => {
  server = await startServer({ install: ["fixtures/packages/good/hello-app"] });
});
test.afterEach(async () => {
  await server?.stop();
});

test("revoke on the grants page", async ({ page }) => {
  await openHost(page, server);
  await requireCommands(page, ["list_grants", "revoke"]);
  await page.getByTestId("nav-grants").click();
  const row = page.locator('[data-testid="grant-row"][data-app-id="hello-app"][data-key="notes_storage"]');
  await expect(row).toHaveAttribute("data-granted", "true");
  await row.getByTestId("grant-revoke").click();
  await expect(row).toHaveAttribute("data-granted", "false");
  expect(granted(server, "hello-app", "notes_storage")).toBe(false);
  await page.reload();
  await expect(row).toHaveAttribute("data-granted", "false");
});

test("update shows the permission diff and asks again; rollback goes back", async ({ page }) => {
  await openHost(page, server);
  await requireCommands(page, ["upload_package", "review_install", "install", "app_detail", "rollback"]);
  await review(page, zipFixture("hello-app-v2"));
  const sheet = page.getByTestId("review-sheet");
  await expect(sheet.getByRole("heading", { name: /^Update / })).toBeVisible();
  await expect(sheet.locator('[data-testid="review-permission"][data-key="notes_files"]')).toHaveAttribute("data-change", "added");
  await sheet.getByTestId("review-consent").click();
  await expect(card(page, "hello-app").locator(".app-version")).toHaveAttribute("data-version", "1.1.0");

  await page.goto(`${server.origin}/#/apps/hello-app/versions`);
  await page.getByTestId("rollback").click();
  await expect(card(page, "hello-app").locator(".app-version")).toHaveAttribute("data-version", "1.0.0");
});

for (const mode of ["keep-data", "delete-data", "export"]) {
  test(`uninstall (${mode}) shows its cleanup plan before it runs`, async ({ page }) => {
    await openHost(page, server);
    await requireCommands(page, ["app_detail", "uninstall_plan", "uninstall"]);
    await card(page, "hello-app").getByTestId("app-details").click();
    await page.getByTestId("detail-tab-danger").click();
    await page.getByTestId(`uninstall-plan-${mode}`).click();
    await expect(page.getByTestId("uninstall-plan")).toBeVisible();
    expect(installed(server)).toEqual(["hello-app"]);
    const exportPath = join(server.data, "..", `export-${mode}.zip`);
    if (mode === "export") {
      await expect(page.getByTestId("uninstall-confirm")).toBeDisabled();
      await page.getByTestId("export-path").fill(exportPath);
    }
    await page.getByTestId("uninstall-confirm").click();
    await expect(card(page, "hello-app")).toHaveCount(0);
    expect(installed(server)).toEqual([]);
    if (mode === "export") {
      expect(existsSync(exportPath)).toBe(true);
    }
  });
}
