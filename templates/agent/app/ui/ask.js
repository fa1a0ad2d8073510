// @ts-check
// The app's logic, apart from the page so tests/ask.test.mjs can run it on the SDK's mock
// runtime (no host, no browser, no model). `lime` is the SDK's runtime (the real one on the page).

/** @typedef {import("./sdk/runtime.js").LimeRuntime} LimeRuntime */
/** @typedef {import("./sdk/handles.js").LimeStorage} LimeStorage */

export const LAST_QUESTION_KEY = "lastQuestion";

/**
 * The last question asked ("" before the first).
 * @param {LimeStorage} storage
 * @returns {Promise<string>}
 */
export async function lastQuestion(storage) {
  const value = await storage.get(LAST_QUESTION_KEY);
  return typeof value === "string" ? value : "";
}

/**
 * Keeps `question` as the last one, then asks the agent: one task whose events stream the
 * answer. `onTask(taskId)` is called once the host accepted the task, `onText(text)` with the
 * answer so far. Resolves `{subtype, text}` from the task's `result` event; rejects with the
 * host's error (`APP_E012` while no model is set up in AppHost).
 * @param {Pick<LimeRuntime, "storage" | "agent">} lime
 * @param {string} question
 * @param {{onTask?: (taskId: string) => void, onText?: (text: string) => void}} [on]
 * @returns {Promise<{subtype: string, text: string}>}
 */
export async function ask(lime, question, on = {}) {
  const input = question.trim();
  if (input === "") throw new Error("Type a question first.");
  await lime.storage.set(LAST_QUESTION_KEY, input);
  const task = await lime.agent.startTask({ input });
  on.onTask?.(task.taskId);
  let text = "";
  for await (const e of task.events()) {
    const payload = /** @type {{text?: unknown}} */ (e.payload ?? {});
    if (e.type === "assistant:delta" && typeof payload.text === "string") {
      text += payload.text;
      on.onText?.(text);
    }
    if (e.type === "result") return { subtype: String(e.subtype ?? "unknown"), text };
  }
  return { subtype: "unknown", text };
}

/**
 * What the page shows for a failed call: what to do for a missing model, else `CODE (causeCode)`.
 * @param {unknown} e
 */
export function errorLabel(e) {
  const err = /** @type {{code?: string, causeCode?: string}} */ (e ?? {});
  if (err.code === "APP_E012") return "Set up a model in AppHost first (Settings → Model, or `apphost model set`).";
  return err.code ? `${err.code}${err.causeCode ? ` (${err.causeCode})` : ""}` : String(e);
}
