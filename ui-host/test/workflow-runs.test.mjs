// The workflow runs of the Tasks page (src/views/workflow-runs.tsx): the run list, the step
// timeline with timings, attempts and errors, the pending review drawn by the host (its data as
// text, Approve / Reject / Edit), input and decision panels, evidence, missed schedules.
import assert from "node:assert/strict";
import { test } from "node:test";

import { h } from "preact";
import { renderToString } from "preact-render-to-string";

import { MAX_EVIDENCE_LOOKS, PendingPanel, RunDetailView, RunList, Schedules, duration, evidenceLooks } from "../build/test/ui/testing.js";

const run = (extra = {}) => ({
  runId: "run_1",
  appId: "reply-workflow",
  workflow: "draft-review-publish",
  status: "waiting",
  waiting: "review",
  dueAt: null,
  finished: false,
  steps: 2,
  startedAt: "2026-11-26T07:00:00Z",
  ...extra,
});

const step = (state, status, extra = {}) => ({
  key: `wf:run_1:${state}:1:1`,
  state,
  kind: "agent-task",
  what: "step",
  capability: "lime.agent",
  method: "startTask",
  visit: 1,
  attempt: 1,
  startedAt: "2026-11-26T07:00:00Z",
  endedAt: "2026-11-26T07:00:01.500Z",
  status,
  error: null,
  output: '"Dear <b>cats</b>"',
  ...extra,
});

const review = { kind: "review", key: "wf:run_1:review:1:1", state: "review", prompt: "Approve this reply?", show: { draft: "<script>x</script>" }, showTruncated: null, schema: null, dueAt: null };

function detail(extra = {}) {
  return {
    run: run(),
    input: '{"topic":"cats"}',
    outputs: {},
    result: null,
    error: null,
    pending: review,
    timeline: { startedAt: "2026-11-26T07:00:00Z", endedAt: null, retries: 1, steps: [step("draft", "succeeded"), step("draft", "failed", { key: "wf:run_1:draft:1:2", attempt: 2, error: { code: "agent.task_failed", message: "boom" } })] },
    evidence: null,
    ...extra,
  };
}

test("durations read as ms or seconds, unknown ones as nothing", () => {
  assert.equal(duration("2026-11-26T07:00:00Z", "2026-11-26T07:00:00.250Z"), "250 ms");
  assert.equal(duration("2026-11-26T07:00:00Z", "2026-11-26T07:00:01.500Z"), "1.5 s");
  assert.equal(duration("2026-11-26T07:00:00Z", null), "");
  assert.equal(duration("x", "y"), "");
});

test("the run list shows status, app and what a run waits for", () => {
  const html = renderToString(h(RunList, { runs: [run()], selected: "run_1", showApp: true, select() {} }));
  assert.match(html, /data-testid="run-row"/);
  assert.match(html, /data-status="waiting"/);
  assert.match(html, /reply-workflow/);
  assert.match(html, />review</);
  assert.match(renderToString(h(RunList, { runs: [], selected: null, showApp: true, select() {} })), /No workflow run yet/);
});

test("the detail draws the timeline, the review with its data as text, and no evidence yet", () => {
  const html = renderToString(h(RunDetailView, { detail: detail(), busy: false, error: null, respond() {}, cancel() {} }));
  assert.match(html, /data-testid="run-timeline"/);
  assert.equal((html.match(/data-testid="run-step"/g) ?? []).length, 2);
  assert.match(html, /1.5 s/);
  assert.match(html, /attempt 2/);
  assert.match(html, /agent.task_failed: boom/);
  assert.match(html, /1 retries/);
  assert.match(html, /Approve this reply\?/);
  assert.match(html, /data-testid="run-approve"/);
  assert.match(html, /data-testid="run-reject"/);
  assert.match(html, /data-testid="run-edit"/);
  // Package and step text is text, never markup.
  assert.doesNotMatch(html, /<script>/);
  assert.doesNotMatch(html, /<b>cats/);
  assert.doesNotMatch(html, /run-evidence/);
});

test("an ended run shows its result and evidence; input and decision panels have their actions", () => {
  const done = detail({ run: run({ status: "succeeded", waiting: null, finished: true }), pending: null, result: '{"approved":true}', evidence: { id: "evidence_1" } });
  const html = renderToString(h(RunDetailView, { detail: done, busy: false, error: null, respond() {}, cancel() {} }));
  assert.match(html, /data-testid="run-result"/);
  assert.match(html, /data-evidence-id="evidence_1"/);
  assert.match(html, /disabled data-testid="run-cancel"/);
  const input = renderToString(h(PendingPanel, { pending: { ...review, kind: "input", show: null, schema: { type: "object" } }, busy: false, respond() {} }));
  assert.match(input, /data-testid="run-edit-json"/);
  assert.match(input, /data-testid="run-submit-input"/);
  assert.match(input, /JSON Schema/);
  const decision = renderToString(h(PendingPanel, { pending: { ...review, kind: "decision", show: null }, busy: false, respond() {} }));
  assert.match(decision, /data-testid="run-retry"/);
  assert.match(decision, /data-testid="run-stop"/);
});

test("missed schedule slots are shown", () => {
  const html = renderToString(
    h(Schedules, {
      schedules: [
        { app: "a", entry: "tick", workflow: "w", everySecs: 900, nextDue: "2026-11-26T08:00:00Z", lastStarted: null, missedTotal: 3, lastMissed: { app: "a", entry: "tick", missed: 3, first: "2026-11-26T06:00:00Z", noticedAt: "2026-11-26T07:00:00Z" } },
      ],
    }),
  );
  assert.match(html, /every 15 min/);
  assert.match(html, /3 missed while AppHost was not running/);
  assert.equal(renderToString(h(Schedules, { schedules: [] })), "");
});

test("an ended run's evidence is looked for per load, up to MAX_EVIDENCE_LOOKS loads, however often the page renders", () => {
  const ended = detail({ run: run({ status: "succeeded", finished: true }), pending: null });
  let looks = 0;
  for (let i = 0; i < MAX_EVIDENCE_LOOKS; i++) looks = evidenceLooks(looks, ended);
  assert.equal(looks, MAX_EVIDENCE_LOOKS, "each load without evidence counts once");
  assert.equal(evidenceLooks(looks, detail({ run: run({ status: "succeeded", finished: true }), pending: null, evidence: { id: "evidence_1" } })), 0, "found: no more looking");
  assert.equal(evidenceLooks(7, detail()), 0, "a running run is not looking for evidence");
});
