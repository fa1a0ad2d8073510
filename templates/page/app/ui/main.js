// @ts-check
// The page: connect to the host through the Host Bridge SDK (sdk/: vendored by `apphost new`;
// refresh it with `apphost sdk --out`), then count clicks in lime.storage.
import { getLimeRuntime } from "./sdk/runtime.js";
import { addClick, clicksLabel, errorLabel, readClicks } from "./counter.js";

const lime = getLimeRuntime();

/** @param {string} id */
const $ = (id) => /** @type {HTMLElement} */ (document.getElementById(id));

/** @param {unknown} e */
function showError(e) {
  $("error").textContent = errorLabel(e);
}

async function count() {
  try {
    $("clicks").textContent = clicksLabel(await addClick(lime.storage));
  } catch (e) {
    showError(e);
  }
}

async function start() {
  try {
    await lime.ready();
    document.body.dataset.status = "ready";
    $("status").textContent = `Connected as ${lime.appId}`;
    $("clicks").textContent = clicksLabel(await readClicks(lime.storage));
    /** @type {HTMLButtonElement} */ ($("count")).disabled = false;
  } catch (e) {
    document.body.dataset.status = "error";
    showError(e);
  }
}

$("count").addEventListener("click", () => void count());
void start();
