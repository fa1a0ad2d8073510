// Entry point of the host UI: load the installed apps, show them, and mount app entries.

import { BridgeRelay } from "./bridge-relay.js";
import * as transport from "./transport.js";
import type { AppSummary } from "./types.js";
import { onOpenEntry, renderApps, renderError } from "./view.js";

let apps: AppSummary[] = [];

async function load(): Promise<void> {
  try {
    apps = await transport.listApps();
    renderApps(apps);
  } catch (error: unknown) {
    console.error("list_apps failed", error);
    renderError(error);
  }
}

function byId(id: string): HTMLElement {
  const element = document.getElementById(id);
  if (element === null) {
    throw new Error(`host UI is missing #${id}`);
  }
  return element;
}

const surface = byId("surface");
const frames = byId("surface-frames");
const relay = new BridgeRelay(transport, frames, (error) => {
  console.error("bridge relay", error);
  renderError(error);
});

/** Mounts `entryKey` of `appId` and shows it in the surface area (one at a time). */
async function open(appId: string, entryKey: string): Promise<void> {
  try {
    const mount = await transport.mountEntry(appId, entryKey);
    await relay.detachAll();
    const app = apps.find((a) => a.name === appId);
    const entry = app?.entries?.find((e) => e.key === entryKey);
    const appName = app?.displayName ?? appId;
    const title = `${appName} · ${entry?.title ?? entryKey}`;
    byId("surface-title").textContent = title;
    relay.attach(mount, title);
    surface.hidden = false;
    document.body.dataset.surface = "mounted";
  } catch (error: unknown) {
    console.error("mount_entry failed", error);
    renderError(error);
  }
}

async function close(): Promise<void> {
  await relay.detachAll();
  surface.hidden = true;
  delete document.body.dataset.surface;
}

onOpenEntry((app, entry) => void open(app.name, entry.key));
byId("surface-close").addEventListener("click", () => void close());

async function start(): Promise<void> {
  await load();
  try {
    const target = await transport.launchTarget();
    if (target !== null) {
      await open(target.appId, target.entryKey);
    }
  } catch (error: unknown) {
    renderError(error);
  }
}

void start();
// Apps installed from the CLI while the window is open show up when it is focused again.
window.addEventListener("focus", () => void load());
