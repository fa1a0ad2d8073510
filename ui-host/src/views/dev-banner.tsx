// The dev loop's banner (`apphost dev`): a change held because it widens permissions or network
// domains is shown with its diff, and the user approves it here (`dev_consent`, which installs it
// only if it is still the change shown) or dismisses the banner (the change stays held; the next
// save or another change shows it again). An invalid save shows its findings.

import type { JSX } from "preact";
import { useCallback, useContext, useEffect, useState } from "preact/hooks";

import * as api from "../api.js";
import { afterFirstPaint } from "../app/after-paint.js";
import { HostContext } from "../context.js";
import { changeLabel, networkDomains, valueText } from "../format.js";
import { Badge, Button, ErrorBox } from "../ui/components.js";
import type { DevStatus } from "../types.js";

/** What a status's banner is keyed by: a dismissed banner comes back for a different change. */
export function devBannerKey(s: DevStatus): string {
  return `${s.appId}:${s.status}:${s.pendingDigest ?? s.at}`;
}

/** The window event app.tsx dispatches on every `store:changed`. */
export const STORE_CHANGED = "apphost:store-changed";

/** `dev_status`'s answer as a list: anything else (an older host, a stub answering null) is none. */
export function devStatusList(answer: unknown): DevStatus[] {
  return Array.isArray(answer) ? (answer as DevStatus[]).filter((s) => s !== null && typeof s === "object") : [];
}

/** The statuses that get a banner: held changes and invalid saves, not dismissed. */
export function devBannersShown(statuses: readonly DevStatus[], dismissed: ReadonlySet<string>): DevStatus[] {
  return statuses.filter(
    (s) => (s.status === "awaiting-consent" || s.status === "invalid") && !dismissed.has(devBannerKey(s)),
  );
}

export interface DevBannerActions {
  approve(s: DevStatus): void;
  dismiss(s: DevStatus): void;
}

/** The banners (stateless: render-tested under node). */
export function DevBannerView(props: {
  statuses: readonly DevStatus[];
  dismissed: ReadonlySet<string>;
  busy: string | null;
  error: unknown;
  actions: DevBannerActions;
}): JSX.Element | null {
  const shown = devBannersShown(props.statuses, props.dismissed);
  if (shown.length === 0 && props.error === null) {
    return null;
  }
  return (
    <div class="dev-banners">
      {props.error !== null && <ErrorBox error={props.error} title="The dev change was not installed." testid="dev-consent-error" />}
      {shown.map((s) => (
        <section
          key={devBannerKey(s)}
          class={`dev-banner dev-banner--${s.status}`}
          data-testid="dev-banner"
          data-app-id={s.appId}
          data-status={s.status}
          aria-label={`apphost dev: ${s.appId}`}
        >
          {s.status === "awaiting-consent" ? (
            <>
              <p>
                <Badge text={{ label: "DEV", tone: "warn", title: "apphost dev" }} /> <strong>{s.appId}</strong>: the saved
                change widens what the app may do. It is not installed until you approve it
                {s.version !== null ? ` (v${s.version} keeps running)` : ""}.
              </p>
              <ul class="dev-diff" data-testid="dev-diff">
                {(s.pending ?? []).map((p) => {
                  const label = changeLabel(p.change);
                  const domains = networkDomains(p.domains);
                  return (
                    <li key={p.key} data-key={p.key} data-change={p.change}>
                      {label !== null && <Badge text={label} />} <code>{p.key}</code> {valueText(p.scope)}{" "}
                      {valueText(p.access)}
                      {domains.length > 0 && <> · domains {domains.join(", ")}</>}
                      {p.reason !== undefined && p.reason !== null && <span class="muted"> — {valueText(p.reason)}</span>}
                      {(p.fields ?? []).map((f) => (
                        <span key={f.field} class="muted">
                          {" "}
                          ({f.field}: {valueText(f.old)} → {valueText(f.new)})
                        </span>
                      ))}
                    </li>
                  );
                })}
              </ul>
              <div class="row">
                <Button
                  variant="primary"
                  data-testid="dev-approve"
                  disabled={props.busy !== null || s.pendingDigest === undefined}
                  onClick={() => props.actions.approve(s)}
                >
                  Approve and install
                </Button>
                <Button data-testid="dev-dismiss" onClick={() => props.actions.dismiss(s)}>
                  Dismiss
                </Button>
              </div>
            </>
          ) : (
            <>
              <p>
                <Badge text={{ label: "DEV", tone: "warn", title: "apphost dev" }} /> <strong>{s.appId}</strong>: the last save
                is not valid; {s.version !== null ? `v${s.version}` : "the last good version"} keeps running.
              </p>
              <ul class="dev-findings">
                {s.findings.slice(0, 10).map((f, i) => (
                  <li key={i}>
                    <code>{f.code}</code> {f.path}: {f.message}
                  </li>
                ))}
              </ul>
              <Button data-testid="dev-dismiss" onClick={() => props.actions.dismiss(s)}>
                Dismiss
              </Button>
            </>
          )}
        </section>
      ))}
    </div>
  );
}

/** The banners, fed by `dev_status` again whenever the app list reloads (a store change). */
export function DevBanners(): JSX.Element | null {
  const host = useContext(HostContext);
  const [statuses, setStatuses] = useState<DevStatus[]>([]);
  const [dismissed, setDismissed] = useState<ReadonlySet<string>>(new Set());
  const [busy, setBusy] = useState<string | null>(null);
  const [error, setError] = useState<unknown>(null);
  const refresh = useCallback(async () => {
    try {
      setStatuses(devStatusList(await api.devStatus()));
    } catch {
      setStatuses([]); // an older host without dev_status: no banner
    }
  }, []);
  useEffect(() => {
    let live = true;
    // Not on the first frame's path (app/after-paint.ts).
    afterFirstPaint(() => {
      if (live) void refresh();
    });
    const onChange = (): void => void refresh();
    window.addEventListener(STORE_CHANGED, onChange);
    return () => {
      live = false;
      window.removeEventListener(STORE_CHANGED, onChange);
    };
  }, [host.apps, refresh]);
  const actions: DevBannerActions = {
    approve: (s) => {
      if (s.pendingDigest === undefined) return;
      setBusy(s.appId);
      void api
        .devConsent(s.appId, s.pendingDigest)
        .then(async () => {
          setError(null);
          await host.reload();
        })
        .catch((e: unknown) => setError(e))
        .finally(() => {
          setBusy(null);
          void refresh();
        });
    },
    dismiss: (s) => setDismissed((d) => new Set([...d, devBannerKey(s)])),
  };
  return <DevBannerView statuses={statuses} dismissed={dismissed} busy={busy} error={error} actions={actions} />;
}
