// @ts-check
// The page: connect to the host through the Host Bridge SDK (sdk/: vendored by `apphost new`;
// refresh it with `apphost sdk --out`), start a workflow run and follow it. Its review is
// answered by you in AppHost (the Tasks page), never by this page.
import { getLimeRuntime } from "./sdk/runtime.js";
import { draftAndReview, errorLabel, latestDraft, outcome } from "./run.js";

const lime = getLimeRuntime();

/** @param {string} id */
const $ = (id) => /** @type {HTMLElement} */ (document.getElementById(id));
const runButton = /** @type {HTMLButtonElement} */ ($("run"));

/** @param {string} text */
function addProgress(text) {
  const li = document.createElement("li");
  li.textContent = text;
  $("progress").append(li);
}

async function onRun() {
  const topic = /** @type {HTMLInputElement} */ ($("topic")).value;
  runButton.disabled = true;
  $("error").textContent = "";
  $("result").textContent = "";
  $("progress").replaceChildren();
  $("run-status").textContent = "";
  try {
    const view = await draftAndReview(lime, topic, {
      onRun: (runId) => ($("run-status").textContent = `Run ${runId} started`),
      onProgress: addProgress,
    });
    $("run-status").textContent = `The run ended: ${view.status}`;
    $("result").textContent = outcome(view);
    $("latest").textContent = (await latestDraft(lime.storage)) || "–";
  } catch (e) {
    $("error").textContent = errorLabel(e);
  } finally {
    runButton.disabled = false;
  }
}

async function start() {
  try {
    await lime.ready();
    document.body.dataset.status = "ready";
    $("status").textContent = `Connected as ${lime.appId}`;
    $("latest").textContent = (await latestDraft(lime.storage)) || "–";
    runButton.disabled = false;
  } catch (e) {
    document.body.dataset.status = "error";
    $("error").textContent = errorLabel(e);
  }
}

runButton.addEventListener("click", () => void onRun());
void start();
