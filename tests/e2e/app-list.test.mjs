// Desktop phase 2: scripts/e2e.sh has sideloaded fixtures/packages/good/hello-app into the data
// directory; the window must list it with its version and a visible "unsigned" badge.
import assert from "node:assert/strict";
import { test } from "node:test";

import { waitForLoaded, withApp } from "./lib/harness.mjs";

test("the sideloaded hello-app is listed with its version and an unsigned badge", async (t) => {
  await withApp(t, async (app) => {
    const state = await waitForLoaded(app);
    assert.equal(state, "ready", "body[data-state] after loading");
    const row = await app.waitForElement('li.app-row[data-app-name="hello-app"]');

    const name = await app.findIn(row, ".app-display-name");
    assert.equal(await app.text(name), "Hello Notes");

    const version = await app.findIn(row, ".app-version");
    assert.equal(await app.attribute(version, "data-version"), "1.0.0");
    assert.match(await app.text(version), /^v?1\.0\.0$/);

    const trust = await app.findIn(row, ".trust-badge");
    assert.ok(trust, "the row has a trust badge");
    assert.equal(await app.attribute(trust, "data-trust"), "unsigned");
    assert.equal(await app.displayed(trust), true, "the trust badge is visible");
    assert.match(await app.text(trust), /Sideloaded/i);
    assert.match(await app.text(trust), /unsigned/i);

    assert.equal(await app.attribute(row, "data-enabled"), "true");
    assert.ok(await app.findIn(row, ".readiness-badge"), "the row shows its readiness");
    const empty = await app.find("#empty-state");
    assert.equal(await app.displayed(empty), false, "#empty-state is hidden");
    assert.equal(await app.displayed(await app.find("#error")), false, "#error is hidden");
  });
});
