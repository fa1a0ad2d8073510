// Unit tests of the bridge relay's pure parts (the event.source check, what is relayed, the
// prompt and link wording), run against the built dist/ (npm test -w ui-host).
import assert from "node:assert/strict";
import { test } from "node:test";

import {
  MAX_RELAYED_CHARS,
  encodeForRelay,
  externalHost,
  formatSize,
  isDeclaredHost,
  mountForSource,
  promptText,
} from "../dist/bridge-relay.js";

test("only a mounted frame's own window is a valid source", () => {
  const a = { name: "frame a" };
  const b = { name: "frame b" };
  const frames = [
    { mountId: "m-a", window: a },
    { mountId: "m-b", window: b },
    { mountId: "m-gone", window: null },
  ];
  assert.equal(mountForSource(a, frames), "m-a");
  assert.equal(mountForSource(b, frames), "m-b");
  // A look-alike object, the host window, a detached frame (null window) or no source at all.
  assert.equal(mountForSource({ name: "frame a" }, frames), null);
  assert.equal(mountForSource(globalThis, frames), null);
  assert.equal(mountForSource(null, frames), null);
  assert.equal(mountForSource(undefined, frames), null);
  assert.equal(mountForSource(a, []), null);
});

test("messages are relayed as JSON text; what JSON cannot carry is refused", () => {
  const msg = { protocol: "lime.agentApp.bridge", version: 1, type: "app:ready", payload: {} };
  assert.deepEqual(encodeForRelay(msg), { action: "relay", text: JSON.stringify(msg) });
  // A string is relayed as a JSON string: Rust refuses it (not an object), not the relay.
  assert.deepEqual(encodeForRelay("hi"), { action: "relay", text: '"hi"' });
  assert.equal(encodeForRelay(undefined).action, "refuse");
  assert.equal(encodeForRelay(() => 1).reason, "bridge.not_json");
  const cyclic = {};
  cyclic.self = cyclic;
  assert.deepEqual(encodeForRelay(cyclic), { action: "refuse", reason: "bridge.not_json", bytes: 0 });
  assert.equal(encodeForRelay(10n).reason, "bridge.not_json");
  const big = encodeForRelay({ s: "x".repeat(MAX_RELAYED_CHARS) });
  assert.equal(big.action, "refuse");
  assert.equal(big.reason, "bridge.too_large");
  assert.ok(big.bytes > MAX_RELAYED_CHARS);
  const fits = encodeForRelay({ s: "x".repeat(MAX_RELAYED_CHARS - 20) });
  assert.equal(fits.action, "relay");
});

test("the prompt names the app, the permission and the app's reason", () => {
  const q = {
    appId: "hello-app",
    entryKey: "notes",
    capability: "lime.storage",
    method: "set",
    permission: "notes_storage",
    reason: "Save your notes.",
    askReason: "not-granted",
  };
  const t = promptText(q, "Hello Notes");
  assert.equal(t.title, "Allow Hello Notes to use the permission “notes_storage”?");
  assert.match(t.body, /lime\.storage\.set/);
  assert.match(t.body, /Save your notes\./);
  const policy = promptText({ ...q, permission: null, reason: null }, "Hello Notes");
  assert.equal(policy.title, "Allow Hello Notes to use lime.storage.set?");
  assert.doesNotMatch(policy.body, /says/);
});

test("external links: only http(s) hosts, matched against the declared domains", () => {
  assert.equal(externalHost("https://notes.example.com/a"), "notes.example.com");
  assert.equal(externalHost("http://example.com"), "example.com");
  assert.equal(externalHost("javascript:alert(1)"), null);
  assert.equal(externalHost("file:///etc/passwd"), null);
  assert.equal(externalHost("not a url"), null);
  assert.equal(isDeclaredHost("notes.example.com", ["notes.example.com"]), true);
  assert.equal(isDeclaredHost("NOTES.example.com", ["notes.example.com:443"]), true);
  assert.equal(isDeclaredHost("evil-notes.example.com", ["notes.example.com"]), false);
  assert.equal(isDeclaredHost("a.example.com", ["*.example.com"]), true);
  assert.equal(isDeclaredHost("example.com", ["*.example.com"]), false);
  assert.equal(isDeclaredHost("example.com.evil", ["example.com"]), false);
  assert.equal(isDeclaredHost("example.com", []), false);
});

test("download sizes are shown for people", () => {
  assert.equal(formatSize(0), "0 bytes");
  assert.equal(formatSize(1), "1 byte");
  assert.equal(formatSize(1023), "1023 bytes");
  assert.equal(formatSize(1536), "1.5 KB");
  assert.equal(formatSize(64 * 1024 * 1024), "64.0 MB");
});
