// Task activity's pure functions (src/tasks.ts) and its views: events grouped by run, streamed
// text, tool calls, artifacts and evidence, approval counts for the tab badges, the approval with
// its tool input and the stable data-testids.
import assert from "node:assert/strict";
import { test } from "node:test";

import { h } from "preact";
import { renderToString } from "preact-render-to-string";

import {
  approvalLabel,
  argsText,
  approvalsByApp,
  inputText,
  isActive,
  MAX_KEPT_EVENTS,
  mergeEvents,
  runActivity,
  shortTime,
  statusText,
  taskRefs,
} from "../build/test/tasks.js";
import { ApprovalPromptView, TabStrip, TaskDetailView, TaskList, promptItems } from "../build/test/ui/testing.js";

const ev = (sequence, type, extra = {}) => ({ sequence, type, turnId: "turn_1", at: "2026-11-23T00:00:00Z", ...extra });

function task(extra = {}) {
  return {
    taskId: "task_1",
    appId: "review-queue",
    traceId: "tr",
    sessionId: "s",
    createdAt: "2026-11-23T00:00:00Z",
    status: "waiting_approval",
    inputPreview: "triage <b>these</b>",
    runs: [{ run: 1, turnId: "turn_1", status: "waiting_approval", errorCode: null }],
    pendingActions: [
      { actionId: "act_1", toolName: "storage_write", input: { path: "triage.txt", content: "<script>x</script>" }, prompt: null, actionType: "tool_confirmation" },
    ],
    pendingApprovals: 1,
    result: null,
    ...extra,
  };
}

test("events are grouped by run: streamed text in order, tool calls, the result's subtype", () => {
  const events = [
    ev(1, "system:init", { turnId: undefined }),
    ev(2, "assistant:delta", { payload: { text: "Tri" } }),
    ev(3, "assistant:delta", { payload: { text: "aged" } }),
    ev(4, "tool:call", { subtype: "started", payload: { toolCallId: "c1", toolName: "storage_write" } }),
    ev(5, "tool:call", { subtype: "args", payload: { toolCallId: "c1", arguments: { path: "a" } } }),
    ev(6, "tool:call", { subtype: "result", payload: { toolCallId: "c1", outputPreview: "wrote 3 bytes" } }),
    ev(7, "result", { subtype: "success" }),
    ev(8, "assistant:delta", { turnId: "turn_2", payload: { text: "again" } }),
    ev(9, "result", { turnId: "turn_2", subtype: "cancelled" }),
  ];
  const runs = runActivity(events);
  assert.equal(runs.length, 2);
  assert.equal(runs[0].text, "Triaged");
  assert.deepEqual(runs[0].tools, [{ id: "c1", name: "storage_write", args: '{"path":"a"}', status: "done", output: "wrote 3 bytes" }]);
  assert.deepEqual(runs[0].result, { subtype: "success", sequence: 7 });
  assert.equal(runs[1].text, "again");
  assert.equal(runs[1].result.subtype, "cancelled");
});

test("tool arguments kept behind a reference show their preview and size, not the reference", () => {
  const ref = { $argsRef: `sha256:${"0".repeat(64)}`, size: 1048576, preview: '{"path":"a","content":"xxx' };
  const runs = runActivity([ev(5, "tool:call", { subtype: "args", payload: { toolCallId: "c1", arguments: ref } })]);
  assert.equal(runs[0].tools[0].args, '{"path":"a","content":"xxx… (1048576 bytes)');
  assert.equal(argsText({ path: "a" }), '{"path":"a"}');
  assert.equal(argsText({ $argsRef: 7 }), '{"$argsRef":7}', "not a reference: shown as is");
});

test("merging pages keeps order, drops duplicates and is bounded", () => {
  const a = mergeEvents([], [ev(3, "x"), ev(1, "x")]);
  assert.deepEqual(a.map((e) => e.sequence), [1, 3]);
  const b = mergeEvents(a, [ev(2, "x"), ev(3, "x"), ev(5, "x")]);
  assert.deepEqual(b.map((e) => e.sequence), [1, 3, 5], "an event at or before the last seen is not added again");
  const many = Array.from({ length: MAX_KEPT_EVENTS + 10 }, (_, i) => ev(i + 1, "x"));
  const c = mergeEvents([], many);
  assert.equal(c.length, MAX_KEPT_EVENTS);
  assert.equal(c[c.length - 1].sequence, MAX_KEPT_EVENTS + 10);
});

test("artifacts and evidence are listed once each, with their refs", () => {
  const refs = taskRefs([
    ev(1, "artifact:created", { payload: { artifactId: "art_1", title: "triage.json", kind: "triage" }, refs: ["artifact://art_1"] }),
    ev(2, "artifact:created", { payload: { artifactId: "art_1", title: "triage.json" }, refs: ["artifact://art_1"] }),
    ev(3, "evidence:recorded", { payload: { evidenceId: "ev_1" }, refs: ["pack://ev_1"] }),
    ev(4, "assistant:delta", { payload: { text: "x" } }),
  ]);
  assert.deepEqual(refs, [
    { kind: "artifact", id: "art_1", refs: ["artifact://art_1"], title: "triage.json", type: "triage" },
    { kind: "evidence", id: "ev_1", refs: ["pack://ev_1"], title: null, type: null },
  ]);
});

test("approval counts per app for the tab badges, and their accessible labels", () => {
  const counts = approvalsByApp([
    task(),
    task({ taskId: "task_2", pendingApprovals: 2 }),
    task({ taskId: "task_3", appId: "other", pendingApprovals: 0, pendingActions: [] }),
  ]);
  assert.deepEqual([...counts], [["review-queue", 3]]);
  assert.equal(approvalLabel(1), "1 approval waiting");
  assert.equal(approvalLabel(3), "3 approvals waiting");
});

test("statuses and inputs as the page shows them", () => {
  assert.equal(statusText("waiting_approval"), "Waiting for approval");
  assert.equal(statusText("succeeded"), "Succeeded");
  assert.ok(isActive("running") && isActive("waiting_approval") && isActive("queued"));
  assert.ok(!isActive("succeeded") && !isActive("cancelled") && !isActive("failed"));
  assert.equal(inputText({ a: 1 }), '{\n  "a": 1\n}');
  assert.equal(inputText("x".repeat(10), 4), "xxxx…");
  assert.equal(inputText('{"a":1}'), '{\n  "a": 1\n}', "JSON text is shown pretty");
  assert.equal(inputText("{not json"), "{not json");
  assert.equal(shortTime("2026-11-23T21:59:53.186Z"), "2026-11-23 21:59:53");
  assert.equal(shortTime("later"), "later");
});

test("the task detail shows the approval with its tool input, as text, and the actions", () => {
  const html = renderToString(
    h(TaskDetailView, {
      task: task(),
      events: [ev(2, "assistant:delta", { payload: { text: "Saving <i>now</i>" } })],
      busy: false,
      error: null,
      respond: () => undefined,
      cancel: () => undefined,
      retry: () => undefined,
    }),
  );
  for (const id of ["task-detail", "task-status", "task-approval", "task-approval-input", "task-approve", "task-reject", "task-cancel", "task-retry", "task-text"]) {
    assert.ok(html.includes(`data-testid="${id}"`), id);
  }
  assert.ok(html.includes("storage_write"));
  assert.ok(html.includes("triage.txt"));
  assert.ok(!html.includes("<script>") && html.includes("&lt;script>"), "tool input is text, never markup");
  assert.ok(!html.includes("<i>now</i>"), "streamed text is text");
  // An active task can be cancelled, not retried.
  assert.match(html, /<button[^>]*disabled[^>]*data-testid="task-retry"/);
  assert.doesNotMatch(html, /<button[^>]*disabled[^>]*data-testid="task-cancel"/);
});

test("the task list and the tab badge", () => {
  const html = renderToString(h(TaskList, { tasks: [task()], selected: "task_1", showApp: true, select: () => undefined }));
  assert.ok(html.includes('data-testid="task-row"') && html.includes('data-task-id="task_1"'));
  assert.ok(html.includes('data-testid="task-row-approvals"'));
  assert.ok(!html.includes("<b>these</b>"));
  const empty = renderToString(h(TaskList, { tasks: [], selected: null, showApp: true, select: () => undefined }));
  assert.ok(empty.includes("No agent task yet"));
  const strip = renderToString(
    h(TabStrip, {
      shown: true,
      state: { tabs: [{ appId: "review-queue", entryKey: "queue", kind: "page", title: "Review queue" }], active: "review-queue/queue" },
      status: () => ({ mounted: true, prompts: 0, approvals: 1, error: null }),
      select: () => undefined,
      close: () => undefined,
    }),
  );
  assert.ok(strip.includes('data-testid="tab-approvals"'));
  assert.ok(strip.includes("1 approval waiting"));
});

test("the host-drawn approval prompt: the tool, its input as text, Approve and Reject; nothing when none waits", () => {
  const older = task({ taskId: "task_0", createdAt: "2026-11-22T00:00:00Z", pendingActions: [{ actionId: "act_0", toolName: "storage_write", input: {}, prompt: null, actionType: "tool_confirmation" }] });
  const items = promptItems([task(), older]);
  assert.deepEqual(
    items.map((i) => [i.taskId, i.action.actionId]),
    [["task_0", "act_0"], ["task_1", "act_1"]],
    "oldest task first",
  );
  const answered = [];
  const html = renderToString(
    h(ApprovalPromptView, { appTitle: "Review <i>queue</i>", items, busy: false, error: null, respond: (i, d) => answered.push([i.action.actionId, d]) }),
  );
  assert.ok(html.includes('data-testid="approval-prompt"'));
  assert.equal((html.match(/data-testid="approval-prompt-item"/g) ?? []).length, 2);
  assert.ok(html.includes('data-action-id="act_1"') && html.includes('data-task-id="task_1"'));
  assert.ok(html.includes('data-testid="approval-prompt-approve"') && html.includes('data-testid="approval-prompt-reject"'));
  assert.ok(html.includes("storage_write") && html.includes("triage.txt"));
  assert.ok(!html.includes("<script>") && !html.includes("<i>queue</i>"), "tool input and app title are text, never markup");
  assert.match(html, /AppHost asks, not the app/);
  assert.equal(renderToString(h(ApprovalPromptView, { appTitle: "x", items: [], busy: false, error: null, respond: () => undefined })), "");
});

test("token usage: per task with its budget, and per app over the listed tasks", async () => {
  const { AppUsage, TaskUsageLine, tokensText, usageByApp } = await import("../build/test/ui/testing.js");
  const a = task({ taskId: "t1", appId: "b-app", usage: { inputTokens: 10, outputTokens: 5, totalTokens: 15 }, budget: { maxTokens: 100 } });
  const b = task({ taskId: "t2", appId: "a-app", usage: { inputTokens: 1000, outputTokens: 234, totalTokens: 1234 }, budget: { maxTokens: null } });
  const c = task({ taskId: "t3", appId: "b-app" });
  assert.deepEqual(usageByApp([a, b, c]), [
    { appId: "a-app", tokens: 1234, tasks: 1 },
    { appId: "b-app", tokens: 15, tasks: 2 },
  ]);
  assert.equal(tokensText(1234), "1,234 tokens");
  assert.equal(tokensText(15, 100), "15 / 100 tokens");
  const page = renderToString(h(AppUsage, { tasks: [a, b, c] }));
  assert.match(page, /data-testid="tasks-usage-app" data-app-id="a-app" data-tokens="1234"/);
  const line = renderToString(h(TaskUsageLine, { task: a }));
  assert.match(line, /data-testid="task-usage"/);
  assert.match(line, /15 \/ 100 tokens/);
  assert.match(renderToString(h(TaskList, { tasks: [a], selected: null, showApp: true, select: () => {} })), /data-testid="task-row-usage">15 tokens/);
});
