// Desktop phase 1b: the app center's install path in the real window, from an empty data
// directory. "Add app" through the path form (native file dialogs cannot be driven over
// WebDriver) opens the review sheet; it must show the trust warning, the permissions, the
// network domains and what needs consent BEFORE anything is stored (`apphost list` on the same
// data directory is empty); consent installs the app, its card appears, opening its entry mounts
// the sandboxed frame that completes the bridge handshake, and the danger zone uninstalls it
// (data deleted), leaving the data directory with no app for the phases that follow.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";

import { APPHOST_BIN, bridgeDiagnostics, waitForLoaded, withApp } from "./lib/harness.mjs";
import { waitFor } from "./lib/webdriver.mjs";

const REPO = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const PACKAGE = join(REPO, "fixtures", "apps", "notes");
const CARD = 'li.app-card[data-app-name="notes"]';
const FRAME = 'iframe[data-app-id="notes"][data-entry-key="notes"]';

/** Installed app names, asked from the CLI on the window's data directory. */
function installed() {
  const out = execFileSync(APPHOST_BIN, ["--json", "list"], { encoding: "utf8", timeout: 60_000 });
  return JSON.parse(out).map((a) => a.name);
}

/** Whether `css` currently matches an element of the host page. */
function present(app, css) {
  return app.execute("return document.querySelector(arguments[0]) !== null;", [css]);
}

/** `E2E_UPDATE_SCREENSHOTS=1`: the review sheet in `theme` into docs/screenshots/. */
async function saveReviewScreenshot(app, theme) {
  if (process.env.E2E_UPDATE_SCREENSHOTS !== "1") return;
  // The sheet from its top (the trust warning first), in the theme asked for.
  await app.execute(
    `document.documentElement.dataset.theme = arguments[0];
     for (const e of document.querySelectorAll('[data-testid="review-sheet"], [data-testid="review-sheet"] *')) e.scrollTop = 0;`,
    [theme],
  );
  await new Promise((resolve) => setTimeout(resolve, 300));
  const dir = join(REPO, "docs", "screenshots");
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, `install-review-${theme}.png`), Buffer.from(await app.screenshot(), "base64"));
}

test("Add app by path: review sheet before anything is stored, consent, open with handshake, uninstall", async (t) => {
  assert.deepEqual(installed(), [], "the data directory starts empty");
  await withApp(t, async (app) => {
    assert.equal(await waitForLoaded(app), "empty");

    // The path form (inside a <details>): type the folder, submit.
    await app.execute(`
      const details = document.querySelector("details.path-install");
      details.open = true;
      const input = details.querySelector('[data-testid="install-path"]');
      input.value = arguments[0];
      input.dispatchEvent(new Event("input", { bubbles: true }));`, [PACKAGE]);
    await app.click(await app.find('details.path-install button[type="submit"]'));

    const phase = '[data-testid="review-sheet"] [data-phase]';
    await waitFor(
      async () => (await app.execute("const e = document.querySelector(arguments[0]); return e && e.dataset.phase;", [phase])) === "review",
      { timeoutMs: 20_000, what: "the review sheet to reach its review phase" },
    );
    const sheet = await app.find('[data-testid="review-sheet"]');
    const warning = await app.findIn(sheet, '[data-testid="review-trust-warning"]');
    assert.equal(await app.displayed(warning), true, "the unsigned warning is visible");
    const permissions = await app.findAll('[data-testid="review-permission"]', sheet);
    assert.equal(permissions.length, 2, "both permissions are listed");
    const keys = await Promise.all(permissions.map((p) => app.attribute(p, "data-key")));
    assert.ok(keys.some((k) => /notes_storage/.test(k)), `permission keys ${keys}`);
    assert.ok(keys.some((k) => /help_site/.test(k)), `permission keys ${keys}`);
    assert.match(await app.text(sheet), /Keep your notes in this app's own storage\./);
    assert.match(await app.text(await app.findIn(sheet, '[data-testid="review-domains"]')), /notes\.example\.com/);
    assert.match(await app.text(await app.findIn(sheet, '[data-testid="review-needs-consent"]')), /notes_storage/);
    // Nothing stored while the sheet is shown.
    assert.deepEqual(installed(), [], "reviewing stored nothing");
    await saveReviewScreenshot(app, "light");
    await saveReviewScreenshot(app, "dark");

    await app.click(await app.findIn(sheet, '[data-testid="review-consent"]'));
    await waitFor(async () => !(await present(app, '[data-testid="review-sheet"]')), {
      timeoutMs: 30_000,
      what: "the review sheet to close after consent",
    });
    const card = await app.waitForElement(CARD, 20_000);
    assert.equal(await app.attribute(card, "data-trust"), "unsigned");
    assert.equal(await app.attribute(await app.findIn(card, ".app-version"), "data-version"), "1.0.0");
    assert.deepEqual(installed(), ["notes"], "consent installed the app");

    // Open the entry: the sandboxed frame mounts and completes the bridge handshake.
    await app.click(await app.findIn(card, 'button.open-entry[data-entry-key="notes"]'));
    const frame = await app.waitForElement(FRAME, 20_000);
    assert.match(await app.attribute(frame, "src"), /^agentapp:\/\/notes\/index\.html\?/);
    await app.switchToFrame(frame);
    await waitFor(
      async () => (await app.execute("return document.body && document.body.dataset.status")) === "ready",
      { timeoutMs: 20_000, what: "the notes app to finish its handshake (body[data-status=ready])" },
    );
    assert.equal(await app.text(await app.waitForElement("#snapshot-app")), "notes");
    await app.switchToTop();
    assert.equal((await bridgeDiagnostics(app)).mounts, 1, "Rust holds the frame's mount");

    // Danger zone: uninstall with its data.
    await app.execute("location.hash = '#/apps';");
    await app.click(await app.findIn(await app.waitForElement(CARD), '[data-testid="app-details"]'));
    await app.click(await app.waitForElement('[data-testid="detail-tab-danger"]'));
    await app.click(await app.waitForElement('[data-testid="uninstall-plan-delete-data"]'));
    await app.waitForElement('[data-testid="uninstall-plan"]');
    assert.deepEqual(installed(), ["notes"], "the plan alone uninstalls nothing");
    await app.click(await app.find('[data-testid="uninstall-confirm"]'));
    await waitFor(async () => (await installed()).length === 0, {
      timeoutMs: 20_000,
      what: "the CLI to list no app after the uninstall",
    });
    await app.execute("location.hash = '#/apps';");
    await waitFor(async () => !(await present(app, CARD)), { timeoutMs: 20_000, what: "the card to go away" });
  });
});
