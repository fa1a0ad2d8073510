// The app center's install path in the browser: review sheet, consent, open; cancel and a
// failure leave nothing behind.
import { expect, test } from "@playwright/test";

import { card, missingBackend, openHost, requireCommands, review, serve, zipFixture, type Served } from "./center-lib";

const CENTER = ["upload_package", "review_install", "install", "cancel_review"];

const missing = missingBackend();
let served: Served;

test.beforeEach(async () => {
  test.fixme(missing !== null, missing ?? "");
  served = await serve();
});
test.afterEach(async () => {
  await served?.stop();
});

test("install through the review sheet and consent, then open the entry", async ({ page }) => {
  await openHost(page, served);
  await requireCommands(page, CENTER);
  await expect(page.locator("#empty-state")).toBeVisible();
  await review(page, zipFixture("hello-app"));
  const sheet = page.getByTestId("review-sheet");
  // Unsigned: a sideload warning, and what the package asks for, before anything is stored.
  await expect(sheet.getByTestId("review-trust-warning")).toBeVisible();
  await expect(sheet.locator('[data-testid="review-permission"][data-key]')).toHaveCount(2);
  await expect(sheet.getByText("Save your notes in this app's own storage.")).toBeVisible();
  await expect(sheet.getByTestId("review-domains")).toContainText("notes.example.com");
  expect(served.cli("list")).not.toContain("hello-app");

  await sheet.getByTestId("review-consent").click();
  await expect(sheet).toHaveCount(0);
  const row = card(page, "hello-app");
  await expect(row).toHaveAttribute("data-trust", /unsigned|sideload/);
  await expect(row.locator(".app-version")).toHaveAttribute("data-version", "1.0.0");
  expect(served.cli("list")).toContain("hello-app");

  await row.locator('button.open-entry[data-entry-key="notes"]').click();
  const frame = page.locator('iframe[data-app-id="hello-app"][data-entry-key="notes"]');
  await expect(frame).toBeVisible();
  await expect(page.locator('[data-testid="app-tab"][data-app-id="hello-app"]')).toHaveAttribute("aria-current", "page");
  // The tab survives a reload (restored, mounted again when shown).
  await page.reload();
  await page.getByTestId("nav-running").click();
  await expect(page.locator('[data-testid="app-tab"][data-app-id="hello-app"]')).toBeVisible();
  await expect(frame).toBeVisible();
});

test("cancel in the review sheet installs nothing", async ({ page }) => {
  await openHost(page, served);
  await requireCommands(page, CENTER);
  await review(page, zipFixture("hello-app"));
  await page.getByTestId("review-cancel").click();
  await expect(page.getByTestId("review-sheet")).toHaveCount(0);
  await expect(card(page, "hello-app")).toHaveCount(0);
  expect(served.cli("list")).not.toContain("hello-app");
});

test("a broken package shows its code, message and what to do; nothing is installed", async ({ page }) => {
  await openHost(page, served);
  await requireCommands(page, CENTER);
  await page.getByTestId("add-app-file").setInputFiles({
    name: "broken.zip",
    mimeType: "application/zip",
    buffer: Buffer.from("this is not a zip"),
  });
  const error = page.getByTestId("review-sheet").getByTestId("review-error");
  await expect(error).toBeVisible();
  await expect(error).toHaveAttribute("data-code", /^(archive|source)\./);
  await expect(error.locator(".error-help")).not.toBeEmpty();
  await expect(page.getByTestId("review-consent")).toHaveCount(0);
  await page.getByTestId("review-cancel").click();
  await expect(page.locator("#empty-state")).toBeVisible();
});

test("an entry opens from its path /apps/<app>/<entry>", async ({ page }) => {
  served.cli("install", "--yes", "--sideload", `${__dirname}/../../fixtures/packages/good/hello-app`);
  await openHost(page, served);
  const origin = new URL(page.url()).origin;
  await page.goto(`${origin}/apps/hello-app/notes`);
  await expect(page.locator('iframe[data-app-id="hello-app"][data-entry-key="notes"]')).toBeVisible();
});
