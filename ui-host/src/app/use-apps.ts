// The installed apps: loaded on start, on window focus and on `store:changed`; re-rendered only
// when the list changed.

import { useCallback, useEffect, useRef, useState } from "preact/hooks";

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

export function useApps(): AppsState {
  const [apps, setApps] = useState<AppSummary[] | null>(null);
  const [loadError, setLoadError] = useState<unknown>(null);
  const latestRef = useRef<AppSummary[] | null>(null);
  const memo = useRef(new ListMemo());
  const reload = useCallback(async () => {
    try {
      const next = await api.listApps();
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
  useEffect(() => {
    const onFocus = (): void => void reload();
    window.addEventListener("focus", onFocus);
    return () => window.removeEventListener("focus", onFocus);
  }, [reload]);
  const latest = useCallback(() => latestRef.current, []);
  return { apps, loadError, reload, latest };
}
