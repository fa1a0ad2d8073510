// The mount controller: the running tabs, their live mounts and their lifecycle (mount one entry
// per tab, close, follow mounts Rust ended elsewhere, wake a restored tab when it is shown). It
// holds the truth the async flows read between renders; the shell renders its snapshots
// (`use-mounts.ts`). Rust, the bridge relay and the page are reached through `MountDeps` only, so
// the lifecycle is unit-tested with stand-ins (ui-host/test/shell.test.mjs).

import { errorText } from "../format.js";
import type { Route } from "../router.js";
import { closeTab, isPanel, keepInstalled, openTab, tabKey, type Tab, type TabState } from "../tabs.js";
import type { AppSummary, EndedMount, Mount } from "../types.js";

export interface MountDeps {
  /** `mount_entry`. */
  mountEntry(appId: string, entryKey: string): Promise<Mount>;
  /** `unmount`. */
  unmount(mountId: string): Promise<unknown>;
  /** Builds the mount's frame (the relay): a panel in the side pane, a page among the tabs. */
  attach(mount: Mount, title: string, kind: string): void;
  /** Drops frames (the relay, if it exists). */
  drop(mountIds: string[]): void;
  /** The app list last loaded (titles, kinds). */
  apps(): readonly AppSummary[] | null;
  /** The page the window shows now (read from the location, not a render). */
  currentPage(): Route["page"];
  navigate(route: Route): void;
  /** Reloads the app list. */
  reload(): Promise<void>;
  /** Shows a failure in the banner. */
  fail(error: unknown): void;
  /** Says something in `#surface-notice` (null: clears it). */
  notice(notice: Notice | null): void;
}

export interface Notice {
  appId: string;
  reason: string;
  text: string;
}

export interface MountSnapshot {
  tabs: TabState;
  /** Live mounts by tab key. */
  mounts: Readonly<Record<string, Mount>>;
  /** Why a tab could not be mounted (a sleeping tab woken in the background), by tab key. */
  tabErrors: Readonly<Record<string, string>>;
}

/** What `#surface-notice` says about a mount Rust ended. */
export function endedNotice(ended: EndedMount): Notice {
  return {
    appId: ended.appId,
    reason: ended.reason,
    text:
      ended.reason === "version-changed"
        ? `${ended.appId} changed version outside this window and was reopened.`
        : `${ended.appId} was closed: it was ${ended.reason} outside this window.`,
  };
}

export class MountController {
  private state: MountSnapshot;
  private readonly pending = new Map<string, Promise<void>>();
  private readonly listeners = new Set<(s: MountSnapshot) => void>();

  constructor(
    private readonly deps: MountDeps,
    tabs: TabState,
  ) {
    this.state = { tabs, mounts: {}, tabErrors: {} };
  }

  snapshot(): MountSnapshot {
    return this.state;
  }

  /** Calls `listener` with each new snapshot; returns the unsubscribe. */
  subscribe(listener: (s: MountSnapshot) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private set(next: Partial<MountSnapshot>): void {
    this.state = { ...this.state, ...next };
    for (const l of this.listeners) l(this.state);
  }

  private withoutError(key: string): Record<string, string> {
    const { [key]: _gone, ...rest } = this.state.tabErrors;
    return rest;
  }

  /** Whether a mount of the tab `key` is in flight. */
  isPending(key: string): boolean {
    return this.pending.has(key);
  }

  /** Mounts a tab's entry; `show` makes it the active tab on the Running page. */
  async mount(appId: string, entryKey: string, show: boolean): Promise<void> {
    const app = this.deps.apps()?.find((a) => a.name === appId);
    const entry = app?.entries?.find((e) => e.key === entryKey);
    const title = `${app?.displayName ?? appId} · ${entry?.title ?? entryKey}`;
    const key = tabKey({ appId, entryKey });
    const kind = entry?.kind ?? this.state.tabs.tabs.find((t) => tabKey(t) === key)?.kind ?? "page";
    const tab: Tab = { appId, entryKey, kind, title };
    if (this.state.mounts[key] !== undefined) {
      this.set({ tabs: openTab(this.state.tabs, tab) });
      if (show) this.deps.navigate({ page: "running" });
      return;
    }
    // One mount per tab: a second request while one is in flight waits for it.
    const inFlight = this.pending.get(key);
    if (inFlight !== undefined) {
      await inFlight;
      if (show) {
        this.set({ tabs: openTab(this.state.tabs, tab) });
        this.deps.navigate({ page: "running" });
      }
      return;
    }
    let done: () => void = () => undefined;
    this.pending.set(key, new Promise<void>((resolve) => (done = resolve)));
    try {
      const mount = await this.deps.mountEntry(appId, entryKey);
      this.deps.attach(mount, title, kind);
      this.set({
        mounts: { ...this.state.mounts, [key]: mount },
        tabErrors: this.withoutError(key),
        tabs: openTab(this.state.tabs, tab),
      });
      if (show) {
        this.deps.notice(null);
        this.deps.navigate({ page: "running" });
      }
    } catch (error: unknown) {
      console.error("mount_entry failed", error);
      if (show) {
        this.deps.fail(error);
      } else {
        this.set({ tabErrors: { ...this.state.tabErrors, [key]: errorText(error) } });
      }
    } finally {
      this.pending.delete(key);
      done();
    }
  }

  /** Closes a tab and ends its mount; the Running page is left when no page tab is live. */
  async close(key: string): Promise<void> {
    const mount = this.state.mounts[key];
    const tabs = closeTab(this.state.tabs, key);
    const { [key]: _closed, ...mounts } = this.state.mounts;
    // Decided before any await: a render in between must not mount a sleeping neighbour.
    const livePages = tabs.tabs.filter((t) => !isPanel(t.kind) && mounts[tabKey(t)] !== undefined);
    if (livePages.length === 0 && this.deps.currentPage() === "running") {
      this.deps.navigate({ page: "apps" });
    }
    this.set({ tabs, mounts, tabErrors: this.withoutError(key) });
    if (mount !== undefined) {
      this.deps.drop([mount.mountId]);
      try {
        await this.deps.unmount(mount.mountId);
      } catch (error: unknown) {
        this.deps.fail(error);
      }
    }
  }

  /** Shows a tab (the tab strip). */
  select(key: string): void {
    this.set({ tabs: { ...this.state.tabs, active: key } });
    this.deps.navigate({ page: "running" });
  }

  /** Drops restored tabs whose app is gone (uninstalled, or another data directory). */
  keepInstalled(installed: ReadonlySet<string>): void {
    const next = keepInstalled(this.state.tabs, installed);
    if (next !== this.state.tabs) {
      this.set({ tabs: next });
    }
  }

  /**
   * Follows mounts Rust ended because another process (the CLI) disabled, uninstalled, updated
   * or rolled back their app (`mounts:ended`): tabs close, or reopen from the active version.
   */
  async ended(ended: readonly EndedMount[]): Promise<void> {
    if (ended.length === 0) {
      await this.deps.reload();
      return;
    }
    this.deps.drop(ended.map((e) => e.mountId));
    const endedIds = new Set(ended.map((e) => e.mountId));
    this.set({ mounts: Object.fromEntries(Object.entries(this.state.mounts).filter(([, m]) => !endedIds.has(m.mountId))) });
    // A closed app is said in the same render that drops its frames, before anything is awaited;
    // a reopened one after the remount (which clears notices when it shows the tab).
    const first = ended[0];
    const reopened = first?.reason === "version-changed";
    if (first !== undefined && !reopened) this.deps.notice(endedNotice(first));
    // Tabs of disabled or uninstalled apps close before anything renders again.
    for (const e of ended.filter((e) => e.reason !== "version-changed")) {
      await this.close(tabKey(e));
    }
    await this.deps.reload();
    for (const e of ended.filter((e) => e.reason === "version-changed")) {
      // An update or rollback: show the entry again, now from the active version.
      await this.mount(e.appId, e.entryKey, this.state.tabs.active === tabKey(e));
    }
    if (first !== undefined && reopened) this.deps.notice(endedNotice(first));
  }

  /**
   * The restored (sleeping) tab to mount now: the active tab, on the Running page, once the app
   * list is loaded, when it has no mount, none in flight and no error. Null otherwise.
   */
  sleepingTabToWake(page: Route["page"], appsLoaded: boolean): Tab | null {
    const active = this.state.tabs.active;
    // `page` is the route of the render that asks; the page may have left Running since (closing
    // the last live tab navigates away in the same step that makes a sleeping neighbour active),
    // so the current page must say Running too, or the neighbour would be mounted unseen.
    if (page !== "running" || this.deps.currentPage() !== "running" || active === null || !appsLoaded) return null;
    if (this.state.mounts[active] !== undefined || this.pending.has(active) || this.state.tabErrors[active] !== undefined) return null;
    return this.state.tabs.tabs.find((t) => tabKey(t) === active) ?? null;
  }
}
