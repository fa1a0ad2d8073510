// The Browse page (#/browse): apps of the remote catalogs (docs/catalog.md) with publisher, trust,
// permissions and a readiness preview. Install opens the same review sheet as a local package;
// an installed app's card shows "Update available" with the permission diff and an Update button
// (the sheet when permissions grow), its channel, a revoked release flagged, and "Roll back".
// A stale catalog says so and since when; it never changes an installed app (Rust's rule: the
// cards read `installed.readiness` from the store, not from the catalog).

import type { JSX } from "preact";
import { useCallback, useContext, useEffect, useState } from "preact/hooks";

import * as api from "../api.js";
import { installState, staleText, trustLabel } from "../app/catalog-flow.js";
import { HostContext } from "../context.js";
import { readinessBadge } from "../format.js";
import { Badge, Button, Empty, ErrorBox, Loading } from "../ui/components.js";
import { FilterText } from "../ui/data-table.js";
import type { Browse, BrowseApp, CatalogInfo } from "../generated/host-api.js";

const PREVIEW_WORDS: Record<string, { label: string; tone: "good" | "warn" | "bad" | "muted" }> = {
  compatible: { label: "Compatible", tone: "good" },
  incompatible: { label: "Incompatible", tone: "bad" },
  unknown: { label: "Compatibility unknown", tone: "warn" },
};

function CatalogRow(props: { c: CatalogInfo }): JSX.Element {
  const { c } = props;
  const stale = staleText(c);
  return (
    <li class="catalog-row" data-testid="catalog-row" data-catalog={c.name} data-stale={String(c.stale)}>
      <strong>{c.name}</strong> <span class="muted">{c.url}</span>{" "}
      <span class="muted">
        {c.apps} apps · {c.releases} releases
        {c.refreshedAt != null ? ` · refreshed ${c.refreshedAt}` : ""}
      </span>
      {stale !== null && (
        <p class="catalog-stale" role="status" data-testid="catalog-stale" data-stale-since={c.staleSince ?? ""} data-code={c.lastError?.code ?? c.staleReason ?? ""}>
          {stale}
        </p>
      )}
    </li>
  );
}

interface CardActions {
  install(app: BrowseApp): void;
  update(app: BrowseApp): void;
  rollBack(app: BrowseApp): void;
  channel(app: BrowseApp, channel: string): void;
}

function Permissions(props: { keys: string[] }): JSX.Element {
  return props.keys.length === 0 ? (
    <span class="muted">no permissions</span>
  ) : (
    <span data-testid="catalog-permissions">{props.keys.map((k, i) => <code key={k}>{i > 0 ? ", " : ""}{k}</code>)}</span>
  );
}

function UpdateBox(props: { app: BrowseApp; busy: boolean; actions: CardActions }): JSX.Element | null {
  const update = props.app.installed?.update;
  if (update == null) return null;
  const grows = update.permissionsAdded.length > 0;
  return (
    <div class="catalog-update" data-testid="update-available" data-version={update.version} data-grows={String(grows)}>
      <strong>Update available: {update.version}</strong> <span class="muted">({update.channel})</span>
      {update.permissionsAdded.length > 0 && (
        <p data-testid="permission-diff-added">
          New permissions: {update.permissionsAdded.map((k) => <code key={k}>+{k} </code>)}
        </p>
      )}
      {update.permissionsRemoved.length > 0 && (
        <p data-testid="permission-diff-removed">
          No longer asked: {update.permissionsRemoved.map((k) => <code key={k}>−{k} </code>)}
        </p>
      )}
      {!grows && update.permissionsRemoved.length === 0 && <p class="muted">Same permissions.</p>}
      <Button
        variant="primary"
        data-testid="catalog-update"
        disabled={props.busy || props.app.stale}
        title={grows ? "Opens the review sheet: the update asks for more" : undefined}
        onClick={() => props.actions.update(props.app)}
      >
        {grows ? "Review update" : "Update"}
      </Button>
    </div>
  );
}

export function CatalogCard(props: { app: BrowseApp; busy: boolean; actions: CardActions }): JSX.Element {
  const { app, actions, busy } = props;
  const trust = trustLabel(app.trust);
  const preview = PREVIEW_WORDS[app.readiness.status] ?? PREVIEW_WORDS.unknown!;
  const inst = app.installed;
  const can = installState(app);
  const headingId = `catalog-card-${app.catalog}-${app.appId}`;
  const revoked = app.releases.filter((r) => r.revoked != null);
  return (
    <li
      class="app-row app-card catalog-card"
      data-testid="catalog-card"
      data-app-id={app.appId}
      data-catalog={app.catalog}
      data-trust={app.trust}
      data-installed={inst?.version ?? ""}
      data-stale={String(app.stale)}
      aria-labelledby={headingId}
    >
      <div class="app-main">
        <div class="app-title">
          <h3 class="app-display-name" id={headingId}>
            {app.displayName}
          </h3>
          <span class="app-name">{app.appId}</span>
          {app.offered != null && <span class="app-version">v{app.offered.version}</span>}
          <Badge text={trust} data={{ testid: "catalog-trust" }} />
          <Badge text={{ ...preview, title: app.readiness.reasons.join("; ") || "Declared requirements match this AppHost" }} data={{ testid: "catalog-readiness" }} />
        </div>
        <p class="app-publisher">{app.publisher != null ? `by ${app.publisher}` : "publisher not named"} · from {app.catalog}</p>
        {app.description.trim() !== "" && <p class="app-description">{app.description}</p>}
        <p>
          Permissions: <Permissions keys={app.permissions} />
        </p>
        {revoked.length > 0 && (
          <p class="catalog-revoked" data-testid="revoked-releases">
            Revoked by the publisher: {revoked.map((r) => `${r.version} (${r.revoked ?? ""})`).join(", ")}
          </p>
        )}
        {app.stale && <p class="catalog-stale" data-testid="card-stale">Catalog stale: nothing can be installed from it until a refresh succeeds.</p>}
        {inst == null ? (
          <div class="app-entries">
            <Button variant="primary" data-testid="catalog-install" disabled={busy || !can.enabled} title={can.why ?? undefined} onClick={() => actions.install(app)}>
              Install{app.offered != null ? ` ${app.offered.version}` : ""}
            </Button>
            {can.why !== null && <span class="muted">{can.why}</span>}
          </div>
        ) : (
          <div class="catalog-installed" data-testid="catalog-installed">
            <p>
              Installed <span data-testid="installed-version">{inst.version}</span>{" "}
              <Badge text={readinessBadge(inst.readiness)} data={{ testid: "installed-readiness", readiness: inst.readiness }} />
            </p>
            {inst.revoked != null && (
              <p class="catalog-revoked" role="status" data-testid="installed-revoked">
                This version is revoked by its publisher: {inst.revoked}
              </p>
            )}
            <label class="field field--inline">
              <span>Channel</span>
              <select
                data-testid="catalog-channel"
                value={inst.channel}
                disabled={busy}
                onChange={(e) => actions.channel(app, e.currentTarget.value)}
              >
                {app.channels.map((ch) => (
                  <option key={ch} value={ch}>
                    {ch}
                  </option>
                ))}
              </select>
            </label>
            <UpdateBox app={app} busy={busy} actions={actions} />
            {inst.previousVersion != null && (
              <Button data-testid="catalog-rollback" disabled={busy} onClick={() => actions.rollBack(app)}>
                Roll back to {inst.previousVersion}
              </Button>
            )}
          </div>
        )}
      </div>
    </li>
  );
}

export function BrowsePage(): JSX.Element {
  const host = useContext(HostContext);
  const [text, setText] = useState("");
  const [value, setValue] = useState<Browse | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const load = useCallback(async () => {
    try {
      setValue(await api.browseCatalog(text));
      setError(null);
    } catch (e: unknown) {
      setError(e);
    }
  }, [text]);
  // Again whenever the installed apps change (an install, update or roll back finished).
  useEffect(() => void load(), [load, host.apps]);
  const act = async (f: () => Promise<unknown>): Promise<void> => {
    setBusy(true);
    try {
      await f();
      setError(null);
    } catch (e: unknown) {
      setError(e);
    } finally {
      setBusy(false);
      await load();
    }
  };
  const actions: CardActions = {
    install: (app) => host.reviewCatalog({ appId: app.appId, catalog: app.catalog, channel: app.offered?.channel ?? null }, false),
    update: (app) => {
      const u = app.installed?.update;
      if (u == null) return;
      host.reviewCatalog({ appId: app.appId, catalog: app.catalog, version: u.version, channel: app.installed?.channel ?? null }, true);
    },
    rollBack: (app) =>
      void act(async () => {
        await api.rollback(app.appId);
        await host.reload();
      }),
    channel: (app, channel) => void act(() => api.catalogSetChannel(app.appId, app.catalog, channel)),
  };
  const catalogs = value?.catalogs ?? [];
  return (
    <section class="page" aria-labelledby="browse-heading" data-testid="browse-page">
      <h2 id="browse-heading">Browse catalogs</h2>
      <div class="toolbar">
        <FilterText label="Search" value={text} onInput={setText} placeholder="name, publisher, description" testid="browse-search" />
        <Button data-testid="catalog-refresh" disabled={busy} onClick={() => void act(() => api.catalogRefresh())}>
          Refresh catalogs
        </Button>
      </div>
      {error !== null && <ErrorBox error={error} testid="browse-error" />}
      {value === null ? (
        error === null && <Loading />
      ) : catalogs.length === 0 ? (
        <Empty>{"No catalog is added. Add one with `apphost catalog add <name> <url> --root <root.json>`."}</Empty>
      ) : (
        <>
          <ul class="catalog-list" data-testid="catalog-list">
            {catalogs.map((c) => (
              <CatalogRow key={c.name} c={c} />
            ))}
          </ul>
          {value.apps.length === 0 ? (
            <Empty>No catalog app matches.</Empty>
          ) : (
            <ul class="app-list" data-testid="catalog-apps">
              {value.apps.map((a) => (
                <CatalogCard key={`${a.catalog}/${a.appId}`} app={a} busy={busy} actions={actions} />
              ))}
            </ul>
          )}
          {value.truncated && <p class="muted">More apps match: narrow the search.</p>}
        </>
      )}
    </section>
  );
}
