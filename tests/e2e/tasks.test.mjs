// Desktop phase 5: lime.agent tasks in the real window. scripts/e2e.sh installed
// fixtures/apps/review-queue (signed with the fixture key) and a sideloaded copy, review-peer,
// with no model set: review-queue is needs-setup until this file sets one, then ready.
// This file starts a stand-in OpenAI-compatible provider (lib/stand-in-openai.mjs), points the
// data dir's model at it with `apphost model set`, and drives tasks from inside the
// review-queue frame through the app's own UI (its buttons call lime.agent through its
// ui/sdk/, the vendored SDK) and raw bridge calls: streamed deltas in order, approve once (as the user, in the
// prompt the host draws above the frame: the app's own approve is refused) and reject once,
// cancel mid-stream, retry as a new run, a provider error, structured output retried after an
// invalid answer, and another app that can neither read, cancel nor answer the task. Every
// task event the frame receives validates against schemas/apphost/agent-task-event.schema.json.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, beforeEach, test } from "node:test";

import { APPHOST_BIN, withApp } from "./lib/harness.mjs";
import { StandInProvider } from "./lib/stand-in-openai.mjs";
import { call, enterQueue, events, openQueue, taskEventValidator, waitForEvent } from "./lib/tasks.mjs";
import { waitFor } from "./lib/webdriver.mjs";

const APP = "review-queue";
const PEER = "review-peer";
const DATA = process.env.APPHOST_DATA_DIR ?? "";
const provider = new StandInProvider({ model: "stand-in" });
const validate = taskEventValidator();
let validated = 0;

function cli(...args) {
  return execFileSync(APPHOST_BIN, args, { encoding: "utf8", timeout: 60_000, stdio: ["ignore", "pipe", "pipe"] });
}

before(async () => {
  const base = await provider.start();
  // Installed by scripts/e2e.sh before any model: needs-setup ("Set up a model"), then ready.
  const unset = JSON.parse(cli("--json", "readiness", APP));
  assert.equal(unset.status, "needs-setup", JSON.stringify(unset));
  assert.match(JSON.stringify(unset.setupActions), /Set up a model/);
  cli("model", "set", "--base-url", base, "--model", "stand-in", "--no-api-key");
  const set = JSON.parse(cli("--json", "readiness", APP));
  assert.equal(set.status, "ready", JSON.stringify(set));
  const shown = JSON.parse(cli("--json", "model", "show"));
  assert.equal(JSON.stringify(shown).includes(base), true, `model show names the stand-in: ${JSON.stringify(shown)}`);
});

// A failed test may leave replies queued: the next one starts from none.
beforeEach(() => {
  provider.replies.length = 0;
});

after(async () => {
  await provider.stop();
});

/**
 * Every event the frame received validates against the schema; per task, sequences grow
 * (except for tasks in `replayed`, which a repeated startTask re-sent from the start).
 */
async function checkEvents(session, replayed = new Set()) {
  const all = await events(session);
  const last = new Map();
  for (const e of all) {
    assert.equal(validate(e), null, `event does not validate: ${JSON.stringify(e)}`);
    assert.equal(e.appId, APP);
    if (replayed.has(e.taskId)) continue;
    assert.ok(e.sequence > (last.get(e.taskId) ?? 0), `sequence ${e.sequence} after ${last.get(e.taskId)} in ${e.taskId}`);
    last.set(e.taskId, e.sequence);
  }
  validated += all.length;
  return all;
}

const ofTask = (all, taskId) => all.filter((e) => e.taskId === taskId);
const click = (session, css) => session.execute(`document.querySelector(arguments[0]).click();`, [css]);
const text = (session, css) => session.execute(`return document.querySelector(arguments[0]).textContent;`, [css]);
const setItems = (session, items) => session.execute(`document.getElementById("items").value = arguments[0];`, [items.join("\n")]);

/** The taskId the app's next task gets: the first task:queued event not in `known`. */
async function nextTask(session, known) {
  const e = await waitForEvent(session, (e) => e.type === "task:queued" && !known.has(e.taskId), "a new task's task:queued");
  known.add(e.taskId);
  return e.taskId;
}

function resultOf(taskId, n = 1) {
  return (e) => e.taskId === taskId && e.type === "result" && --n === 0;
}

/**
 * Approves `actionId` as the user would: in the prompt the host page draws above the app's frame
 * (outside it), after checking it shows the tool's input; then re-enters the frame.
 */
async function approveInHost(session, actionId, input) {
  await session.switchToTop();
  const item = `[data-testid="approval-prompt-item"][data-action-id="${actionId}"]`;
  const button = await session.waitForElement(`${item} [data-testid="approval-prompt-approve"]`, 20_000);
  assert.match(await session.execute(`return document.querySelector(arguments[0]).textContent;`, [`${item} [data-testid="approval-prompt-input"]`]), input);
  await session.click(button);
  await waitFor(async () => (await session.find(item)) === null, { what: "the host's prompt to close" });
  await enterQueue(session, APP);
}

/** The app's own approve (or rewrite) is refused: only the user approves. Nothing changes. */
async function appCannotApprove(session, taskId, actionId) {
  for (const [args, causeCode] of [
    [{ decision: "approve" }, "agent.approval_requires_user"],
    [{ decision: "approve", remember: "session" }, "agent.approval_requires_user"],
    [{ decision: "approve", updatedInput: { path: "evil.md", content: "the app's" } }, "agent.updated_input_unsupported"],
  ]) {
    const r = await call(session, "lime.agent", "respondAction", { taskId, actionId, ...args });
    assert.deepEqual({ code: r.error?.code, causeCode: r.error?.causeCode }, { code: "APP_E002", causeCode }, JSON.stringify(r));
  }
  const view = await call(session, "lime.agent", "getTask", { taskId });
  assert.equal(view.ok.status, "waiting_approval", JSON.stringify(view));
  assert.equal(existsSync(join(DATA, "apps", APP, "files", "evil.md")), false);
}

async function waitResult(session, taskId, nth = 1, timeoutMs = 30_000) {
  return waitFor(
    async () => {
      const results = (await events(session)).filter((e) => e.taskId === taskId && e.type === "result");
      return results.length >= nth ? results[nth - 1] : null;
    },
    { timeoutMs, what: `result #${nth} of task ${taskId}` },
  );
}

test("streamed deltas arrive in order; a tool call waits for approval: approved once, rejected once", async (t) => {
  await withApp(
    t,
    async (app) => {
      await enterQueue(app, APP);
      const known = new Set();
      const c0 = provider.chats.length;
      const deltas = ["I will", " write", " the triage", " notes", " now."];
      const notes = "- [ ] crash on save\n- [ ] add dark mode\n";
      provider.reply(
        { deltas, delayMs: 40, toolCall: { name: "storage_write", arguments: { path: "triage-notes.md", content: notes } } },
        { deltas: ["Wrote ", "triage-notes.md."] },
      );
      await setItems(app, ["crash on save", "add dark mode"]);
      await click(app, "#write-notes");
      const task = await nextTask(app, known);

      // The approval request, after every delta of the first model round, in order.
      const ask = await waitForEvent(app, (e) => e.taskId === task && e.type === "approval:requested", "approval:requested");
      let all = ofTask(await events(app), task);
      const got = all.filter((e) => e.type === "assistant:delta").map((e) => e.payload.text);
      assert.deepEqual(got, deltas, "deltas in the order the provider sent them");
      assert.ok(all.findIndex((e) => e.type === "assistant:delta") < all.indexOf(all.find((e) => e.type === "approval:requested")));
      assert.equal(await text(app, "#stream"), deltas.join(""), "the app shows the streamed text");
      assert.equal(ask.payload.actionId.length > 0, true);
      // Nothing ran yet: the provider was asked once, no file.
      const file = join(DATA, "apps", APP, "files", "triage-notes.md");
      assert.equal(provider.chats.length, c0 + 1);
      assert.equal(existsSync(file), false, "storage_write did not run before the approval");
      const req = provider.chats[c0].body;
      assert.equal(req.model, "stand-in");
      assert.equal(req.stream, true);
      assert.ok(req.tools.some((tool) => tool.function.name === "storage_write"), "the host offers its tools");
      assert.match(JSON.stringify(req.messages), /crash on save/);
      // The app shows the tool input beside the host's prompt, with Reject only; its own approve
      // is refused. The user approves in the prompt AppHost draws above the frame.
      const box = `.approval[data-action-id="${ask.payload.actionId}"]`;
      await waitFor(() => app.execute(`return document.querySelector(arguments[0]) !== null;`, [box]), { what: "the approval box" });
      assert.match(await text(app, `${box} pre`), /triage-notes\.md/);
      assert.equal(await app.execute(`return document.querySelector(arguments[0]) === null;`, [`${box} button[data-decision="approve"]`]), true);
      await appCannotApprove(app, task, ask.payload.actionId);
      assert.equal(existsSync(file), false, "a refused approve ran nothing");
      await approveInHost(app, ask.payload.actionId, /triage-notes\.md/);
      const done = await waitResult(app, task);
      assert.equal(done.subtype, "success");
      assert.equal(readFileSync(file, "utf8"), notes, "the approved write ran once, with the model's input");
      assert.equal(provider.chats.length, c0 + 2);
      const toolMsg = provider.chats[c0 + 1].body.messages.find((m) => m.role === "tool");
      assert.ok(toolMsg, "the second request carries the tool result");
      assert.match(String(toolMsg.content), /wrote \d+ bytes/);
      all = ofTask(await events(app), task);
      assert.ok(all.some((e) => e.type === "tool:call"), "tool:call events");
      assert.ok(all.some((e) => e.type === "task:progress" && e.subtype === "approval_resolved"));
      assert.equal(all.filter((e) => e.type === "result").length, 1, "exactly one result");

      // A second task: the write is rejected; the tool never runs.
      provider.reply(
        { toolCall: { name: "storage_write", arguments: { path: "rejected.md", content: "must not be written" } } },
        { deltas: ["Understood,", " nothing written."] },
      );
      await click(app, "#write-notes");
      const task2 = await nextTask(app, known);
      const ask2 = await waitForEvent(app, (e) => e.taskId === task2 && e.type === "approval:requested", "the second approval");
      const box2 = `.approval[data-action-id="${ask2.payload.actionId}"]`;
      await waitFor(() => app.execute(`return document.querySelector(arguments[0]) !== null;`, [box2]), { what: "the second approval box" });
      await click(app, `${box2} button[data-decision="reject"]`);
      const done2 = await waitResult(app, task2);
      assert.equal(done2.subtype, "success", "the model answered after the rejection");
      assert.equal(existsSync(join(DATA, "apps", APP, "files", "rejected.md")), false, "a rejected write never runs");
      assert.equal(provider.chats.length, c0 + 4);
      const rejected = provider.chats[c0 + 3].body.messages.find((m) => m.role === "tool");
      assert.ok(rejected, "the model is told about the rejection");
      assert.match(String(rejected.content), /declined/);
      const failedCall = ofTask(await events(app), task2).find((e) => e.type === "tool:call" && e.subtype === "failed");
      assert.ok(failedCall, "the rejected call is reported as a failed tool call");
      // Answering the same action again: it is no longer pending.
      const again = await call(app, "lime.agent", "respondAction", { taskId: task2, actionId: ask2.payload.actionId, decision: "approve" });
      assert.equal(again.error?.code, "APP_E904", JSON.stringify(again));
      assert.equal(again.error?.causeCode, "agent.action_not_found");
      await checkEvents(app);
      assert.equal(provider.replies.length, 0, "every scripted reply was used");
    },
    ["open", APP, "--entry", "queue"],
  );
});

test("startTask answers before the model does; the same idempotency key returns the same task", async (t) => {
  await withApp(
    t,
    async (app) => {
      await enterQueue(app, APP);
      const c0 = provider.chats.length;
      provider.reply({ firstByteDelayMs: 3000, deltas: ["late"] });
      const args = { input: "answer slowly", idempotencyKey: "e2e-slow-1" };
      const first = await call(app, "lime.agent", "startTask", args);
      assert.equal(first.ok.created, true, JSON.stringify(first));
      assert.ok(first.at - first.sent < 1500, `startTask answered in ${first.at - first.sent} ms, not after the model`);
      const again = await call(app, "lime.agent", "startTask", args);
      assert.deepEqual(
        [again.ok.taskId, again.ok.traceId, again.ok.sessionId, again.ok.created],
        [first.ok.taskId, first.ok.traceId, first.ok.sessionId, false],
      );
      const done = await waitResult(app, first.ok.taskId);
      assert.equal(done.subtype, "success");
      assert.equal(provider.chats.length, c0 + 1, "one task, one model request");
      const third = await call(app, "lime.agent", "startTask", args);
      assert.equal(third.ok.taskId, first.ok.taskId, "the key still names the ended task");
      assert.equal(provider.chats.length, c0 + 1);
      // Each start (re)watches the task from its first event (documented in
      // crates/host-core/tests/agent_service.rs): the frame holds the whole log, the last
      // replay complete and in order; the SDK deduplicates by sequence.
      const log = await call(app, "lime.agent", "getTaskEvents", { taskId: first.ok.taskId, limit: 1000 });
      const want = log.ok.events.map((e) => e.sequence);
      const got = await waitFor(
        async () => {
          const mine = ofTask(await events(app), first.ok.taskId).map((e) => e.sequence);
          const tail = mine.slice(mine.lastIndexOf(want[0]));
          return tail.length === want.length ? mine : null;
        },
        { what: "the replay after the third start" },
      );
      assert.deepEqual(got.slice(got.lastIndexOf(want[0])), want, "the last replay is the whole log, in order");
      assert.deepEqual([...new Set(got)].sort((a, b) => a - b), want, "nothing but the task's log");
      await checkEvents(app, new Set([first.ok.taskId]));
    },
    ["open", APP, "--entry", "queue"],
  );
});

test("cancel mid-stream ends with result/cancelled; retry starts a new run; a provider error ends a run", async (t) => {
  await withApp(
    t,
    async (app) => {
      await enterQueue(app, APP);
      const known = new Set();
      const aborted = provider.aborted;
      provider.reply({ deltas: Array.from({ length: 200 }, (_, i) => `tick${i} `), delayMs: 50 });
      await setItems(app, ["a long answer"]);
      await click(app, "#write-notes");
      const task = await nextTask(app, known);
      await waitFor(async () => ofTask(await events(app), task).filter((e) => e.type === "assistant:delta").length >= 3, {
        what: "three deltas",
      });
      await click(app, "#cancel");
      const cancelled = await waitResult(app, task);
      assert.equal(cancelled.subtype, "cancelled");
      let all = ofTask(await events(app), task);
      const first = all.filter((e) => e.type === "assistant:delta");
      assert.ok(first.length < 200, `the stream stopped early (${first.length} deltas)`);
      assert.deepEqual(first.map((e) => e.payload.text), first.map((_, i) => `tick${i} `), "deltas in order, none lost");
      await waitFor(() => provider.aborted > aborted, { what: "the provider stream to be closed by the host" });
      assert.equal(await text(app, "#result"), "The task ended: cancelled");

      // Retry (the app's button): a new run (new turnId) of the same task.
      provider.reply({ deltas: ["retried", " run"] });
      await click(app, "#retry");
      const retried = await waitResult(app, task, 2);
      assert.equal(retried.subtype, "success");
      assert.notEqual(retried.turnId, cancelled.turnId, "the retry is a new run");
      all = ofTask(await events(app), task);
      assert.equal(all.filter((e) => e.type === "task:queued").length, 2, "each run is queued");
      const view = await call(app, "lime.agent", "getTask", { taskId: task });
      assert.deepEqual(view.ok.runs.map((r) => r.status), ["cancelled", "succeeded"], JSON.stringify(view));
      assert.equal(view.ok.result.text, "retried run");
      assert.equal(provider.chats.at(-1).body.messages.filter((m) => m.role === "user").length, 1, "same input, fresh run");

      // A provider error (HTTP 400, not retried) ends the third run with error_during_execution.
      provider.reply({ error: { status: 400, message: "stand-in: bad request" } });
      await click(app, "#retry");
      const failed = await waitResult(app, task, 3);
      assert.equal(failed.subtype, "error_during_execution");
      await waitFor(async () => (await text(app, "#result")) === "The task ended: error_during_execution", {
        what: "the app to show the failure",
      });
      const failedView = await call(app, "lime.agent", "getTask", { taskId: task });
      assert.equal(failedView.ok.runs.length, 3);
      assert.equal(failedView.ok.status, "failed");
      await checkEvents(app);
      assert.equal(provider.replies.length, 0);
    },
    ["open", APP, "--entry", "queue"],
  );
});

test("structured output: an invalid answer is retried, the valid one is accepted into the queue; three invalid ones fail", async (t) => {
  await withApp(
    t,
    async (app) => {
      await enterQueue(app, APP);
      const known = new Set();
      const valid = {
        items: [
          { item: "crash on save", label: "bug", priority: "high", summary: "Saving crashes the app" },
          { item: "add dark mode", label: "feature", priority: "low", summary: "A dark theme" },
        ],
      };
      const json = JSON.stringify(valid);
      const invalid = '{"items": [{"item": "crash on save", "label": "urgent"}]}';
      provider.reply(
        { deltas: [invalid.slice(0, 20), invalid.slice(20)], delayMs: 20 },
        { deltas: [json.slice(0, 30), json.slice(30, 90), json.slice(90)], delayMs: 20 },
      );
      await setItems(app, ["crash on save", "add dark mode"]);
      await click(app, "#triage");
      const task = await nextTask(app, known);
      const done = await waitResult(app, task);
      assert.equal(done.subtype, "success");
      assert.deepEqual(done.payload.structuredOutput, valid);
      const all = ofTask(await events(app), task);
      assert.ok(all.some((e) => e.type === "task:progress" && e.subtype === "warning"), "the invalid answer is reported");
      assert.equal(all.filter((e) => e.type === "assistant:delta").map((e) => e.payload.text).join(""), invalid + json);
      const [first, second] = provider.chats.slice(-2).map((c) => c.body);
      assert.ok(first.response_format, "the schema is sent to the provider");
      assert.match(JSON.stringify(first.response_format), /"priority"/, "the package's triage schema");
      assert.match(second.messages.at(-1).content, /not valid/);
      // The app shows the proposal; Accept writes the rows and the artifact.
      await waitFor(() => app.execute("return document.querySelectorAll('#proposal tr').length === 2;"), { what: "the proposal" });
      await click(app, "#accept");
      await waitFor(async () => /^Accepted 2 items; saved triage-.*\.json$/.test(await text(app, "#result")), {
        what: "the accepted triage",
      });
      const rows = await call(app, "lime.storage", "tableQuery", { table: "reviews", limit: 10 });
      assert.deepEqual(rows.ok.rows.map((r) => [r.item, r.label, r.priority, r.task_id]).sort(), [
        ["add dark mode", "feature", "low", task],
        ["crash on save", "bug", "high", task],
      ]);

      // Three invalid answers (maxValidationRetries 2): error_max_structured_output_retries.
      provider.reply({ deltas: ["not json"] }, { deltas: ["{}"] }, { deltas: [invalid] });
      await click(app, "#triage");
      const task2 = await nextTask(app, known);
      const failed = await waitResult(app, task2);
      assert.equal(failed.subtype, "error_max_structured_output_retries");
      await checkEvents(app);
      assert.equal(provider.replies.length, 0);
    },
    ["open", APP, "--entry", "queue"],
  );
});

test("another app can neither read, list, watch, answer nor cancel the task; its owner still can", async (t) => {
  await withApp(
    t,
    async (app) => {
      await enterQueue(app, APP);
      const known = new Set();
      provider.reply(
        { toolCall: { name: "storage_write", arguments: { path: "held.md", content: "held" } } },
        { deltas: ["Done."] },
      );
      await setItems(app, ["hold this"]);
      await click(app, "#write-notes");
      const task = await nextTask(app, known);
      const ask = await waitForEvent(app, (e) => e.taskId === task && e.type === "approval:requested", "approval:requested");
      await checkEvents(app);

      // The peer, in its own frame and origin.
      await openQueue(app, PEER);
      const notFound = { code: "APP_E904", causeCode: "agent.task_not_found" };
      for (const [method, args] of [
        ["getTask", { taskId: task }],
        ["cancelTask", { taskId: task }],
        ["retryTask", { taskId: task }],
        ["getTaskEvents", { taskId: task }],
        ["watchTask", { taskId: task }],
        ["respondAction", { taskId: task, actionId: ask.payload.actionId, decision: "approve" }],
        ["getTask", { taskId: "task-that-does-not-exist" }],
      ]) {
        const r = await call(app, "lime.agent", method, args);
        assert.deepEqual({ code: r.error?.code, causeCode: r.error?.causeCode }, notFound, `${method}: ${JSON.stringify(r)}`);
      }
      const listed = await call(app, "lime.agent", "listTasks", {});
      assert.deepEqual(listed.ok.items, [], "the peer lists none of review-queue's tasks");
      await new Promise((r) => setTimeout(r, 300));
      assert.deepEqual(await events(app), [], "no task event reached the peer");

      // Back in review-queue: the task still waits for its approval, untouched.
      await openQueue(app, APP);
      const view = await call(app, "lime.agent", "getTask", { taskId: task });
      assert.equal(view.ok.status, "waiting_approval", JSON.stringify(view));
      assert.deepEqual(view.ok.pendingActions.map((a) => a.actionId), [ask.payload.actionId]);
      assert.equal(provider.replies.length, 1, "the peer's calls reached no model");
      // The page may resume the task itself (its own watchTask); follow on from the last event
      // this frame has, so nothing arrives twice.
      await new Promise((r) => setTimeout(r, 500));
      const seen = ofTask(await events(app), task).map((e) => e.sequence);
      const watch = await call(app, "lime.agent", "watchTask", { taskId: task, afterSequence: Math.max(ask.sequence, ...seen) });
      assert.equal(watch.ok.watching, true);
      await appCannotApprove(app, task, ask.payload.actionId);
      await approveInHost(app, ask.payload.actionId, /held\.md/);
      const done = await waitResult(app, task);
      assert.equal(done.subtype, "success");
      assert.ok(done.sequence > ask.sequence);
      assert.equal(readFileSync(join(DATA, "apps", APP, "files", "held.md"), "utf8"), "held");
      assert.equal(existsSync(join(DATA, "apps", PEER, "files", "held.md")), false);
      await checkEvents(app);
      assert.equal(provider.replies.length, 0);
    },
    ["open", APP, "--entry", "queue"],
  );
});

test("a remounted frame resumes the task's events from a sequence number: no loss, no duplicate", async (t) => {
  await withApp(
    t,
    async (app) => {
      await enterQueue(app, APP);
      const known = new Set();
      const words = Array.from({ length: 60 }, (_, i) => `d${i} `);
      provider.reply({ deltas: words, delayMs: 40 });
      await setItems(app, ["a long stream"]);
      await click(app, "#write-notes");
      const task = await nextTask(app, known);
      const before = await waitFor(
        async () => {
          const d = ofTask(await events(app), task).filter((e) => e.type === "assistant:delta");
          return d.length >= 10 ? d : null;
        },
        { what: "ten deltas" },
      );
      await checkEvents(app);
      // Resume from the 5th delta: events after it were already seen here and must come again
      // exactly once in the new frame. The page's own resume (a watchTask from the last event it
      // remembered in sessionStorage) is switched off for this, or its watch and this one would
      // both deliver (the SDK deduplicates by sequence; this asserts one watch's stream).
      const from = before[4].sequence;
      await app.execute(`Storage.prototype.setItem = function () {}; sessionStorage.removeItem("review-queue.task");`);
      await openQueue(app, APP);
      const watch = await call(app, "lime.agent", "watchTask", { taskId: task, afterSequence: from });
      assert.equal(watch.ok.watching, true, JSON.stringify(watch));
      await waitResult(app, task);
      const got = ofTask(await events(app), task);
      const page = await call(app, "lime.agent", "getTaskEvents", { taskId: task, afterSequence: from, limit: 1000 });
      assert.deepEqual(got.map((e) => e.sequence), page.ok.events.map((e) => e.sequence), "the live resume equals the log after the sequence");
      assert.ok(got[0].sequence > from);
      const text = before.slice(0, 5).map((e) => e.payload.text).join("") +
        got.filter((e) => e.type === "assistant:delta").map((e) => e.payload.text).join("");
      assert.equal(text, words.join(""), "every delta once, in order, across the remount");
      await checkEvents(app);
      assert.equal(provider.replies.length, 0);
    },
    ["open", APP, "--entry", "queue"],
  );
});

test("every task event the frames received validated against the schema", () => {
  assert.ok(validated >= 40, `validated ${validated} events`);
});
