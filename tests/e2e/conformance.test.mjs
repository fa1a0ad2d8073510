// Desktop phase 4: scripts/e2e.sh has sideloaded fixtures/apps/conformance-app (with the built
// bridge-sdk copied into ui/sdk/). Its page runs one check per capability method and per Host
// Bridge rule from inside its sandboxed frame and writes each outcome into
// tr[data-test=NAME][data-result]; these tests read them and ask Rust (bridge_diagnostics) what
// it refused and executed. The tests run in order and share the data directory; the last one
// uninstalls the app.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import { dirname, join } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";

import { APPHOST_BIN, ARTIFACTS_DIR, bridgeDiagnostics, waitForLoaded, withApp } from "./lib/harness.mjs";
import { waitFor } from "./lib/webdriver.mjs";

const REPO = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const APP = "conformance-app";
const frameOf = (entry) => `iframe[data-app-id="${APP}"][data-entry-key="${entry}"]`;
const DATA = process.env.APPHOST_DATA_DIR ?? "";
const STORAGE_FILE = join(DATA, "apps", APP, "storage.sqlite");

/** Each spoofed message the page sends (button[data-run-group=spoof]) and the refusal Rust counts. */
const SPOOFS = {
  "spoof.wrong_protocol": "bridge.wrong_protocol",
  "spoof.wrong_version": "bridge.wrong_version",
  "spoof.wrong_app": "bridge.app_mismatch",
  "spoof.wrong_entry": "bridge.entry_mismatch",
  "spoof.oversized": "bridge.too_large",
  "spoof.not_json": "bridge.not_json",
  "spoof.string": "bridge.not_an_object",
  "spoof.malformed_json": "bridge.not_an_object",
  "spoof.array": "bridge.not_an_object",
  "spoof.unknown_type": "bridge.unknown_type",
  "spoof.unknown_field": "bridge.unknown_field",
  "spoof.invalid_request_id": "bridge.invalid_request_id",
  "spoof.invalid_payload": "bridge.invalid_payload",
  "spoof.missing_request_id": "bridge.missing_request_id",
};

/** Runs the `apphost` CLI on the test's data directory; returns stdout. */
function cli(...args) {
  return execFileSync(APPHOST_BIN, args, { encoding: "utf8", timeout: 60_000, stdio: ["ignore", "pipe", "pipe"] });
}

/** Switches into the app's frame and waits until the page ran its automatic checks. */
async function enterFrame(app, entry) {
  const frame = await app.waitForElement(frameOf(entry), 20_000);
  await app.switchToFrame(frame);
  await waitFor(
    async () => (await app.execute("return document.body && document.body.dataset.status")) === "done",
    { timeoutMs: 30_000, what: `the ${entry} checks to finish (body[data-status=done])` },
  );
  return frame;
}

/** Every row of the results table: name -> {result, detail, phase, runs}. */
function rows(app) {
  return app.execute(`
    const out = {};
    for (const tr of document.querySelectorAll("#results tr[data-test]")) {
      out[tr.dataset.test] = { result: tr.dataset.result, detail: tr.querySelector("td.detail").textContent,
        phase: tr.dataset.phase ?? null, runs: Number(tr.dataset.runs) };
    }
    return out;`);
}

async function row(app, name) {
  const all = await rows(app);
  assert.ok(all[name], `no row ${name}`);
  return all[name];
}

/** Clicks the check's Run button (inside the frame); returns its row once it finished. */
async function runCheck(app, name, { wait = true, timeoutMs = 15_000 } = {}) {
  const before = (await row(app, name)).runs;
  await app.execute(`document.querySelector('button[data-run="${name}"]').click();`);
  if (!wait) return null;
  return waitFor(
    async () => {
      const r = await row(app, name);
      return r.runs > before && r.result !== "running" ? r : null;
    },
    { timeoutMs, what: `check ${name} to finish` },
  );
}

/** Waits for the permission prompt in the host page, clicks `button`, and returns its title. */
async function answerPrompt(app, buttonId) {
  await app.switchToTop();
  const title = await app.text(await app.waitForElement("#permission-prompt h2", 10_000));
  await app.click(await app.find(`#permission-prompt #${buttonId}`));
  await waitFor(async () => (await app.find("#permission-prompt")) === null, { what: "the prompt to close" });
  return title;
}

async function reenter(app, entry) {
  await app.switchToTop();
  await app.switchToFrame(await app.waitForElement(frameOf(entry)));
}

/** Opens `entry` from the app list (closing what is shown). */
async function openFromList(app, entry) {
  await app.switchToTop();
  const close = await app.find("#surface-close");
  if (close !== null && (await app.displayed(close))) await app.click(close);
  await app.click(
    await app.waitForElement(`li.app-row[data-app-name="${APP}"] button.open-entry[data-entry-key="${entry}"]`),
  );
  return enterFrame(app, entry);
}

test("every check passes in the frame; spoofed messages execute nothing; undeclared fetches are blocked", async (t) => {
  await withApp(
    t,
    async (app) => {
      // `apphost open <app> --entry <key>` mounts that entry.
      const frame = await app.waitForElement(frameOf("main"), 20_000);
      assert.equal(await app.attribute(frame, "sandbox"), "allow-scripts allow-same-origin");
      assert.match(await app.attribute(frame, "src"), /^agentapp:\/\/conformance-app\/index\.html\?/);
      await enterFrame(app, "main");

      const all = await rows(app);
      const auto = [
        "raw.before_ready", "sdk.handshake", "raw.control", "ui.getSnapshot", "ui.getLocale", "ui.getTheme", "ui.navigate",
        "ui.toast", "capability.not_available", "storage.roundtrip", "storage.boot_count",
        "storage.before_ready_not_written", "storage.other_apps", "isolation.origin", "isolation.tauri_globals",
        "isolation.ipc_fetch", "isolation.parent_document", "isolation.top_navigation", "isolation.popup",
        "artifacts.roundtrip", "evidence.record_export", "events.publish", "secrets.unbound",
        "artifacts.standard_shapes", "evidence.standard_shapes", "storage.object_forms",
      ];
      const failed = auto.filter((name) => all[name]?.result !== "pass").map((name) => [name, all[name]]);
      assert.deepEqual(failed, [], "automatic checks that did not pass");
      assert.equal(all["storage.boot_count"].detail, "1");
      assert.equal(all["isolation.origin"].detail, "agentapp://conformance-app");
      assert.equal(all["isolation.top_navigation"].detail, "SecurityError");
      assert.equal(all["capability.not_available"].detail, "APP_E001");
      // The notes app (phase 3) keeps a note in its own file; this app listed none of it.
      assert.ok(existsSync(join(DATA, "apps", "notes", "storage.sqlite")), "notes has a storage file");
      assert.equal(all["storage.other_apps"].detail, "0 note:* keys");

      await app.switchToTop();
      assert.equal(await app.execute("return location.origin"), "tauri://localhost", "the host UI is still on top");
      const toasts = await app.execute("return document.getElementById('toasts').textContent");
      assert.match(toasts, /conformance toast/);
      const before = await bridgeDiagnostics(app);
      assert.ok((before.refusedByReason["bridge.not_ready"] ?? 0) >= 1, "the before-ready message was counted");

      // Every spoof at once: no answers, each counted under its reason, zero executions.
      await reenter(app, "main");
      await app.execute("document.querySelector('button[data-run-group=\"spoof\"]').click();");
      await waitFor(async () => (await app.execute("return document.body.dataset.group")) === "done", {
        what: "the spoofed messages to be sent and their silence observed",
      });
      const spoofs = await rows(app);
      const answered = Object.keys(SPOOFS).filter((n) => spoofs[n].result !== "pass").map((n) => [n, spoofs[n]]);
      assert.deepEqual(answered, [], "spoofed messages that got an answer");
      await app.switchToTop();
      const expected = {};
      for (const reason of Object.values(SPOOFS)) expected[reason] = (expected[reason] ?? 0) + 1;
      const after = await waitFor(
        async () => {
          const d = await bridgeDiagnostics(app);
          return Object.entries(expected).every(
            ([r, n]) => (d.refusedByReason[r] ?? 0) >= (before.refusedByReason[r] ?? 0) + n,
          )
            ? d
            : null;
        },
        { what: "Rust to count every spoofed message" },
      );
      for (const [reason, n] of Object.entries(expected)) {
        assert.equal(
          (after.refusedByReason[reason] ?? 0) - (before.refusedByReason[reason] ?? 0),
          n,
          `refusals counted as ${reason}`,
        );
      }
      assert.equal(after.executions, before.executions, "a spoofed message executed a capability");

      // What the relay itself could get wrong: a message relayed with another app's origin, or
      // for a mount that does not exist, is refused in Rust too (the host page is the only
      // caller the command guard admits, so this is the relay's path).
      const mountId = await app.execute(`return document.querySelector('${frameOf("main")}').dataset.mountId`);
      const forged = await app.executeAsync(
        `const [mountId, data, done] = arguments;
        const invoke = window.__TAURI_INTERNALS__.invoke;
        Promise.all([
          invoke("bridge_message", { mountId, origin: "agentapp://notes", data }),
          invoke("bridge_message", { mountId: "m-not-mounted", origin: "agentapp://conformance-app", data }),
        ]).then((r) => done({ ok: r }), (e) => done({ err: e }));`,
        [
          mountId,
          JSON.stringify({
            protocol: "lime.agentApp.bridge", version: 1, type: "capability:invoke", requestId: "forged-1",
            appId: APP, entryKey: "main",
            payload: { capability: "lime.storage", method: "set", args: { key: "spoof:forged", value: 1 } },
          }),
        ],
      );
      assert.deepEqual(forged, { ok: [[], []] }, "forged relays produced actions");
      const relayed = await bridgeDiagnostics(app);
      assert.equal(relayed.refusedByReason["bridge.wrong_origin"] ?? 0, (after.refusedByReason["bridge.wrong_origin"] ?? 0) + 1);
      assert.equal(relayed.refusedByReason["bridge.unknown_mount"] ?? 0, (after.refusedByReason["bridge.unknown_mount"] ?? 0) + 1);
      assert.equal(relayed.executions, before.executions, "a forged relay executed a capability");

      await reenter(app, "main");
      const written = await runCheck(app, "spoof.nothing_written");
      assert.deepEqual([written.result, written.detail], ["pass", "0 spoof:* keys"]);

      // An undeclared domain: the CSP's connect-src stops the request before it leaves WebKit.
      const hits = [];
      const server = createServer((req, res) => {
        hits.push(req.url);
        res.setHeader("access-control-allow-origin", "*");
        res.end("reached");
      });
      await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
      try {
        const url = `http://127.0.0.1:${server.address().port}/exfiltrate`;
        await app.execute("document.getElementById('net-url').value = arguments[0];", [url]);
        const net = await runCheck(app, "net.undeclared");
        assert.equal(net.result, "pass", net.detail);
        assert.match(net.detail, /^TypeError \[.*connect-src/, "refused by the CSP, and reported as such");
        assert.deepEqual(hits, [], "the undeclared server was reached");
      } finally {
        server.close();
      }

      writeFileSync(join(ARTIFACTS_DIR, "conformance-results.json"), JSON.stringify(await rows(app), null, 2));
      await app.switchToTop();
      const png = Buffer.from(await app.screenshot(), "base64");
      writeFileSync(join(ARTIFACTS_DIR, "conformance-app.png"), png);
      if (process.env.E2E_UPDATE_SCREENSHOTS === "1") {
        writeFileSync(join(REPO, "docs", "screenshots", "conformance-app.png"), png);
      }
    },
    ["open", APP, "--entry", "main"],
  );
});

test("its storage survives a restart of the window", async (t) => {
  await withApp(
    t,
    async (app) => {
      await enterFrame(app, "main");
      const count = await row(app, "storage.boot_count");
      assert.deepEqual([count.result, count.detail], ["pass", "2"]);
    },
    ["open", APP, "--entry", "main"],
  );
});

test("permission prompt: deny, duplicate request id, allow always, then apphost revoke", async (t) => {
  await withApp(
    t,
    async (app) => {
      assert.equal(await waitForLoaded(app), "ready");
      await openFromList(app, "prompt");
      const start = await bridgeDiagnosticsFromFrame(app, "prompt");

      // A second call reusing the requestId of a call that waits for the user is refused at once.
      await runCheck(app, "prompt.duplicate", { wait: false });
      await waitFor(async () => (await row(app, "prompt.duplicate")).phase === "HOST_E_DUPLICATE_REQUEST", {
        what: "the duplicate request id to be refused",
      });
      const title = await answerPrompt(app, "prompt-deny");
      assert.match(title, /scratch_storage/i);
      await reenter(app, "prompt");
      const dup = await waitFor(async () => {
        const r = await row(app, "prompt.duplicate");
        return r.result !== "running" ? r : null;
      });
      assert.deepEqual([dup.result, dup.detail], ["pass", "HOST_E_DUPLICATE_REQUEST, then APP_E002"]);

      // Denied for this mount: the next call is denied without asking again.
      const again = await runCheck(app, "prompt.scratch");
      assert.equal(again.detail, "APP_E002");
      await app.switchToTop();
      assert.equal(await app.find("#permission-prompt"), null, "asked again after a deny");

      // A new mount asks again; allow always grants it (the CLI sees the grant).
      await openFromList(app, "prompt");
      await runCheck(app, "prompt.scratch", { wait: false });
      await answerPrompt(app, "prompt-allow-always");
      await reenter(app, "prompt");
      const allowed = await waitFor(async () => {
        const r = await row(app, "prompt.scratch");
        return r.result !== "running" ? r : null;
      });
      assert.equal(allowed.detail, "ok");
      assert.match(cli("grants", APP), /scratch_storage[^\n]*granted/i);
      const silent = await runCheck(app, "prompt.scratch");
      assert.equal(silent.detail, "ok", "allowed always: no second prompt");

      // `apphost revoke`: the very next call is not allowed without the user.
      cli("revoke", APP, "scratch_storage");
      await runCheck(app, "prompt.scratch", { wait: false });
      await answerPrompt(app, "prompt-deny");
      await reenter(app, "prompt");
      const revoked = await waitFor(async () => {
        const r = await row(app, "prompt.scratch");
        return r.result !== "running" ? r : null;
      });
      assert.equal(revoked.detail, "APP_E002");

      await app.switchToTop();
      const end = await bridgeDiagnostics(app);
      // Exactly the two allowed calls executed; the denied, duplicate and revoked ones did not.
      assert.equal(end.executions - start.executions, 2, JSON.stringify(end));
    },
  );
});

/** Diagnostics, asked from the host page, then back into the frame. */
async function bridgeDiagnosticsFromFrame(app, entry) {
  await app.switchToTop();
  const d = await bridgeDiagnostics(app);
  await reenter(app, entry);
  return d;
}

const PEER = "conformance-peer";

/** Calls a host command from the host page (the only page the command guard lets call). */
async function hostInvoke(app, command, args) {
  await app.switchToTop();
  const r = await app.executeAsync(
    "const [c, a, done] = arguments; window.__TAURI_INTERNALS__.invoke(c, a).then((v) => done({ ok: v }), (e) => done({ err: e }));",
    [command, args],
  );
  if (r.err !== undefined) throw new Error(`${command}: ${JSON.stringify(r.err)}`);
  return r.ok;
}

/** A mount with no frame, driven from the host page as the relay would (handshake, then `payload`). */
async function extraMountSubscribed(app, appId, topic) {
  const m = await hostInvoke(app, "mount_entry", { appId, entryKey: "main" });
  const send = (type, requestId, payload) =>
    hostInvoke(app, "bridge_message", {
      mountId: m.mountId,
      origin: m.origin,
      data: JSON.stringify({ protocol: "lime.agentApp.bridge", version: 1, type, requestId, appId, entryKey: "main", payload }),
    });
  await send("app:ready", "x0", {});
  const out = await send("capability:invoke", "x1", { capability: "lime.events", method: "subscribe", args: { topic } });
  const answer = out.find((o) => o.kind === "post")?.message;
  assert.equal(answer?.type, "host:response", `${appId} subscribe: ${JSON.stringify(out)}`);
  return m;
}

test("a second app cannot read the first one's artifacts, evidence or storage, nor receive its events; origins differ; host:download saves a file", async (t) => {
  await withApp(t, async (app) => {
    assert.equal(await waitForLoaded(app), "ready");
    await openFromList(app, "main");
    const seed = await runCheck(app, "isolation.seed");
    assert.equal(seed.result, "pass", seed.detail);
    const ids = JSON.parse(seed.detail);
    assert.equal(ids.origin, "agentapp://conformance-app");

    // The same app's second mount gets the event; the other app's never does, same topic.
    const same = await extraMountSubscribed(app, APP, "conformance.ping");
    const other = await extraMountSubscribed(app, PEER, "conformance.ping");
    assert.notEqual(other.origin, same.origin);
    await reenter(app, "main");
    const published = await runCheck(app, "events.publish_count");
    assert.deepEqual([published.result, published.detail], ["pass", "1"], "delivered to the same app's mount only");
    await hostInvoke(app, "unmount", { mountId: same.mountId });
    await hostInvoke(app, "unmount", { mountId: other.mountId });

    // host:download: the host asks (sanitized name, size, type); Save writes into the download folder.
    const downloads = process.env.XDG_DOWNLOAD_DIR;
    assert.ok(downloads, "XDG_DOWNLOAD_DIR is set by scripts/lib/desktop-harness.sh");
    await reenter(app, "main");
    await runCheck(app, "download.text", { wait: false });
    await app.switchToTop();
    const name = await app.text(await app.waitForElement("#download-confirm #download-name", 10_000));
    assert.equal(name, "conformance.md");
    assert.match(await app.text(await app.find("#download-confirm #download-details")), /22 bytes · text\/markdown/);
    await app.click(await app.find("#download-confirm #download-save"));
    await reenter(app, "main");
    const saved = await waitFor(
      async () => {
        const r = await row(app, "download.text");
        return r.result !== "running" ? r : null;
      },
      { what: "the download answer" },
    );
    assert.deepEqual([saved.result, JSON.parse(saved.detail)], ["pass", { saved: true, fileName: "conformance.md" }]);
    assert.equal(readFileSync(join(downloads, "conformance.md"), "utf8"), "# saved by conformance");

    // The other app, in its own frame and origin.
    await app.switchToTop();
    await app.click(await app.find("#surface-close"));
    await app.click(
      await app.waitForElement(`li.app-row[data-app-name="${PEER}"] button.open-entry[data-entry-key="main"]`),
    );
    const peerFrame = await app.waitForElement(`iframe[data-app-id="${PEER}"][data-entry-key="main"]`, 20_000);
    assert.match(await app.attribute(peerFrame, "src"), /^agentapp:\/\/conformance-peer\//);
    await app.switchToFrame(peerFrame);
    await waitFor(async () => (await app.execute("return document.body && document.body.dataset.status")) === "done", {
      timeoutMs: 30_000,
      what: "the peer's checks",
    });
    await app.execute("document.body.dataset.peer = arguments[0];", [seed.detail]);
    const peer = await runCheck(app, "isolation.peer");
    assert.deepEqual([peer.result, peer.detail], ["pass", "isolated"]);
  });
});

test("the CLI updating, disabling or uninstalling the app remounts or unmounts its frame; --delete-data removes its storage", async (t) => {
  await withApp(t, async (app) => {
    assert.equal(await waitForLoaded(app), "ready");
    await openFromList(app, "main");
    await app.switchToTop();

    // `apphost update`: the frame is remounted from the new version, with its data.
    const update = process.env.CONFORMANCE_UPDATE;
    assert.ok(update, "CONFORMANCE_UPDATE (version 1.0.1 of the app) is set by scripts/e2e.sh");
    const oldMount = await app.attribute(await app.find(frameOf("main")), "data-mount-id");
    cli("update", update, "--yes", "--sideload");
    const newFrame = await waitFor(
      async () => {
        const f = await app.find(frameOf("main"));
        return f !== null && (await app.attribute(f, "data-mount-id")) !== oldMount ? f : null;
      },
      { timeoutMs: 10_000, what: "the updated app to be mounted again" },
    );
    await waitFor(async () => (await app.attribute(await app.find("#surface-notice"), "data-reason")) === "version-changed", {
      what: "the notice to say the app changed version",
    });
    assert.equal((await bridgeDiagnostics(app)).mounts, 1, "the old mount is gone");
    await waitFor(
      async () =>
        (await app.execute(`return document.querySelector('li.app-row[data-app-name="${APP}"] [data-version]')?.dataset.version`)) === "1.0.1",
      { what: "the list to show version 1.0.1" },
    );
    await app.switchToFrame(newFrame);
    await waitFor(async () => (await app.execute("return document.body && document.body.dataset.status")) === "done", {
      timeoutMs: 30_000,
      what: "the checks of the updated app",
    });
    // Boot 4 was the mount before the update (boot 3: the isolation test); the data survived it.
    assert.deepEqual(await row(app, "storage.boot_count"), { result: "pass", detail: "5", phase: null, runs: 1 });
    await app.switchToTop();

    cli("disable", APP);
    await waitFor(async () => (await app.find(frameOf("main"))) === null, {
      timeoutMs: 10_000,
      what: "the frame of the disabled app to be removed",
    });
    // The notice follows in the UI's next render: wait for it rather than race it.
    await waitFor(async () => (await app.attribute(await app.find("#surface-notice"), "data-reason")) === "disabled", {
      what: "the notice to say the app was disabled",
    });
    assert.equal(await app.execute("return document.getElementById('surface').hidden"), true);
    const stale = await bridgeDiagnostics(app);
    assert.equal(stale.mounts, 0, "Rust still holds a mount of the disabled app");

    cli("enable", APP);
    await waitFor(
      async () => (await app.execute(`return document.querySelector('li.app-row[data-app-name="${APP}"]')?.dataset.enabled`)) === "true",
      { what: "the list to show the app enabled again" },
    );
    await openFromList(app, "main");
    await app.switchToTop();
    assert.ok(existsSync(STORAGE_FILE), `${STORAGE_FILE} exists before the uninstall`);

    cli("uninstall", APP, "--delete-data", "--yes");
    await waitFor(async () => (await app.find(frameOf("main"))) === null, {
      timeoutMs: 10_000,
      what: "the frame of the uninstalled app to be removed",
    });
    await waitFor(async () => (await app.attribute(await app.find("#surface-notice"), "data-reason")) === "uninstalled", {
      what: "the notice to say the app was uninstalled",
    });
    assert.equal(existsSync(STORAGE_FILE), false, "the storage file is gone");
    assert.equal(existsSync(join(DATA, "apps", APP)), false, "the app's data folder is gone");
    await waitFor(async () => (await app.find(`li.app-row[data-app-name="${APP}"]`)) === null, {
      what: "the app to leave the list",
    });
  });
});
