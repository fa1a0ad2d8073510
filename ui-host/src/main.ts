// Entry point of the host UI: load the installed apps and show them.

import { listApps } from "./transport.js";
import { renderApps, renderError } from "./view.js";

async function load(): Promise<void> {
  try {
    renderApps(await listApps());
  } catch (error: unknown) {
    console.error("list_apps failed", error);
    renderError(error);
  }
}

void load();
// Apps installed from the CLI while the window is open show up when it is focused again.
window.addEventListener("focus", () => void load());
