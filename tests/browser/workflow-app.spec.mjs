// Workflow runs started FROM THE APP'S PAGE in `apphost serve` (issue 20 §3/§4), what
// workflow-runs.spec.mjs (runs started with the Run action) does not cover. The apps are the
// workflow sample made with `apphost new --template workflow` and a copy with a second workflow
// (a `user-input` with a JSON Schema, then a 20 s `wait`), both from
// ../e2e/lib/workflow-apps.mjs (the window's workflow.test.mjs uses the same). The model is a
// stand-in (lib/provider.mjs).
//   - the sample's own button starts a run (lime.workflow.start through its vendored SDK); the
//     user edits the draft on the Tasks page and approves it; the page, still mounted, shows the
//     end and the edited draft it reads back from its storage;
//   - the copy's page starts its second workflow through the SDK; a wrongly shaped answer is
//     refused in the host's input form, the right one starts the wait; `apphost serve` is
//     stopped before the timer is due and started again: the new host fires it by itself and
//     the page, opened again, sees the run end.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

import { expect, test } from "@playwright/test";

import { PAUSE, PAUSE_MS, PAUSE_WORKFLOW, SAMPLE, makeSampleApps } from "../e2e/lib/workflow-apps.mjs";
import { openHost } from "./lib/center.mjs";
import { finish, startProvider, text } from "./lib/provider.mjs";
import { apphostBin, cli, startServer } from "./lib/server.mjs";
import { openRun, setModel, showPage } from "./lib/workflow.mjs";

let server;
let provider;
let root;

test.beforeEach(async () => {
  root = mkdtempSync(join(tmpdir(), "apphost-wf-app-"));
  const { sample, pause } = makeSampleApps(root, apphostBin());
  provider = await startProvider(() => [text("Dear "), text("owls"), finish("stop")]);
  server = await startServer({ install: [sample, pause] });
});
test.afterEach(async () => {
  await server?.stop();
  await provider?.stop();
  rmSync(root, { recursive: true, force: true });
});

const frameOf = (page, app) => page.frameLocator(`iframe[data-app-id="${app}"][data-entry-key="main"][data-mount-id]`);

/** Signs in, sets the model, and opens `app`'s page (its frame connected). */
async function openApp(page, app) {
  await openHost(page, server);
  await setModel(page, provider.baseUrl);
  await page.goto(`${server.origin}/apps/${app}/main`);
  const frame = frameOf(page, app);
  await expect(frame.locator("body")).toHaveAttribute("data-status", "ready", { timeout: 20_000 });
  return frame;
}

test("a run started by the sample's page, edited and approved on the Tasks page: the page sees the edited draft", async ({ page }) => {
  const frame = await openApp(page, SAMPLE);
  await frame.locator("#topic").fill("owls");
  await frame.locator("#run").click();
  await expect(frame.locator("#progress")).toContainText("Waiting for your review in AppHost (Tasks page)", { timeout: 30_000 });
  const runId = /^Run (run_\w+) started$/.exec(await frame.locator("#run-status").textContent())?.[1];
  expect(runId).toBeTruthy();

  const detail = await openRun(page, runId);
  const pending = detail.getByTestId("run-pending");
  await expect(pending).toHaveAttribute("data-kind", "review");
  await expect(pending.getByTestId("run-review-show")).toContainText("Dear owls");
  await pending.getByTestId("run-edit").click();
  const edited = "Dear owls, edited in the browser";
  await pending.getByTestId("run-edit-json").fill(JSON.stringify({ topic: "owls", draft: edited }));
  await pending.getByTestId("run-approve-edited").click();
  await expect(detail).toHaveAttribute("data-status", "succeeded", { timeout: 30_000 });
  await expect(detail.locator('[data-testid="run-step"][data-state="review"]')).toHaveAttribute("data-status", "approved");
  await expect(detail.getByTestId("run-result")).toContainText(`"draft":"${edited}"`);

  // The page was mounted all along: it followed the run to its end and reads the edited draft.
  await showPage(page, "#/running");
  await expect(frame.locator("#run-status")).toHaveText("The run ended: succeeded", { timeout: 30_000 });
  await expect(frame.locator("#result")).toHaveText("Approved: saved and published.");
  await expect(frame.locator("#latest")).toHaveText(edited);
  const made = cli(server.data, ["artifacts", SAMPLE]).artifacts;
  expect(made.map((a) => a.name)).toEqual(["Draft: owls"]);
  expect(provider.requests.length).toBe(1);
});

test("a run with a wait, started by the page: a wrong input is refused in the host's form, and the wait survives a restart of apphost serve", async ({ page }) => {
  test.setTimeout(PAUSE_MS + 90_000);
  let frame = await openApp(page, PAUSE);
  // The page starts the workflow through its own SDK and follows its events.
  const runId = await frame.locator("body").evaluate(async (_, workflow) => {
    const { getLimeRuntime } = await import("./sdk/runtime.js");
    const lime = getLimeRuntime();
    await lime.ready();
    const run = await lime.workflow.start({ workflow, input: {} });
    return run.runId;
  }, PAUSE_WORKFLOW);
  expect(runId).toMatch(/^run_/);

  const detail = await openRun(page, runId);
  const pending = detail.getByTestId("run-pending");
  await expect(pending).toHaveAttribute("data-kind", "input", { timeout: 20_000 });
  await expect(pending.getByTestId("run-pending-prompt")).toContainText("How many copies?");
  let said = "";
  for (const wrong of ['{"copies": "three"}', '{"copies": 11}']) {
    await pending.getByTestId("run-edit-json").fill(wrong);
    await pending.getByTestId("run-submit-input").click();
    // Each refusal says what is wrong (so this one is not the last one's message).
    const message = detail.getByTestId("run-error").locator(".error-message");
    await expect(message).not.toHaveText(said === "" ? /^$/ : said);
    said = await message.textContent();
    await expect(detail.getByTestId("run-error")).toHaveAttribute("data-code", "workflow.invalid_input");
    await expect(pending).toHaveAttribute("data-kind", "input");
  }
  await pending.getByTestId("run-edit-json").fill('{"copies": 4}');
  await pending.getByTestId("run-submit-input").click();
  await expect(detail.getByTestId("run-pending")).toHaveCount(0);
  await expect(detail.locator('[data-testid="run-step"][data-state="ask"]')).toHaveCount(1);

  // Stopped before the timer is due; the run is durable and still waits.
  await server.restart();
  const shown = cli(server.data, ["workflow", "list", PAUSE]).find((r) => r.runId === runId);
  // (The new server owns the runs: the CLI's list went over its door.)
  expect(shown?.finished, JSON.stringify(shown)).toBe(false);
  expect(shown.waiting.type).toBe("timer");
  expect(Date.parse(shown.dueAt)).toBeGreaterThan(Date.now());

  // The new server fires the timer by itself; the page, opened again, sees the end.
  frame = await openApp(page, PAUSE);
  const view = await frame.locator("body").evaluate(async (_, id) => {
    const { getLimeRuntime } = await import("./sdk/runtime.js");
    const lime = getLimeRuntime();
    await lime.ready();
    const run = await lime.workflow.watch(id, 0);
    const facts = [];
    for await (const e of run.events()) facts.push(e.payload.workflowFact);
    return { facts, end: await run.result(), copies: await lime.storage.get("copies") };
  }, runId);
  expect(view.end.status).toBe("succeeded");
  expect(view.end.state.status.result).toEqual({ copies: 4 });
  expect(view.facts.filter((f) => f === "timer_fired")).toHaveLength(1);
  expect(view.copies).toBe(4);
  const again = await openRun(page, runId);
  await expect(again).toHaveAttribute("data-status", "succeeded");
});
