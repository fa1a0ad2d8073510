// Pure parts of the shell (app.tsx): what the summary line and body[data-state] say, the running
// tabs' badges, the pending-prompt counts, and which failures mean "an older backend". No DOM, no
// Preact: unit-tested (ui-host/test/shell.test.mjs).

import { summaryText, toHostError } from "../format.js";
import { tabKey, type Tab } from "../tabs.js";
import type { AppSummary, Mount } from "../types.js";
import type { TabStatus } from "../views/surface.js";

/** Whether a failure means "this backend has no such command" (older shells). */
export function isMissingCommand(error: unknown): boolean {
  const e = toHostError(error);
  return e.code === "api.unknown_command" || /not found/.test(e.message);
}

/** body[data-state]: the desktop e2e waits on it. */
export type LoadState = "error" | "loading" | "ready" | "empty";

export function loadState(apps: readonly AppSummary[] | null, loadError: unknown): LoadState {
  return loadError !== null && apps === null ? "error" : apps === null ? "loading" : apps.length > 0 ? "ready" : "empty";
}

/** The header's summary line (`#summary`). */
export function summaryLine(state: LoadState, apps: readonly AppSummary[] | null): string {
  return state === "error" ? "Could not load the installed apps" : apps === null ? "Loading installed apps…" : summaryText(apps.length);
}

/** A permission prompt of `mountId` was queued (`pending`) or answered: the new counts. */
export function countPrompt(counts: Readonly<Record<string, number>>, mountId: string, pending: boolean): Record<string, number> {
  return { ...counts, [mountId]: Math.max(0, (counts[mountId] ?? 0) + (pending ? 1 : -1)) };
}

/**
 * What a running tab shows: mounted or asleep, its pending prompts and approvals, its error, and
 * DEV when its app is a development install (`devApps`: the names whose summary says `dev`).
 */
export function tabStatus(
  tab: Tab,
  mounts: Readonly<Record<string, Mount>>,
  tabErrors: Readonly<Record<string, string>>,
  prompts: Readonly<Record<string, number>>,
  approvals: ReadonlyMap<string, number>,
  devApps: ReadonlySet<string> = new Set(),
): TabStatus {
  const m = mounts[tabKey(tab)];
  return {
    mounted: m !== undefined,
    prompts: m === undefined ? 0 : prompts[m.mountId] ?? 0,
    approvals: approvals.get(tab.appId) ?? 0,
    error: tabErrors[tabKey(tab)] ?? null,
    dev: devApps.has(tab.appId),
  };
}

/** The names of the development installs in `apps` (their tabs show DEV, as their cards do). */
export function devAppNames(apps: readonly AppSummary[] | null): Set<string> {
  return new Set((apps ?? []).filter((a) => a.dev === true).map((a) => a.name));
}

/**
 * Remembers the last app list rendered: polls reload often, and the list re-renders only on a
 * change, so a list the user is clicking in is not replaced under the pointer.
 */
export class ListMemo {
  private text: string | null = null;

  /** Whether `next` differs from the list last accepted (and accepts it). */
  changed(next: unknown): boolean {
    const text = JSON.stringify(next);
    if (this.text === text) return false;
    this.text = text;
    return true;
  }

  /** Forgets the list (after a failed load the next one renders whatever it is). */
  forget(): void {
    this.text = null;
  }
}
