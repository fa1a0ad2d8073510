// The Agent App standard's call shapes and SDK names (standard §7.4): the SDK sends them as the
// host accepts them (checked on the wire against a scripted host), and the mock accepts and
// refuses exactly what the host does (crates/host-core/tests/standard_shapes.rs).
import { test } from "node:test";
import assert from "node:assert/strict";
import * as sdk from "@apphost/bridge-sdk";
import {
  BRIDGE_PROTOCOL,
  LimeCapabilityError,
  applyLimeHostTheme,
  createLimeHostBridgeCapabilityInvoker,
  createLimeRuntime,
  createMockLimeRuntime,
  getLimeRuntime,
  syncLimeHostTheme,
} from "@apphost/bridge-sdk";

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
  const reply = (type, requestId, payload) => {
    const m = { protocol: BRIDGE_PROTOCOL, version: 1, type, appId: "a", entryKey: "home", payload };
    if (requestId !== undefined) m.requestId = requestId;
    listener(m, "tauri://localhost", true);
  };
  const answer = (value) => reply("host:response", sent.at(-1).requestId, { value });
  return { sent, endpoint, reply, answer };
}

async function refusal(p) {
  const e = await p.then(
    () => assert.fail("the call was accepted"),
    (e) => e,
  );
  assert.ok(e instanceof LimeCapabilityError, String(e));
  return [e.code, e.causeCode];
}

test("the SDK exports the standard's names", () => {
  for (const name of ["getLimeRuntime", "createLimeHostBridgeCapabilityInvoker", "syncLimeHostTheme", "applyLimeHostTheme", "createMockLimeRuntime"]) {
    assert.equal(typeof sdk[name], "function", name);
  }
  assert.equal(getLimeRuntime, sdk.getLimeRuntime);
});

test("storage: the standard's object forms send the same wire args as the positional ones", async () => {
  const h = fakeHost();
  const lime = createLimeRuntime({ appId: "a", entryKey: "home", endpoint: h.endpoint });
  const calls = [
    [() => lime.storage.set({ key: "k", value: { n: 1 } }), "set", { key: "k", value: { n: 1 } }],
    [() => lime.storage.set("k", { n: 1 }), "set", { key: "k", value: { n: 1 } }],
    [() => lime.storage.get({ key: "k" }), "get", { key: "k" }],
    [() => lime.storage.get("k"), "get", { key: "k" }],
    [() => lime.storage.delete({ key: "k" }), "delete", { key: "k" }],
    [() => lime.storage.delete("k"), "delete", { key: "k" }],
    [() => lime.storage.table("notes").get(7), "tableGet", { id: 7, table: "notes" }],
    [() => lime.storage.table("notes").get({ id: "s" }), "tableGet", { id: "s", table: "notes" }],
    [() => lime.storage.table("notes").delete("s"), "tableDelete", { id: "s", table: "notes" }],
  ];
  for (const [call, method, args] of calls) {
    const p = call();
    const m = h.sent.at(-1);
    assert.equal(m.payload.capability, "lime.storage");
    assert.equal(m.payload.method, method);
    assert.deepEqual(m.payload.args, args, method);
    assert.equal(m.payload.options, undefined);
    h.answer(null);
    await p;
  }
  // Call options still work in the object form.
  const p = lime.storage.set({ key: "k", value: 1 }, { options: { idempotencyKey: "i" } });
  assert.deepEqual(h.sent.at(-1).payload.options, { idempotencyKey: "i" });
  h.answer(null);
  await p;
});

test("mock storage: the object forms round-trip, tables take a bare id", async () => {
  const lime = createMockLimeRuntime({ tables: { notes: { primaryKey: "slug" } } });
  await lime.storage.set({ key: "draft", value: { title: "x" } });
  assert.deepEqual(await lime.storage.get({ key: "draft" }), { title: "x" });
  assert.deepEqual(await lime.storage.get("draft"), { title: "x" });
  assert.deepEqual(await lime.storage.delete({ key: "draft" }), { deleted: true });
  assert.equal(await lime.storage.get({ key: "draft" }), null);
  const notes = lime.storage.table("notes");
  await notes.insert({ row: { slug: "a", title: "A" } });
  assert.equal((await notes.get("a")).title, "A");
  assert.deepEqual(await notes.query({ where: { slug: "a" } }), { rows: [{ slug: "a", title: "A" }] });
  assert.deepEqual(await notes.update({ id: "a", patch: { title: "B" } }), { updated: true });
  assert.deepEqual(await notes.delete("a"), { deleted: true });
  assert.equal(await notes.get("a"), null);
});

test("mock artifacts: {kind, title, content} and {type, data} as the host maps them; mixed shapes refused", async () => {
  const lime = createMockLimeRuntime();
  const a = await lime.artifacts.create({ kind: "report", title: "Weekly report", content: "# Hello" });
  assert.equal(a.name, "Weekly report");
  assert.equal(a.mimeType, "text/plain");
  assert.equal((await lime.artifacts.read({ id: a.id, encoding: "text" })).content, "# Hello");
  const b = await lime.artifacts.create({ type: "triage", data: { items: [1, 2] } });
  assert.equal(b.name, "triage");
  assert.equal(b.mimeType, "application/json");
  assert.deepEqual(JSON.parse((await lime.artifacts.read({ id: b.id, encoding: "text" })).content), { items: [1, 2] });
  await lime.artifacts.create({ name: "a.txt", text: "x" });
  for (const [args, cause] of [
    [{ kind: "r", content: "x", type: "t", data: "y" }, "artifacts.ambiguous_shape"],
    [{ kind: "r", content: "x", name: "n" }, "artifacts.ambiguous_shape"],
    [{ type: "t", data: "y", text: "z" }, "artifacts.ambiguous_shape"],
    [{ kind: "r" }, "artifacts.invalid_argument"],
    [{ content: "x" }, "artifacts.invalid_argument"],
    [{ kind: "r", content: "x", extra: 1 }, "artifacts.invalid_argument"],
  ]) {
    assert.deepEqual(await refusal(lime.artifacts.create(args)), ["APP_E900", cause], JSON.stringify(args));
  }
  assert.equal((await lime.artifacts.list()).items.length, 3, "nothing more was written");
});

test("mock evidence: {kind, message, refs} and {subject, sources}; mixed shapes refused", async () => {
  const lime = createMockLimeRuntime();
  const r = await lime.evidence.record({ kind: "model.call", message: "asked", refs: ["doc-1"] });
  assert.equal(r.summary, "asked");
  assert.deepEqual(r.data, { refs: ["doc-1"] });
  const s = await lime.evidence.record({ subject: "claim 3", sources: [{ title: "paper" }] });
  assert.equal(s.kind, "source");
  assert.equal(s.summary, "claim 3");
  assert.deepEqual(s.data, { subject: "claim 3", sources: [{ title: "paper" }] });
  for (const [args, cause] of [
    [{ kind: "k", message: "m", subject: "s" }, "evidence.ambiguous_shape"],
    [{ kind: "k", message: "m", summary: "s" }, "evidence.ambiguous_shape"],
    [{ message: "m" }, "evidence.invalid_argument"],
    [{ subject: "s", sources: {} }, "evidence.invalid_argument"],
    [{ kind: "bad kind!", message: "m" }, "evidence.invalid_kind"],
  ]) {
    assert.deepEqual(await refusal(lime.evidence.record(args)), ["APP_E900", cause], JSON.stringify(args));
  }
  assert.equal((await lime.evidence.list()).items.length, 2, "nothing more was written");
});

test("mock startTask: the standard's request; bindings it cannot honour, foreign identity and unknown fields refused", async () => {
  let seen;
  const lime = createMockLimeRuntime({
    appId: "a",
    entryKey: "home",
    agent: {
      script: (req) => {
        seen = req.expectedOutput;
        return [{ type: "result", subtype: "success" }];
      },
    },
  });
  const task = await lime.agent.startTask({
    appId: "a", entryKey: "home", entry: "home", taskKind: "triage", input: { items: ["a"] }, idempotencyKey: "k1",
    expectedOutput: { outputFormat: { type: "json_schema", schema: { type: "object" }, maxValidationRetries: 2 } },
    context: { customer: "c-1" }, businessObjectRef: "order-7", capabilityHints: [], knowledge: [], tools: [], files: {}, secrets: [],
  });
  for await (const _ of task.events());
  assert.deepEqual(seen, { schema: { type: "object" } });
  const base = { input: "x" };
  for (const [extra, code, cause] of [
    [{ knowledge: [{ template: "kb" }] }, "APP_E002", "knowledge.template_not_declared"],
    [{ knowledge: "kb" }, "APP_E900", "agent.invalid_argument"],
    [{ tools: [{ key: "web.search" }] }, "APP_E002", "tools.not_granted"],
    [{ files: ["fileref_1"] }, "APP_E904", "files.ref_not_found"],
    [{ files: ["/etc/passwd"] }, "APP_E900", "files.path_not_allowed"],
    [{ secrets: { api: "secretref_1" } }, "APP_E001", "agent.binding_unsupported"],
    [{ expectedOutput: { schema: {}, materializer: { kind: "artifact" } } }, "APP_E001", "agent.binding_unsupported"],
    [{ appId: "other" }, "APP_E002", "agent.app_mismatch"],
    [{ entryKey: "admin" }, "APP_E002", "agent.entry_mismatch"],
    [{ entry: "home", entryKey: "x" }, "APP_E900", "agent.invalid_argument"],
    [{ taskKind: "" }, "APP_E900", "agent.invalid_argument"],
    [{ priority: 1 }, "APP_E900", "agent.invalid_argument"],
    [{ expectedOutput: { schema: {}, outputFormat: { schema: {} } } }, "APP_E900", "agent.invalid_argument"],
    [{ expectedOutput: { outputFormat: { type: "xml", schema: {} } } }, "APP_E900", "agent.invalid_argument"],
  ]) {
    const e = await lime.agent.startTask({ ...base, ...extra }).then(
      () => assert.fail(`accepted ${JSON.stringify(extra)}`),
      (e) => e,
    );
    assert.deepEqual([e.code, e.causeCode], [code, cause], JSON.stringify(extra));
    if (cause === "agent.binding_unsupported") {
      assert.match(e.message, /binding "(tools|files|secrets|expectedOutput\.materializer)"/);
      assert.equal(e.message.includes(JSON.stringify(e.details.binding)), true, "details.binding names the same binding");
      assert.ok(["tools", "files", "secrets", "expectedOutput.materializer"].includes(e.details.binding));
    } else assert.equal(e.details, undefined);
  }
  assert.equal((await lime.agent.listTasks()).items.length, 1, "no other task was started");
});

test("a host:error's details reach the LimeCapabilityError", async () => {
  const h = fakeHost();
  const lime = createLimeRuntime({ appId: "a", entryKey: "home", endpoint: h.endpoint });
  const p = lime.agent.startTask({ input: "x", knowledge: [{ template: "kb" }] });
  await Promise.resolve();
  const sent = h.sent.at(-1);
  assert.deepEqual(sent.payload.args.knowledge, [{ template: "kb" }], "the binding is sent as written");
  h.reply("host:error", sent.requestId, {
    code: "APP_E001", message: 'binding "knowledge" is not supported by this host yet', causeCode: "agent.binding_unsupported",
    capability: "lime.agent", method: "startTask", retryable: false, details: { binding: "knowledge" },
  });
  const e = await p.then(() => assert.fail("accepted"), (e) => e);
  assert.deepEqual([e.code, e.causeCode, e.details], ["APP_E001", "agent.binding_unsupported", { binding: "knowledge" }]);
});

test("createLimeHostBridgeCapabilityInvoker: sendReady, onHostSnapshot, invoke(input, options)", async () => {
  const h = fakeHost();
  const inv = createLimeHostBridgeCapabilityInvoker({ appId: "a", entryKey: "home", endpoint: h.endpoint });
  const snaps = [];
  inv.onHostSnapshot((s) => snaps.push(s));
  const ready = inv.sendReady();
  assert.equal(h.sent.at(-1).type, "app:ready");
  h.reply("host:snapshot", undefined, { appId: "a", theme: { tokens: {}, themeMode: "dark", effectiveThemeMode: "dark", colorSchemeId: "x" } });
  await ready;
  assert.equal(snaps.length, 1);
  const p = inv.invoke("lime.storage", "set", { key: "k", value: 1 }, { idempotencyKey: "i", timeoutMs: 5000 });
  const m = h.sent.at(-1).payload;
  assert.deepEqual([m.capability, m.method, m.args, m.options], ["lime.storage", "set", { key: "k", value: 1 }, { idempotencyKey: "i" }]);
  h.answer(null);
  assert.equal(await p, null);
  assert.ok(inv.runtime.storage, "the typed handles are there too");
  inv.runtime.close();
});

test("syncLimeHostTheme applies the current theme and every update, until stopped", () => {
  const lime = createMockLimeRuntime();
  const set = [];
  const target = { style: { setProperty: (n, v) => set.push([n, v]) }, setAttribute: (n, v) => set.push([n, v]) };
  const stop = syncLimeHostTheme(lime, target);
  assert.ok(set.some(([n]) => n === "data-lime-theme"), "applied at once");
  const before = set.length;
  lime.setTheme({ tokens: { "--lime-bg": "#000" }, themeMode: "dark", effectiveThemeMode: "dark", colorSchemeId: "c" });
  assert.ok(set.slice(before).some(([n, v]) => n === "--lime-bg" && v === "#000"), "followed the update");
  stop();
  const after = set.length;
  lime.setTheme({ tokens: { "--lime-bg": "#fff" }, themeMode: "light", effectiveThemeMode: "light", colorSchemeId: "c" });
  assert.equal(set.length, after, "stopped");
  assert.equal(typeof applyLimeHostTheme, "function");
});
