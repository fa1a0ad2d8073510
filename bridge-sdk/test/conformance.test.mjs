// The SDK ships the conformance suite: the capability rows of the conformance app
// (fixtures/apps/conformance-app/ui/capability-checks.js, which its frame runs against the real
// host in tests/e2e/conformance.test.mjs) run here against createMockLimeRuntime(), configured as
// the host would see that app (its APP.md). A row that passes in the window and fails here is a
// place where the mock drifted from the host.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";

import { createMockEventBus, createMockLimeRuntime } from "@apphost/bridge-sdk";

import {
  CAPABILITY_CHECKS,
  HANDSHAKE_CHECKS,
  ON_DEMAND_CHECKS,
  SERVICE_CHECKS,
} from "../../fixtures/apps/conformance-app/ui/capability-checks.js";

const APP = "conformance-app";

/**
 * What the host reads from the conformance app's APP.md for a mount: the capabilities it
 * requires, its events[] and secrets[] (none bound on a fresh install), its entries' routes.
 * A line-based reader for this one fixture's frontmatter (block style, as written there).
 */
function manifestFacts() {
  const text = readFileSync(new URL("../../fixtures/apps/conformance-app/APP.md", import.meta.url), "utf8");
  const front = text.split(/^---$/m)[1];
  const block = (name) => (front.match(new RegExp(`^${name}:\\n((?:[ -].*\\n)*)`, "m")) ?? [, ""])[1];
  const capabilities = [...block("requires").matchAll(/^ {4}(lime\.[a-z]+):/gm)].map((m) => m[1]);
  const entries = [...block("entries").matchAll(/^ {2}- key: (\S+)\n(?: {4}.*\n)*? {4}route: (\S+)$/gm)].map((m) => [m[1], m[2]]);
  const events = Object.fromEntries([...block("events").matchAll(/^ {2}- key: (\S+)\n {4}direction: (\S+)$/gm)].map((m) => [m[1], m[2]]));
  const secrets = Object.fromEntries([...block("secrets").matchAll(/^ {2}- key: (\S+)$/gm)].map((m) => [m[1], false]));
  return { capabilities, entries, events, secrets };
}
const FACTS = manifestFacts();

test("the mock is configured from the conformance app's manifest", () => {
  assert.deepEqual(FACTS, {
    capabilities: ["lime.ui", "lime.storage", "lime.artifacts", "lime.evidence", "lime.events", "lime.secrets"],
    entries: [["main", "/main"], ["prompt", "/prompt"]],
    events: { "conformance.ping": "both" },
    secrets: { optional_token: false },
  });
});

/** The mock as the host mounts the conformance app's `entry`. */
function conformanceRuntime(entry = "main", options = {}) {
  const own = FACTS.entries.find(([key]) => key === entry);
  return createMockLimeRuntime({
    appId: APP,
    entryKey: entry,
    capabilities: FACTS.capabilities,
    events: FACTS.events,
    secrets: FACTS.secrets,
    // The entry's own route first, as the host lists them.
    routes: [own[1], ...FACTS.entries.filter((e) => e !== own).map(([, route]) => route)],
    ...options,
  });
}

/** Runs one row as the page does: `{result, detail}` ("pass" + detail, or "fail" + code: message). */
async function run(check, rt, entry = rt.entryKey) {
  const phases = [];
  try {
    const detail = await check.run({ rt, phase: (p) => phases.push(p), appId: APP, entryKey: entry, origin: `agentapp://${APP}` });
    return { result: "pass", detail: String(detail ?? "") };
  } catch (e) {
    return { result: "fail", detail: `${e?.code ? `${e.code}: ` : ""}${e?.message ?? String(e)}` };
  }
}

test("every capability row the page runs at load passes against the mock, in the page's order", async () => {
  const rt = conformanceRuntime("main");
  const auto = CAPABILITY_CHECKS.filter((c) => c.auto?.includes("main"));
  assert.deepEqual(
    auto.map((c) => c.name),
    [...HANDSHAKE_CHECKS, ...SERVICE_CHECKS].map((c) => c.name),
  );
  const results = {};
  for (const check of auto) results[check.name] = await run(check, rt);
  const failed = Object.entries(results).filter(([, r]) => r.result !== "pass");
  assert.deepEqual(failed, [], "capability rows that fail against the mock");
  // The details tests/e2e/conformance.test.mjs asserts of the host.
  assert.equal(results["storage.boot_count"].detail, "1");
  assert.equal(results["capability.not_available"].detail, "APP_E001");
  assert.equal(results["storage.other_apps"].detail, "0 note:* keys");
  assert.equal(results["artifacts.standard_shapes"].detail, "kind type; mixed refused");
  assert.equal(results["evidence.standard_shapes"].detail, "message subject; mixed refused");
  assert.equal(results["storage.object_forms"].detail, "set get delete");
  assert.equal(results["ui.navigate"].detail, "own route ok, foreign APP_E002");
  assert.equal(results["secrets.unbound"].detail, "APP_E011 APP_E002");
  assert.equal(results["sdk.handshake"].detail, `agentapp://${APP} main [lime.ui,lime.storage,lime.artifacts,lime.evidence,lime.events,lime.secrets]`);
  assert.deepEqual(rt.navigations, ["/main"], "the foreign route was not navigated to");
  assert.equal(rt.snapshot().route, "/main", "the entry's own route, as the host's snapshot has it");
  assert.deepEqual(rt.toasts, [{ message: "conformance toast", level: "info" }]);
  rt.close();
});

test("the handshake row passes for the prompt entry too", async () => {
  const rt = conformanceRuntime("prompt");
  for (const check of CAPABILITY_CHECKS.filter((c) => c.auto?.includes("prompt"))) {
    assert.deepEqual((await run(check, rt)).result, "pass", check.name);
  }
});

test("storage.boot_count counts the page loads of one app's storage", async () => {
  const rt = conformanceRuntime("main");
  const boot = SERVICE_CHECKS.find((c) => c.name === "storage.boot_count");
  const details = [];
  for (let i = 0; i < 3; i++) details.push((await run(boot, rt)).detail);
  assert.deepEqual(details, ["1", "2", "3"]);
});

test("events.publish_count reaches the app's other subscribed frame only", async () => {
  const bus = createMockEventBus();
  const main = conformanceRuntime("main", { bus });
  const prompt = conformanceRuntime("prompt", { bus });
  const peer = createMockLimeRuntime({ appId: "conformance-peer", entryKey: "main", bus, events: { "conformance.ping": "both" } });
  const got = [];
  await prompt.events.subscribe("conformance.ping", (e) => got.push(e));
  await peer.events.subscribe("conformance.ping", () => assert.fail("another app received the event"));
  const count = ON_DEMAND_CHECKS.find((c) => c.name === "events.publish_count");
  assert.deepEqual(await run(count, main), { result: "pass", detail: "1" });
  assert.deepEqual(got, [{ capability: "lime.events", topic: "conformance.ping", payload: { from: `agentapp://${APP}` }, sourceEntryKey: "main" }]);
});

test("download.text saves under the last path component, as the host does", async () => {
  const rt = conformanceRuntime("main");
  const download = ON_DEMAND_CHECKS.find((c) => c.name === "download.text");
  const r = await run(download, rt);
  assert.deepEqual([r.result, JSON.parse(r.detail)], ["pass", { saved: true, fileName: "conformance.md" }]);
  assert.equal(new TextDecoder().decode(rt.downloads[0].bytes), "# saved by conformance");
  const cancelled = await run(download, conformanceRuntime("main", { downloadAnswer: "cancel" }));
  assert.deepEqual(JSON.parse(cancelled.detail), { saved: false });
});

test("prompt.scratch: ok when allowed, APP_E002 when the user denies", async () => {
  const scratch = ON_DEMAND_CHECKS.find((c) => c.name === "prompt.scratch");
  assert.deepEqual(await run(scratch, conformanceRuntime("prompt")), { result: "pass", detail: "ok" });
  const denied = conformanceRuntime("prompt", { denied: ["lime.storage.set"] });
  assert.deepEqual(await run(scratch, denied), { result: "pass", detail: "APP_E002" });
  assert.equal(denied.store.has("scratch"), false, "nothing written");
});

test("a mock that drifts is caught: the rows fail against a host that answers differently", async () => {
  // The control for the test above: the same rows, against a mock missing what the app declares,
  // fail (so a passing run means the mock answered as the host does).
  const rt = createMockLimeRuntime({ appId: APP, entryKey: "main", capabilities: ["lime.ui"] });
  const results = [];
  for (const check of SERVICE_CHECKS) results.push([check.name, (await run(check, rt)).result]);
  const failed = results.filter(([, r]) => r === "fail").map(([n]) => n);
  assert.ok(failed.includes("storage.roundtrip") && failed.includes("artifacts.roundtrip") && failed.includes("secrets.unbound"), failed.join(","));
});

test("ui.navigate follows the host's route rule: a declared route or a path below one", async () => {
  const rt = conformanceRuntime("main");
  for (const route of ["/main", "/main/sub", "/prompt?x=1", "/prompt#top"]) await rt.ui.navigate(route);
  for (const route of ["/mainx", "/", "//main", "main", "/not-a-route-of-this-app"]) {
    await assert.rejects(rt.ui.navigate(route), { code: "APP_E002", causeCode: "navigate.foreign_route" }, route);
  }
  assert.deepEqual(rt.navigations, ["/main", "/main/sub", "/prompt?x=1", "/prompt#top"]);
  // Without declared routes, any path of the app's own is accepted (as before).
  const open = createMockLimeRuntime();
  await open.ui.navigate("/anything");
  await assert.rejects(open.ui.navigate("//elsewhere"), { code: "APP_E002" });
});

test("the page's table keeps every row in its place: capability rows among the raw ones", async () => {
  // checks.js reads the frame URL and listens for host messages when loaded: stand-ins for those.
  globalThis.location = new URL(`agentapp://${APP}/index.html?app=${APP}&entry=main`);
  globalThis.window = { addEventListener() {} };
  const { CHECKS } = await import("../../fixtures/apps/conformance-app/ui/checks.js");
  assert.deepEqual(CHECKS.map((c) => c.name), [
    "raw.before_ready", "spoof.wrong_protocol", "spoof.wrong_version", "spoof.wrong_app", "spoof.wrong_entry",
    "spoof.oversized", "spoof.not_json", "spoof.string", "spoof.malformed_json", "spoof.array", "spoof.unknown_type",
    "spoof.invalid_request_id", "spoof.unknown_field", "spoof.invalid_payload", "spoof.missing_request_id",
    "spoof.nothing_written", "sdk.handshake", "raw.control", "ui.getSnapshot", "ui.getLocale", "ui.getTheme",
    "ui.navigate", "ui.toast", "capability.not_available", "artifacts.roundtrip", "evidence.record_export",
    "artifacts.standard_shapes", "evidence.standard_shapes", "events.publish", "secrets.unbound", "storage.roundtrip",
    "storage.object_forms", "storage.boot_count", "storage.before_ready_not_written",
    "storage.other_apps", "isolation.origin", "isolation.tauri_globals", "isolation.ipc_fetch",
    "isolation.parent_document", "isolation.top_navigation", "isolation.popup", "net.undeclared", "isolation.seed",
    "isolation.peer", "events.publish_count", "download.text", "prompt.scratch", "prompt.duplicate",
  ]);
  for (const c of CAPABILITY_CHECKS) assert.ok(CHECKS.includes(c), `${c.name} is in the page's table`);
  // What runs at load, per entry, in order (tests/e2e/conformance.test.mjs reads these rows).
  const auto = (entry) => CHECKS.filter((c) => c.auto?.includes(entry)).map((c) => c.name);
  assert.deepEqual(auto("prompt"), ["sdk.handshake", "isolation.origin"]);
  assert.deepEqual(auto("main").slice(0, 3), ["raw.before_ready", "sdk.handshake", "raw.control"]);
});
