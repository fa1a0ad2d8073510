// The host UI shell: header and navigation, the routed page, the running-app surface, the review
// sheet, and the loops that follow Rust (events, mounts ended elsewhere).

import type { JSX } from "preact";
import { useCallback, useEffect, useMemo, useRef, useState } from "preact/hooks";

import * as api from "./api.js";
import { BridgeRelay } from "./bridge-relay.js";
import { HostContext, type Host } from "./context.js";
import { errorText, summaryText, toHostError } from "./format.js";
import { parseRoute, routeHash, type Route } from "./router.js";
import { launchFromPath } from "./transport.js";
import {
  closeTab as closeTabState,
  isPanel,
  keepInstalled,
  openTab,
  restoreTabs,
  saveTabs,
  tabKey,
  TABS_STORAGE_KEY,
  type Tab,
  type TabState,
} from "./tabs.js";
import { applyTheme, effectiveTheme, parseThemeChoice, THEME_STORAGE_KEY, type ThemeChoice } from "./theme.js";
import type { AppSummary, EndedMount, InstallProgress, Mount, Outgoing } from "./types.js";
import { AppDetailPage } from "./views/app-detail.js";
import { AppListPage } from "./views/app-list.js";
import { DevBanners, STORE_CHANGED } from "./views/dev-banner.js";
import { ModelPage } from "./views/model.js";
import { TasksPage } from "./views/tasks.js";
import { approvalsByApp, tasksChanged } from "./tasks.js";
import { DiagnosticsPage, GrantsPage, SettingsPage } from "./views/pages.js";
import { ReviewSheet, type ReviewPhase } from "./views/review.js";
import { Surface, type TabStatus } from "./views/surface.js";

function storage(): Storage | null {
  try {
    return window.localStorage;
  } catch {
    return null;
  }
}

/** Whether a failure means "this backend has no such command" (older shells). */
function isMissingCommand(error: unknown): boolean {
  const e = toHostError(error);
  return e.code === "api.unknown_command" || /not found/.test(e.message);
}

const NAV: Array<[Route["page"], string]> = [
  ["apps", "Apps"],
  ["running", "Running"],
  ["grants", "Grants"],
  ["diagnostics", "Diagnostics"],
  ["settings", "Settings"],
  ["model", "Model"],
  ["tasks", "Tasks"],
];

interface Notice {
  appId: string;
  reason: string;
  text: string;
}

export function App(): JSX.Element {
  const [apps, setApps] = useState<AppSummary[] | null>(null);
  const [loadError, setLoadError] = useState<unknown>(null);
  const [route, setRoute] = useState<Route>(() => parseRoute(location.hash));
  const [tabs, setTabs] = useState<TabState>(() => restoreTabs(storage()?.getItem(TABS_STORAGE_KEY) ?? null));
  const [mounts, setMounts] = useState<Record<string, Mount>>({});
  const [tabErrors, setTabErrors] = useState<Record<string, string>>({});
  const [prompts, setPrompts] = useState<Record<string, number>>({});
  const [approvals, setApprovals] = useState<Map<string, number>>(new Map());
  const [review, setReview] = useState<ReviewPhase | null>(null);
  const [progress, setProgress] = useState<{ done: number; total: number } | null>(null);
  const [notice, setNotice] = useState<Notice | null>(null);
  const [banner, setBanner] = useState<unknown>(null);
  const [dragging, setDragging] = useState(false);
  const [theme, setThemeChoice] = useState<ThemeChoice>(() => parseThemeChoice(storage()?.getItem(THEME_STORAGE_KEY) ?? null));
  const [systemDark, setSystemDark] = useState(() => window.matchMedia?.("(prefers-color-scheme: dark)").matches ?? false);

  // Refs for the async loops (they outlive a render).
  const appsRef = useRef<AppSummary[] | null>(null);
  const mountsRef = useRef(mounts);
  mountsRef.current = mounts;
  const tabsRef = useRef(tabs);
  tabsRef.current = tabs;
  const rendered = useRef<string | null>(null);
  const relayRef = useRef<BridgeRelay | null>(null);
  const fileInput = useRef<HTMLInputElement>(null);
  const pendingMounts = useRef(new Map<string, Promise<void>>());

  const relay = useCallback((): BridgeRelay => {
    if (relayRef.current === null) {
      const frames = document.getElementById("surface-frames");
      if (frames === null) {
        throw new Error("host UI is missing #surface-frames");
      }
      relayRef.current = new BridgeRelay(api.relayTransport, frames, (error) => {
        console.error("bridge relay", error);
        setBanner(error);
      }, {
        prompt: (mountId, pending) =>
          setPrompts((p) => ({ ...p, [mountId]: Math.max(0, (p[mountId] ?? 0) + (pending ? 1 : -1)) })),
      });
    }
    return relayRef.current;
  }, []);

  const navigate = useCallback((next: Route) => {
    const hash = routeHash(next);
    if (location.hash !== hash) {
      location.hash = hash;
    }
    setRoute(next);
  }, []);

  const reload = useCallback(async () => {
    try {
      const next = await api.listApps();
      // Polls reload often: re-render only on change, so a list the user is clicking in is not
      // replaced under the pointer.
      const text = JSON.stringify(next);
      if (rendered.current !== text) {
        rendered.current = text;
        appsRef.current = next;
        setApps(next);
      }
      setLoadError(null);
    } catch (error: unknown) {
      console.error("list_apps failed", error);
      rendered.current = null;
      setLoadError(error);
    }
  }, []);

  /** Mounts a tab's entry; `show` makes it the active tab on the Running page. */
  const mountTab = useCallback(
    async (appId: string, entryKey: string, show: boolean): Promise<void> => {
      const app = appsRef.current?.find((a) => a.name === appId);
      const entry = app?.entries?.find((e) => e.key === entryKey);
      const title = `${app?.displayName ?? appId} · ${entry?.title ?? entryKey}`;
      const key = tabKey({ appId, entryKey });
      const existing = mountsRef.current[key];
      const kind = entry?.kind ?? tabsRef.current.tabs.find((t) => tabKey(t) === key)?.kind ?? "page";
      const tab: Tab = { appId, entryKey, kind, title };
      if (existing !== undefined) {
        setTabs((s) => openTab(s, tab));
        if (show) navigate({ page: "running" });
        return;
      }
      // One mount per tab: a second request while one is in flight waits for it.
      const inFlight = pendingMounts.current.get(key);
      if (inFlight !== undefined) {
        await inFlight;
        if (show) {
          setTabs((s) => openTab(s, tab));
          navigate({ page: "running" });
        }
        return;
      }
      let done: () => void = () => undefined;
      pendingMounts.current.set(key, new Promise<void>((resolve) => (done = resolve)));
      try {
        const mount = await api.mountEntry(appId, entryKey);
        const container = isPanel(kind) ? document.getElementById("surface-panels") ?? undefined : undefined;
        relay().attach(mount, title, container);
        mountsRef.current = { ...mountsRef.current, [key]: mount };
        setMounts((m) => ({ ...m, [key]: mount }));
        setTabErrors(({ [key]: _gone, ...rest }) => rest);
        setTabs((s) => openTab(s, tab));
        if (show) {
          setNotice(null);
          navigate({ page: "running" });
        }
      } catch (error: unknown) {
        console.error("mount_entry failed", error);
        if (show) {
          setBanner(error);
        } else {
          setTabErrors((e) => ({ ...e, [key]: errorText(error) }));
        }
      } finally {
        pendingMounts.current.delete(key);
        done();
      }
    },
    [navigate, relay],
  );

  const closeTab = useCallback(
    async (key: string): Promise<void> => {
      const mount = mountsRef.current[key];
      const next = closeTabState(tabsRef.current, key);
      const live = { ...mountsRef.current };
      delete live[key];
      mountsRef.current = live;
      tabsRef.current = next;
      // Decided before any await: a render in between must not mount a sleeping neighbour.
      const livePages = next.tabs.filter((t) => !isPanel(t.kind) && live[tabKey(t)] !== undefined);
      if (livePages.length === 0 && parseRoute(location.hash).page === "running") {
        navigate({ page: "apps" });
      }
      setTabs(next);
      setMounts(live);
      setTabErrors(({ [key]: _gone, ...rest }) => rest);
      if (mount !== undefined) {
        relay().drop([mount.mountId]);
        try {
          await api.unmount(mount.mountId);
        } catch (error: unknown) {
          setBanner(error);
        }
      }
    },
    [navigate, relay],
  );

  /**
   * Follows mounts Rust ended because another process (the CLI) disabled, uninstalled, updated
   * or rolled back their app (`mounts:ended`): tabs close, or reopen from the active version.
   */
  const mountsEnded = useCallback(async (ended: readonly EndedMount[]): Promise<void> => {
    if (ended.length === 0) {
      await reload();
      return;
    }
    relayRef.current?.drop(ended.map((e) => e.mountId));
    const endedIds = new Set(ended.map((e) => e.mountId));
    const live = Object.fromEntries(Object.entries(mountsRef.current).filter(([, m]) => !endedIds.has(m.mountId)));
    mountsRef.current = live;
    setMounts(live);
    // A closed app is said in the same render that drops its frames, before anything is awaited;
    // a reopened one after the remount (which clears notices when it shows the tab).
    const first = ended[0];
    const say = (): void => {
      if (first === undefined) return;
      setNotice({
        appId: first.appId,
        reason: first.reason,
        text:
          first.reason === "version-changed"
            ? `${first.appId} changed version outside this window and was reopened.`
            : `${first.appId} was closed: it was ${first.reason} outside this window.`,
      });
    };
    if (first?.reason !== "version-changed") say();
    // Tabs of disabled or uninstalled apps close before anything renders again.
    for (const e of ended.filter((e) => e.reason !== "version-changed")) {
      await closeTab(tabKey(e));
    }
    await reload();
    for (const e of ended.filter((e) => e.reason === "version-changed")) {
      // An update or rollback: show the entry again, now from the active version.
      await mountTab(e.appId, e.entryKey, tabsRef.current.active === tabKey(e));
    }
    if (first?.reason === "version-changed") say();
  }, [closeTab, mountTab, reload]);
  const mountsEndedRef = useRef(mountsEnded);
  mountsEndedRef.current = mountsEnded;

  /** Pending task approvals per app, for the running tabs' badges. */
  const refreshApprovals = useCallback(async (): Promise<void> => {
    try {
      setApprovals(approvalsByApp(await api.listTasks(undefined, "waiting_approval")));
    } catch (error: unknown) {
      if (!isMissingCommand(error)) console.warn("list_tasks failed", error);
    }
  }, []);

  // Start: the list, then the entry the window was opened for (a launch target, or the page
  // path `/apps/<app>/<entry>`), then the follow loops.
  useEffect(() => {
    let stopped = false;
    const onHash = (): void => setRoute(parseRoute(location.hash));
    window.addEventListener("hashchange", onHash);
    const onFocus = (): void => void reload();
    window.addEventListener("focus", onFocus);
    void refreshApprovals();
    void (async () => {
      await reload();
      const fromPath = launchFromPath(location.pathname);
      if (fromPath !== null) {
        // The deep link is consumed: the page lives at "/" from now on, so in-page links
        // ("#/grants", "#content"), which the deep-link page's <base href="/"> resolves against
        // "/", stay in this document instead of loading "/" afresh and dropping every frame.
        history.replaceState(history.state, "", `/${location.hash}`);
      }
      let target = fromPath;
      if (target === null) {
        try {
          target = await api.launchTarget();
        } catch (error: unknown) {
          if (!isMissingCommand(error)) setBanner(error);
        }
      }
      if (target !== null) {
        await mountTab(target.appId, target.entryKey, true);
      }
    })();
    // Host→UI pushes (docs/host-api.md): one long poll at a time; Rust runs the mount watcher
    // while it waits.
    void (async () => {
      let after = 0;
      while (!stopped) {
        try {
          const batch = await api.events(after, 25_000);
          after = batch.next;
          for (const event of batch.events) {
            switch (event.kind) {
              case "install:progress": {
                const p = event.payload as InstallProgress;
                setProgress({ done: p.bytesVerified, total: p.bytesTotal });
                break;
              }
              case "store:changed":
                await reload();
                // Views with their own store data (the dev banner) reload too, even when the
                // app list did not change (a dev app's held change is a settings row).
                window.dispatchEvent(new Event(STORE_CHANGED));
                break;
              case "mounts:ended":
                await mountsEndedRef.current(event.payload as EndedMount[]);
                break;
              case "outgoing":
                // Bridge actions produced off the request path, executed like a bridge_message answer.
                await relayRef.current?.execute(event.payload as Outgoing[]);
                tasksChanged();
                break;
              case "tasks:changed":
                tasksChanged();
                void refreshApprovals();
                break;
              default:
                break; // kinds for newer views
            }
          }
        } catch (error: unknown) {
          console.warn("next_events failed", error);
          await new Promise((r) => setTimeout(r, 1000));
        }
      }
    })();
    return () => {
      stopped = true;
      window.removeEventListener("hashchange", onHash);
      window.removeEventListener("focus", onFocus);
    };
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, []);

  // Restored tabs whose app is gone (uninstalled, or another data directory) are dropped.
  useEffect(() => {
    if (apps === null) return;
    const next = keepInstalled(tabsRef.current, new Set(apps.map((a) => a.name)));
    if (next !== tabsRef.current) {
      tabsRef.current = next;
      setTabs(next);
    }
  }, [apps]);

  // Tabs survive a restart.
  useEffect(() => {
    storage()?.setItem(TABS_STORAGE_KEY, saveTabs(tabs));
  }, [tabs]);

  // Only the active tab's frame is shown; the others keep running, hidden. Rust is told each
  // change (`set_visibility`), and tells the frame (`host:visibility`).
  useEffect(() => {
    const activeMount = tabs.active === null ? undefined : mounts[tabs.active]?.mountId;
    for (const frame of document.querySelectorAll<HTMLIFrameElement>("#surface-frames iframe")) {
      frame.hidden = frame.dataset.mountId !== activeMount;
      const visible = !frame.hidden && route.page === "running";
      const mountId = frame.dataset.mountId;
      // A new mount starts visible on the Rust side.
      if (mountId !== undefined && (frame.dataset.visible ?? "true") !== String(visible)) {
        frame.dataset.visible = String(visible);
        api
          .setVisibility(mountId, visible)
          .then((outgoing) => relayRef.current?.execute(outgoing))
          .catch((error: unknown) => {
            if (!isMissingCommand(error)) console.warn("set_visibility failed", error);
          });
      }
    }
    // A restored (sleeping) tab mounts when it is shown.
    if (
      route.page === "running" &&
      tabs.active !== null &&
      activeMount === undefined &&
      mountsRef.current[tabs.active] === undefined &&
      !pendingMounts.current.has(tabs.active) &&
      tabErrors[tabs.active] === undefined
    ) {
      const tab = tabs.tabs.find((t) => tabKey(t) === tabs.active);
      if (tab !== undefined && apps !== null) {
        void mountTab(tab.appId, tab.entryKey, false);
      }
    }
  }, [tabs, mounts, route, apps, tabErrors, mountTab]);

  // Theme: the page, Rust (which sends `theme:update` to ready frames), and the system's changes.
  useEffect(() => {
    const media = window.matchMedia?.("(prefers-color-scheme: dark)");
    const onChange = (e: MediaQueryListEvent): void => setSystemDark(e.matches);
    media?.addEventListener("change", onChange);
    return () => media?.removeEventListener("change", onChange);
  }, []);
  const effective = effectiveTheme(theme, systemDark);
  useEffect(() => {
    applyTheme(effective);
    storage()?.setItem(THEME_STORAGE_KEY, theme);
    api
      .setTheme(theme, effective)
      .then((answer) => {
        if (Array.isArray(answer?.outgoing)) {
          void relayRef.current?.execute(answer.outgoing);
        }
      })
      .catch((error: unknown) => {
        if (!isMissingCommand(error)) console.warn("set_theme failed", error);
      });
  }, [theme, effective]);

  // The review flow.
  const reviewFile = useCallback((file: File) => {
    void (async () => {
      setProgress(null);
      setReview({ phase: "uploading", fileName: file.name, bytes: file.size });
      try {
        const bytes = new Uint8Array(await file.arrayBuffer());
        const upload = await api.uploadPackage(bytes);
        setReview({ phase: "reviewing", fileName: file.name });
        const r = await api.reviewInstall({ uploadId: upload.uploadId });
        setReview({ phase: "review", review: r });
      } catch (error: unknown) {
        setReview({ phase: "failed", error, review: null, fileName: file.name });
      }
    })();
  }, []);
  const reviewPath = useCallback((path: string) => {
    void (async () => {
      setProgress(null);
      setReview({ phase: "reviewing", fileName: path });
      try {
        setReview({ phase: "review", review: await api.reviewInstall({ path }) });
      } catch (error: unknown) {
        setReview({ phase: "failed", error, review: null, fileName: path });
      }
    })();
  }, []);
  const consent = async (options: { acceptPublisherChange: boolean; reattachData: boolean }): Promise<void> => {
    if (review?.phase !== "review") return;
    const r = review.review;
    setReview({ phase: "installing", review: r });
    try {
      const opts: api.InstallOptions = {};
      if (r.publisherChange?.needsAcceptance === true) opts.acceptPublisherChange = options.acceptPublisherChange;
      if (r.existingData) opts.reattachData = options.reattachData;
      const summary = await api.install(r.reviewId, opts);
      setReview(null);
      setProgress(null);
      await reload();
      setNotice({ appId: summary.name, reason: r.mode === "update" ? "updated" : "installed", text: `${summary.displayName ?? summary.name} ${summary.activeVersion} is ${r.mode === "update" ? "updated" : "installed"}.` });
      navigate(r.mode === "update" ? { page: "app", appId: summary.name, tab: "versions" } : { page: "apps" });
    } catch (error: unknown) {
      setReview({ phase: "failed", error, review: r, fileName: r.app.id });
    }
  };
  const cancel = (): void => {
    const current = review;
    setReview(null);
    setProgress(null);
    // A review that was shown (or whose install failed) is dropped on the Rust side too.
    const id = current?.phase === "review" || current?.phase === "failed" ? current.review?.reviewId ?? null : null;
    if (id !== null) {
      api.cancelReview(id).catch((error: unknown) => console.warn("cancel_review failed", error));
    }
  };

  // Drag and drop a package anywhere on the window.
  useEffect(() => {
    const hasFiles = (e: DragEvent): boolean => e.dataTransfer?.types.includes("Files") ?? false;
    const over = (e: DragEvent): void => {
      if (hasFiles(e)) {
        e.preventDefault();
        setDragging(true);
      }
    };
    const leave = (e: DragEvent): void => {
      if (e.relatedTarget === null) setDragging(false);
    };
    const drop = (e: DragEvent): void => {
      if (!hasFiles(e)) return;
      e.preventDefault();
      setDragging(false);
      const file = e.dataTransfer?.files[0];
      if (file !== undefined) reviewFile(file);
    };
    window.addEventListener("dragover", over);
    window.addEventListener("dragleave", leave);
    window.addEventListener("drop", drop);
    return () => {
      window.removeEventListener("dragover", over);
      window.removeEventListener("dragleave", leave);
      window.removeEventListener("drop", drop);
    };
  }, [reviewFile]);

  const host = useMemo<Host>(
    () => ({
      apps,
      reload,
      navigate,
      openEntry: (appId, entryKey) => mountTab(appId, entryKey, true),
      reviewFile,
      reviewPath,
      fail: setBanner,
    }),
    [apps, reload, navigate, mountTab, reviewFile, reviewPath],
  );

  // body[data-state] and the summary line: the desktop e2e waits on them.
  const state = loadError !== null && apps === null ? "error" : apps === null ? "loading" : apps.length > 0 ? "ready" : "empty";
  useEffect(() => {
    document.body.dataset.state = state;
  }, [state]);
  const summary = state === "error" ? "Could not load the installed apps" : apps === null ? "Loading installed apps…" : summaryText(apps.length);
  const shownError = loadError ?? banner;
  const status = (t: Tab): TabStatus => {
    const m = mounts[tabKey(t)];
    return {
      mounted: m !== undefined,
      prompts: m === undefined ? 0 : prompts[m.mountId] ?? 0,
      approvals: approvals.get(t.appId) ?? 0,
      error: tabErrors[tabKey(t)] ?? null,
    };
  };
  const pageTabs = tabs.tabs.filter((t) => !isPanel(t.kind)).length;
  const [pathInput, setPathInput] = useState("");

  return (
    <HostContext.Provider value={host}>
      <a class="skip-link" href="#content">
        Skip to content
      </a>
      <header class="top">
        <div class="brand">
          <span class="brand-mark" aria-hidden="true">
            A
          </span>
          <h1>AppHost</h1>
        </div>
        <nav class="main-nav" aria-label="AppHost">
          {NAV.map(([page, label]) => (
            <a
              key={page}
              href={`#/${page}`}
              data-testid={`nav-${page}`}
              aria-current={route.page === page || (page === "apps" && route.page === "app") ? "page" : undefined}
            >
              {label}
              {page === "running" && pageTabs > 0 && <span class="count"> ({pageTabs})</span>}
            </a>
          ))}
        </nav>
        <p id="summary" class="summary" aria-live="polite">
          {summary}
        </p>
      </header>
      <main id="content" tabIndex={-1}>
        <div id="error" class="error-banner" role="alert" hidden={shownError === null}>
          {shownError !== null && errorText(shownError)}
          {banner !== null && loadError === null && (
            <button type="button" class="link-button" onClick={() => setBanner(null)} aria-label="Dismiss the error">
              Dismiss
            </button>
          )}
        </div>
        <DevBanners />
        <p id="surface-notice" class="surface-notice" role="status" aria-live="polite" data-app-id={notice?.appId} data-reason={notice?.reason}>
          {notice?.text ?? ""}
        </p>
        <Surface
          shown={route.page === "running" && tabs.tabs.length > 0}
          state={tabs}
          status={status}
          select={(key) => {
            setTabs((s) => ({ ...s, active: key }));
            navigate({ page: "running" });
          }}
          close={(key) => void closeTab(key)}
        />
        {route.page === "running" && tabs.tabs.length === 0 && (
          <section class="page" aria-labelledby="running-heading">
            <h2 id="running-heading">Running apps</h2>
            <p class="empty-note">No app is open. Open one from the Apps page.</p>
          </section>
        )}
        {/* The list stays mounted (hidden on other pages): its search survives, and the desktop e2e
            reads rows while an app is open. */}
        <div hidden={route.page !== "apps"}>
          <AppListPage onAdd={() => fileInput.current?.click()} error={loadError} />
          <details class="path-install">
            <summary>Install from a folder or file path on this computer</summary>
            <form
              class="list-tools"
              onSubmit={(e) => {
                e.preventDefault();
                if (pathInput.trim() !== "") reviewPath(pathInput.trim());
              }}
            >
              <label class="field field--inline">
                <span>Path</span>
                <input value={pathInput} onInput={(e) => setPathInput(e.currentTarget.value)} data-testid="install-path" />
              </label>
              <button type="submit" class="button">
                Review
              </button>
            </form>
          </details>
        </div>
        {route.page === "app" && <AppDetailPage appId={route.appId} tab={route.tab} />}
        {route.page === "grants" && <GrantsPage />}
        {route.page === "diagnostics" && <DiagnosticsPage apps={(apps ?? []).map((a) => a.name)} />}
        {route.page === "settings" && <SettingsPage theme={theme} setTheme={setThemeChoice} />}
        {route.page === "model" && <ModelPage />}
        {route.page === "tasks" && <TasksPage apps={(apps ?? []).map((a) => a.name)} />}
        <input
          ref={fileInput}
          type="file"
          accept=".zip,application/zip"
          class="visually-hidden"
          data-testid="add-app-file"
          aria-label="Choose an app package (.zip)"
          tabIndex={-1}
          onChange={(e) => {
            const file = e.currentTarget.files?.[0];
            if (file !== undefined) reviewFile(file);
            e.currentTarget.value = "";
          }}
        />
      </main>
      {dragging && (
        <div class="drop-overlay" aria-hidden="true">
          Drop the package to review it
        </div>
      )}
      {review !== null && <ReviewSheet state={review} progress={progress} onConsent={(o) => void consent(o)} onCancel={cancel} />}
    </HostContext.Provider>
  );
}
