// What the SDK actually posts, recorded in test/fixtures/sdk-messages.json. This test fails when
// the SDK's messages change (re-record with APPHOST_BLESS=1 npm test -w bridge-sdk), and
// crates/host-core/tests/bridge_schemas.rs feeds the recording to the Rust decoder and the
// app -> host schema, so an SDK message the host would refuse fails `cargo test`.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { BRIDGE_PROTOCOL, createLimeRuntime } from "../dist/index.js";

const here = dirname(fileURLToPath(import.meta.url));
const fixture = join(here, "fixtures/sdk-messages.json");
const schema = JSON.parse(readFileSync(join(here, "../../schemas/bridge/app-to-host.schema.json"), "utf8"));

test("the SDK's messages are the recorded ones, with request ids the schema allows", async () => {
  const sent = [];
  let listener = () => {};
  const endpoint = { post: (m) => sent.push(structuredClone(m)), subscribe: (l) => ((listener = l), () => {}) };
  const lime = createLimeRuntime({ appId: "hello-app", entryKey: "notes", endpoint, timeoutMs: 20 });
  const answer = () => {
    const id = sent.at(-1).requestId;
    listener({ protocol: BRIDGE_PROTOCOL, version: 1, type: "host:response", requestId: id, appId: "hello-app", entryKey: "notes", payload: { value: null } }, "x", true);
  };
  const calls = [
    () => lime.storage.get("k"),
    () => lime.storage.set("k", { v: [1, "two"] }),
    () => lime.storage.delete("k"),
    () => lime.storage.list({ prefix: "n:", limit: 10 }),
    () => lime.storage.table("notes").query({ where: { done: false }, orderBy: "title", descending: true, limit: 10, offset: 0 }),
    () => lime.storage.table("notes").get({ id: 1 }),
    () => lime.storage.table("notes").insert({ row: { title: "a", done: false } }),
    () => lime.storage.table("notes").update({ id: 1, patch: { done: true } }),
    () => lime.storage.table("notes").delete({ id: 1 }),
    () => lime.artifacts.create({ name: "a.txt", mimeType: "text/plain", text: "hi" }),
    () => lime.artifacts.create({ name: "b.bin", base64: "AAEC" }),
    () => lime.artifacts.read({ id: "artifact_0123456789abcdef0123456789abcdef", encoding: "text" }),
    () => lime.artifacts.list({ limit: 10 }),
    () => lime.artifacts.delete({ id: "artifact_0123456789abcdef0123456789abcdef" }),
    () => lime.evidence.record({ kind: "review", summary: "ok", data: { n: 1 }, artifactIds: ["artifact_0123456789abcdef0123456789abcdef"] }),
    () => lime.evidence.list({ kind: "review" }),
    () => lime.evidence.export({ kind: "review" }),
    () => lime.secrets.getRef({ key: "apiKey" }),
    () => lime.events.publish("saved", { id: 1 }),
    () => lime.policy.requestPermission({ permission: "network" }),
    () => lime.ui.getSnapshot(),
    () => lime.ui.getLocale(),
    () => lime.ui.getTheme(),
    () => lime.invoke("lime.evidence", "record", { kind: "k" }, { options: { idempotencyKey: "once" } }),
    () => lime.ui.navigate("/notes/1"),
  ];
  void lime.ready();
  for (const c of calls) {
    const p = c();
    answer();
    await p;
  }
  const sub = lime.events.subscribe("saved", () => {});
  answer();
  const off = await sub;
  const last = off();
  answer();
  await last;
  lime.ui.toast("Saved", "success");
  lime.ui.openExternal("https://example.com/");
  await assert.rejects(lime.storage.get("slow"), (e) => e.code === "HOST_E_TIMEOUT"); // then capability:cancel
  lime.close();

  const idRule = schema.$defs.RequestId;
  const pattern = new RegExp(idRule.pattern);
  const ids = new Map();
  const norm = (id) => {
    assert.ok(pattern.test(id) && id.length >= idRule.minLength && id.length <= idRule.maxLength, `request id ${id}`);
    if (!ids.has(id)) ids.set(id, `sdk-${ids.size + 1}`);
    return ids.get(id);
  };
  const recorded = sent.map((m) => {
    const out = { ...m };
    if (out.requestId !== undefined) out.requestId = norm(out.requestId);
    if (out.type === "capability:cancel") out.payload = { requestId: norm(out.payload.requestId) };
    return out;
  });
  const branches = new Map(schema.oneOf.map((b) => [b.title, b]));
  for (const m of recorded) {
    const b = branches.get(m.type);
    assert.ok(b, `the schema has no message type ${m.type}`);
    for (const f of b.required) assert.ok(f in m, `${m.type} lacks ${f}`);
    for (const f of Object.keys(m)) assert.ok(f in b.properties, `${m.type} has an undeclared field ${f}`);
  }
  const text = JSON.stringify(recorded, null, 2) + "\n";
  if (process.env.APPHOST_BLESS) writeFileSync(fixture, text);
  assert.equal(text, readFileSync(fixture, "utf8"), "the SDK's messages changed: re-record with APPHOST_BLESS=1 npm test -w bridge-sdk, then run cargo test -p host-core --test bridge_schemas");
});
