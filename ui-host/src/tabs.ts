// The running-app tabs: one per mounted page entry, panels in a side pane. The list (app, entry,
// title) survives a restart through localStorage; mounts do not (they are re-made on start).
// Pure parts, unit-tested.

export interface Tab {
  appId: string;
  entryKey: string;
  kind: string;
  title: string;
}

export interface TabState {
  tabs: Tab[];
  /** `appId/entryKey` of the tab shown, or null. */
  active: string | null;
}

export const TABS_STORAGE_KEY = "apphost.tabs.v1";
/** More saved tabs than this are not restored (a bounded start-up). */
export const MAX_SAVED_TABS = 24;

export const tabKey = (t: { appId: string; entryKey: string }): string => `${t.appId}/${t.entryKey}`;

/** Panels go in the side pane; every other mountable kind is a tab. */
export const isPanel = (kind: string): boolean => kind === "panel" || kind === "sidebar";

/** Opens (or focuses) a tab. */
export function openTab(state: TabState, tab: Tab): TabState {
  const key = tabKey(tab);
  const exists = state.tabs.some((t) => tabKey(t) === key);
  return {
    tabs: exists ? state.tabs.map((t) => (tabKey(t) === key ? tab : t)) : [...state.tabs, tab],
    active: isPanel(tab.kind) ? state.active : key,
  };
}

/** Closes a tab; the neighbour to its left (or the first) becomes active. */
export function closeTab(state: TabState, key: string): TabState {
  const index = state.tabs.findIndex((t) => tabKey(t) === key);
  if (index < 0) {
    return state;
  }
  const tabs = state.tabs.filter((t) => tabKey(t) !== key);
  let active = state.active;
  if (active === key) {
    const pages = tabs.filter((t) => !isPanel(t.kind));
    const left = pages.filter((t) => state.tabs.indexOf(t) < index);
    active = (left[left.length - 1] ?? pages[0]) === undefined ? null : tabKey((left[left.length - 1] ?? pages[0]) as Tab);
  }
  return { tabs, active };
}

/** Drops every tab of an app (uninstalled or disabled elsewhere). */
export function closeApp(state: TabState, appId: string): TabState {
  let next = state;
  for (const t of state.tabs.filter((t) => t.appId === appId)) {
    next = closeTab(next, tabKey(t));
  }
  return next;
}

/** What is saved: JSON of the tab list. */
export function saveTabs(state: TabState): string {
  return JSON.stringify({ tabs: state.tabs.slice(0, MAX_SAVED_TABS), active: state.active });
}

const isString = (v: unknown): v is string => typeof v === "string" && v.length > 0 && v.length <= 256;

/** Reads saved tabs; anything malformed is dropped, never thrown. */
export function restoreTabs(text: string | null): TabState {
  const empty: TabState = { tabs: [], active: null };
  if (text === null || text.length > 100_000) {
    return empty;
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return empty;
  }
  if (typeof value !== "object" || value === null || !Array.isArray((value as { tabs?: unknown }).tabs)) {
    return empty;
  }
  const tabs: Tab[] = [];
  for (const raw of (value as { tabs: unknown[] }).tabs.slice(0, MAX_SAVED_TABS)) {
    if (typeof raw !== "object" || raw === null) {
      continue;
    }
    const t = raw as Record<string, unknown>;
    if (isString(t.appId) && isString(t.entryKey) && isString(t.kind) && typeof t.title === "string") {
      if (!tabs.some((x) => tabKey(x) === tabKey({ appId: t.appId as string, entryKey: t.entryKey as string }))) {
        tabs.push({ appId: t.appId, entryKey: t.entryKey, kind: t.kind, title: t.title.slice(0, 256) });
      }
    }
  }
  const active = (value as { active?: unknown }).active;
  const activeKey = typeof active === "string" && tabs.some((t) => tabKey(t) === active) ? active : null;
  return { tabs, active: activeKey ?? (tabs.find((t) => !isPanel(t.kind)) ? tabKey(tabs.find((t) => !isPanel(t.kind)) as Tab) : null) };
}

/** Drops the tabs of apps that are not installed (restored tabs of an app removed meanwhile). */
export function keepInstalled(state: TabState, installed: ReadonlySet<string>): TabState {
  let next = state;
  for (const appId of new Set(state.tabs.map((t) => t.appId))) {
    if (!installed.has(appId)) {
      next = closeApp(next, appId);
    }
  }
  return next;
}
