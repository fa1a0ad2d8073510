// Desktop phase 1d: the Browse page in the real window over a LOCAL HTTPS catalog
// (tests/catalog_support/https_catalog.py, a throwaway CA from the openssl CLI). scripts/e2e.sh
// exports APPHOST_CATALOG_CA_FILE=$APPHOST_E2E_CATALOG_CERTS/ca.pem before tauri-driver starts,
// so the window trusts this CA and nothing else is changed. browse → install (review sheet,
// nothing stored before consent) → update (the permission diff on the card, the sheet because
// it asks for more) → roll back. Leaves no app and no catalog for the phases that follow.
import assert from "node:assert/strict";
import { execFileSync, spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { createInterface } from "node:readline";
import { test } from "node:test";
import { fileURLToPath } from "node:url";

import { APPHOST_BIN, waitForLoaded, withApp } from "./lib/harness.mjs";
import { waitFor } from "./lib/webdriver.mjs";

const REPO = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const CERTS = process.env.APPHOST_E2E_CATALOG_CERTS ?? "";
const CARD = '[data-testid="catalog-card"][data-app-id="hello-app"]';

/** `apphost --json ...` on the window's data directory (APPHOST_DATA_DIR). */
function apphost(args, data) {
  const extra = data === undefined ? [] : ["--data-dir", data];
  const out = execFileSync(APPHOST_BIN, ["--json", ...extra, ...args], { encoding: "utf8", timeout: 120_000 });
  return out.trim() === "" ? null : JSON.parse(out);
}

const installed = () => (apphost(["list"]) ?? []).map((a) => [a.name, a.activeVersion]);

function zipFixture(name, into) {
  const folder = join(REPO, "fixtures/packages/good", name);
  execFileSync("python3", ["-m", "zipfile", "-c", join(into, `${name}.zip`), ...readdirSync(folder)], { cwd: folder });
}

async function startCatalog(dir) {
  const child = spawn("python3", [join(REPO, "tests/catalog_support/https_catalog.py"), "--dir", dir, "--certs", CERTS], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  const first = await new Promise((resolve, reject) => {
    createInterface({ input: child.stdout }).once("line", (line) => resolve(JSON.parse(line)));
    child.once("exit", (code) => reject(new Error(`https_catalog.py exited with ${code}`)));
  });
  return { ...first, stop: () => child.kill("SIGTERM") };
}

/** An attribute of the first element matching `css`, or null. */
function attr(app, css, name) {
  return app.execute("const e = document.querySelector(arguments[0]); return e && e.getAttribute(arguments[1]);", [css, name]);
}

async function click(app, css) {
  await waitFor(async () => (await app.execute("const e = document.querySelector(arguments[0]); return e !== null && !e.disabled;", [css])) === true, {
    timeoutMs: 20_000,
    what: `${css} to be enabled`,
  });
  await app.click(await app.find(css));
}

async function waitAttr(app, css, name, value, what) {
  await waitFor(async () => (await attr(app, css, name)) === value, { timeoutMs: 30_000, what });
}

async function showBrowse(app) {
  await click(app, '[data-testid="nav-browse"]');
  await app.waitForElement('[data-testid="browse-page"]');
}

async function reviewAndConsent(app, expectAdded) {
  const phase = '[data-testid="review-sheet"] [data-phase]';
  await waitAttr(app, phase, "data-phase", "review", "the review sheet's review phase");
  if (expectAdded !== undefined) {
    const change = await attr(app, `[data-testid="review-permission"][data-key="${expectAdded}"]`, "data-change");
    assert.equal(change, "added", `the sheet shows ${expectAdded} as new`);
  }
  return click(app, '[data-testid="review-consent"]');
}

test("Browse over a local HTTPS catalog: install, update with the permission diff, roll back", { skip: CERTS === "" && "APPHOST_E2E_CATALOG_CERTS is not set (run through scripts/e2e.sh)" }, async (t) => {
  const pub = mkdtempSync(join(tmpdir(), "apphost-e2e-publisher-"));
  const packages = join(pub, "packages");
  mkdirSync(packages);
  const scratch = join(pub, "scratch");
  const key = join(pub, "key.json");
  const out = join(pub, "repo");
  apphost(["keygen", "--out", key], scratch);
  zipFixture("hello-app", packages);
  apphost(["catalog", "build", packages, "--key", key, "--out", out], scratch);
  const server = await startCatalog(out);
  try {
    assert.match(server.url, /^https:\/\/127\.0\.0\.1:\d+\/repo\/$/);
    assert.equal(server.ca, process.env.APPHOST_CATALOG_CA_FILE, "the window trusts exactly this CA");
    apphost(["catalog", "add", "local", server.url, "--root", join(out, "metadata/1.root.json")]);
    await withApp(t, async (app) => {
      await waitForLoaded(app);
      await showBrowse(app);
      await app.waitForElement(CARD, 20_000);
      assert.equal(await attr(app, CARD, "data-installed"), "");

      await click(app, `${CARD} [data-testid="catalog-install"]`);
      await waitAttr(app, '[data-testid="review-sheet"] [data-phase]', "data-phase", "review", "the review sheet");
      assert.deepEqual(installed(), [], "reviewing stored nothing");
      await reviewAndConsent(app);
      await waitFor(async () => installed().length === 1, { timeoutMs: 30_000, what: "the install" });
      assert.deepEqual(installed(), [["hello-app", "1.0.0"]]);

      // 1.1.0 asks for one more permission: "Update available" with the diff, then the sheet.
      zipFixture("hello-app-v2", packages);
      apphost(["catalog", "build", packages, "--key", key, "--out", out], scratch);
      await showBrowse(app);
      await click(app, '[data-testid="catalog-refresh"]');
      const update = `${CARD} [data-testid="update-available"]`;
      await waitAttr(app, update, "data-version", "1.1.0", "Update available 1.1.0");
      const diff = await app.execute("return document.querySelector(arguments[0]).textContent;", [`${update} [data-testid="permission-diff-added"]`]);
      assert.match(diff, /\+notes_files/);
      await click(app, `${update} [data-testid="catalog-update"]`);
      await reviewAndConsent(app, "notes_files");
      await waitFor(async () => installed()[0]?.[1] === "1.1.0", { timeoutMs: 30_000, what: "the update" });

      await showBrowse(app);
      await waitAttr(app, CARD, "data-installed", "1.1.0", "the card shows 1.1.0");
      await click(app, `${CARD} [data-testid="catalog-rollback"]`);
      await waitAttr(app, CARD, "data-installed", "1.0.0", "the card shows 1.0.0 after the roll back");
      assert.deepEqual(installed(), [["hello-app", "1.0.0"]]);
    });
  } finally {
    server.stop();
    // The phases after this one start from no app and no catalog.
    try {
      apphost(["uninstall", "--delete-data", "--yes", "hello-app"]);
    } catch {
      // not installed
    }
    try {
      apphost(["catalog", "remove", "local"]);
    } catch {
      // not added
    }
    rmSync(pub, { recursive: true, force: true });
  }
});
