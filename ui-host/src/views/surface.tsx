// Running apps: one tab per page entry, panels in a side pane. The frames themselves are created
// by the bridge relay inside containers Preact never re-renders (`Island`).

import { Component, type JSX } from "preact";

import { isPanel, tabKey, type Tab, type TabState } from "../tabs.js";
import { approvalLabel } from "../tasks.js";
import { ApprovalPrompt } from "./approval-prompt.js";
import { Badge, Button } from "../ui/components.js";
import { DevConsoleOverlay } from "./dev-console.js";

/** A container whose children belong to someone else (the relay): rendered once, never diffed. */
export class Island extends Component<{ id: string; class: string; label?: string }> {
  override shouldComponentUpdate(): boolean {
    return false;
  }
  override render(): JSX.Element {
    return <div id={this.props.id} class={this.props.class} aria-label={this.props.label} />;
  }
}

export interface TabStatus {
  /** The tab has a live mount (a restored tab sleeps until it is selected). */
  mounted: boolean;
  prompts: number;
  /** Agent task approvals waiting for the user (of the tab's app). */
  approvals?: number;
  error: string | null;
  /** The app is a development install (`apphost dev`): the tab says DEV, as its card does. */
  dev?: boolean;
}

const DEV_BADGE = { label: "DEV", tone: "warn", title: "A development install (apphost dev): never trusted as signed" } as const;

export interface SurfaceProps {
  shown: boolean;
  state: TabState;
  status(tab: Tab): TabStatus;
  select(key: string): void;
  close(key: string): void;
}

/** The tab strip and the side pane's headers (no state: render-tested). */
export function TabStrip(props: SurfaceProps): JSX.Element {
  const pages = props.state.tabs.filter((t) => !isPanel(t.kind));
  const move = (from: number, delta: number): void => {
    const next = pages[(from + delta + pages.length) % pages.length];
    if (next !== undefined) {
      props.select(tabKey(next));
      document.getElementById(`tab-${tabKey(next)}`)?.focus();
    }
  };
  return (
    <nav class="tabs" aria-label="Running apps">
      {pages.map((t, i) => {
        const key = tabKey(t);
        const s = props.status(t);
        const active = props.state.active === key;
        return (
          <div class={`tab${active ? " tab--active" : ""}`} key={key}>
            <button
              type="button"
              class="tab-button"
              id={`tab-${key}`}
              data-testid="app-tab"
              data-app-id={t.appId}
              data-entry-key={t.entryKey}
              data-state={s.error !== null ? "error" : s.mounted ? "mounted" : "sleeping"}
              aria-current={active ? "page" : undefined}
              onClick={() => props.select(key)}
              onKeyDown={(e) => {
                if (e.key === "ArrowRight") move(i, 1);
                if (e.key === "ArrowLeft") move(i, -1);
              }}
            >
              {t.title}
              {s.dev === true && <Badge text={DEV_BADGE} class="dev-badge" data={{ testid: "tab-dev" }} />}
              {s.prompts > 0 && (
                <Badge text={{ label: "Asks permission", tone: "warn", title: "A permission prompt is waiting" }} data={{ testid: "tab-prompt" }} />
              )}
              {(s.approvals ?? 0) > 0 && (
                <span class="badge badge--warn" data-testid="tab-approvals" title={approvalLabel(s.approvals ?? 0)}>
                  <span aria-hidden="true">{s.approvals}</span>
                  <span class="visually-hidden">{approvalLabel(s.approvals ?? 0)}</span>
                </span>
              )}
              {s.error !== null && <Badge text={{ label: "Error", tone: "bad", title: s.error }} data={{ testid: "tab-error" }} />}
            </button>
            <button type="button" class="tab-close" aria-label={`Close ${t.title}`} data-testid="tab-close" onClick={() => props.close(key)}>
              ×
            </button>
          </div>
        );
      })}
    </nav>
  );
}

/** The apps whose approvals the host prompts for: the active tab's and the panels', once each. */
function promptedApps(active: Tab | null, panels: readonly Tab[]): Tab[] {
  const out: Tab[] = [];
  for (const t of active === null ? panels : [active, ...panels]) {
    if (!out.some((o) => o.appId === t.appId)) out.push(t);
  }
  return out;
}

export function Surface(props: SurfaceProps): JSX.Element {
  const active = props.state.tabs.find((t) => tabKey(t) === props.state.active) ?? null;
  const panels = props.state.tabs.filter((t) => isPanel(t.kind));
  const activeStatus = active === null ? null : props.status(active);
  return (
    <section id="surface" class="surface" aria-labelledby="surface-title" hidden={!props.shown} data-testid="surface">
      <div class="surface-bar">
        <TabStrip {...props} />
        <h2 id="surface-title" class="surface-title">
          {active?.title ?? "Running apps"}
        </h2>
        <Button id="surface-close" disabled={active === null} onClick={() => active !== null && props.close(tabKey(active))}>
          Close
        </Button>
      </div>
      {activeStatus !== null && !activeStatus.mounted && activeStatus.error === null && (
        <p class="sleeping" role="status">
          Opening…
        </p>
      )}
      {activeStatus?.error != null && (
        <div class="error-box" role="alert" data-testid="tab-error-box">
          {activeStatus.error}
        </div>
      )}
      {/* Drawn by the host, outside the frames: a running app's agent waits for the user. */}
      {promptedApps(active, panels).map((t) => (
        <ApprovalPrompt key={t.appId} appId={t.appId} appTitle={t.title} />
      ))}
      {active !== null && <DevConsoleOverlay appId={active.appId} />}
      <div class="surface-body">
        <Island id="surface-frames" class="surface-frames" />
        <aside class="side-pane" aria-label="Panels" hidden={panels.length === 0}>
          <ul class="panel-heads">
            {panels.map((p) => (
              <li key={tabKey(p)} data-testid="panel-tab" data-app-id={p.appId} data-entry-key={p.entryKey}>
                <span>{p.title}</span>
                {props.status(p).prompts > 0 && <Badge text={{ label: "Asks permission", tone: "warn", title: "" }} data={{ testid: "tab-prompt" }} />}
                <button type="button" class="tab-close" aria-label={`Close ${p.title}`} onClick={() => props.close(tabKey(p))}>
                  ×
                </button>
              </li>
            ))}
          </ul>
          <Island id="surface-panels" class="surface-panels" />
        </aside>
      </div>
    </section>
  );
}
