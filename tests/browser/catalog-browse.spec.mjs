// The Browse page (#/browse) in Chromium against apphost serve, over a LOCAL HTTPS catalog
// (tests/catalog_support/https_catalog.py: a throwaway CA from the openssl CLI, trusted only
// through APPHOST_CATALOG_CA_FILE): browse → install (review sheet) → update (permission diff
// shown on the Browse card and the Apps page's card; Update from the Apps card: download progress
// bar, review sheet because it asks for more) → roll back (data kept); then the registry
// answers 500, garbage, expired metadata, or is down: "catalog stale since …", and the installed
// app keeps its readiness and still opens.
import { expect, test } from "@playwright/test";
import { spawn } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";

import { card, openHost, requireCommands, zipFixture } from "./lib/center.mjs";
import { cli, REPO, startServer } from "./lib/server.mjs";

const CA_ENV = "APPHOST_CATALOG_CA_FILE";
const COMMANDS = ["browse_catalog", "catalog_refresh", "catalog_review_install", "install", "rollback"];

/** A publisher's folder, its key and `apphost catalog build` into `repo/`. */
function publisher() {
  const root = mkdtempSync(join(tmpdir(), "apphost-catalog-"));
  const packages = join(root, "packages");
  mkdirSync(packages);
  const scratch = join(root, "scratch-data");
  const key = join(root, "catalog-key.json");
  cli(scratch, ["keygen", "--out", key]);
  const out = join(root, "repo");
  return {
    root,
    out,
    add(fixture) {
      copyFileSync(zipFixture(fixture), join(packages, `${fixture}.zip`));
    },
    build(expires = "30d") {
      cli(scratch, ["catalog", "build", packages, "--key", key, "--expires", expires, "--out", out]);
    },
  };
}

/** Starts the HTTPS catalog server over `dir`; `{url, ca, mode(m), stop()}`. */
async function httpsCatalog(dir, certs) {
  const child = spawn("python3", [join(REPO, "tests/catalog_support/https_catalog.py"), "--dir", dir, "--certs", certs], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  const first = await new Promise((resolve, reject) => {
    createInterface({ input: child.stdout }).once("line", (line) => resolve(JSON.parse(line)));
    child.once("exit", (code) => reject(new Error(`https_catalog.py exited with ${code}`)));
  });
  return {
    ...first,
    mode: (m) => writeFileSync(join(certs, "mode"), m),
    async stop() {
      // Killed by a signal, a child has a signalCode and no exitCode.
      if (child.exitCode === null && child.signalCode === null) {
        const exited = new Promise((resolve) => child.once("exit", resolve));
        child.kill("SIGTERM");
        await exited;
      }
    },
  };
}

const catalogCard = (page, app) => page.locator(`[data-testid="catalog-card"][data-app-id="${app}"]`);

async function browse(page) {
  await page.getByTestId("nav-browse").click();
  await expect(page.getByTestId("browse-page")).toBeVisible();
}

let server;
let catalog;
let pub;

test.afterEach(async () => {
  await server?.stop();
  await catalog?.stop();
  delete process.env[CA_ENV];
  if (pub !== undefined) rmSync(pub.root, { recursive: true, force: true });
});

test("browse → install → update (permission diff) → roll back, then a failing registry leaves the app ready", async ({ page }) => {
  test.setTimeout(120_000);
  pub = publisher();
  pub.add("hello-app");
  pub.build();
  catalog = await httpsCatalog(pub.out, join(pub.root, "certs"));
  expect(catalog.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+\/repo\/$/);
  process.env[CA_ENV] = catalog.ca;
  server = await startServer();
  cli(server.data, ["catalog", "add", "local", catalog.url, "--root", join(pub.out, "metadata/1.root.json")]);
  await openHost(page, server);
  await requireCommands(page, COMMANDS);

  // Browse: the card has publisher, trust, permissions and a readiness preview.
  await browse(page);
  await expect(page.getByTestId("catalog-row")).toHaveAttribute("data-stale", "false");
  const c = catalogCard(page, "hello-app");
  await expect(c).toHaveAttribute("data-trust", "unknown");
  await expect(c.getByTestId("catalog-permissions")).toContainText("notes_storage");
  await expect(c.locator('[data-testid="catalog-readiness"]')).toHaveText("Compatible");

  // Install opens the same review sheet; nothing is installed before consent.
  await c.getByTestId("catalog-install").click();
  const sheet = page.getByTestId("review-sheet");
  await expect(sheet.locator("[data-phase]")).toHaveAttribute("data-phase", "review");
  await expect(sheet.locator('[data-testid="review-permission"]')).toHaveCount(2);
  expect(cli(server.data, ["list"]) ?? []).toEqual([]);
  await sheet.getByTestId("review-consent").click();
  await expect(sheet).toHaveCount(0);
  await expect(card(page, "hello-app")).toHaveCount(1);
  await browse(page);
  await expect(c).toHaveAttribute("data-installed", "1.0.0");
  await expect(c.getByTestId("update-available")).toHaveCount(0);

  // Data the update and the roll back must keep.
  const note = join(server.data, "apps", "hello-app", "kept-note.txt");
  mkdirSync(join(server.data, "apps", "hello-app"), { recursive: true });
  writeFileSync(note, "remember me");

  // The publisher ships 1.1.0 (one more permission): Update available with the diff.
  pub.add("hello-app-v2");
  pub.build();
  await page.getByTestId("catalog-refresh").click();
  const update = c.getByTestId("update-available");
  await expect(update).toHaveAttribute("data-version", "1.1.0");
  await expect(update).toHaveAttribute("data-grows", "true");
  await expect(update.getByTestId("permission-diff-added")).toContainText("+notes_files");
  // The Apps page's card says the same (cached catalog state, loaded after the list).
  await page.getByTestId("nav-apps").click();
  const appCard = card(page, "hello-app");
  const cardUpdate = appCard.getByTestId("card-update");
  await expect(cardUpdate).toHaveAttribute("data-version", "1.1.0");
  await expect(cardUpdate).toHaveAttribute("data-grows", "true");
  await expect(cardUpdate.getByTestId("card-diff-added")).toContainText("+notes_files");
  await expect(appCard.getByTestId("card-revoked")).toHaveCount(0);
  // It asks for more: Update from the card opens the review sheet; while the package trickles
  // in, the sheet shows the download's progress bar.
  catalog.mode("slow");
  // Cancel while it downloads: the sheet closes, the transfer stops, no file is left behind.
  await cardUpdate.getByTestId("card-update-button").click();
  await expect(sheet.getByTestId("install-progress")).toBeVisible();
  await sheet.getByTestId("review-cancel").click();
  await expect(sheet).toHaveCount(0);
  const downloads = join(server.data, "catalogs", "downloads");
  await expect.poll(() => readdirSync(downloads).length, { timeout: 10_000 }).toBe(0);
  await page.waitForTimeout(3_500);
  await expect(sheet).toHaveCount(0);
  expect(readdirSync(downloads)).toEqual([]);
  expect(cli(server.data, ["list"])[0].activeVersion).toBe("1.0.0");
  await cardUpdate.getByTestId("card-update-button").click();
  await expect(sheet.locator("[data-phase]")).toHaveAttribute("data-phase", "reviewing");
  await expect(sheet.getByTestId("install-progress")).toBeVisible();
  await expect(sheet.locator("[data-phase]")).toHaveAttribute("data-phase", "review", { timeout: 20_000 });
  catalog.mode("ok");
  await expect(sheet.locator('[data-testid="review-permission"][data-key="notes_files"]')).toHaveAttribute("data-change", "added");
  expect(cli(server.data, ["list"])[0].activeVersion).toBe("1.0.0");
  await sheet.getByTestId("review-consent").click();
  await expect(sheet).toHaveCount(0);
  await browse(page);
  await expect(c).toHaveAttribute("data-installed", "1.1.0");
  await expect(c.getByTestId("update-available")).toHaveCount(0);

  // Roll back: 1.0.0 again, the data is still there, and 1.1.0 is offered again.
  await c.getByTestId("catalog-rollback").click();
  await expect(c).toHaveAttribute("data-installed", "1.0.0");
  await expect(c.getByTestId("update-available")).toHaveAttribute("data-version", "1.1.0");
  expect(readFileSync(note, "utf8")).toBe("remember me");

  // The registry fails four ways; each time the page says since when the catalog is stale,
  // and the installed app keeps its readiness and opens.
  const stale = page.getByTestId("catalog-stale");
  const readiness = await c.getByTestId("installed-readiness").getAttribute("data-readiness");
  expect(readiness).toMatch(/^ready/);
  let since = null;
  for (const failure of ["500", "garbage", "expired", "down"]) {
    if (failure === "expired") {
      catalog.mode("ok");
      pub.build("2s");
      await page.waitForTimeout(2_500);
    } else if (failure === "down") {
      await catalog.stop();
    } else {
      catalog.mode(failure);
    }
    await browse(page);
    await page.getByTestId("catalog-refresh").click();
    await expect(stale, failure).toBeVisible();
    await expect(stale).toContainText("stale since");
    await expect(stale).toHaveAttribute("data-code", /^catalog\./);
    since ??= await stale.getAttribute("data-stale-since");
    await expect(stale).toHaveAttribute("data-stale-since", since);
    await expect(c.getByTestId("installed-readiness")).toHaveAttribute("data-readiness", readiness);
    await expect(c.getByTestId("catalog-update")).toBeDisabled();
    await page.getByTestId("nav-apps").click();
    const row = card(page, "hello-app");
    await expect(row).toHaveAttribute("data-readiness", readiness);
    await row.locator('button.open-entry[data-entry-key="notes"]').click();
    await expect(page.locator('iframe[data-app-id="hello-app"][data-entry-key="notes"]')).toBeVisible();
  }
  expect(existsSync(note)).toBe(true);
});
