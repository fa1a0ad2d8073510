// @ts-check
// The page: connect to the host through the Host Bridge SDK (sdk/: vendored by `apphost new`;
// refresh it with `apphost sdk --out`), then ask the host's agent and stream its answer.
import { getLimeRuntime } from "./sdk/runtime.js";
import { ask, errorLabel, lastQuestion } from "./ask.js";

const lime = getLimeRuntime();

/** @param {string} id */
const $ = (id) => /** @type {HTMLElement} */ (document.getElementById(id));
const askButton = /** @type {HTMLButtonElement} */ ($("ask"));

async function onAsk() {
  const question = /** @type {HTMLTextAreaElement} */ ($("question")).value;
  askButton.disabled = true;
  $("error").textContent = "";
  $("answer").textContent = "";
  $("task").textContent = "";
  try {
    const result = await ask(lime, question, {
      onTask: (taskId) => ($("task").textContent = `Task ${taskId} started`),
      onText: (text) => ($("answer").textContent = text),
    });
    $("last").textContent = question.trim();
    $("task").textContent = `The task ended: ${result.subtype}`;
  } catch (e) {
    $("error").textContent = errorLabel(e);
  } finally {
    askButton.disabled = false;
  }
}

async function start() {
  try {
    await lime.ready();
    document.body.dataset.status = "ready";
    $("status").textContent = `Connected as ${lime.appId}`;
    $("last").textContent = (await lastQuestion(lime.storage)) || "–";
    askButton.disabled = false;
  } catch (e) {
    document.body.dataset.status = "error";
    $("error").textContent = errorLabel(e);
  }
}

askButton.addEventListener("click", () => void onAsk());
void start();
