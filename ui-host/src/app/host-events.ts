// Host→UI pushes (docs/host-api.md `next_events`): one long poll at a time (Rust runs the mount
// watcher while it waits), each event handed to the shell. No DOM, no Preact: unit-tested with a
// stand-in poll (ui-host/test/shell.test.mjs); `use-host-events.ts` wires it to the shell.

import type { EndedMount, EventsPage, HostEvent, InstallProgress, Outgoing } from "../types.js";

/** How long one `next_events` waits for an event (ms). */
export const EVENTS_WAIT_MS = 25_000;
/** The pause after a failed poll (ms). */
export const EVENTS_RETRY_MS = 1000;

export interface HostEventHandlers {
  /** `install:progress`: bytes verified of the package being installed. */
  progress(done: number, total: number): void;
  /** `store:changed`: the store changed (install, grant, dev change…); awaited. */
  storeChanged(): Promise<void>;
  /** `mounts:ended`: mounts Rust ended because another process changed their app; awaited. */
  mountsEnded(ended: EndedMount[]): Promise<void>;
  /** `outgoing`: bridge actions produced off the request path, executed like an answer; awaited. */
  outgoing(actions: Outgoing[]): Promise<void>;
  /** `tasks:changed` (and after `outgoing`): agent tasks changed. */
  tasksChanged(): void;
  /** `tasks:changed` only: the approval badges are refreshed. */
  approvalsChanged(): void;
  /** `dev:diagnostic`: one dev console line of a dev install (untrusted text). */
  devDiagnostic?(payload: unknown): void;
}

/** Hands one event to its handler; kinds for newer views are ignored. */
export async function handleHostEvent(event: HostEvent, on: HostEventHandlers): Promise<void> {
  switch (event.kind) {
    case "install:progress": {
      const p = event.payload as InstallProgress;
      on.progress(p.bytesVerified, p.bytesTotal);
      break;
    }
    case "store:changed":
      await on.storeChanged();
      break;
    case "mounts:ended":
      await on.mountsEnded(event.payload as EndedMount[]);
      break;
    case "outgoing":
      await on.outgoing(event.payload as Outgoing[]);
      on.tasksChanged();
      break;
    case "tasks:changed":
      on.tasksChanged();
      on.approvalsChanged();
      break;
    case "workflow:changed":
      // The Tasks page's workflow runs listen with the tasks.
      on.tasksChanged();
      break;
    case "dev:diagnostic":
      on.devDiagnostic?.(event.payload);
      break;
    default:
      break;
  }
}

export interface EventLoop {
  /** One long poll: the events after `after`, waiting up to `waitMs`. */
  poll(after: number, waitMs: number): Promise<EventsPage>;
  /** Whether the loop should end (checked before each poll). */
  stopped(): boolean;
  /** Waits `ms` (after a failed poll). */
  sleep(ms: number): Promise<void>;
  /** A failed poll (logged; the loop goes on). */
  failed?(error: unknown): void;
}

/** Polls until stopped, handling each batch's events in order before the next poll. */
export async function runEventLoop(loop: EventLoop, on: HostEventHandlers): Promise<void> {
  let after = 0;
  while (!loop.stopped()) {
    try {
      const batch = await loop.poll(after, EVENTS_WAIT_MS);
      after = batch.next;
      for (const event of batch.events) {
        await handleHostEvent(event, on);
      }
    } catch (error: unknown) {
      loop.failed?.(error);
      await loop.sleep(EVENTS_RETRY_MS);
    }
  }
}
