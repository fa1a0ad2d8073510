// Unit tests of app/ui/run.js on the SDK's mock runtime (app/ui/sdk/mock.js): the workflow's
// states as the mock runs them (no expressions: values as JS), the user's review answered by
// the mock user, no host, no browser, no model, no npm install. Run: npm test (node --test).
import assert from "node:assert/strict";
import { test } from "node:test";

import { createMockLimeRuntime } from "../app/ui/sdk/index.js";
import { draftAndReview, errorLabel, LATEST_KEY, latestDraft, outcome, progressLabel, WORKFLOW } from "../app/ui/run.js";

/** The draft `save` and `publish` keep: the reviewer's edit of `draft`, else the agent's. */
const kept = ({ review, draft }) =>
  review.data !== null && typeof review.data === "object" && !Array.isArray(review.data) && "draft" in review.data ? review.data.draft : draft;

/** app/APP.md's workflow, for the mock. */
const DRAFT_REVIEW_PUBLISH = {
  states: [
    { key: "start", kind: "start", next: "draft" },
    { key: "draft", kind: "agent-task", output: "draft", returns: ({ input }) => `A draft about ${input.topic}`, next: "review" },
    { key: "review", kind: "human-review", prompt: "Publish this draft?", show: ({ input, outputs }) => ({ topic: input.topic, draft: outputs.draft }), output: "review", next: "decide" },
    { key: "decide", kind: "branch", choose: ({ outputs }) => (outputs.review.decision === "approved" ? "save" : "discarded") },
    { key: "save", kind: "storage-write", returns: true, next: "publish" },
    { key: "publish", kind: "artifact-create", output: "artifact", returns: { artifactId: "artifact_1" }, next: "done" },
    { key: "done", kind: "end", result: ({ outputs }) => ({ approved: true, draft: kept(outputs) }) },
    { key: "discarded", kind: "end", result: { approved: false } },
  ],
};

const runtime = (workflowUser) =>
  createMockLimeRuntime({ appId: "{{name}}", entryKey: "main", workflows: { [WORKFLOW]: DRAFT_REVIEW_PUBLISH }, workflowUser });

test("an approved draft runs to the end and the page follows its progress", async () => {
  const lime = runtime(() => "approve");
  const seen = [];
  const runs = [];
  const view = await draftAndReview(lime, "  owls  ", { onProgress: (l) => seen.push(l), onRun: (id) => runs.push(id) });
  assert.equal(view.status, "succeeded");
  assert.deepEqual(view.state.status.result, { approved: true, draft: "A draft about owls" });
  assert.equal(outcome(view), "Approved: saved and published.");
  assert.equal(runs.length, 1);
  assert.equal(seen[0], "Started");
  assert.ok(seen.includes("Waiting for your review in AppHost (Tasks page)"), seen.join(" | "));
  assert.equal(seen.at(-1), "Finished");
  lime.close();
});

test("an edited draft is the one kept", async () => {
  const lime = runtime(({ show }) => ({ approved: true, data: { ...show, draft: "An edited draft" } }));
  const view = await draftAndReview(lime, "owls");
  assert.deepEqual(view.state.status.result, { approved: true, draft: "An edited draft" });
  assert.deepEqual(view.state.outputs.review, { decision: "approved", data: { topic: "owls", draft: "An edited draft" } });
  lime.close();
});

test("a rejected draft takes the other branch", async () => {
  const lime = runtime(() => "reject");
  const view = await draftAndReview(lime, "bees");
  assert.equal(view.status, "succeeded");
  assert.equal(outcome(view), "Not approved: nothing was saved.");
  lime.close();
});

test("the page cannot approve its own review", async () => {
  const lime = runtime(undefined); // the user has not answered (yet)
  const run = await lime.workflow.start({ workflow: WORKFLOW, input: { topic: "cats" } });
  for await (const e of run.events()) if (e.payload.workflowFact === "review_requested") break;
  const error = await lime.workflow.respond({ runId: run.runId, input: { approved: true } }).then(
    () => assert.fail("an app must not answer its review"),
    (e) => e,
  );
  assert.equal(error.causeCode, "workflow.answer_not_by_user");
  assert.match(errorLabel(error), /workflow.answer_not_by_user/);
  assert.equal((await run.get()).waiting.type, "review");
  lime.close();
});

test("a blank topic starts nothing; no draft is kept before the first approval", async () => {
  const lime = runtime(() => "approve");
  await assert.rejects(draftAndReview(lime, "   "), /Type a topic/);
  assert.equal((await lime.workflow.list()).runs.length, 0);
  assert.equal(await latestDraft(lime.storage), "");
  await lime.storage.set(LATEST_KEY, "kept");
  assert.equal(await latestDraft(lime.storage), "kept");
  assert.equal(progressLabel({ payload: { workflowFact: "timer_fired" } }), "");
  lime.close();
});
