// The host UI shell: a composition of the hooks under app/ (route, app list, relay and prompts,
// the mount controller = running tabs and their frames, approvals, theme, the review flow, drag
// and drop, the start-up and the `next_events` loop) and the page chrome around the routed view.

import type { JSX } from "preact";
import { useEffect, useLayoutEffect, useMemo, useRef, useState } from "preact/hooks";

import { ShellHeader } from "./app/header.js";
import type { Notice } from "./app/mount-controller.js";
import { PathInstall } from "./app/path-install.js";
import { devAppNames, loadState, summaryLine, tabStatus } from "./app/shell-state.js";
import { useApprovals } from "./app/use-approvals.js";
import { useApps } from "./app/use-apps.js";
import { useDrop } from "./app/use-drop.js";
import { useHostEvents, useStartup, type HostEventDeps } from "./app/use-host-events.js";
import { useMounts } from "./app/use-mounts.js";
import { useRelay } from "./app/use-relay.js";
import { useReview } from "./app/use-review.js";
import { useRoute } from "./app/use-route.js";
import { useTheme } from "./app/use-theme.js";
import { useUiLaunch } from "./app/use-ui-launch.js";
import { HostContext, type Host } from "./context.js";
import { errorText } from "./format.js";
import { isPanel } from "./tabs.js";
import { afterFirstPaint, firstViewShown } from "./app/after-paint.js";
import { lazyPage, preloadPages } from "./app/lazy-page.js";
import { AppListPage } from "./views/app-list.js";
import { BrowsePage } from "./views/browse.js";
import { DevBanners } from "./views/dev-banner.js";
import { ReviewSheet } from "./views/review.js";
import { Surface } from "./views/surface.js";
import { UpdateNotice } from "./views/update-notice.js";

// Not the first view: their code loads after the first paint (app/lazy-page.tsx).
const AppDetailPage = lazyPage(async () => (await import("./views/app-detail.js")).AppDetailPage);
const GrantsPage = lazyPage(async () => (await import("./views/pages.js")).GrantsPage);
const DiagnosticsPage = lazyPage(async () => (await import("./views/pages.js")).DiagnosticsPage);
const SettingsPage = lazyPage(async () => (await import("./views/pages.js")).SettingsPage);
const ModelPage = lazyPage(async () => (await import("./views/model.js")).ModelPage);
const TasksPage = lazyPage(async () => (await import("./views/tasks.js")).TasksPage);

export function App(): JSX.Element {
  const [banner, setBanner] = useState<unknown>(null);
  const [notice, setNotice] = useState<Notice | null>(null);
  const { route, navigate } = useRoute();
  const { apps, loadError, reload, latest } = useApps();
  const relay = useRelay(setBanner);
  const { approvals, refresh: refreshApprovals } = useApprovals();
  const { controller, snapshot } = useMounts(relay, { apps: latest, navigate, reload, fail: setBanner, notice: setNotice }, route, apps);
  const review = useReview({ reload, navigate, notice: setNotice });
  // Read once, on start: everything here is stable (state setters, callbacks without deps, the controller).
  const events: HostEventDeps = {
    reload,
    refreshApprovals,
    open: (appId, entryKey) => controller.mount(appId, entryKey, true),
    reviewPath: review.reviewPath,
    progress: (done, total) => review.setProgress({ done, total }),
    mountsEnded: (ended) => controller.ended(ended),
    outgoing: async (actions) => {
      await relay.current()?.execute(actions);
    },
    fail: setBanner,
  };
  useStartup(events);
  useHostEvents(events);
  const { theme, setTheme } = useTheme(relay.current);
  const dragging = useDrop(review.reviewFile);
  const fileInput = useRef<HTMLInputElement>(null);
  const ui = useUiLaunch({ route, navigate, controller, relay, apps, fail: setBanner });

  const host = useMemo<Host>(
    () => ({
      apps,
      reload,
      navigate,
      openEntry: (appId, entryKey) => controller.mount(appId, entryKey, true),
      reviewFile: review.reviewFile,
      reviewPath: review.reviewPath,
      reviewCatalog: review.reviewCatalog,
      fail: setBanner,
      openArtifact: ui.openArtifact,
    }),
    // `ui.openArtifact` calls stable deps only.
    // eslint-disable-next-line react-hooks/exhaustive-deps
    [apps, reload, navigate, controller, review.reviewFile, review.reviewPath, review.reviewCatalog],
  );

  // body[data-state] and the summary line: the desktop e2e waits on them. Set before the frame
  // that shows the list (a layout effect), not one frame after it.
  const state = loadState(apps, loadError);
  // Work the first frame does not need waits for it (app/after-paint.ts).
  useLayoutEffect(() => {
    document.body.dataset.state = state;
    if (state !== "loading") firstViewShown();
  }, [state]);
  // Once the list is painted, the other pages' code loads.
  useEffect(() => afterFirstPaint(preloadPages), []);
  const shownError = loadError ?? banner;
  const { tabs } = snapshot;
  const appNames = (apps ?? []).map((a) => a.name);
  const devApps = devAppNames(apps);

  return (
    <HostContext.Provider value={host}>
      <ShellHeader page={route.page} pageTabs={tabs.tabs.filter((t) => !isPanel(t.kind)).length} summary={summaryLine(state, apps)} onPalette={ui.openPalette} />
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
        <UpdateNotice />
        <p id="surface-notice" class="surface-notice" role="status" aria-live="polite" data-app-id={notice?.appId} data-reason={notice?.reason}>
          {notice?.text ?? ""}
        </p>
        <Surface
          shown={route.page === "running" && tabs.tabs.length > 0}
          state={tabs}
          status={(t) => tabStatus(t, snapshot.mounts, snapshot.tabErrors, relay.prompts, approvals, devApps)}
          select={(key) => controller.select(key)}
          close={(key) => void controller.close(key)}
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
          <AppListPage onAdd={() => fileInput.current?.click()} error={loadError} shown={route.page === "apps"} />
          <PathInstall reviewPath={review.reviewPath} />
        </div>
        {route.page === "app" && <AppDetailPage appId={route.appId} tab={route.tab} />}
        {route.page === "browse" && <BrowsePage />}
        {route.page === "grants" && <GrantsPage />}
        {route.page === "diagnostics" && <DiagnosticsPage apps={appNames} />}
        {route.page === "settings" && <SettingsPage theme={theme} setTheme={setTheme} />}
        {route.page === "model" && <ModelPage />}
        {route.page === "tasks" && <TasksPage apps={appNames} />}
        <input
          ref={fileInput}
          type="file"
          accept=".zip,.agentapp,application/zip,application/vnd.agentapp+zip"
          class="visually-hidden"
          data-testid="add-app-file"
          aria-label="Choose an app package (.zip)"
          tabIndex={-1}
          onChange={(e) => {
            const file = e.currentTarget.files?.[0];
            if (file !== undefined) review.reviewFile(file);
            e.currentTarget.value = "";
          }}
        />
      </main>
      {dragging && (
        <div class="drop-overlay" aria-hidden="true">
          Drop the package to review it
        </div>
      )}
      {ui.palette}
      {review.review !== null && <ReviewSheet state={review.review} progress={review.progress} onConsent={(o) => void review.consent(o)} onCancel={review.cancel} />}
    </HostContext.Provider>
  );
}
