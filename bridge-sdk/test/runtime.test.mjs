// Unit tests of the SDK against a scripted host endpoint (no browser needed).
import { test } from "node:test";
import assert from "node:assert/strict";
import {
  BRIDGE_PROTOCOL,
  createLimeRuntime,
  createMockLimeRuntime,
  applyLimeHostTheme,
  LimeCapabilityError,
} from "../dist/index.js";

/** A fake host: records what the app posts, lets the test answer. */
function fakeHost() {
  const sent = [];
  let listener = () => {};
  const endpoint = {
    post: (m, origin) => sent.push({ m, origin }),
    subscribe: (l) => {
      listener = l;
      return () => {
        listener = () => {};
      };
    },
  };
  const reply = (type, requestId, payload, { origin = "tauri://localhost", fromHost = true, appId = "a" } = {}) =>
    listener({ protocol: BRIDGE_PROTOCOL, version: 1, type, requestId, appId, entryKey: "home", payload }, origin, fromHost);
  return { sent, endpoint, reply };
}

const SNAP = { appId: "a", entryKey: "home", route: "/", themeMode: "dark", effectiveThemeMode: "dark", colorSchemeId: "x", tokens: {}, capabilities: { available: [], blocked: [] } };

test("ready() sends app:ready once and resolves with the snapshot; the host origin is pinned", async () => {
  const h = fakeHost();
  const rt = createLimeRuntime({ appId: "a", entryKey: "home", endpoint: h.endpoint });
  const p = rt.ready();
  rt.ready();
  assert.equal(h.sent.length, 1);
  assert.equal(h.sent[0].m.type, "app:ready");
  assert.equal(h.sent[0].m.appId, "a");
  assert.equal(h.sent[0].m.entryKey, "home");
  h.reply("host:snapshot", undefined, SNAP);
  assert.deepEqual(await p, SNAP);
  rt.storage.get("k").catch(() => {});
  assert.equal(h.sent[1].origin, "tauri://localhost", "after the snapshot, messages go to the host origin only");
  rt.close();
});

test("a call resolves with host:response and rejects with a typed error on host:error", async () => {
  const h = fakeHost();
  const rt = createLimeRuntime({ appId: "a", entryKey: "home", endpoint: h.endpoint });
  const get = rt.storage.get("k");
  const req = h.sent[0].m;
  assert.equal(req.type, "capability:invoke");
  assert.deepEqual(req.payload, { capability: "lime.storage", method: "get", args: { key: "k" } });
  h.reply("host:response", req.requestId, { value: 42, traceId: "t" });
  assert.equal(await get, 42);

  const set = rt.storage.set("k", 1);
  const id = h.sent[1].m.requestId;
  assert.notEqual(id, req.requestId, "request ids are unique");
  h.reply("host:error", id, { code: "APP_E201", message: "quota", capability: "lime.storage", method: "set", causeCode: "storage.quota_exceeded", retryable: false });
  await assert.rejects(set, (e) => e instanceof LimeCapabilityError && e.code === "APP_E201" && e.causeCode === "storage.quota_exceeded" && e.method === "set");
  rt.close();
});

test("messages not from the host window, for another app, or another protocol are ignored", async () => {
  const h = fakeHost();
  const rt = createLimeRuntime({ appId: "a", entryKey: "home", endpoint: h.endpoint, timeoutMs: 50 });
  const get = rt.storage.get("k");
  const id = h.sent[0].m.requestId;
  h.reply("host:response", id, { value: "spoofed" }, { fromHost: false });
  h.reply("host:response", id, { value: "spoofed" }, { appId: "b" });
  await assert.rejects(get, (e) => e.code === "HOST_E_TIMEOUT" && e.retryable === true);
  assert.equal(h.sent.at(-1).m.type, "capability:cancel", "a timed-out call is cancelled at the host");
  assert.deepEqual(h.sent.at(-1).m.payload, { requestId: id });
  rt.close();
});

test("AbortSignal cancels a pending call; host:event reaches onEvent", async () => {
  const h = fakeHost();
  const rt = createLimeRuntime({ appId: "a", entryKey: "home", endpoint: h.endpoint });
  const ctl = new AbortController();
  const events = [];
  const call = rt.invoke("lime.agent", "startTask", {}, { signal: ctl.signal, onEvent: (e) => events.push(e) });
  const id = h.sent[0].m.requestId;
  h.reply("host:event", id, { n: 1 });
  ctl.abort();
  await assert.rejects(call, (e) => e.code === "HOST_E_CANCELLED");
  assert.deepEqual(events, [{ n: 1 }]);
  assert.equal(h.sent.at(-1).m.type, "capability:cancel");
  const pre = new AbortController();
  pre.abort();
  await assert.rejects(rt.storage.get("k", { signal: pre.signal }), (e) => e.code === "HOST_E_CANCELLED");
  rt.close();
});

test("theme helper applies only --lime-*/--app-* variables and the three attributes", () => {
  const props = {};
  const attrs = {};
  const el = { style: { setProperty: (k, v) => (props[k] = v) }, setAttribute: (k, v) => (attrs[k] = v) };
  const applied = applyLimeHostTheme(
    { themeMode: "system", effectiveThemeMode: "dark", colorSchemeId: "c", tokens: { "--lime-bg": "#000", "--app-x": "1px", "--other": "red", color: "red", "--lime-evil": "red; } body { x" } },
    el,
  );
  assert.deepEqual(applied.sort(), ["--app-x", "--lime-bg"]);
  assert.deepEqual(attrs, { "data-lime-theme": "system", "data-lime-theme-effective": "dark", "data-lime-color-scheme": "c" });
});

test("the mock runtime has the same storage semantics and errors as the host", async () => {
  const lime = createMockLimeRuntime({ quotaBytes: 20, denied: ["lime.storage.delete"] });
  await lime.storage.set("a", "0123456789");
  assert.equal(await lime.storage.get("a"), "0123456789");
  assert.equal(await lime.storage.get("missing"), null);
  await assert.rejects(lime.storage.set("b", "0123456789"), (e) => e.code === "APP_E201");
  await assert.rejects(lime.storage.set("", 1), (e) => e.code === "APP_E900" && e.causeCode === "storage.invalid_key");
  await assert.rejects(lime.storage.delete("a"), (e) => e.code === "APP_E002");
  await assert.rejects(lime.invoke("lime.cloudSession", "requestLogin"), (e) => e.code === "APP_E001");
  const many = createMockLimeRuntime();
  for (const k of ["n:2", "n:1", "o:1", "n:3"]) await many.storage.set(k, k);
  const p1 = await many.storage.list({ prefix: "n:", limit: 2 });
  assert.deepEqual(p1.items.map((i) => i.key), ["n:1", "n:2"]);
  const p2 = await many.storage.list({ prefix: "n:", limit: 2, cursor: p1.nextCursor });
  assert.deepEqual(p2.items.map((i) => i.key), ["n:3"]);
  assert.equal(p2.nextCursor, null);
  assert.equal(many.calls.length, 6);
});
