// The typed lime.* handles over a scripted host, and the mock runtime's same surface.
import { test } from "node:test";
import assert from "node:assert/strict";
import {
  APP_MESSAGE_TYPES,
  BRIDGE_PROTOCOL,
  ERROR_CODES,
  ErrorCodes,
  HOST_MESSAGE_TYPES,
  LimeCapabilityError,
  MOCK_CAPABILITIES,
  createLimeRuntime,
  createMockEventBus,
  createMockLimeRuntime,
} from "@apphost/bridge-sdk"; // through package.json `exports`, as an app imports it

function fakeHost() {
  const sent = [];
  let listener = () => {};
  const endpoint = {
    post: (m) => sent.push(m),
    subscribe: (l) => {
      listener = l;
      return () => (listener = () => {});
    },
  };
  const reply = (type, requestId, payload, { fromHost = true } = {}) => {
    const m = { protocol: BRIDGE_PROTOCOL, version: 1, type, appId: "a", entryKey: "home", payload };
    if (requestId !== undefined) m.requestId = requestId;
    listener(m, "tauri://localhost", fromHost);
  };
  /** Answers the last invoke with `value`. */
  const answer = (value) => reply("host:response", sent.at(-1).requestId, { value });
  return { sent, endpoint, reply, answer };
}

const rt = (h, extra = {}) => createLimeRuntime({ appId: "a", entryKey: "home", endpoint: h.endpoint, ...extra });

test("the generated constants match the SDK's error names and message types", () => {
  assert.deepEqual(new Set(Object.values(ErrorCodes)), new Set(ERROR_CODES));
  assert.ok(APP_MESSAGE_TYPES.includes("capability:cancel"));
  assert.ok(HOST_MESSAGE_TYPES.includes("host:event"));
});

test("each handle sends capability:invoke with its capability, method and args", async () => {
  const h = fakeHost();
  const lime = rt(h);
  const cases = [
    [() => lime.artifacts.create({ name: "r.txt", content: "hi" }), "lime.artifacts", "create", { name: "r.txt", content: "hi" }],
    [() => lime.artifacts.read({ artifactId: "x" }), "lime.artifacts", "read", { artifactId: "x" }],
    [() => lime.artifacts.list(), "lime.artifacts", "list", {}],
    [() => lime.artifacts.delete({ artifactId: "x" }), "lime.artifacts", "delete", { artifactId: "x" }],
    [() => lime.evidence.record({ kind: "review", data: { ok: 1 } }), "lime.evidence", "record", { kind: "review", data: { ok: 1 } }],
    [() => lime.evidence.list({ kind: "review", limit: 5 }), "lime.evidence", "list", { kind: "review", limit: 5 }],
    [() => lime.evidence.export(), "lime.evidence", "export", {}],
    [() => lime.secrets.getRef({ key: "apiKey" }), "lime.secrets", "getRef", { key: "apiKey" }],
    [() => lime.events.publish("t", { n: 1 }), "lime.events", "publish", { topic: "t", payload: { n: 1 } }],
    [() => lime.policy.requestPermission({ permission: "network" }), "lime.policy", "requestPermission", { permission: "network" }],
    [() => lime.storage.table("notes").insert({ row: { title: "x" } }), "lime.storage", "tableInsert", { row: { title: "x" }, table: "notes" }],
    [() => lime.storage.table("notes").query({ where: { done: false } }), "lime.storage", "tableQuery", { where: { done: false }, table: "notes" }],
    [() => lime.ui.getLocale(), "lime.ui", "getLocale", {}],
  ];
  for (const [call, capability, method, args] of cases) {
    const p = call();
    const m = h.sent.at(-1);
    assert.equal(m.type, "capability:invoke");
    assert.deepEqual(m.payload, { capability, method, args }, `${capability}.${method}`);
    h.answer({ ok: method });
    assert.deepEqual(await p, { ok: method });
  }
  const ids = new Set(h.sent.map((m) => m.requestId));
  assert.equal(ids.size, h.sent.length, "every call has its own requestId");
  lime.close();
});

test("CallOptions.options travels as the invoke payload's options", async () => {
  const h = fakeHost();
  const lime = rt(h);
  const p = lime.evidence.record({ kind: "k" }, { options: { idempotencyKey: "once" } });
  assert.deepEqual(h.sent.at(-1).payload.options, { idempotencyKey: "once" });
  h.answer(null);
  await p;
  lime.close();
});

test("requestPermission resolves the host's answer and rejects with the host's error", async () => {
  const h = fakeHost();
  const lime = rt(h);
  const ok = lime.policy.requestPermission({ permission: "network" });
  h.answer({ granted: true, persistence: "once" });
  assert.deepEqual(await ok, { granted: true, persistence: "once" });
  const no = lime.policy.requestPermission({ permission: "network" });
  h.reply("host:error", h.sent.at(-1).requestId, {
    code: "APP_E002", message: "the user did not allow this", causeCode: "permission.denied",
    capability: "lime.policy", method: "requestPermission", retryable: false,
  });
  await assert.rejects(no, (e) => e instanceof LimeCapabilityError && e.code === "APP_E002" && e.method === "requestPermission");
  lime.close();
});

test("events: one subscribe per topic, host:event reaches that topic's listeners, the last unsubscribe tells the host", async () => {
  const h = fakeHost();
  const lime = rt(h);
  const got = { a: [], b: [], other: [] };
  const s1 = lime.events.subscribe("t", (e) => got.a.push(e.payload));
  assert.deepEqual(h.sent.at(-1).payload, { capability: "lime.events", method: "subscribe", args: { topic: "t" } });
  h.answer(null);
  const off1 = await s1;
  const off2 = await lime.events.subscribe("t", (e) => got.b.push(e.payload));
  assert.equal(h.sent.length, 1, "a second listener of the same topic does not subscribe again");
  const s3 = lime.events.subscribe("u", (e) => got.other.push(e.payload));
  h.answer(null);
  await s3;

  h.reply("host:event", undefined, { topic: "t", payload: 1 });
  h.reply("host:event", undefined, { topic: "u", payload: 2 });
  h.reply("host:event", undefined, { topic: "t", payload: "spoofed" }, { fromHost: false });
  h.reply("host:event", undefined, { nope: true });
  assert.deepEqual(got, { a: [1], b: [1], other: [2] });

  await off1();
  h.reply("host:event", undefined, { topic: "t", payload: 3 });
  assert.deepEqual(got.a, [1]);
  assert.deepEqual(got.b, [1, 3]);
  const before = h.sent.length;
  const last = off2();
  assert.equal(h.sent.length, before + 1);
  assert.deepEqual(h.sent.at(-1).payload, { capability: "lime.events", method: "unsubscribe", args: { topic: "t" } });
  h.answer(null);
  await last;
  h.reply("host:event", undefined, { topic: "t", payload: 4 });
  assert.deepEqual(got.b, [1, 3]);
  lime.close();
});

test("a host:event for a pending call goes to its onEvent, not to app-event listeners", async () => {
  const h = fakeHost();
  const lime = rt(h);
  const sub = lime.events.subscribe("t", () => assert.fail("not an app event"));
  h.answer(null);
  await sub;
  const seen = [];
  const call = lime.invoke("lime.agent", "startTask", {}, { onEvent: (e) => seen.push(e) });
  const id = h.sent.at(-1).requestId;
  h.reply("host:event", id, { topic: "t", step: 1 });
  h.reply("host:response", id, { value: "done" });
  assert.equal(await call, "done");
  assert.deepEqual(seen, [{ topic: "t", step: 1 }]);
  lime.close();
});

test("timeout and AbortSignal work the same on every handle (and tell the host)", async () => {
  const h = fakeHost();
  const lime = rt(h, { timeoutMs: 30 });
  const slow = lime.artifacts.create({ name: "x", content: "y" });
  const id = h.sent.at(-1).requestId;
  await assert.rejects(slow, (e) => e.code === "HOST_E_TIMEOUT" && e.retryable && e.capability === "lime.artifacts");
  assert.deepEqual(h.sent.at(-1), { ...h.sent.at(-1), type: "capability:cancel", payload: { requestId: id } });
  h.reply("host:response", id, { value: "late" }); // ignored: the call is over
  const ctl = new AbortController();
  const p = lime.evidence.export({}, { signal: ctl.signal, timeoutMs: 10_000 });
  ctl.abort();
  await assert.rejects(p, (e) => e.code === "HOST_E_CANCELLED" && !e.retryable);
  assert.equal(h.sent.at(-1).type, "capability:cancel");
  lime.close();
});

test("close() rejects pending calls and drops event listeners", async () => {
  const h = fakeHost();
  const lime = rt(h);
  const sub = lime.events.subscribe("t", () => assert.fail("closed"));
  h.answer(null);
  await sub;
  const pending = lime.secrets.getRef({ key: "k" });
  lime.close();
  await assert.rejects(pending, (e) => e.code === "HOST_E_CANCELLED");
});

// ---- the mock ----

test("mock: the same handles as the real runtime", () => {
  const real = rt(fakeHost());
  const mock = createMockLimeRuntime();
  for (const cap of ["ui", "storage", "artifacts", "evidence", "secrets", "events", "policy"]) {
    assert.deepEqual(Object.keys(mock[cap]).sort(), Object.keys(real[cap]).sort(), cap);
  }
  assert.deepEqual(Object.keys(mock.storage.table("t")).sort(), Object.keys(real.storage.table("t")).sort());
  real.close();
});

test("mock: unknown capability, unknown method and a capability not offered answer APP_E001", async () => {
  const lime = createMockLimeRuntime({ capabilities: ["lime.ui", "lime.storage"] });
  await assert.rejects(lime.invoke("lime.agent", "startTask"), (e) => e.code === "APP_E001" && e.causeCode === "capability.not_available");
  await assert.rejects(lime.invoke("lime.storage", "drop"), (e) => e.code === "APP_E001");
  await assert.rejects(lime.invoke("lime.storage", "constructor"), (e) => e.code === "APP_E001", "no prototype lookups");
  await assert.rejects(lime.artifacts.list(), (e) => e.code === "APP_E001" && e.capability === "lime.artifacts");
  await assert.rejects(lime.invoke("lime.storage", "get", [1]), (e) => e.code === "APP_E900");
  assert.deepEqual(MOCK_CAPABILITIES.length, 7);
});

test("mock: artifacts round trip, paging, quota shared with storage", async () => {
  const lime = createMockLimeRuntime({ quotaBytes: 40 });
  const a = await lime.artifacts.create({ name: "a.txt", content: "0123456789", mimeType: "text/plain" });
  assert.equal(a.size, 10);
  assert.equal(a.content, undefined, "create returns metadata only");
  const b = await lime.artifacts.create({ name: "b.bin", content: "AAEC", encoding: "base64" });
  assert.equal(b.size, 3);
  assert.equal((await lime.artifacts.read({ artifactId: a.artifactId })).content, "0123456789");
  const p1 = await lime.artifacts.list({ limit: 1 });
  assert.equal(p1.items.length, 1);
  const p2 = await lime.artifacts.list({ limit: 1, cursor: p1.nextCursor });
  assert.equal(p2.items[0].artifactId, b.artifactId);
  assert.equal(p2.nextCursor, null);
  await assert.rejects(lime.artifacts.create({ name: "c", content: "x".repeat(30) }), (e) => e.code === "APP_E201");
  await assert.rejects(lime.artifacts.create({ name: "c", content: "***", encoding: "base64" }), (e) => e.code === "APP_E900");
  await assert.rejects(lime.artifacts.read({ artifactId: "nope" }), (e) => e.code === "APP_E900" && e.causeCode === "artifact.not_found");
  assert.deepEqual(await lime.artifacts.delete({ artifactId: a.artifactId }), { deleted: true });
  assert.deepEqual(await lime.artifacts.delete({ artifactId: a.artifactId }), { deleted: false });
  await lime.storage.set("k", "x".repeat(20)); // room again after the delete
});

test("mock: evidence record, list by kind, export with provenance", async () => {
  const lime = createMockLimeRuntime({ appId: "rev", entryKey: "queue" });
  const art = await lime.artifacts.create({ name: "r", content: "x" });
  const { evidenceId } = await lime.evidence.record({ kind: "review", summary: "ok", artifactIds: [art.artifactId] });
  await lime.evidence.record({ kind: "model", data: { tokens: 3 } });
  await assert.rejects(lime.evidence.record({ kind: "x", artifactIds: ["other-app-art"] }), (e) => e.code === "APP_E900");
  await assert.rejects(lime.evidence.record({}), (e) => e.code === "APP_E900");
  const reviews = await lime.evidence.list({ kind: "review" });
  assert.deepEqual(reviews.items.map((r) => r.evidenceId), [evidenceId]);
  const pack = await lime.evidence.export();
  assert.equal(pack.records.length, 2);
  assert.deepEqual(pack.records[0].provenance, { appId: "rev", entryKey: "queue" });
});

test("mock: secrets give a stable opaque ref, never the value; unbound and undeclared slots fail", async () => {
  const lime = createMockLimeRuntime({ secrets: { apiKey: true, webhook: false } });
  const r1 = await lime.secrets.getRef({ key: "apiKey" });
  const r2 = await lime.secrets.getRef({ key: "apiKey" });
  assert.deepEqual(r1, r2);
  assert.match(r1.ref, /^secretref_/);
  await assert.rejects(lime.secrets.getRef({ key: "webhook" }), (e) => e.code === "APP_E001" && e.causeCode === "secret.unbound");
  await assert.rejects(lime.secrets.getRef({ key: "other" }), (e) => e.code === "APP_E002");
});

test("mock: events reach subscribed entries of the same app only", async () => {
  const bus = createMockEventBus();
  const home = createMockLimeRuntime({ appId: "a", entryKey: "home", bus });
  const panel = createMockLimeRuntime({ appId: "a", entryKey: "panel", bus });
  const stranger = createMockLimeRuntime({ appId: "b", entryKey: "home", bus });
  const got = { panel: [], stranger: [], home: [] };
  const off = await panel.events.subscribe("saved", (e) => got.panel.push(e.payload));
  await stranger.events.subscribe("saved", (e) => got.stranger.push(e.payload));
  await home.events.subscribe("other", (e) => got.home.push(e.payload));
  await home.events.publish("saved", { id: 1 });
  assert.deepEqual(got, { panel: [{ id: 1 }], stranger: [], home: [] });
  await off();
  await home.events.publish("saved", { id: 2 });
  assert.deepEqual(got.panel, [{ id: 1 }]);
  await assert.rejects(home.events.publish("", 1), (e) => e.code === "APP_E900");
});

test("mock: requestPermission answers as configured; undeclared is APP_E002", async () => {
  const lime = createMockLimeRuntime({ permissions: { network: "always", camera: "denied" } });
  assert.deepEqual(await lime.policy.requestPermission({ permission: "network" }), { granted: true, persistence: "always" });
  assert.deepEqual(await lime.policy.requestPermission({ permission: "camera" }), { granted: false, persistence: "denied" });
  await assert.rejects(lime.policy.requestPermission({ permission: "files" }), (e) => e.code === "APP_E002" && e.causeCode === "permission.not_declared");
});

test("mock: storage tables insert, get, query, update, delete", async () => {
  const lime = createMockLimeRuntime();
  const notes = lime.storage.table("notes");
  const { id } = await notes.insert({ row: { title: "a", done: false } });
  await notes.insert({ row: { id: "n2", title: "b", done: true } });
  await assert.rejects(notes.insert({ row: { id: "n2" } }), (e) => e.code === "APP_E900");
  assert.deepEqual(await notes.get({ id }), { id, title: "a", done: false });
  assert.deepEqual((await notes.query({ where: { done: true } })).rows, [{ id: "n2", title: "b", done: true }]);
  assert.deepEqual(await notes.update({ id, patch: { done: true } }), { updated: true });
  assert.equal((await notes.query({ where: { done: true } })).rows.length, 2);
  assert.deepEqual(await notes.delete({ id }), { deleted: true });
  assert.equal(await notes.get({ id }), null);
  assert.equal(lime.tables.get("notes").size, 1);
});

test("mock: timeout and cancellation with latency, as the real runtime", async () => {
  const lime = createMockLimeRuntime({ latencyMs: 50 });
  await assert.rejects(lime.storage.get("k", { timeoutMs: 5 }), (e) => e.code === "HOST_E_TIMEOUT" && e.retryable);
  const ctl = new AbortController();
  const p = lime.artifacts.list({}, { signal: ctl.signal });
  ctl.abort();
  await assert.rejects(p, (e) => e.code === "HOST_E_CANCELLED");
  const pre = new AbortController();
  pre.abort();
  await assert.rejects(lime.evidence.export({}, { signal: pre.signal }), (e) => e.code === "HOST_E_CANCELLED");
  assert.equal(await lime.storage.get("k"), null, "within the deadline the call answers");
});

test("mock: denied methods answer APP_E002 like the host", async () => {
  const lime = createMockLimeRuntime({ denied: ["lime.artifacts.delete"] });
  await assert.rejects(lime.artifacts.delete({ artifactId: "x" }), (e) => e.code === "APP_E002" && e.causeCode === "permission.denied");
});
