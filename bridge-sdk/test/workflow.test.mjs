// lime.workflow handles: the real runtime over a scripted host (run events as host:event), and
// the mock's declared workflows (review by the user only, input checked against its schema,
// wait, cancel, isolation of refusals as the host answers them).
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

const ev = (sequence, type, fact) => ({
  sequence, type, timestamp: "2026-11-26T00:00:00Z", eventId: `e${sequence}`, sessionId: "sess_wf_run_1",
  payload: { workflowFact: fact },
});

test("start returns a run whose events iterate in order, deduplicated, until its end", async () => {
  const h = fakeHost();
  const lime = createLimeRuntime({ appId: "a", entryKey: "home", endpoint: h.endpoint });
  const p = lime.workflow.start({ workflow: "wf", input: { topic: "cats" }, idempotencyKey: "k" });
  assert.deepEqual(h.sent.at(-1).payload, {
    capability: "lime.workflow", method: "start", args: { workflow: "wf", input: { topic: "cats" }, idempotencyKey: "k" },
  });
  h.answer({ runId: "run_1", run: { runId: "run_1", finished: false } });
  const run = await p;
  assert.equal(run.runId, "run_1");
  const push = (e, runId = "run_1") => h.reply("host:event", undefined, { capability: "lime.workflow", runId, event: e });
  push(ev(1, "job.created", "run_started"));
  push(ev(1, "job.created", "run_started"));
  push(ev(1, "job.created", "other run"), "run_2");
  push(ev(2, "job.progress", "review_requested"));
  push(ev(3, "job.completed", "ended"));
  push(ev(4, "job.progress", "after the end"));
  const seen = [];
  for await (const e of run.events()) seen.push(e.payload.workflowFact);
  assert.deepEqual(seen, ["run_started", "review_requested", "ended"]);
  const result = run.result();
  await new Promise((r) => setTimeout(r, 0));
  assert.deepEqual(h.sent.at(-1).payload, { capability: "lime.workflow", method: "get", args: { runId: "run_1" } });
  h.answer({ run: { runId: "run_1", finished: true, status: "succeeded" } });
  assert.equal((await result).status, "succeeded");
  lime.close();
});

const SAMPLE = {
  states: [
    { key: "start", kind: "start", next: "draft" },
    { key: "draft", kind: "agent-task", output: "draft", returns: ({ input }) => `Dear ${input.topic}`, next: "review" },
    { key: "review", kind: "human-review", prompt: "Approve?", show: ({ outputs }) => ({ draft: outputs.draft }), output: "review", next: "decide" },
    { key: "decide", kind: "branch", choose: ({ outputs }) => (outputs.review.decision === "approved" ? "save" : "discarded") },
    { key: "save", kind: "storage-write", returns: true, next: "done" },
    { key: "done", kind: "end", result: ({ outputs }) => ({ approved: true, draft: outputs.draft }) },
    { key: "discarded", kind: "end", result: { approved: false } },
  ],
};

const ASK = {
  states: [
    { key: "start", kind: "start", next: "ask" },
    { key: "ask", kind: "user-input", prompt: "How many?", output: "answer", next: "pause",
      schema: { type: "object", required: ["n"], properties: { n: { type: "integer", maximum: 5 } } } },
    { key: "pause", kind: "wait", duration: "20ms", next: "done" },
    { key: "done", kind: "end", result: ({ outputs }) => outputs.answer.n },
  ],
};

async function refusal(p) {
  try {
    await p;
  } catch (e) {
    return { code: e.code, causeCode: e.causeCode, details: e.details };
  }
  assert.fail("expected a refusal");
}

test("the mock runs a declared workflow: the user reviews, never the app", async () => {
  const lime = createMockLimeRuntime({ workflows: { "draft-review": SAMPLE } });
  const run = await lime.workflow.start({ workflow: "draft-review", input: { topic: "cats" } });
  const facts = [];
  for await (const e of run.events()) {
    facts.push(e.payload.workflowFact);
    if (e.payload.workflowFact === "review_requested") break;
  }
  assert.deepEqual(facts, ["run_started", "step_started", "step_result", "review_requested"]);
  const waiting = await run.get();
  assert.equal(waiting.waiting.type, "review");
  assert.deepEqual(waiting.waiting.show, { draft: "Dear cats" });
  assert.equal(waiting.startedBy, "home");

  const r = await refusal(lime.workflow.respond({ runId: run.runId, input: { approved: true } }));
  assert.equal(r.code, ErrorCodes.PERMISSION_DENIED);
  assert.equal(r.causeCode, "workflow.answer_not_by_user");
  assert.match(r.details.answerIn, /Tasks page/);
  assert.deepEqual(await run.get(), waiting);

  lime.answerReview(run.runId, true);
  const done = await run.result();
  assert.equal(done.status, "succeeded");
  assert.deepEqual(done.state.status.result, { approved: true, draft: "Dear cats" });
  assert.equal((await lime.workflow.list({ status: "succeeded" })).runs.length, 1);
  lime.close();
});

test("the mock checks input answers, keys, the run cap and ownership as the host does", async () => {
  const lime = createMockLimeRuntime({ workflows: { ask: ASK } });
  assert.equal((await refusal(lime.workflow.start({ workflow: "nope" }))).causeCode, "workflow.not_declared");
  const run = await lime.workflow.start({ workflow: "ask", input: {}, idempotencyKey: "k" });
  for await (const e of run.events()) if (e.payload.workflowFact === "input_requested") break;

  let r = await refusal(run.respond({ n: 9 }));
  assert.deepEqual([r.code, r.causeCode, r.details.path], [ErrorCodes.INVALID_ARGUMENT, "workflow.input_invalid", "/n"]);
  r = await refusal(run.respond({}));
  assert.equal(r.causeCode, "workflow.input_invalid");
  r = await refusal(run.respond({ n: 1, pad: "x".repeat(300 * 1024) }));
  assert.equal(r.causeCode, "workflow.input_too_large");
  assert.equal((await run.get()).waiting.type, "input");

  r = await refusal(lime.workflow.start({ workflow: "ask", input: { other: 1 }, idempotencyKey: "k" }));
  assert.equal(r.causeCode, "workflow.idempotency_conflict");
  assert.equal((await lime.workflow.start({ workflow: "ask", input: {}, idempotencyKey: "k" })).runId, run.runId);
  for (let i = 1; i < 16; i++) await lime.workflow.start({ workflow: "ask", input: { i } });
  r = await refusal(lime.workflow.start({ workflow: "ask", input: { i: "flood" } }));
  assert.deepEqual([r.code, r.causeCode], [ErrorCodes.RATE_LIMITED, "workflow.too_many_runs"]);
  assert.equal((await lime.workflow.list({ status: "running" })).runs.length, 16);

  // Another runtime (another app) does not see the run.
  const other = createMockLimeRuntime({ appId: "other", workflows: { ask: ASK } });
  assert.equal((await refusal(other.workflow.get(run.runId))).causeCode, "workflow.run_not_found");
  assert.equal((await refusal(other.workflow.cancel(run.runId))).causeCode, "workflow.run_not_found");

  await run.respond({ n: 4 });
  const done = await run.result();
  assert.equal(done.state.status.result, 4);
  lime.close();
  other.close();
});

test("cancel ends a waiting run and its events end with job.cancelled", async () => {
  const lime = createMockLimeRuntime({ workflows: { ask: ASK } });
  const run = await lime.workflow.start({ workflow: "ask" });
  await new Promise((r) => setTimeout(r, 0));
  const c = await run.cancel();
  assert.equal(c.status, "cancelled");
  const types = [];
  for await (const e of run.events()) types.push(e.type);
  assert.equal(types.at(-1), "job.cancelled");
  const r = await refusal(run.cancel());
  assert.deepEqual([r.code, r.causeCode], [ErrorCodes.WORKFLOW_INVALID_STATE, "workflow.run_finished"]);
  // The standard's shape: the workflow named `key`.
  const byKey = await lime.workflow.start({ key: "ask" });
  assert.equal((await byKey.get()).workflow, "ask");
  lime.close();
});
