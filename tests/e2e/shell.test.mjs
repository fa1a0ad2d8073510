// Desktop phase 1 (fresh data directory, nothing installed): the window opens, loads the host
// UI, shows the empty state, and is titled "AppHost". Run by scripts/e2e.sh before it installs
// the fixture app.
import assert from "node:assert/strict";
import { test } from "node:test";

import { nativeWindowTitles, waitForLoaded, withApp } from "./lib/harness.mjs";

test("with nothing installed the window shows the empty state", async (t) => {
  await withApp(t, async (app) => {
    const state = await waitForLoaded(app);
    assert.equal(state, "empty", "body[data-state] after loading");
    const empty = await app.find("#empty-state");
    assert.ok(empty, "#empty-state exists");
    assert.equal(await app.displayed(empty), true, "#empty-state is visible");
    assert.match(await app.text(empty), /No apps installed/);
    assert.deepEqual(await app.findAll("li.app-row"), [], "no app rows");
    const error = await app.find("#error");
    assert.equal(await app.displayed(error), false, "#error is hidden");
  });
});

test("the window is titled AppHost", async (t) => {
  await withApp(t, async (app) => {
    await waitForLoaded(app);
    assert.equal(await app.title(), "AppHost", "document title");
    const titles = nativeWindowTitles();
    if (titles === null) {
      t.diagnostic("xwininfo or DISPLAY unavailable: native window title not checked");
      return;
    }
    assert.ok(titles.includes("AppHost"), `a top-level X11 window named "AppHost" in ${JSON.stringify(titles)}`);
  });
});
