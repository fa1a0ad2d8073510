// A package file opens the review sheet (docs/shipping.md): `apphost open <file>.agentapp` (what
// the desktop entry's `Exec=apphost-desktop %f` does for a file manager) starts the window on
// the install review of that file. Nothing is stored before consent; a reload does not open the
// sheet again (the launch package is answered once); cancelling leaves the data directory empty.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";

import { APPHOST_BIN, withApp } from "./lib/harness.mjs";
import { waitFor } from "./lib/webdriver.mjs";

const REPO = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const PACKAGE = join(REPO, "fixtures", "apps", "notes");
const PHASE = '[data-testid="review-sheet"] [data-phase]';

function installed() {
  const out = execFileSync(APPHOST_BIN, ["--json", "list"], { encoding: "utf8", timeout: 60_000 });
  return JSON.parse(out).map((a) => a.name);
}

test("apphost open <file>.agentapp: the window starts on the package's review sheet", async (t) => {
  assert.deepEqual(installed(), [], "the data directory starts empty");
  const dir = mkdtempSync(join(tmpdir(), "apphost-open-package-"));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, "notes.agentapp");
  execFileSync("zip", ["-qr", file, "."], { cwd: PACKAGE });

  await withApp(t, async (app) => {
    const phase = () => app.execute("const e = document.querySelector(arguments[0]); return e && e.dataset.phase;", [PHASE]);
    await waitFor(async () => (await phase()) === "review", {
      timeoutMs: 20_000,
      what: "the review sheet for the launch package",
    });
    const sheet = await app.execute('return document.querySelector(\'[data-testid="review-sheet"]\').innerText;');
    assert.match(String(sheet), /notes/i, "the sheet shows the package's app");
    assert.deepEqual(installed(), [], "nothing is stored before consent");

    // Answered once: a reloaded page does not reopen the sheet.
    await app.execute("location.reload();");
    await waitFor(async () => (await app.execute("return document.querySelector('main') !== null;")) === true, {
      timeoutMs: 20_000,
      what: "the reloaded page",
    });
    await new Promise((r) => setTimeout(r, 1_000));
    assert.equal(await phase(), null, "no review sheet after a reload");
  }, ["open", file]);
  assert.deepEqual(installed(), [], "the data directory stays empty");
});
