// The typed lime.* handles over a scripted host, and the mock runtime's same surface.
import { test } from "node:test";
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
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
import { sha256Hex } from "../dist/mock.js";

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
    [() => lime.artifacts.create({ name: "r.txt", text: "hi" }), "lime.artifacts", "create", { name: "r.txt", text: "hi" }],
    [() => lime.artifacts.read({ id: "artifact_1", encoding: "text" }), "lime.artifacts", "read", { id: "artifact_1", encoding: "text" }],
    [() => lime.artifacts.list(), "lime.artifacts", "list", {}],
    [() => lime.artifacts.delete({ id: "artifact_1" }), "lime.artifacts", "delete", { id: "artifact_1" }],
    [() => lime.evidence.record({ kind: "review", data: { ok: 1 } }), "lime.evidence", "record", { kind: "review", data: { ok: 1 } }],
    [() => lime.evidence.list({ kind: "review", limit: 5 }), "lime.evidence", "list", { kind: "review", limit: 5 }],
    [() => lime.evidence.export(), "lime.evidence", "export", {}],
    [() => lime.secrets.getRef({ key: "apiKey" }), "lime.secrets", "getRef", { key: "apiKey" }],
    [() => lime.events.publish("t", { n: 1 }), "lime.events", "publish", { topic: "t", payload: { n: 1 } }],
    [() => lime.policy.requestPermission({ permission: "network" }), "lime.policy", "requestPermission", { permission: "network" }],
    [() => lime.storage.table("notes").insert({ row: { title: "x" } }), "lime.storage", "tableInsert", { row: { title: "x" }, table: "notes" }],
    [() => lime.storage.table("notes").query({ where: { done: false } }), "lime.storage", "tableQuery", { where: { done: false }, table: "notes" }],
    [() => lime.storage.table("notes").get({ id: 7 }), "lime.storage", "tableGet", { id: 7, table: "notes" }],
    [() => lime.storage.table("notes").update({ id: 7, patch: { done: true } }), "lime.storage", "tableUpdate", { id: 7, patch: { done: true }, table: "notes" }],
    [() => lime.storage.table("notes").delete({ id: 7 }), "lime.storage", "tableDelete", { id: 7, table: "notes" }],
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

  const ev = (topic, payload) => ({ capability: "lime.events", topic, payload, sourceEntryKey: "panel" });
  h.reply("host:event", undefined, ev("t", 1));
  h.reply("host:event", undefined, ev("u", 2));
  h.reply("host:event", undefined, ev("t", "spoofed"), { fromHost: false });
  h.reply("host:event", undefined, { nope: true });
  assert.deepEqual(got, { a: [1], b: [1], other: [2] });

  await off1();
  h.reply("host:event", undefined, ev("t", 3));
  assert.deepEqual(got.a, [1]);
  assert.deepEqual(got.b, [1, 3]);
  const before = h.sent.length;
  const last = off2();
  assert.equal(h.sent.length, before + 1);
  assert.deepEqual(h.sent.at(-1).payload, { capability: "lime.events", method: "unsubscribe", args: { topic: "t" } });
  h.answer(null);
  await last;
  h.reply("host:event", undefined, ev("t", 4));
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
  const slow = lime.artifacts.create({ name: "x", text: "y" });
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
  assert.deepEqual(MOCK_CAPABILITIES.length, 16);
});

test("mock: sha256Hex is SHA-256 (the artifacts' content address)", () => {
  for (const n of [0, 1, 3, 55, 56, 63, 64, 65, 119, 120, 1000]) {
    const data = Uint8Array.from({ length: n }, (_, i) => (i * 131 + n) & 0xff);
    assert.equal(sha256Hex(data), createHash("sha256").update(data).digest("hex"), `length ${n}`);
  }
});

test("mock: artifacts have the host's shapes: text or base64 in, {id, name, mimeType, size, sha256, createdAt, provenance} out", async () => {
  const lime = createMockLimeRuntime({ appId: "notes", entryKey: "main", appVersion: "1.2.0", now: () => new Date("2026-11-23T16:00:00Z") });
  const a = await lime.artifacts.create({ name: "summary.md", mimeType: "text/markdown", text: "# Notes" });
  assert.match(a.id, /^artifact_[0-9a-f]{32}$/);
  assert.deepEqual(Object.keys(a).sort(), ["createdAt", "id", "mimeType", "name", "provenance", "sha256", "size"]);
  assert.deepEqual({ ...a, id: "-", provenance: { ...a.provenance, traceId: "-" } }, {
    id: "-", name: "summary.md", mimeType: "text/markdown", size: 7,
    sha256: createHash("sha256").update("# Notes").digest("hex"), createdAt: "2026-11-23T16:00:00.000Z",
    provenance: { appId: "notes", appVersion: "1.2.0", entryKey: "main", packageHash: `sha256:${"0".repeat(64)}`, manifestHash: `sha256:${"0".repeat(64)}`, traceId: "-" },
  });
  assert.match(a.provenance.traceId, /^trace_/);
  const b = await lime.artifacts.create({ name: "b.bin", base64: "AAEC" });
  assert.equal(b.mimeType, "application/octet-stream");
  assert.equal(b.size, 3);
  const c = await lime.artifacts.create({ name: "c.bin", base64: "/w==" });

  assert.deepEqual(await lime.artifacts.read({ id: a.id }), { ...a, encoding: "base64", content: Buffer.from("# Notes").toString("base64") });
  assert.deepEqual(await lime.artifacts.read({ id: a.id, encoding: "text" }), { ...a, encoding: "text", content: "# Notes" });
  assert.equal((await lime.artifacts.read({ id: b.id })).content, "AAEC");
  await assert.rejects(lime.artifacts.read({ id: c.id, encoding: "text" }), (e) => e.code === "APP_E900" && e.causeCode === "artifacts.not_text");

  const p1 = await lime.artifacts.list({ limit: 2 });
  assert.deepEqual(p1.items.map((m) => m.id), [a.id, b.id], "oldest first");
  assert.equal(typeof p1.nextCursor, "string");
  const p2 = await lime.artifacts.list({ limit: 2, cursor: p1.nextCursor });
  assert.deepEqual(p2, { items: [c], nextCursor: null });

  assert.deepEqual(await lime.artifacts.delete({ id: a.id }), { deleted: true });
  assert.deepEqual(await lime.artifacts.delete({ id: a.id }), { deleted: false });
  await assert.rejects(lime.artifacts.read({ id: a.id }), (e) => e.code === "APP_E904" && e.causeCode === "artifacts.not_found");
});

test("mock: artifact arguments are refused as the host refuses them (closed args, artifacts.* causes)", async () => {
  const lime = createMockLimeRuntime();
  const refused = async (p, code, cause) => assert.rejects(p, (e) => e.code === code && e.causeCode === cause && e.capability === "lime.artifacts");
  await refused(lime.artifacts.create({ name: "x", content: "hi" }), "APP_E900", "artifacts.ambiguous_shape"); // the host form mixed with the standard one
  await refused(lime.artifacts.create({ name: "x", text: "hi", encoding: "text" }), "APP_E900", "artifacts.invalid_argument");
  await refused(lime.artifacts.create({ name: "x" }), "APP_E900", "artifacts.invalid_argument");
  await refused(lime.artifacts.create({ name: "x", text: "a", base64: "YQ==" }), "APP_E900", "artifacts.invalid_argument");
  await refused(lime.artifacts.create({ text: "a" }), "APP_E900", "artifacts.invalid_argument");
  await refused(lime.artifacts.create({ name: "x", base64: "AAE" }), "APP_E900", "artifacts.invalid_base64");
  await refused(lime.artifacts.create({ name: "x", base64: "AB==" }), "APP_E900", "artifacts.invalid_base64"); // non-zero trailing bits
  await refused(lime.artifacts.create({ name: "x", base64: "YQ" }), "APP_E900", "artifacts.invalid_base64"); // unpadded
  await refused(lime.artifacts.create({ name: "../x", text: "a" }), "APP_E900", "artifacts.invalid_name");
  await refused(lime.artifacts.create({ name: " x", text: "a" }), "APP_E900", "artifacts.invalid_name");
  await refused(lime.artifacts.create({ name: "a\u202eb", text: "a" }), "APP_E900", "artifacts.invalid_name");
  await refused(lime.artifacts.create({ name: "x", text: "a", mimeType: "text" }), "APP_E900", "artifacts.invalid_mime_type");
  await refused(lime.artifacts.create({ name: "x", text: "é".repeat(512 * 1024 + 1) }), "APP_E900", "artifacts.too_large");
  await refused(lime.artifacts.read({ artifactId: "artifact_1" }), "APP_E900", "artifacts.invalid_argument");
  await refused(lime.artifacts.read({ id: "art_000001" }), "APP_E900", "artifacts.invalid_id");
  await refused(lime.artifacts.read({ id: `artifact_${"0".repeat(32)}` }), "APP_E904", "artifacts.not_found");
  await refused(lime.artifacts.read({ id: `artifact_${"0".repeat(32)}`, encoding: "utf8" }), "APP_E900", "artifacts.invalid_argument");
  await refused(lime.artifacts.list({ limit: 0 }), "APP_E900", "artifacts.invalid_argument");
  await refused(lime.artifacts.list({ cursor: "next" }), "APP_E900", "artifacts.invalid_argument");
  assert.deepEqual(await lime.artifacts.delete({ id: `artifact_${"0".repeat(32)}` }), { deleted: false });
  assert.equal(lime.artifactStore.size, 0, "a refused create stores nothing");
  const ok = await lime.artifacts.create({ name: "x.txt", mimeType: "text/plain; charset=utf-8", text: "é" });
  assert.equal(ok.size, 2, "text is stored as its UTF-8 bytes");
});

test("mock: the artifact quota counts distinct contents and is not the storage quota", async () => {
  const lime = createMockLimeRuntime({ artifactQuotaBytes: 10, quotaBytes: 64 });
  await lime.artifacts.create({ name: "a", text: "12345678" });
  await lime.artifacts.create({ name: "b", text: "12345678" }); // same content: stored once
  await assert.rejects(lime.artifacts.create({ name: "c", text: "abcdefgh" }), (e) => e.code === "APP_E201" && e.causeCode === "artifacts.quota_exceeded");
  await lime.storage.set("k", "x".repeat(40)); // the artifacts do not use the storage quota
  await assert.rejects(lime.storage.set("k2", "x".repeat(40)), (e) => e.code === "APP_E201" && e.causeCode === "storage.quota_exceeded");
});

test("mock: evidence record returns the whole record; export is the apphost.evidence-pack.v1 pack", async () => {
  const lime = createMockLimeRuntime({ appId: "rev", entryKey: "queue", appVersion: "2.0.0", now: () => new Date("2026-11-23T16:00:00Z") });
  const art = await lime.artifacts.create({ name: "r.md", mimeType: "text/markdown", text: "# r" });
  const gone = await lime.artifacts.create({ name: "g.txt", text: "g" });
  const rec = await lime.evidence.record({ kind: "eval.result", summary: "3/3 passed", data: { passed: 3 }, artifactIds: [art.id, art.id, gone.id] });
  assert.match(rec.id, /^evidence_[0-9a-f]{32}$/);
  assert.deepEqual(rec, {
    id: rec.id, kind: "eval.result", summary: "3/3 passed", data: { passed: 3 },
    artifacts: [{ artifactId: art.id, sha256: art.sha256 }, { artifactId: gone.id, sha256: gone.sha256 }],
    createdAt: "2026-11-23T16:00:00.000Z", provenance: { ...art.provenance, traceId: rec.provenance.traceId },
  });
  const model = await lime.evidence.record({ kind: "model.call" });
  assert.deepEqual([model.summary, model.data, model.artifacts], ["", null, []]);
  assert.deepEqual((await lime.evidence.list({ kind: "eval.result" })).items, [rec]);
  const p1 = await lime.evidence.list({ limit: 1 });
  assert.deepEqual((await lime.evidence.list({ limit: 1, cursor: p1.nextCursor })), { items: [model], nextCursor: null });

  await lime.artifacts.delete({ id: gone.id });
  const pack = await lime.evidence.export({ kind: "eval.result" });
  const { provenance, createdAt, name, mimeType, size } = art;
  assert.deepEqual(pack, {
    schemaVersion: "apphost.evidence-pack.v1",
    app: { appId: "rev", appVersion: "2.0.0", packageHash: `sha256:${"0".repeat(64)}`, manifestHash: `sha256:${"0".repeat(64)}` },
    generatedAt: "2026-11-23T16:00:00.000Z",
    kind: "eval.result",
    records: [rec],
    artifacts: [
      { artifactId: art.id, sha256: art.sha256, present: true, name, mimeType, size, createdAt, provenance },
      { artifactId: gone.id, sha256: gone.sha256, present: false },
    ].sort((x, y) => (x.artifactId < y.artifactId ? -1 : 1)),
    runtimeCorrelation: {
      runtimeId: null, sessionId: null, threadId: null, turnId: null, taskId: null, runId: null,
      traceId: pack.runtimeCorrelation.traceId, missing: ["runtimeId", "sessionId", "threadId", "turnId", "taskId", "runId"],
    },
  });
  assert.equal((await lime.evidence.export()).kind, null);
  assert.equal((await lime.evidence.export()).records.length, 2);
});

test("mock: evidence arguments are refused as the host refuses them", async () => {
  const lime = createMockLimeRuntime();
  const refused = async (p, code, cause) => assert.rejects(p, (e) => e.code === code && e.causeCode === cause);
  await refused(lime.evidence.record({ kind: "x", artifactIds: [`artifact_${"1".repeat(32)}`] }), "APP_E904", "artifacts.not_found");
  await refused(lime.evidence.record({ kind: "x", artifactIds: ["other-app-art"] }), "APP_E900", "artifacts.invalid_id");
  await refused(lime.evidence.record({}), "APP_E900", "evidence.invalid_argument");
  await refused(lime.evidence.record({ kind: "has space" }), "APP_E900", "evidence.invalid_kind");
  await refused(lime.evidence.record({ kind: "k", note: "x" }), "APP_E900", "evidence.invalid_argument");
  await refused(lime.evidence.record({ kind: "k", summary: "x".repeat(2001) }), "APP_E900", "evidence.too_large");
  await refused(lime.evidence.record({ kind: "k", data: "x".repeat(64 * 1024) }), "APP_E900", "evidence.too_large");
  await refused(lime.evidence.list({ kind: "" }), "APP_E900", "evidence.invalid_kind");
  await refused(lime.evidence.list({ cursor: "zz" }), "APP_E900", "evidence.invalid_argument");
  await refused(lime.evidence.export({ kind: "k", since: 1 }), "APP_E900", "evidence.invalid_argument");
  assert.equal(lime.evidenceRecords.length, 0);
  const small = createMockLimeRuntime({ evidenceQuotaBytes: 20 });
  await small.evidence.record({ kind: "k", summary: "0123456789" });
  await refused(small.evidence.record({ kind: "k", summary: "0123456789" }), "APP_E201", "evidence.quota_exceeded");
});

test("mock: secrets answer {ref, key} with a secretref_<32 hex>; unbound APP_E011, undeclared APP_E002", async () => {
  const lime = createMockLimeRuntime({ secrets: { apiKey: true, webhook: false } });
  const r1 = await lime.secrets.getRef({ key: "apiKey" });
  assert.deepEqual(await lime.secrets.getRef({ key: "apiKey" }), r1, "stable while the binding stands");
  assert.deepEqual(Object.keys(r1).sort(), ["key", "ref"]);
  assert.equal(r1.key, "apiKey");
  assert.match(r1.ref, /^secretref_[0-9a-f]{32}$/);
  await assert.rejects(lime.secrets.getRef({ key: "webhook" }), (e) => e.code === "APP_E011" && e.causeCode === "secrets.not_bound");
  await assert.rejects(lime.secrets.getRef({ key: "other" }), (e) => e.code === "APP_E002" && e.causeCode === "secrets.not_declared");
  await assert.rejects(lime.secrets.getRef({}), (e) => e.code === "APP_E900" && e.causeCode === "secrets.invalid_argument");
  lime.setSecretBound("apiKey", true);
  const r2 = await lime.secrets.getRef({ key: "apiKey" });
  assert.notEqual(r2.ref, r1.ref, "a rebind gives a new ref");
  lime.setSecretBound("apiKey", false);
  await assert.rejects(lime.secrets.getRef({ key: "apiKey" }), (e) => e.code === "APP_E011");
});

test("mock: events are delivered as the host delivers them, to the other subscribed entries of the same app only", async () => {
  const bus = createMockEventBus();
  const home = createMockLimeRuntime({ appId: "a", entryKey: "home", bus });
  const panel = createMockLimeRuntime({ appId: "a", entryKey: "panel", bus });
  const stranger = createMockLimeRuntime({ appId: "b", entryKey: "home", bus });
  const got = { panel: [], stranger: [], home: [] };
  const off = await panel.events.subscribe("saved", (e) => got.panel.push(e));
  await stranger.events.subscribe("saved", (e) => got.stranger.push(e));
  await home.events.subscribe("saved", (e) => got.home.push(e));
  assert.deepEqual(await home.events.publish("saved", { id: 1 }), { delivered: 1 });
  assert.deepEqual(got, {
    panel: [{ capability: "lime.events", topic: "saved", payload: { id: 1 }, sourceEntryKey: "home" }],
    stranger: [],
    home: [],
  }, "the publisher does not receive its own event; another app never does");
  assert.deepEqual(await panel.events.publish("saved"), { delivered: 1 });
  assert.deepEqual(got.home, [{ capability: "lime.events", topic: "saved", payload: null, sourceEntryKey: "panel" }]);
  await off();
  assert.deepEqual(await home.events.publish("saved", { id: 2 }), { delivered: 0 });
  assert.equal(got.panel.length, 1);

  assert.deepEqual(await home.invoke("lime.events", "subscribe", { topic: "x/y:z" }), { subscribed: true, topic: "x/y:z" });
  assert.deepEqual(await home.invoke("lime.events", "unsubscribe", { topic: "x/y:z" }), { unsubscribed: true, topic: "x/y:z" });
  assert.deepEqual(await home.invoke("lime.events", "unsubscribe", { topic: "x/y:z" }), { unsubscribed: false, topic: "x/y:z" });
  const refused = async (p, cause) => assert.rejects(p, (e) => e.code === "APP_E900" && e.causeCode === cause);
  await refused(home.events.publish("", 1), "events.invalid_topic");
  await refused(home.events.publish("a b", 1), "events.invalid_topic");
  await refused(home.events.publish("t".repeat(129)), "events.invalid_topic");
  await refused(home.events.publish("t", "x".repeat(64 * 1024)), "events.payload_too_large");
  const many = createMockLimeRuntime();
  for (let i = 0; i < 32; i++) await many.invoke("lime.events", "subscribe", { topic: `t${i}` });
  await many.invoke("lime.events", "subscribe", { topic: "t0" }); // already subscribed: fine
  await refused(many.invoke("lime.events", "subscribe", { topic: "t32" }), "events.too_many_subscriptions");
  for (const r of [home, panel, stranger, many]) r.close();
});

test("mock: requestPermission answers {granted, persistence} as the host's prompt does", async () => {
  const lime = createMockLimeRuntime({
    permissions: { network: "always", camera: "denied", clip: "once", sync: "dismissed", files: "granted", storage: "required" },
  });
  const ask = (permission) => lime.policy.requestPermission({ permission });
  assert.deepEqual(await ask("network"), { granted: true, persistence: "always" });
  assert.deepEqual(await ask("network"), { granted: true, persistence: "always" });
  assert.deepEqual(await ask("camera"), { granted: false, persistence: "denied" });
  assert.deepEqual(await ask("camera"), { granted: false, persistence: "denied" });
  assert.deepEqual(await ask("clip"), { granted: true, persistence: "once" });
  assert.deepEqual(await ask("clip"), { granted: true, persistence: "once" });
  assert.deepEqual(await ask("sync"), { granted: false, persistence: "denied" });
  assert.deepEqual(await ask("sync"), { granted: false, persistence: "denied" });
  assert.deepEqual(await ask("files"), { granted: true, persistence: "always" });
  assert.deepEqual(lime.permissionPrompts, ["network", "camera", "clip", "sync", "sync"], "answers are remembered, a dismissed prompt is not; granted asks nothing");
  await assert.rejects(ask("storage"), (e) => e.code === "APP_E900" && e.causeCode === "policy.permission_required");
  await assert.rejects(ask("other"), (e) => e.code === "APP_E002" && e.causeCode === "permission.not_declared");
  await assert.rejects(lime.policy.requestPermission({}), (e) => e.code === "APP_E900" && e.causeCode === "policy.invalid_argument");
});

test("mock: storage tables insert, get, query, update, delete with the host's values and results", async () => {
  const lime = createMockLimeRuntime();
  const notes = lime.storage.table("notes");
  const { id } = await notes.insert({ row: { title: "a", done: false, tags: ["x"] } });
  assert.equal(id, 1, "a key left to SQLite is the rowid");
  assert.deepEqual(await notes.insert({ row: { id: 5, title: "b", done: true } }), { id: 5 });
  await assert.rejects(notes.insert({ row: { id: 5 } }), (e) => e.code === "APP_E900" && e.causeCode === "storage.invalid_argument");
  await assert.rejects(notes.insert({ row: {} }), (e) => e.code === "APP_E900" && e.causeCode === "storage.invalid_argument");
  assert.deepEqual(await notes.get({ id }), { id: 1, title: "a", done: 0, tags: '["x"]' }, "booleans read back as 0/1, arrays as JSON text");
  assert.deepEqual(await notes.query({ where: { done: true } }), { rows: [{ id: 5, title: "b", done: 1 }] });
  assert.deepEqual(await notes.update({ id, patch: { done: true } }), { updated: true });
  assert.deepEqual(await notes.update({ id: 99, patch: { done: true } }), { updated: false });
  assert.deepEqual((await notes.query({ where: { done: true }, orderBy: "title", descending: true })).rows.map((r) => r.id), [5, 1]);
  assert.deepEqual((await notes.query({ limit: 1, offset: 1 })).rows.map((r) => r.id), [5]);
  assert.deepEqual((await notes.query({ where: { missing: null } })).rows.length, 2, "null matches NULL");
  await assert.rejects(notes.query({ limit: 1001 }), (e) => e.code === "APP_E900" && e.causeCode === "storage.invalid_argument");
  await assert.rejects(notes.query({ offset: 100_001 }), (e) => e.code === "APP_E900" && e.causeCode === "storage.invalid_argument");
  await assert.rejects(notes.query({ descending: "yes" }), (e) => e.code === "APP_E900");
  await assert.rejects(notes.get({}), (e) => e.code === "APP_E900" && e.causeCode === "storage.invalid_argument");
  assert.deepEqual(await notes.delete({ id }), { deleted: true });
  assert.deepEqual(await notes.delete({ id }), { deleted: false });
  assert.equal(await notes.get({ id }), null);
  assert.equal(lime.tables.get("notes").size, 1);
});

test("mock: declared tables: another table is storage.undeclared_table, an unknown column APP_E203", async () => {
  const lime = createMockLimeRuntime({ tables: { notes: { primaryKey: "slug", columns: ["slug", "title"] } } });
  const notes = lime.storage.table("notes");
  assert.deepEqual(await notes.insert({ row: { slug: "a", title: "A" } }), { id: "a" });
  assert.deepEqual(await notes.get({ id: "a" }), { slug: "a", title: "A" });
  await assert.rejects(notes.insert({ row: { slug: "b", body: "x" } }), (e) => e.code === "APP_E203" && e.causeCode === "storage.schema_mismatch");
  await assert.rejects(notes.query({ orderBy: "body" }), (e) => e.code === "APP_E203");
  await assert.rejects(lime.storage.table("other").query(), (e) => e.code === "APP_E900" && e.causeCode === "storage.undeclared_table");
  await assert.rejects(lime.storage.table("lime_kv").query(), (e) => e.code === "APP_E900" && e.causeCode === "storage.undeclared_table");
});

test("mock: key-value storage refuses as the host does", async () => {
  const lime = createMockLimeRuntime();
  await assert.rejects(lime.invoke("lime.storage", "get", {}), (e) => e.code === "APP_E900" && e.causeCode === "storage.invalid_argument");
  await assert.rejects(lime.storage.get(""), (e) => e.code === "APP_E900" && e.causeCode === "storage.invalid_key");
  await assert.rejects(lime.storage.get("a\nb"), (e) => e.causeCode === "storage.invalid_key");
  await assert.rejects(lime.storage.set("k", "x".repeat(1024 * 1024)), (e) => e.code === "APP_E900" && e.causeCode === "storage.value_too_large");
  await assert.rejects(lime.invoke("lime.storage", "set", { key: "k" }), (e) => e.causeCode === "storage.invalid_argument");
  await assert.rejects(lime.storage.list({ limit: 0 }), (e) => e.code === "APP_E900" && e.causeCode === "storage.invalid_argument");
  for (const k of ["n:1", "n:2", "n:3", "m:1"]) await lime.storage.set(k, k);
  const p1 = await lime.storage.list({ prefix: "n:", limit: 2 });
  assert.deepEqual(p1, { items: [{ key: "n:1", value: "n:1" }, { key: "n:2", value: "n:2" }], nextCursor: "n:2" });
  assert.deepEqual(await lime.storage.list({ prefix: "n:", cursor: p1.nextCursor }), { items: [{ key: "n:3", value: "n:3" }], nextCursor: null });
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
  await assert.rejects(lime.artifacts.delete({ id: `artifact_${"0".repeat(32)}` }), (e) => e.code === "APP_E002" && e.causeCode === "permission.denied");
});

test("mock: with declared events, an undeclared topic or direction is APP_E002 events.undeclared_topic, as in the host", async () => {
  const bus = createMockEventBus();
  const events = { "out.only": "publish", "in.only": "subscribe", "two.way": "both" };
  const a = createMockLimeRuntime({ appId: "ev", entryKey: "a", bus, events });
  const b = createMockLimeRuntime({ appId: "ev", entryKey: "b", bus, events });
  const undeclared = (e) => e.code === "APP_E002" && e.causeCode === "events.undeclared_topic";
  await b.events.subscribe("in.only", () => {});
  const got = [];
  await b.events.subscribe("two.way", (e) => got.push(e.payload));
  await assert.rejects(b.events.subscribe("out.only", () => {}), undeclared);
  await assert.rejects(b.events.subscribe("never", () => {}), undeclared);
  assert.deepEqual(await a.events.publish("out.only", 1), { delivered: 0 });
  assert.deepEqual(await a.events.publish("two.way", 2), { delivered: 1 });
  await assert.rejects(a.events.publish("in.only", 3), undeclared);
  await assert.rejects(a.events.publish("never", 4), undeclared);
  assert.deepEqual(got, [2]);
});

test("mock: evidence withholds artifact data when artifacts are not readable, as the host does", async () => {
  const full = createMockLimeRuntime();
  const art = await full.artifacts.create({ name: "plan.md", text: "# p" });
  await full.evidence.record({ kind: "source", artifactIds: [art.id] });
  assert.equal((await full.evidence.export()).artifacts[0].name, "plan.md");

  const lime = createMockLimeRuntime({ denied: ["lime.artifacts.read"] });
  const mine = await lime.artifacts.create({ name: "plan.md", text: "# p" });
  await assert.rejects(
    lime.evidence.record({ kind: "source", artifactIds: [mine.id] }),
    (e) => e.code === "APP_E002" && e.causeCode === "evidence.artifacts_not_allowed",
  );
  await assert.rejects(
    lime.evidence.record({ kind: "source", artifactIds: [`artifact_${"1".repeat(32)}`] }),
    (e) => e.code === "APP_E002" && e.causeCode === "evidence.artifacts_not_allowed",
  );
  await lime.evidence.record({ kind: "note" });
  const noArtifacts = createMockLimeRuntime({ capabilities: ["lime.evidence"] });
  await assert.rejects(
    noArtifacts.evidence.record({ kind: "source", artifactIds: [`artifact_${"1".repeat(32)}`] }),
    (e) => e.causeCode === "evidence.artifacts_not_allowed",
  );
});

test("mock: lime.ui.download saves bytes and the app's own artifacts as the host does, or reports a cancel", async () => {
  const lime = createMockLimeRuntime();
  assert.deepEqual(await lime.ui.download({ text: "# hi", fileName: "../../.notes.md" }), { saved: true, fileName: "notes.md" });
  const art = await lime.artifacts.create({ name: "r.md", mimeType: "text/markdown", text: "# r" });
  assert.deepEqual(await lime.ui.download({ artifactId: art.id }), { saved: true, fileName: "r.md" });
  assert.deepEqual(lime.downloads.map((d) => [d.fileName, new TextDecoder().decode(d.bytes), d.mimeType]), [
    ["notes.md", "# hi", "text/plain"],
    ["r.md", "# r", "text/markdown"],
  ]);
  await assert.rejects(lime.ui.download({ artifactId: `artifact_${"1".repeat(32)}` }), (e) => e.code === "APP_E904");
  await assert.rejects(lime.ui.download({ text: "a", base64: "AA==" }), (e) => e.code === "APP_E900");
  const denied = createMockLimeRuntime({ denied: ["lime.artifacts.read"], downloadAnswer: "cancel" });
  const own = await denied.artifacts.create({ name: "x", text: "x" });
  await assert.rejects(denied.ui.download({ artifactId: own.id }), (e) => e.code === "APP_E002");
  assert.deepEqual(await denied.ui.download({ base64: "AAEC" }), { saved: false });
});

test("mock: lime.ui.download cleans the name and the type, and refuses bad base64 or types, as the host does", async () => {
  const lime = createMockLimeRuntime();
  const saved = async (what) => (await lime.ui.download(what)).fileName;
  // crates/host-core/src/downloads.rs sanitize_file_name: last component, no control or format
  // characters, `:*?"<>|` as `_`, no leading or trailing dots and spaces, at most 200 bytes.
  assert.equal(await saved({ text: "x", fileName: "a\\b/c:d*e?.txt" }), "c_d_e_.txt");
  assert.equal(await saved({ text: "x", fileName: "re\u202eport\u0007.md. " }), "report.md");
  assert.equal(await saved({ text: "x", fileName: " .. " }), "download");
  assert.equal(await saved({ text: "x", fileName: "" }), "download");
  const long = await saved({ text: "x", fileName: `${"é".repeat(150)}.md` });
  assert.equal(long, `${"é".repeat(98)}.md`, "cut on a character boundary, the extension kept");
  assert.ok(new TextEncoder().encode(long).length <= 200);
  const art = await lime.artifacts.create({ name: "r.md", text: "# r" });
  assert.equal(await saved({ artifactId: art.id, fileName: "" }), "download", "an empty name is not the artifact's");
  // bridge/host/download.rs clean_mime: lowercased, parameters dropped; anything else refused.
  await lime.ui.download({ text: "x", mimeType: "Text/Markdown; charset=utf-8" });
  assert.equal(lime.downloads.at(-1).mimeType, "text/markdown");
  for (const what of [{ text: "x", mimeType: "markdown" }, { base64: "AA=" }, { base64: "AB==" }, { base64: "A A=" }]) {
    await assert.rejects(lime.ui.download(what), { code: "APP_E900", causeCode: "download.invalid_argument" }, JSON.stringify(what));
  }
  const before = lime.downloads.length;
  await assert.rejects(createMockLimeRuntime({ downloadAnswer: "cancel" }).ui.download({ base64: "!!!!" }), { code: "APP_E900" });
  assert.equal(lime.downloads.length, before, "nothing saved");
});

test("lime.ui.download is a host:download message with a requestId, answered by host:response", async () => {
  const h = fakeHost();
  const lime = rt(h);
  const p = lime.ui.download({ text: "x", fileName: "a.txt" });
  const sent = h.sent.at(-1);
  assert.equal(sent.type, "host:download");
  assert.match(sent.requestId, /./);
  assert.deepEqual(sent.payload, { text: "x", fileName: "a.txt" });
  h.answer({ saved: true, fileName: "a.txt" });
  assert.deepEqual(await p, { saved: true, fileName: "a.txt" });
  lime.close();
});

test("mock: lime.knowledge.search answers citations and refuses as the host does", async () => {
  const lime = createMockLimeRuntime({
    knowledge: {
      handbook: [{ document: "faq.md", sections: [{ title: "Refunds", text: "Refunds take five days." }, { title: "Shipping", text: "Parcels ship on Monday." }] }],
      extra: null,
    },
  });
  const r = await lime.knowledge.search({ template: "handbook", query: "refunds OR x:*", topK: 3 });
  assert.equal(r.hits.length, 1);
  assert.equal(r.hits[0].document, "faq.md");
  assert.equal(r.hits[0].section, "Refunds");
  assert.ok(r.hits[0].snippet.includes("[Refunds]"));
  const refused = [
    [{ template: "extra", query: "a" }, "APP_E003", "knowledge.not_bound"],
    [{ template: "other", query: "a" }, "APP_E002", "knowledge.template_not_declared"],
    [{ template: "handbook", query: "*:^" }, "APP_E900", "knowledge.query_invalid"],
    [{ template: "handbook", query: "a", topK: 0 }, "APP_E900", "knowledge.query_invalid"],
    [{ template: "handbook" }, "APP_E900", "knowledge.invalid_argument"],
  ];
  for (const [args, code, cause] of refused) {
    await assert.rejects(lime.knowledge.search(args), (e) => e.code === code && e.causeCode === cause, JSON.stringify(args));
  }
  lime.setKnowledgeBound("extra", [{ document: "a.txt", sections: [{ text: "alpha" }] }]);
  assert.equal((await lime.knowledge.search({ template: "extra", query: "alpha" })).hits[0].section, "");
});
