// The app center's install path in Chromium against apphost serve: review sheet, consent, open;
// cancel and a failure leave nothing behind; a deep link opens an entry; tabs survive a reload.
import { expect, test } from "@playwright/test";

import { card, installed, openHost, requireCommands, review, zipFixture } from "./lib/center.mjs";
import { startServer } from "./lib/server.mjs";

const CENTER = ["upload_package", "review_install", "install", "cancel_review"];
let server;

test.afterEach(async () => {
  await server?.stop();
});

test("install through the review sheet and consent, then open the entry", async ({ page }) => {
  server = await startServer();
  await openHost(page, server);
  await requireCommands(page, CENTER);
  await expect(page.locator("#empty-state")).toBeVisible();
  await review(page, zipFixture("hello-app"));
  const sheet = page.getByTestId("review-sheet");
  // Unsigned: a warning, and what the package asks for, before anything is stored.
  await expect(sheet.getByTestId("review-trust-warning")).toBeVisible();
  await expect(sheet.locator('[data-testid="review-permission"]')).toHaveCount(2);
  await expect(sheet.getByText("Save your notes in this app's own storage.")).toBeVisible();
  await expect(sheet.getByTestId("review-domains")).toContainText("notes.example.com");
  await expect(sheet.getByTestId("review-needs-consent")).toContainText("notes_storage");
  expect(installed(server)).toEqual([]);

  await sheet.getByTestId("review-consent").click();
  await expect(sheet).toHaveCount(0);
  const row = card(page, "hello-app");
  await expect(row).toHaveAttribute("data-trust", "unsigned");
  await expect(row.locator(".app-version")).toHaveAttribute("data-version", "1.0.0");
  expect(installed(server)).toEqual(["hello-app"]);

  await row.locator('button.open-entry[data-entry-key="notes"]').click();
  const frame = page.locator('iframe[data-app-id="hello-app"][data-entry-key="notes"]');
  await expect(frame).toBeVisible();
  const tab = page.locator('[data-testid="app-tab"][data-app-id="hello-app"][data-entry-key="notes"]');
  await expect(tab).toHaveAttribute("aria-current", "page");
  // The tab survives a reload: restored asleep (on the list page), mounted again when shown.
  await page.evaluate(() => (location.hash = "#/apps"));
  await page.reload();
  await expect(tab).toHaveAttribute("data-state", "sleeping");
  await page.getByTestId("nav-running").click();
  await expect(tab).toHaveAttribute("data-state", "mounted");
  await expect(frame).toBeVisible();
});

test("cancel in the review sheet installs nothing", async ({ page }) => {
  server = await startServer();
  await openHost(page, server);
  await requireCommands(page, CENTER);
  await review(page, zipFixture("hello-app"));
  await page.getByTestId("review-cancel").click();
  await expect(page.getByTestId("review-sheet")).toHaveCount(0);
  await expect(card(page, "hello-app")).toHaveCount(0);
  expect(installed(server)).toEqual([]);
});

test("a broken package shows its code, message and what to do; nothing is installed", async ({ page }) => {
  server = await startServer();
  await openHost(page, server);
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
  expect(installed(server)).toEqual([]);
});

test("a deep link /apps/<app>/<entry> opens that entry in a tab", async ({ page }) => {
  server = await startServer({ install: ["fixtures/packages/good/hello-app"] });
  await openHost(page, server, "/apps/hello-app/notes");
  await expect(page.locator('iframe[data-app-id="hello-app"][data-entry-key="notes"]')).toBeVisible();
  await expect(page.locator('[data-testid="app-tab"][data-app-id="hello-app"]')).toHaveAttribute("aria-current", "page");
  // Closing the last tab goes back to the list.
  await page.locator("#surface-close").click();
  await expect(page.locator("#surface")).toBeHidden();
  await expect(card(page, "hello-app")).toBeVisible();
});
