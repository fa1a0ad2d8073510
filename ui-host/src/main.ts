// Entry point of the host UI: load the installed apps, show them, and mount app entries.

import { BridgeRelay } from "./bridge-relay.js";
import * as transport from "./transport.js";
import type { HostEvent } from "./transport.js";
import type { AppSummary, EndedMount, Outgoing } from "./types.js";
import { onOpenEntry, renderApps, renderError } from "./view.js";

let apps: AppSummary[] = [];
/** The list as last rendered (JSON), or null before the first render or after an error. */
let rendered: string | null = null;

async function load(): Promise<void> {
  try {
    const next = await transport.listApps();
    // Polls reload often (every capability call writes the audit log): re-render only on change,
    // so a list the user is clicking in is not replaced under the pointer.
    if (rendered !== null && rendered === JSON.stringify(next)) {
      return;
    }
    apps = next;
    renderApps(apps);
    rendered = JSON.stringify(next);
  } catch (error: unknown) {
    console.error("list_apps failed", error);
    rendered = null;
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
    const notice = byId("surface-notice");
    notice.textContent = "";
    delete notice.dataset.appId;
    delete notice.dataset.reason;
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

/**
 * Follows changes other processes (the CLI) make to the store: tears down frames whose app was
 * disabled, uninstalled, updated or rolled back (Rust already ended the mounts), and reloads the
 * list.
 */
async function mountsEnded(ended: readonly EndedMount[]): Promise<void> {
  if (relay.drop(ended.map((e) => e.mountId)) === 0) {
    surface.hidden = true;
    delete document.body.dataset.surface;
  }
  const first = ended[0];
  await load();
  if (first === undefined) {
    return;
  }
  if (first.reason === "version-changed") {
    // An update or rollback: show the entry again, now from the active version.
    await open(first.appId, first.entryKey);
  }
  const notice = byId("surface-notice");
  notice.dataset.appId = first.appId;
  notice.dataset.reason = first.reason;
  notice.textContent =
    first.reason === "version-changed"
      ? `${first.appId} changed version outside this window and was reopened.`
      : `${first.appId} was closed: it was ${first.reason} outside this window.`;
}

/** Handles one outbox event (`next_events`). Unknown kinds are for newer views: ignored. */
async function onEvent(event: HostEvent): Promise<void> {
  switch (event.kind) {
    case "store:changed":
      await load();
      break;
    case "mounts:ended":
      await mountsEnded(event.payload as EndedMount[]);
      break;
    case "outgoing":
      // Bridge actions produced off the request path: executed like a bridge_message answer.
      await relay.execute(event.payload as Outgoing[]);
      break;
  }
}

/**
 * Reads the outbox for the life of the page: one long poll at a time (Rust runs the mount
 * watcher while it waits), backing off after a failure.
 */
async function followEvents(): Promise<void> {
  let after = 0;
  for (;;) {
    try {
      const batch = await transport.nextEvents(after, 25_000);
      after = batch.next;
      for (const event of batch.events) {
        await onEvent(event);
      }
    } catch (error: unknown) {
      console.warn("next_events failed", error);
      await new Promise((resolve) => setTimeout(resolve, 1000));
    }
  }
}

onOpenEntry((app, entry) => void open(app.name, entry.key));
byId("surface-close").addEventListener("click", () => void close());

async function start(): Promise<void> {
  await load();
  try {
    // Browser mode: `/apps/<app>/<entry>` opens that entry; the desktop asks Rust.
    const target =
      transport.launchFromPath(window.location.pathname) ?? (await transport.launchTarget());
    if (target !== null) {
      await open(target.appId, target.entryKey);
    }
  } catch (error: unknown) {
    renderError(error);
  }
}

void start();
void followEvents();
// Apps installed from the CLI while the window is open show up when it is focused again.
window.addEventListener("focus", () => void load());
