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
// Its answer once in: the shell's first render shows it (one render and one frame, not a
// loading shell and then the list).
let earlyAnswer: AppSummary[] | null = null;

/** Asks for the app list now; the first `reload` uses this answer. */
export function startListing(): void {
  if (early !== null) return;
  const asked = api.listApps();
  early = asked;
  asked.then(
    (list) => {
      if (early === asked) earlyAnswer = list;
    },
    () => undefined, // reported by the reload that takes it
  );
}

/** The early answer if it is in, taken (the start-up's reload does not ask again). */
function takeEarlyAnswer(): AppSummary[] | null {
  const list = earlyAnswer;
  if (list !== null) {
    earlyAnswer = null;
    early = null;
  }
  return list;
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
  earlyAnswer = null;
  return first ?? api.listApps();
}

/** The list the first render shows (the early answer, when it is in) and its memo. */
function firstList(): { list: AppSummary[] | null; memo: ListMemo } {
  const list = takeEarlyAnswer();
  const memo = new ListMemo();
  if (list !== null) memo.changed(list);
  return { list, memo };
}

export function useApps(): AppsState {
  const [first] = useState(firstList);
  const [apps, setApps] = useState<AppSummary[] | null>(first.list);
  const [loadError, setLoadError] = useState<unknown>(null);
  const latestRef = useRef<AppSummary[] | null>(first.list);
  const memo = useRef(first.memo);
  // The start-up's first reload: the early answer (already shown, or still on its way).
  const pendingFirst = useRef<Promise<void> | null>(first.list !== null ? Promise.resolve() : null);
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
    if (pendingFirst.current === null && early !== null) pendingFirst.current = load();
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
