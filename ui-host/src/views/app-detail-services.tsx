// The app detail page's "Services" section: the app's backend services (docs/services.md) with
// their state, restarts and last exit, Start / Stop, and a bounded view of one service's log
// (its stderr, the last 64 KiB); a `server-assisted` remote service shows its endpoint and data
// boundary and the Allow / Revoke of host policy. Rust decides everything (what may run, the sandbox, the
// audit); this only shows and asks. Log text only ever becomes a text node.

import type { JSX } from "preact";
import { useCallback, useEffect, useState } from "preact/hooks";

import * as api from "../api.js";
import type { ServiceLog, ServiceStatus } from "../generated/host-api.js";
import type { BadgeText } from "../format.js";
import { Badge, Button, Empty, ErrorBox, Loading } from "../ui/components.js";

function stateBadge(s: ServiceStatus): BadgeText {
  const tone = s.state === "running" || s.state === "remote" ? "good" : s.state === "blocked" ? "bad" : s.state === "degraded" ? "warn" : "muted";
  return { label: s.state, tone, title: s.reason ?? s.state };
}

export function ServicesSection(props: { appId: string }): JSX.Element | null {
  const [services, setServices] = useState<ServiceStatus[] | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [log, setLog] = useState<{ key: string; log: ServiceLog } | null>(null);
  const [busy, setBusy] = useState(false);
  const reload = useCallback(async () => {
    try {
      setServices(await api.call("app_services", { appId: props.appId }));
      setError(null);
    } catch (e: unknown) {
      setError(e);
    }
  }, [props.appId]);
  useEffect(() => {
    void reload();
    const timer = setInterval(() => void reload(), 2000);
    return () => clearInterval(timer);
  }, [reload]);
  const act = async (f: () => Promise<unknown>): Promise<void> => {
    setBusy(true);
    try {
      await f();
      setError(null);
    } catch (e: unknown) {
      setError(e);
    } finally {
      setBusy(false);
      await reload();
    }
  };
  const showLog = (key: string): void =>
    void act(async () => setLog({ key, log: await api.call("service_logs", { appId: props.appId, service: key }) }));
  if (services !== null && services.length === 0 && error === null) return null;
  return (
    <section data-testid="detail-services" aria-labelledby="services-heading">
      <h3 id="services-heading">Services</h3>
      <p class="muted">Backend services this app ships. AppHost runs them in a sandbox, starts them when the app needs them and stops them when idle.</p>
      {error !== null && <ErrorBox error={error} />}
      {services === null ? (
        error === null && <Loading />
      ) : services.length === 0 ? (
        <Empty>This app declares no services.</Empty>
      ) : (
        <ul class="plain service-list">
          {services.map((s) => (
            <li key={s.key} data-testid={`service-${s.key}`}>
              <strong>{s.key}</strong> <Badge text={stateBadge(s)} data={{ testid: `service-${s.key}-state` }} />{" "}
              <span class="muted">
                {s.protocol}
                {s.required ? ", required" : ""}
                {s.pid !== undefined && s.pid !== null ? `, pid ${s.pid}` : ""}, {s.restarts} restart{s.restarts === 1 ? "" : "s"}
              </span>
              {s.code !== undefined && s.code !== null && (
                <p class="muted" data-testid={`service-${s.key}-reason`}>
                  {s.code}: {s.reason ?? ""}
                </p>
              )}
              {s.lastExit !== undefined && s.lastExit !== null && <p class="muted">Last exit: {s.lastExit}</p>}
              {s.remote != null && (
                <div data-testid={`service-${s.key}-remote`}>
                  <p class="muted">
                    Remote: {s.remote.endpoint}
                    {s.remote.auth !== "none" && s.remote.secret != null ? `, sends your secret ${s.remote.secret}` : ""}
                  </p>
                  <p class="muted">Data boundary: {s.remote.dataBoundary}</p>
                </div>
              )}
              <div class="actions">
                {s.remote != null && (
                  <Button
                    disabled={busy}
                    onClick={() =>
                      void act(() =>
                        s.remote?.allowed === true
                          ? api.call("service_revoke_remote", { appId: props.appId, service: s.key })
                          : api.call("service_allow_remote", { appId: props.appId, service: s.key }),
                      )
                    }
                  >
                    {s.remote.allowed ? "Revoke remote access" : `Allow calls to ${s.remote.origin}`}
                  </Button>
                )}
                <Button disabled={busy} onClick={() => void act(() => api.call("service_start", { appId: props.appId, service: s.key }))}>
                  Start
                </Button>
                <Button disabled={busy} onClick={() => void act(() => api.call("service_stop", { appId: props.appId, service: s.key }))}>
                  Stop
                </Button>
                <Button disabled={busy} onClick={() => showLog(s.key)}>
                  Show log
                </Button>
              </div>
            </li>
          ))}
        </ul>
      )}
      {log !== null && (
        <div data-testid="service-log">
          <h4>Log of {log.key}{log.log.truncated ? " (last 64 KiB)" : ""}</h4>
          <pre class="service-log">{log.log.text === "" ? "(empty)" : log.log.text}</pre>
        </div>
      )}
    </section>
  );
}
