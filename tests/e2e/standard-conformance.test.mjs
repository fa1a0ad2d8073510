// Desktop phase: scripts/e2e.sh has sideloaded fixtures/apps/standard-conformance (the app
// written only from the standard's Capability SDK page; its SDK is vendored in ui/sdk/). In the
// real window: a lime.ui deep link opens its checks entry on its route, every check of its table
// passes or is skipped as "not provided", the command palette runs its `command` entry, and an
// artifact opens in its viewer entry, which reads it through the choke point. The same table runs
// against the SDK mock (fixtures/apps/standard-conformance/tests/mock.test.mjs) and in
// `apphost serve` (tests/browser/standard-conformance.spec.mjs).
import assert from "node:assert/strict";
import { test } from "node:test";

import { waitForLoaded, withApp } from "./lib/harness.mjs";
import { waitFor } from "./lib/webdriver.mjs";

const APP = "standard-conformance";
const frameOf = (entry) => `iframe[data-app-id="${APP}"][data-entry-key="${entry}"]`;
const PROBED = ["modelSettings.get", "capabilities.list", "workspace.get"];

async function enter(app, entry) {
  const frame = await app.waitForElement(frameOf(entry), 20_000);
  await app.switchToFrame(frame);
}

function rows(app) {
  return app.execute(`
    const out = {};
    for (const tr of document.querySelectorAll("#checks tbody tr")) {
      out[tr.dataset.check] = { status: tr.dataset.status, detail: tr.cells[4].textContent };
    }
    return out;`);
}

const dataset = (app, css, key) => app.execute(`const e = document.querySelector(${JSON.stringify(css)}); return e ? e.dataset[${JSON.stringify(key)}] ?? null : null;`);

test("the standard's call shapes, deep links, the palette and an artifact viewer in the window", async (t) => {
  await withApp(t, async (app) => {
    await waitForLoaded(app);
    await app.execute(`location.hash = "#/app/${APP}/main/checks";`);
    await enter(app, "main");
    await waitFor(async () => (await dataset(app, "#summary", "state")) === "done", { timeoutMs: 60_000, what: "the checks to finish" });
    const all = await rows(app);
    const failed = Object.entries(all).filter(([, r]) => r.status === "fail");
    assert.deepEqual(failed, [], "no check fails in the window");
    assert.ok(Object.keys(all).length >= 22);
    // Skipped until the host serves them (then they run like any row).
    for (const id of PROBED) assert.ok(all[id].status === "pass" || all[id].detail === "skipped: not provided", `${id}: ${JSON.stringify(all[id])}`);
    assert.equal(await dataset(app, "#launch", "route"), "/checks", "the deep link's route reached the frame");
    const artifactId = all["artifacts.create-kind-title-content"].detail.replace(/^artifact /, "").trim();
    await app.switchToTop();

    // The palette, by its shortcut: the app's command entry re-runs the checks.
    await app.execute(`window.dispatchEvent(new KeyboardEvent("keydown", { key: "k", ctrlKey: true, bubbles: true }));`);
    await app.waitForElement('[data-testid="palette-input"]', 10_000);
    await app.execute(`
      const input = document.querySelector('[data-testid="palette-input"]');
      input.value = "conformance checks again";
      input.dispatchEvent(new Event("input", { bubbles: true }));`);
    await waitFor(
      async () => (await app.execute(`return document.querySelector('[data-item="command:${APP}/rerun"]')?.getAttribute("aria-selected") ?? null;`)) === "true",
      { timeoutMs: 10_000, what: "the command to be the palette's selection" },
    );
    await app.execute(`document.querySelector('[data-testid="palette-input"]').dispatchEvent(new KeyboardEvent("keydown", { key: "Enter", bubbles: true }));`);
    await enter(app, "main");
    await waitFor(async () => (await dataset(app, "#summary", "runs")) === "2", { timeoutMs: 60_000, what: "the command to re-run the checks" });
    assert.equal(await dataset(app, "#launch", "kind"), "command");
    assert.equal(await dataset(app, "#summary", "failed"), "0");
    await app.switchToTop();

    // An artifact of the type the viewer entry declares.
    await app.execute(`location.hash = "#/artifact/${APP}/${artifactId}/conformance-report";`);
    await enter(app, "viewer");
    await waitFor(async () => (await dataset(app, "#artifact", "status")) === "read", { timeoutMs: 20_000, what: "the viewer to read the artifact" });
    assert.equal(await dataset(app, "#artifact", "id"), artifactId);
    await app.switchToTop();
  });
});
