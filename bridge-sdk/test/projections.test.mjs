// The mock's lime.modelSettings, lime.capabilities and lime.workspace answer as the host does
// (crates/host-core/tests/projections.rs): the same shapes, no key material, the same refusals.
import assert from "node:assert/strict";
import test from "node:test";
import { createMockLimeRuntime } from "../dist/index.js";

test("modelSettings: needs-setup with the setup action, then the profile and the app's limit", async () => {
  const none = createMockLimeRuntime();
  const a = await none.modelSettings.get();
  assert.equal(a.status, "needs-setup");
  assert.equal(a.profile, null);
  assert.equal(a.setupAction?.kind, "model");
  assert.equal((await none.ready()).model.status, "needs-setup");
  const set = createMockLimeRuntime({ model: { model: "llama3", apiKeyConfigured: true }, tokenBudget: 5000 });
  const b = await set.modelSettings.get();
  assert.deepEqual(b.profile, { provider: "openai-compatible", model: "llama3", apiKeyConfigured: true });
  assert.equal(b.limits.maxTokensPerTask, 5000);
  assert.equal(b.setupAction, null);
  assert.equal((await set.ready()).model.status, "ready");
  assert.doesNotMatch(JSON.stringify(b), /apiKeyRef|secret|baseUrl|http/);
});

test("capabilities: available ones, and why the others are blocked", async () => {
  const rt = createMockLimeRuntime({ capabilities: ["lime.ui", "lime.storage", "lime.capabilities"], denied: ["lime.storage.set"] });
  const list = await rt.capabilities.list();
  const row = (c) => list.capabilities.find((r) => r.capability === c);
  assert.deepEqual(list.available, ["lime.ui", "lime.storage", "lime.capabilities"]);
  assert.equal(row("lime.agent").reason, "undeclared");
  assert.equal(row("lime.agent").code, "APP_E002");
  assert.equal(row("lime.billing").reason, "not-available");
  assert.equal(row("lime.billing").code, "APP_E001");
  assert.equal(row("lime.storage").methods.find((m) => m.method === "set").reason, "denied");
});

test("workspace: ids, display name, locale and time zone", async () => {
  const rt = createMockLimeRuntime({ workspace: { timezone: "Asia/Shanghai" } });
  assert.deepEqual(await rt.workspace.get(), {
    workspaceId: "local", tenantId: "local", displayName: "Local workspace", locale: "en-US", timezone: "Asia/Shanghai",
  });
});

test("projections take no arguments: APP_E900 with the capability's own cause", async () => {
  const rt = createMockLimeRuntime();
  for (const [cap, method, cause] of [
    ["lime.modelSettings", "get", "modelSettings.invalid_argument"],
    ["lime.capabilities", "list", "capabilities.invalid_argument"],
    ["lime.workspace", "get", "workspace.invalid_argument"],
  ]) {
    for (const bad of [{ includeKey: true }, [1], "x"]) {
      await assert.rejects(rt.invoke(cap, method, bad), (e) => e.code === "APP_E900" && e.causeCode === cause, `${cap} ${JSON.stringify(bad)}`);
    }
  }
});

test("an undeclared projection is refused as the host refuses it", async () => {
  const rt = createMockLimeRuntime({ capabilities: ["lime.ui"] });
  await assert.rejects(rt.modelSettings.get(), (e) => e.code === "APP_E001");
});

test("the first snapshot carries the install mode, readiness and model status", async () => {
  const s = await createMockLimeRuntime().ready();
  assert.equal(s.installMode, "installed");
  assert.deepEqual(s.readiness, { status: "ready", appStatus: "ready", missing: [], setupActions: [] });
  assert.deepEqual(s.model, { status: "needs-setup" });
});

test("evidence.export carries runtimeCorrelation: a task's ids, or the call's trace with the rest missing", async () => {
  const rt = createMockLimeRuntime({ agent: { script: () => [{ type: "result", subtype: "success", payload: { text: "ok" } }] } });
  const plain = await rt.evidence.export();
  assert.equal(plain.runtimeCorrelation.taskId, null);
  assert.match(plain.runtimeCorrelation.traceId, /^trace_/);
  assert.deepEqual(plain.runtimeCorrelation.missing, ["runtimeId", "sessionId", "threadId", "turnId", "taskId", "runId"]);
  const t = await rt.agent.startTask({ input: "go" });
  const pack = await rt.evidence.export({ taskId: t.taskId });
  assert.equal(pack.runtimeCorrelation.taskId, t.taskId);
  assert.equal(pack.runtimeCorrelation.sessionId, t.sessionId);
  assert.equal(pack.runtimeCorrelation.traceId, t.traceId);
  await assert.rejects(rt.evidence.export({ taskId: "task_nope" }), (e) => e.code === "APP_E904" && e.causeCode === "evidence.task_not_found");
  await assert.rejects(rt.evidence.export({ taskId: 7 }), (e) => e.code === "APP_E900" && e.causeCode === "evidence.invalid_argument");
});

test("startTask budget: a malformed one is agent.invalid_budget, a good one is accepted", async () => {
  const rt = createMockLimeRuntime({ agent: { script: () => [{ type: "result", subtype: "success", payload: { text: "ok" } }] } });
  for (const bad of [{ maxTokens: 0 }, { maxTokens: 1.5 }, { maxTokens: "9" }, { maxTokens: 5, x: 1 }, 7]) {
    await assert.rejects(rt.agent.startTask({ input: "go", budget: bad }), (e) => e.code === "APP_E900" && e.causeCode === "agent.invalid_budget", JSON.stringify(bad));
  }
  const t = await rt.agent.startTask({ input: "go", budget: { maxTokens: 100 } });
  assert.match(t.taskId, /^task_/);
});
