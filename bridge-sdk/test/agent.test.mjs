// lime.agent handles: the real runtime over a scripted host (task events as host:event), and
// the mock's scripted tasks (approval, cancel, retry, needs-setup, isolation of runtimes).
import { test } from "node:test";
import assert from "node:assert/strict";
import { BRIDGE_PROTOCOL, ErrorCodes, createLimeRuntime, createMockLimeRuntime } from "@apphost/bridge-sdk";

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

const ev = (sequence, type, extra = {}) => ({
  schemaVersion: "lime.agent-task-event.v1", eventId: `e${sequence}`, sequence, type, appId: "a",
  taskId: "task_1", traceId: "trace_1", sessionId: "session_1", turnId: "turn_1", at: "2026-11-23T00:00:00.000Z",
  payload: { runtimeType: "x" }, ...extra,
});

test("startTask returns a task whose events iterate in order, deduplicated, until the result", async () => {
  const h = fakeHost();
  const lime = createLimeRuntime({ appId: "a", entryKey: "home", endpoint: h.endpoint });
  const p = lime.agent.startTask({ input: "triage", idempotencyKey: "k" });
  assert.deepEqual(h.sent.at(-1).payload, { capability: "lime.agent", method: "startTask", args: { input: "triage", idempotencyKey: "k" } });
  h.answer({ taskId: "task_1", traceId: "trace_1", sessionId: "session_1", created: true });
  const task = await p;
  assert.equal(task.taskId, "task_1");
  const push = (e) => h.reply("host:event", undefined, { capability: "lime.agent", event: e });
  push(ev(1, "system:init"));
  push(ev(2, "task:queued"));
  push(ev(2, "task:queued")); // a duplicate (re-watch) is ignored
  push(ev(5, "assistant:delta", { payload: { runtimeType: "model.delta", text: "he" } }));
  setTimeout(() => {
    push(ev(6, "assistant:delta", { payload: { runtimeType: "model.delta", text: "llo" } }));
    push(ev(9, "result", { subtype: "success" }));
  }, 5);
  const seen = [];
  for await (const e of task.events()) seen.push(e.sequence);
  assert.deepEqual(seen, [2, 5, 6, 9]);
  assert.equal((await task.result()).subtype, "success");

  // retry: a new run; events() and result() follow it.
  const r = task.retry();
  assert.equal(h.sent.at(-1).payload.method, "retryTask");
  h.answer({ taskId: "task_1", status: "queued" });
  await r;
  setTimeout(() => {
    push(ev(12, "task:queued", { turnId: "turn_2" }));
    push(ev(20, "result", { subtype: "cancelled", turnId: "turn_2" }));
  }, 5);
  const res = await task.result();
  assert.equal(res.turnId, "turn_2");
  assert.equal(res.subtype, "cancelled");

  // An app answers "reject" only, with nothing else (only the user approves or edits the input).
  const c = task.respond("action_1", "reject", { updatedInput: { path: "a" }, remember: "session" });
  assert.deepEqual(h.sent.at(-1).payload.args, { taskId: "task_1", actionId: "action_1", decision: "reject" });
  h.answer({ responded: true });
  await c;
  lime.close();
});

test("the mock scripts a task: deltas, an approval, a result; cancel and retry", async () => {
  let approve;
  const lime = createMockLimeRuntime({
    agent: {
      // The user answering the host's prompt, once the app's attempts below were refused.
      user: () => new Promise((resolve) => (approve = () => resolve("approve"))),
      script: ({ run }) =>
        run === 0
          ? [
              { type: "assistant:delta", payload: { text: "ok" } },
              { type: "approval:requested", payload: { toolName: "storage_write" } },
              { type: "tool:call", subtype: "result" },
              { type: "result", subtype: "success", payload: { structuredOutput: { label: "bug" } } },
            ]
          : [{ type: "assistant:delta", payload: { text: "slow" }, delayMs: 1000 }],
    },
  });
  const task = await lime.agent.startTask({ input: { items: ["a"] } });
  const events = [];
  for await (const e of task.events()) {
    events.push(e);
    if (e.type === "approval:requested") {
      assert.equal((await task.get()).status, "waiting_approval");
      // The app cannot approve, nor approve with its own input, nor allow for the session.
      for (const [args, cause] of [
        [{ decision: "approve" }, "agent.approval_requires_user"],
        [{ decision: "approve", remember: "session" }, "agent.approval_requires_user"],
        [{ decision: "answer" }, "agent.approval_requires_user"],
        [{ decision: "approve", updatedInput: { path: "x" } }, "agent.updated_input_unsupported"],
      ]) {
        const args2 = { taskId: task.taskId, actionId: e.payload.actionId, ...args };
        await assert.rejects(lime.invoke("lime.agent", "respondAction", args2), (err) => err.code === ErrorCodes.PERMISSION_DENIED && err.causeCode === cause);
      }
      assert.equal((await task.get()).status, "waiting_approval", "still pending");
      approve();
    }
  }
  // events() follows the current run, from its task:queued; getTaskEvents has everything.
  assert.deepEqual(events.map((e) => e.type), ["task:queued", "assistant:delta", "approval:requested", "task:progress", "tool:call", "result"]);
  const all = (await lime.agent.getTaskEvents({ taskId: task.taskId })).events;
  assert.equal(all[0].type, "system:init");
  assert.deepEqual(all.slice(1), events);
  assert.ok(events.every((e, i) => e.schemaVersion === "lime.agent-task-event.v1" && e.appId === "mock-app" && (i === 0 || e.sequence > events[i - 1].sequence)));
  const v = await task.get();
  assert.equal(v.status, "succeeded");
  assert.deepEqual(v.result.structuredOutput, { label: "bug" });
  await assert.rejects(task.respond("action_x", "approve"), (e) => e.code === ErrorCodes.NOT_FOUND && e.causeCode === "agent.action_not_found");

  await task.retry();
  await assert.rejects(task.retry(), (e) => e.causeCode === "agent.task_busy");
  await task.cancel();
  assert.equal((await task.result()).subtype, "cancelled");
  assert.equal((await lime.agent.listTasks()).items.length, 1);

  // The same idempotency key: the same task.
  const a = await lime.agent.startTask({ input: "x", idempotencyKey: "k" });
  const b = await lime.agent.startTask({ input: "y", idempotencyKey: "k" });
  assert.equal(a.taskId, b.taskId);
  assert.equal(b.created, false);
  lime.close();
});

test("without a scripted model the mock answers APP_E012; another runtime's tasks are unknown", async () => {
  const none = createMockLimeRuntime();
  await assert.rejects(none.agent.startTask({ input: "x" }), (e) => e.code === ErrorCodes.MODEL_NOT_CONFIGURED && e.causeCode === "agent.needs_setup");
  const one = createMockLimeRuntime({ appId: "one", agent: { script: () => [] } });
  const task = await one.agent.startTask({ input: "x" });
  await task.result();
  await assert.rejects(none.agent.getTask(task.taskId), (e) => e.code === ErrorCodes.NOT_FOUND && e.causeCode === "agent.task_not_found");
  none.close();
  one.close();
});

test("the mock's sessionPolicy: declared resume continues a conversation; undeclared, busy, fork refused", async () => {
  const seen = [];
  const lime = createMockLimeRuntime({
    sessionModes: ["resume", "fork"],
    agent: {
      script: ({ input, history, sessionId }) => {
        seen.push({ input, history, sessionId });
        return input === "slow" ? [{ type: "assistant:delta", payload: { text: "…" }, delayMs: 1000 }] : [];
      },
    },
  });
  const first = await lime.agent.startTask({ input: "one", sessionPolicy: { mode: "resume", businessObjectRef: "doc-1" } });
  await first.result();
  const second = await lime.agent.startTask({ input: "two", sessionPolicy: { mode: "resume", taskId: first.taskId } });
  await second.result();
  const third = await lime.agent.startTask({ input: "three", sessionPolicy: { mode: "resume", businessObjectRef: "doc-1" } });
  await third.result();
  assert.equal(second.sessionId, first.sessionId);
  assert.equal(third.sessionId, first.sessionId);
  assert.deepEqual(seen.map((s) => s.history), [[], ["one"], ["one", "two"]]);
  // A resumed task's events are its own; system:init stays with the session's first task.
  const own = (await lime.agent.getTaskEvents({ taskId: second.taskId })).events;
  assert.ok(own.every((e) => e.taskId === second.taskId && e.type !== "system:init"));
  assert.equal((await lime.agent.getTaskEvents({ taskId: first.taskId })).events[0].type, "system:init");
  // A new session by default and with "new".
  const fresh = await lime.agent.startTask({ input: "x", sessionPolicy: { mode: "new" } });
  assert.notEqual(fresh.sessionId, first.sessionId);
  await fresh.result();

  const slow = await lime.agent.startTask({ input: "slow", sessionPolicy: { mode: "resume", taskId: first.taskId } });
  await assert.rejects(
    lime.agent.startTask({ input: "x", sessionPolicy: { mode: "resume", businessObjectRef: "doc-1" } }),
    (e) => e.code === ErrorCodes.INVALID_ARGUMENT && e.causeCode === "agent.session_busy",
  );
  await slow.cancel();
  await assert.rejects(
    lime.agent.startTask({ input: "x", sessionPolicy: { mode: "fork" } }),
    (e) => e.causeCode === "agent.session_policy_unsupported",
  );
  await assert.rejects(
    lime.agent.startTask({ input: "x", sessionPolicy: { mode: "continue", taskId: first.taskId } }),
    (e) => e.code === ErrorCodes.PERMISSION_DENIED && e.causeCode === "agent.session_policy_not_declared",
  );
  await assert.rejects(
    lime.agent.startTask({ input: "x", sessionPolicy: { mode: "resume", taskId: "task_missing" } }),
    (e) => e.code === ErrorCodes.NOT_FOUND && e.causeCode === "agent.task_not_found",
  );
  await assert.rejects(
    lime.agent.startTask({ input: "x", sessionPolicy: { mode: "resume" } }),
    (e) => e.causeCode === "agent.invalid_argument",
  );
  lime.close();

  // Undeclared by default: only "new".
  const plain = createMockLimeRuntime({ agent: { script: () => [] } });
  await assert.rejects(
    plain.agent.startTask({ input: "x", sessionPolicy: { mode: "resume", businessObjectRef: "r" } }),
    (e) => e.causeCode === "agent.session_policy_not_declared",
  );
  await (await plain.agent.startTask({ input: "x", sessionPolicy: "new" })).result();
  plain.close();
});
