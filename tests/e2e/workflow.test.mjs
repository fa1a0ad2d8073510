// Desktop phase 6: apps' workflow runs in the real window (issue 20 §3/§4). This file makes the
// workflow sample with `apphost new --template workflow` (agent task → human review → branch →
// storage write → artifact) and a copy with a second workflow (a `user-input` with a schema, then
// a 20 s `wait`), installs both, and points the model at a stand-in OpenAI-compatible provider
// (lib/stand-in-openai.mjs). Runs start FROM THE APP'S FRAME (`lime.workflow.start`: the
// sample's own button, through its vendored SDK, or a raw bridge call); the user answers on the
// Tasks page the host draws: Edit + Approve (the edited draft is saved and published, and the
// frame sees the end event and the edited value), Reject (the other branch), a wrongly shaped
// input refused in the host's form; the frame's own answer to its review is refused
// (`workflow.answer_not_by_user`); the `wait` survives closing and reopening the window.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, beforeEach, test } from "node:test";

import { APPHOST_BIN, withApp } from "./lib/harness.mjs";
import { StandInProvider } from "./lib/stand-in-openai.mjs";
import { call } from "./lib/tasks.mjs";
import { waitFor } from "./lib/webdriver.mjs";
import { makeSampleApps } from "./lib/workflow-apps.mjs";
import {
  PAUSE,
  PAUSE_MS,
  PAUSE_WORKFLOW,
  SAMPLE,
  cliJson,
  enterFrame,
  openRun,
  runEvents,
  showPage,
  textOf,
  typeInto,
  waitForStatus,
  waitIn,
} from "./lib/workflow.mjs";

const DATA = process.env.APPHOST_DATA_DIR ?? "";
const provider = new StandInProvider({ model: "stand-in" });
const work = mkdtempSync(join(tmpdir(), "apphost-e2e-workflow-"));

before(async () => {
  const base = await provider.start();
  const { sample, pause } = makeSampleApps(work, APPHOST_BIN);
  for (const pkg of [sample, pause]) {
    execFileSync(APPHOST_BIN, ["install", "--yes", "--sideload", pkg], { encoding: "utf8", timeout: 120_000 });
  }
  // (An earlier phase may have set its own stand-in, since stopped: this one replaces it.)
  execFileSync(APPHOST_BIN, ["model", "set", "--base-url", base, "--model", "stand-in", "--no-api-key"], { timeout: 60_000 });
  for (const app of [SAMPLE, PAUSE]) {
    const r = cliJson("readiness", app);
    assert.equal(r.status, "ready", `${app}: ${JSON.stringify(r)}`);
  }
});

beforeEach(() => {
  provider.replies.length = 0;
});

after(async () => {
  await provider.stop();
  rmSync(work, { recursive: true, force: true });
});

const click = (session, css) => session.execute("document.querySelector(arguments[0]).click();", [css]);

/** Starts a run with the sample page's own form (its SDK calls lime.workflow.start); its id. */
async function startFromPage(session, topic) {
  await typeInto(session, "#topic", topic);
  await waitFor(async () => (await session.execute("return document.getElementById('run').disabled;")) === false, { what: "the Draft button" });
  await click(session, "#run");
  const status = await waitFor(async () => /^Run (run_\w+) started$/.exec(await textOf(session, "#run-status")), {
    timeoutMs: 20_000,
    what: "the page's 'Run … started'",
  });
  return status[1];
}

/** Waits until the frame received the run fact `fact` (payload.workflowFact). */
function waitForFact(session, runId, fact, timeoutMs = 30_000) {
  return waitFor(async () => (await runEvents(session, runId)).find((e) => e.payload?.workflowFact === fact), {
    timeoutMs,
    what: `the frame's ${fact} event of ${runId}`,
  });
}

/** Every event of the run the frame received: sequences 1..n without gap or repeat. */
async function checkSequences(session, runId) {
  const events = await runEvents(session, runId);
  assert.deepEqual(
    events.map((e) => e.sequence),
    events.map((_, i) => i + 1),
    `gap-free sequences: ${events.map((e) => `${e.sequence}:${e.payload?.workflowFact}`).join(" ")}`,
  );
  return events;
}

/** The sample's artifacts (`apphost artifacts`) with the content of each (its blob on disk). */
function artifacts(app) {
  return cliJson("artifacts", app).artifacts.map((a) => ({
    ...a,
    content: JSON.parse(readFileSync(join(DATA, "apps", app, "artifact-blobs", a.sha256.replace(/^sha256:/, "")), "utf8")),
  }));
}

test("a run started in the sample's frame: its review refused to the app, edited and approved on the Tasks page; the frame sees the end, the edited draft in storage and the artifact", async (t) => {
  await withApp(
    t,
    async (app) => {
      await enterFrame(app, SAMPLE, "main");
      assert.equal(await textOf(app, "#latest"), "–", "no draft kept yet");
      provider.reply({ deltas: ["Dear ", "owls"] });
      const runId = await startFromPage(app, "owls");
      await waitForFact(app, runId, "review_requested");
      await waitFor(async () => (await textOf(app, "#progress")).includes("Waiting for your review in AppHost (Tasks page)"), {
        what: "the page's waiting line",
      });

      // The app cannot answer its own review, with or without data: refused, nothing changes.
      const before = await call(app, "lime.workflow", "get", { runId });
      assert.equal(before.ok.run.waiting.type, "review", JSON.stringify(before));
      assert.deepEqual(before.ok.run.waiting.show, { topic: "owls", draft: "Dear owls" });
      for (const args of [
        { runId, decision: "approve" },
        { runId, decision: "approve", input: { topic: "owls", draft: "the app's own draft" } },
        { runId, input: { approved: true } },
      ]) {
        const r = await call(app, "lime.workflow", "respond", args);
        assert.deepEqual({ code: r.error?.code, causeCode: r.error?.causeCode }, { code: "APP_E002", causeCode: "workflow.answer_not_by_user" }, JSON.stringify(r));
        assert.match(JSON.stringify(r.error?.details), /Tasks page/);
      }
      const still = await call(app, "lime.workflow", "get", { runId });
      assert.deepEqual(still.ok.run, before.ok.run, "the refused answers changed nothing");
      assert.equal((await runEvents(app, runId)).some((e) => e.payload?.workflowFact === "review_answered"), false);

      // The user, on the Tasks page the host draws (the frame stays mounted meanwhile).
      const detail = await openRun(app, runId);
      const pending = `${detail} [data-testid="run-pending"][data-kind="review"]`;
      await app.waitForElement(pending, 20_000);
      assert.match(await textOf(app, `${pending} [data-testid="run-pending-prompt"]`), /Publish this draft\?/);
      assert.match(await textOf(app, `${pending} [data-testid="run-review-show"]`), /Dear owls/);
      assert.equal(await app.attribute(await app.find(`${detail} [data-testid="run-step"][data-state="draft"]`), "data-status"), "succeeded");
      await app.click(await app.find(`${pending} [data-testid="run-edit"]`));
      const edited = "Dear owls, edited by a person";
      await typeInto(app, `${pending} [data-testid="run-edit-json"]`, JSON.stringify({ topic: "owls", draft: edited }));
      await app.click(await app.find(`${pending} [data-testid="run-approve-edited"]`));
      await waitForStatus(app, detail, "succeeded");
      assert.equal(await app.attribute(await app.find(`${detail} [data-testid="run-step"][data-state="review"]`), "data-status"), "approved");
      for (const state of ["save", "publish"]) {
        assert.notEqual(await app.find(`${detail} [data-testid="run-step"][data-state="${state}"]`), null, state);
      }
      assert.match(await textOf(app, `${detail} [data-testid="run-result"]`), new RegExp(`"draft":"${edited}"`));
      await waitIn(app, detail, '[data-testid="run-evidence"]', 15_000);

      // Back in the frame: the page saw the end and reads the edited draft from its storage.
      await showPage(app, "#/running");
      await enterFrame(app, SAMPLE, "main");
      await waitFor(async () => (await textOf(app, "#run-status")) === "The run ended: succeeded", { what: "the page's end line" });
      assert.equal(await textOf(app, "#result"), "Approved: saved and published.");
      await waitFor(async () => (await textOf(app, "#latest")) === edited, { what: "the edited draft on the page" });
      const events = await checkSequences(app, runId);
      const last = events.at(-1);
      assert.equal(last.type, "job.completed", JSON.stringify(last));
      assert.ok(events.some((e) => e.payload.workflowFact === "review_answered"));
      const kept = await call(app, "lime.storage", "get", { key: "latestDraft" });
      assert.equal(kept.ok?.value ?? kept.ok, edited, JSON.stringify(kept));
      const view = await call(app, "lime.workflow", "get", { runId });
      assert.equal(view.ok.run.status, "succeeded");
      assert.deepEqual(view.ok.run.state.status.result, { approved: true, draft: edited });
      assert.deepEqual(view.ok.run.state.outputs.review, { decision: "approved", data: { topic: "owls", draft: edited } });
      const artifactId = view.ok.run.state.outputs.artifact?.id ?? view.ok.run.state.outputs.artifact?.artifactId;
      assert.match(String(artifactId), /^artifact_/, JSON.stringify(view.ok.run.state.outputs.artifact));

      // The artifact the run published holds the edited draft, made by the workflow entry.
      const made = artifacts(SAMPLE);
      assert.equal(made.length, 1, JSON.stringify(made));
      assert.equal(made[0].id, artifactId);
      assert.equal(made[0].name, "Draft: owls");
      assert.deepEqual(made[0].content, { text: edited });
      assert.equal(made[0].provenance.entryKey, "draft");
      assert.equal(provider.chats.length, 1, "one agent step, one model request");
    },
    ["open", SAMPLE, "--entry", "main"],
  );
});

test("a second run from the frame is rejected on the Tasks page and takes the other branch", async (t) => {
  await withApp(
    t,
    async (app) => {
      await enterFrame(app, SAMPLE, "main");
      const latest = await textOf(app, "#latest");
      const c0 = provider.chats.length;
      provider.reply({ deltas: ["Dear ", "bees"] });
      const runId = await startFromPage(app, "bees");
      await waitForFact(app, runId, "review_requested");
      const detail = await openRun(app, runId);
      const pending = `${detail} [data-testid="run-pending"][data-kind="review"]`;
      await app.waitForElement(pending, 20_000);
      assert.match(await textOf(app, `${pending} [data-testid="run-review-show"]`), /Dear bees/);
      await app.click(await app.find(`${pending} [data-testid="run-reject"]`));
      await waitForStatus(app, detail, "succeeded");
      assert.equal(await app.attribute(await app.find(`${detail} [data-testid="run-step"][data-state="review"]`), "data-status"), "rejected");
      assert.equal(await app.find(`${detail} [data-testid="run-step"][data-state="save"]`), null, "nothing saved");
      assert.equal(await app.find(`${detail} [data-testid="run-step"][data-state="publish"]`), null, "nothing published");
      assert.match(await textOf(app, `${detail} [data-testid="run-result"]`), /"approved":false/);

      await showPage(app, "#/running");
      await enterFrame(app, SAMPLE, "main");
      await waitFor(async () => (await textOf(app, "#run-status")) === "The run ended: succeeded", { what: "the page's end line" });
      assert.equal(await textOf(app, "#result"), "Not approved: nothing was saved.");
      assert.equal(await textOf(app, "#latest"), latest, "the kept draft is unchanged");
      const events = await checkSequences(app, runId);
      assert.equal(events.at(-1).type, "job.completed");
      assert.equal(artifacts(SAMPLE).length, 1, "no new artifact");
      assert.equal(provider.chats.length, c0 + 1);
    },
    ["open", SAMPLE, "--entry", "main"],
  );
});

test("a wrongly shaped input is refused in the host's form; the run's wait survives closing and reopening the window", async (t) => {
  let runId = "";
  let dueAt = "";
  await withApp(
    t,
    async (app) => {
      await enterFrame(app, PAUSE, "main");
      const started = await call(app, "lime.workflow", "start", { workflow: PAUSE_WORKFLOW, input: {} });
      assert.equal(typeof started.ok?.runId, "string", JSON.stringify(started));
      runId = started.ok.runId;
      await waitForFact(app, runId, "input_requested");

      const detail = await openRun(app, runId);
      const pending = `${detail} [data-testid="run-pending"][data-kind="input"]`;
      await app.waitForElement(pending, 20_000);
      assert.match(await textOf(app, `${pending} [data-testid="run-pending-prompt"]`), /How many copies\?/);
      const submit = async (text) => {
        await typeInto(app, `${pending} [data-testid="run-edit-json"]`, text);
        await app.click(await app.find(`${pending} [data-testid="run-submit-input"]`));
      };
      // Not JSON: the form says so and sends nothing.
      await submit("{copies: three");
      await waitFor(async () => (await textOf(app, `${pending} [role="alert"]`)) === "This is not valid JSON.", { what: "the form's JSON notice" });
      // JSON of the wrong shape: the host refuses each with its stable code and says what is
      // wrong (each message differs from the last); the run still asks.
      const error = `${detail} [data-testid="run-error"]`;
      let said = "";
      for (const wrong of ['{"copies": "three"}', '{"copies": 0}', '{"copies": 2, "extra": true}', "[]"]) {
        await submit(wrong);
        said = await waitFor(
          async () => {
            const now = await textOf(app, `${error} .error-message`);
            return now !== "" && now !== said ? now : null;
          },
          { what: `the refusal of ${wrong}` },
        );
        assert.equal(await app.attribute(await app.find(error), "data-code"), "workflow.invalid_input", wrong);
        assert.notEqual(await app.find(pending), null, "the form still asks");
      }
      await enterFrame(app, PAUSE, "main");
      const asking = await call(app, "lime.workflow", "get", { runId });
      assert.equal(asking.ok.run.waiting.type, "input", JSON.stringify(asking));
      assert.equal((await runEvents(app, runId)).some((e) => e.payload?.workflowFact === "input_answered"), false);

      // The right shape: the run goes on to its wait.
      await openRun(app, runId);
      await app.waitForElement(pending, 20_000);
      await typeInto(app, `${pending} [data-testid="run-edit-json"]`, '{"copies": 3}');
      await app.click(await app.find(`${pending} [data-testid="run-submit-input"]`));
      await waitFor(async () => (await app.find(pending)) === null, { what: "the input form to close" });
      await enterFrame(app, PAUSE, "main");
      await waitForFact(app, runId, "wait_scheduled");
      const waiting = await call(app, "lime.workflow", "get", { runId });
      assert.equal(waiting.ok.run.waiting.type, "timer", JSON.stringify(waiting));
      dueAt = waiting.ok.run.dueAt;
      assert.ok(Date.parse(dueAt) > Date.now() + 3_000, `due at ${dueAt}: time left to close the window`);
    },
    ["open", PAUSE, "--entry", "main"],
  );

  // The window is closed before the timer is due: the run is durable, still waiting, and owned
  // by no process (the CLI reads it itself, once the closing window's process has let go of the
  // runs: until then the CLI is told `runtime.busy`).
  const shown = await waitFor(() => cliJson("workflow", "show", runId), {
    timeoutMs: 10_000,
    intervalMs: 250,
    what: "`apphost workflow show` once the window's process is gone",
  });
  assert.equal(Date.now() < Date.parse(dueAt), true, "the window closed before the timer was due");
  assert.equal(shown.finished, false, JSON.stringify(shown));
  assert.equal(shown.waiting.type, "timer", JSON.stringify(shown));
  assert.deepEqual(shown.state.outputs.answer, { copies: 3 });

  // A new window: its host replays the run and fires the timer by itself; the frame follows it.
  await withApp(
    t,
    async (app) => {
      await enterFrame(app, PAUSE, "main");
      const watch = await call(app, "lime.workflow", "watch", { runId, afterSequence: 0 });
      assert.equal(watch.ok?.watching, true, JSON.stringify(watch));
      const fired = await waitForFact(app, runId, "timer_fired", PAUSE_MS + 30_000);
      assert.ok(Date.parse(fired.timestamp) >= Date.parse(dueAt), `fired at ${fired.timestamp}, due at ${dueAt}`);
      await waitFor(async () => (await runEvents(app, runId)).some((e) => e.type === "job.completed"), { what: "the run's end event" });
      const events = await checkSequences(app, runId);
      assert.equal(events.filter((e) => e.payload.workflowFact === "timer_fired").length, 1, "the timer fired once");
      assert.equal(events.filter((e) => e.payload.workflowFact === "input_answered").length, 1);
      const view = await call(app, "lime.workflow", "get", { runId });
      assert.equal(view.ok.run.status, "succeeded");
      assert.deepEqual(view.ok.run.state.status.result, { copies: 3 });
      const kept = await call(app, "lime.storage", "get", { key: "copies" });
      assert.equal(kept.ok?.value ?? kept.ok, 3, JSON.stringify(kept));
      // The Tasks page shows it ended, its wait among the steps.
      const detail = await openRun(app, runId);
      await waitForStatus(app, detail, "succeeded");
      assert.notEqual(await app.find(`${detail} [data-testid="run-step"][data-state="keep"]`), null);
    },
    ["open", PAUSE, "--entry", "main"],
  );
});
