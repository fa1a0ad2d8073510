// Desktop phase 3: scripts/e2e.sh has sideloaded fixtures/apps/notes. The window mounts it in a
// sandboxed frame on its own origin (agentapp://notes); the tests drive the page inside the frame
// and ask Rust (bridge_diagnostics, from the host page) what it refused and executed.
// The tests run in order and share the data directory: the last one corrupts the install.
import assert from "node:assert/strict";
import { mkdirSync, readFileSync, readdirSync, writeFileSync, chmodSync } from "node:fs";
import { dirname, join } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";

import { ARTIFACTS_DIR, waitForLoaded, withApp } from "./lib/harness.mjs";
import { waitFor } from "./lib/webdriver.mjs";

const REPO = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const FRAME = 'iframe[data-app-id="notes"][data-entry-key="notes"]';
const NOTE = "buy oat milk";

/** Rust's bridge diagnostics, asked from the host page (the only page the guard lets call). */
async function diagnostics(app) {
  const result = await app.executeAsync(
    "const done = arguments[arguments.length - 1];" +
      "window.__TAURI_INTERNALS__.invoke('bridge_diagnostics').then((d) => done({ ok: d }), (e) => done({ err: e }));",
  );
  assert.ok(result.ok, `bridge_diagnostics failed: ${JSON.stringify(result.err)}`);
  return result.ok;
}

/** Switches into the notes frame and waits for the handshake to finish. */
async function enterFrame(app) {
  const frame = await app.waitForElement(FRAME, 20_000);
  assert.equal(await app.attribute(frame, "sandbox"), "allow-scripts allow-same-origin");
  assert.match(await app.attribute(frame, "src"), /^agentapp:\/\/notes\/index\.html\?/);
  await app.switchToFrame(frame);
  await waitFor(
    async () => (await app.execute("return document.body && document.body.dataset.status")) === "ready",
    { timeoutMs: 20_000, what: "the notes app to finish its handshake (body[data-status=ready])" },
  );
}

async function text(app, css) {
  return app.text(await app.waitForElement(css));
}

test("an app opened from its card runs sandboxed: handshake, storage, isolation, spoofing", async (t) => {
  await withApp(t, async (app) => {
    assert.equal(await waitForLoaded(app), "ready");
    const button = await app.waitForElement(
      'li.app-row[data-app-name="notes"] button.open-entry[data-entry-key="notes"]',
    );
    assert.equal(await app.text(button), "Open Notes");
    await app.click(button);

    // Handshake: the snapshot is shown, with Rust's view of who the frame is.
    await enterFrame(app);
    assert.equal(await text(app, "#snapshot-app"), "notes");
    assert.equal(await text(app, "#snapshot-entry"), "notes");
    assert.equal(await text(app, "#snapshot-origin"), "agentapp://notes");
    assert.equal(await text(app, "#snapshot-capabilities"), "lime.ui, lime.storage");

    // Storage round trip: set, get back, list.
    await app.execute(
      "document.getElementById('note-text').value = arguments[0]; document.getElementById('note-save').click();",
      [NOTE],
    );
    await waitFor(async () => (await text(app, "#result")) === `saved ${NOTE}`, {
      what: "the note to be saved and read back",
    });
    // The list is refreshed after the result is shown: wait for it.
    await waitFor(
      async () =>
        JSON.stringify(
          await app.execute("return [...document.querySelectorAll('#notes li')].map((li) => li.textContent);"),
        ) === JSON.stringify([NOTE]),
      { what: "the saved note to be listed" },
    );

    // Isolation: no Tauri IPC in the frame, no access to the host's DOM, no top navigation.
    const probe = await app.execute(`
      const r = {
        tauri: typeof window.__TAURI__, internals: typeof window.__TAURI_INTERNALS__,
        ipc: typeof window.ipc, origin: self.origin,
      };
      try { r.parentDocument = String(parent.document.title); } catch (e) { r.parentDocument = e.name; }
      try { top.location = location.href; r.top = "navigated"; } catch (e) { r.top = e.name; }
      return r;`);
    assert.deepEqual(probe, {
      tauri: "undefined",
      internals: "undefined",
      ipc: "undefined",
      origin: "agentapp://notes",
      parentDocument: "SecurityError",
      top: "SecurityError",
    });

    await app.switchToTop();
    mkdirSync(join(REPO, "docs", "screenshots"), { recursive: true });
    const png = Buffer.from(await app.screenshot(), "base64");
    writeFileSync(join(ARTIFACTS_DIR, "mounted-app.png"), png);
    if (process.env.E2E_UPDATE_SCREENSHOTS === "1") {
      writeFileSync(join(REPO, "docs", "screenshots", "mounted-app.png"), png);
    }
    const before = await diagnostics(app);
    assert.ok(before.executions >= 3, `set, get and list ran: ${JSON.stringify(before)}`);
    assert.equal(
      await app.execute("return location.origin"),
      "tauri://localhost",
      "the window still shows the host UI",
    );

    // A spoofed message from inside the frame (another app's id) gets no answer and executes
    // nothing; Rust counts it.
    await app.switchToFrame(await app.find(FRAME));
    const answered = await app.executeAsync(`
      const done = arguments[arguments.length - 1];
      let answered = false;
      window.addEventListener("message", (e) => { if (e.data && e.data.requestId === "spoof-1") answered = true; });
      parent.postMessage({ protocol: "lime.agentApp.bridge", version: 1, type: "capability:invoke",
        requestId: "spoof-1", appId: "hello-app", entryKey: "notes",
        payload: { capability: "lime.storage", method: "set", args: { key: "stolen", value: 1 } } }, "*");
      setTimeout(() => done(answered), 1500);`);
    assert.equal(answered, false, "a spoofed message got an answer");
    await app.switchToTop();
    // A message from a window that is not the frame (the host page itself) is refused by the relay.
    await app.execute(
      "window.postMessage({ protocol: 'lime.agentApp.bridge', version: 1, type: 'app:ready', appId: 'notes', entryKey: 'notes', payload: {} }, '*');",
    );
    const after = await waitFor(
      async () => {
        const d = await diagnostics(app);
        return (d.refusedByReason["bridge.wrong_source"] ?? 0) > (before.refusedByReason["bridge.wrong_source"] ?? 0)
          ? d
          : null;
      },
      { what: "the relay to report the wrong-source message" },
    );
    assert.equal(
      after.refusedByReason["bridge.app_mismatch"] ?? 0,
      (before.refusedByReason["bridge.app_mismatch"] ?? 0) + 1,
      JSON.stringify(after),
    );
    assert.equal(after.executions, before.executions, "a refused message executed something");
    const spoof = after.recentRefusals.find((r) => r.reason === "bridge.app_mismatch");
    assert.equal(spoof.appId, "notes");
    assert.equal(spoof.messageType, "capability:invoke");
  });
});

test("apphost open notes mounts it at start, and its notes survived the restart", async (t) => {
  await withApp(
    t,
    async (app) => {
      await enterFrame(app);
      await waitFor(async () => (await text(app, "#notes-count")) === "1 note", {
        what: "the note saved in the previous session",
      });
      const items = await app.execute(
        "return [...document.querySelectorAll('#notes li')].map((li) => li.textContent);",
      );
      assert.deepEqual(items, [NOTE]);
    },
    ["open", "notes"],
  );
});

test("a file changed after install is not served", async (t) => {
  // Flip one byte of the app's index.html inside its pack (as crates/host-core/tests/surface_serve.rs does).
  const data = process.env.APPHOST_DATA_DIR;
  assert.ok(data, "APPHOST_DATA_DIR is set by scripts/e2e.sh");
  const html = readFileSync(join(REPO, "fixtures/apps/notes/ui/index.html"));
  let tampered = false;
  for (const name of readdirSync(join(data, "packs"))) {
    const pack = join(data, "packs", name);
    const bytes = readFileSync(pack);
    const at = bytes.indexOf(html);
    if (at >= 0) {
      bytes[at + 20] ^= 1;
      chmodSync(pack, 0o644);
      writeFileSync(pack, bytes);
      tampered = true;
    }
  }
  assert.ok(tampered, "found index.html of notes in a pack");

  await withApp(
    t,
    async (app) => {
      const frame = await app.waitForElement(FRAME, 20_000);
      const refusals = await waitFor(
        async () => {
          const d = await diagnostics(app);
          return d.serveRefusals.filter((r) => r.reason === "serve.tampered") .length > 0 ? d.serveRefusals : null;
        },
        { what: "the file server to refuse the tampered index.html" },
      );
      assert.deepEqual(
        refusals.map((r) => [r.reason, r.app, r.path]),
        [["serve.tampered", "notes", "/index.html"]],
      );
      await app.switchToFrame(frame);
      const shown = await app.execute(
        "return { title: document.getElementById('title') === null, text: document.body ? document.body.innerText : '' };",
      );
      assert.equal(shown.title, true, "the tampered page was not rendered");
      assert.match(shown.text, /serve\.tampered/);
    },
    ["open", "notes"],
  );
});
