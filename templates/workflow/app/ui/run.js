// @ts-check
// The app's logic, apart from the page so tests/run.test.mjs can run it on the SDK's mock
// runtime (no host, no browser, no model). `lime` is the SDK's runtime (the real one on the page).

/** @typedef {import("./sdk/runtime.js").LimeRuntime} LimeRuntime */
/** @typedef {import("./sdk/handles.js").LimeStorage} LimeStorage */
/** @typedef {import("./sdk/workflow.js").WorkflowRunEvent} WorkflowRunEvent */
/** @typedef {import("./sdk/workflow.js").WorkflowRunView} WorkflowRunView */

export const WORKFLOW = "draft-review-publish";
/** Where the workflow's `save` state keeps the approved draft. */
export const LATEST_KEY = "latestDraft";

/**
 * What a run event means to a person ("" for facts the page does not show).
 * @param {WorkflowRunEvent} e
 */
export function progressLabel(e) {
  const p = /** @type {{workflowFact?: string, state?: string}} */ (e.payload ?? {});
  switch (p.workflowFact) {
    case "run_started":
      return "Started";
    case "step_started":
      return `Working on ${p.state ?? "a step"}…`;
    case "review_requested":
      return "Waiting for your review in AppHost (Tasks page)";
    case "review_answered":
      return "Reviewed";
    case "ended":
      return "Finished";
    case "cancelled":
      return "Cancelled";
    default:
      return "";
  }
}

/**
 * The latest approved draft ("" before the first).
 * @param {LimeStorage} storage
 * @returns {Promise<string>}
 */
export async function latestDraft(storage) {
  const value = await storage.get(LATEST_KEY);
  return typeof value === "string" ? value : "";
}

/**
 * Starts a run for `topic` and follows it to its end: `onProgress(label)` for each fact worth
 * showing. Resolves the run's final view; rejects with the host's error (`APP_E012`-style
 * codes while no model is set up, `workflow.*` cause codes otherwise).
 * @param {Pick<LimeRuntime, "workflow">} lime
 * @param {string} topic
 * @param {{onProgress?: (label: string) => void, onRun?: (runId: string) => void}} [on]
 * @returns {Promise<WorkflowRunView>}
 */
export async function draftAndReview(lime, topic, on = {}) {
  const t = topic.trim();
  if (t === "") throw new Error("Type a topic first.");
  const run = await lime.workflow.start({ workflow: WORKFLOW, input: { topic: t } });
  on.onRun?.(run.runId);
  for await (const e of run.events()) {
    const label = progressLabel(e);
    if (label !== "") on.onProgress?.(label);
  }
  return run.result();
}

/**
 * One line for a run's end.
 * @param {WorkflowRunView} view
 */
export function outcome(view) {
  const s = view.state.status;
  if (view.status === "succeeded") {
    const r = /** @type {{approved?: unknown}} */ (s.result ?? {});
    return r.approved === true ? "Approved: saved and published." : "Not approved: nothing was saved.";
  }
  if (view.status === "failed") return `The run failed: ${s.code ?? "error"}${s.message ? ` (${s.message})` : ""}`;
  return `The run ended: ${view.status}`;
}

/**
 * What the page shows for a failed call: `CODE (causeCode)`.
 * @param {unknown} e
 */
export function errorLabel(e) {
  const err = /** @type {{code?: string, causeCode?: string, message?: string}} */ (e ?? {});
  return err.code ? `${err.code}${err.causeCode ? ` (${err.causeCode})` : ""}` : String(err.message ?? e);
}
