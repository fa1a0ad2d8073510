// The installed apps: loaded on start, on window focus and on `store:changed`; re-rendered only
// when the list changed.

import { useCallback, useEffect, useLayoutEffect, useRef, useState } from "preact/hooks";

import * as api from "../api.js";
import type { AppSummary } from "../types.js";
import { ListMemo } from "./shell-state.js";

export interface AppsState {
  apps: AppSummary[] | null;
  loadError: unknown;
  reload(): Promise<void>;
  /** The list last loaded, for async flows between renders. */
  latest(): AppSummary[] | null;
}

// The first `list_apps`, asked before the shell's first render (`startListing`, main.tsx) rather
// than from an effect after the first paint: the list is in by the time the start-up reloads.
let early: Promise<AppSummary[]> | null = null;

/** Asks for the app list now; the first `reload` uses this answer. */
export function startListing(): void {
  early ??= api.listApps();
  early.catch(() => undefined); // reported by the reload that takes it
}

/** Resolves once the early list is in (answered or failed) or after `capMs`, whichever is first. */
export function earlyListing(capMs: number): Promise<void> {
  const waiting = early;
  if (waiting === null) return Promise.resolve();
  return Promise.race([
    waiting.then(
      () => undefined,
      () => undefined,
    ),
    new Promise<void>((resolve) => setTimeout(resolve, capMs)),
  ]);
}

function takeListing(): Promise<AppSummary[]> {
  const first = early;
  early = null;
  return first ?? api.listApps();
}

export function useApps(): AppsState {
  const [apps, setApps] = useState<AppSummary[] | null>(null);
  const [loadError, setLoadError] = useState<unknown>(null);
  const latestRef = useRef<AppSummary[] | null>(null);
  const memo = useRef(new ListMemo());
  const pendingFirst = useRef<Promise<void> | null>(null);
  const load = useCallback(async () => {
    try {
      const next = await takeListing();
      if (memo.current.changed(next)) {
        latestRef.current = next;
        setApps(next);
      }
      setLoadError(null);
    } catch (error: unknown) {
      console.error("list_apps failed", error);
      memo.current.forget();
      setLoadError(error);
    }
  }, []);
  // The early answer is rendered as soon as it is in (before the first paint when it is quick),
  // and the start-up's first reload waits for this one instead of asking again.
  useLayoutEffect(() => {
    if (early !== null) pendingFirst.current = load();
  }, [load]);
  const reload = useCallback((): Promise<void> => {
    const first = pendingFirst.current;
    pendingFirst.current = null;
    return first ?? load();
  }, [load]);
  useEffect(() => {
    const onFocus = (): void => void reload();
    window.addEventListener("focus", onFocus);
    return () => window.removeEventListener("focus", onFocus);
  }, [reload]);
  const latest = useCallback(() => latestRef.current, []);
  return { apps, loadError, reload, latest };
}
