// The app list: cards with icon, name, version, publisher, trust and readiness (with its reason
// in words and its setup action), search and filter. Class names and data attributes of the card
// are the desktop e2e's selectors (tests/e2e): keep them.

import { Component, type JSX } from "preact";
import { useContext, useEffect, useMemo, useState } from "preact/hooks";

import * as api from "../api.js";
import { afterFirstPaint } from "../app/after-paint.js";
import { cardOffers, type CardOffer } from "../app/catalog-flow.js";
import { HostContext } from "../context.js";
import {
  filterApps,
  monogram,
  publisherText,
  readinessBadge,
  readinessWords,
  setupRoute,
  shownVersion,
  trustBadge,
  type AppFilter,
} from "../format.js";
import { Badge, Button } from "../ui/components.js";
import type { AppSummary, EntrySummary, SetupAction } from "../types.js";
import { CardUpdate } from "./app-card-update.js";

/** A data: URL image is shown; anything else (a remote URL) is not fetched. */
function safeIcon(icon: string | null | undefined): string | null {
  return typeof icon === "string" && /^data:image\/(png|jpeg|gif|webp);base64,[A-Za-z0-9+/=]+$/.test(icon)
    ? icon
    : null;
}

export function AppIcon(props: { icon?: string | null | undefined; name: string; displayName: string | null }): JSX.Element {
  const src = safeIcon(props.icon);
  return src !== null ? (
    <img class="app-icon" src={src} alt="" width={40} height={40} />
  ) : (
    <div class="app-icon" aria-hidden="true">
      {monogram(props.displayName, props.name)}
    </div>
  );
}

export interface CardActions {
  open(app: AppSummary, entry: EntrySummary): void;
  details(app: AppSummary): void;
  setup(app: AppSummary, action: SetupAction | null): void;
  /** Update from the catalog the app follows (optional: render tests leave it out). */
  update?(app: AppSummary, offer: CardOffer): void;
}

interface CardProps {
  app: AppSummary;
  actions: CardActions;
  /** What the catalog the app follows offers (app/catalog-flow.ts `cardOffers`). */
  offer?: CardOffer | undefined;
}

/**
 * One app card, re-rendered only when its app or the actions change: growing the list by a
 * chunk (or a poll that changed one app) does not re-diff every other card.
 */
export class AppCard extends Component<CardProps> {
  override shouldComponentUpdate(next: CardProps): boolean {
    return next.app !== this.props.app || next.actions !== this.props.actions || next.offer !== this.props.offer;
  }
  override render(): JSX.Element {
    return <AppCardView app={this.props.app} actions={this.props.actions} offer={this.props.offer} />;
  }
}

/** One app card: `li.app-row.app-card[data-app-name]`. */
function AppCardView(props: CardProps): JSX.Element {
  const { app, actions, offer } = props;
  const version = shownVersion(app.activeVersion, app.versions);
  const mountable = (app.entries ?? []).filter((e) => e.mountable);
  const name = app.displayName ?? app.name;
  const needsAction =
    app.enabled && (app.readiness === "needs-setup" || app.readiness === "blocked" || (app.setupActions ?? []).length > 0);
  const reasons = app.readinessReasons ?? [];
  const setup = app.setupActions?.[0] ?? null;
  const headingId = `app-card-${app.name}`;
  const publisher = publisherText(app.publisher, app.trust);
  return (
    <li
      class={`app-row app-card${app.enabled ? "" : " app-row--disabled"}`}
      data-testid="app-card"
      data-app-name={app.name}
      data-trust={app.trust}
      data-readiness={app.readiness}
      data-enabled={String(app.enabled)}
      data-dev={app.dev === true ? "true" : undefined}
      data-update={offer?.update?.version}
      aria-labelledby={headingId}
    >
      <AppIcon icon={app.icon} name={app.name} displayName={app.displayName} />
      <div class="app-main">
        <div class="app-title">
          <h3 class="app-display-name" id={headingId}>
            {name}
          </h3>
          <span class="app-name">{app.name}</span>
          <span
            class="app-version"
            data-version={version}
            title={app.versions.length > 1 ? `Installed versions: ${app.versions.join(", ")}` : undefined}
          >
            v{version}
          </span>
        </div>
        {publisher !== null && (
          <p class="app-publisher" data-testid="app-publisher" data-verified={String(app.trust === "trusted")}>
            {publisher}
          </p>
        )}
        {app.description.trim() !== "" && <p class="app-description">{app.description}</p>}
        {app.enabled && app.readiness !== "ready" && (
          <p class="app-readiness-reason" data-testid="readiness-reason">
            {reasons.length > 0 ? reasons.join(" ") : readinessWords(app.readiness)}
          </p>
        )}
        {offer !== undefined && (
          <CardUpdate appName={name} offer={offer} onUpdate={(o) => actions.update?.(app, o)} />
        )}
        <div class="app-entries">
          {mountable.map((entry) => (
            <Button
              key={entry.key}
              class="open-entry"
              data-entry-key={entry.key}
              data-testid="open-entry"
              disabled={!app.enabled}
              onClick={() => actions.open(app, entry)}
              aria-label={`Open ${entry.title ?? entry.key} of ${name}`}
            >
              Open {entry.title ?? entry.key}
            </Button>
          ))}
          {needsAction && (
            <Button
              class="setup-action"
              data-setup-kind={setup?.kind}
              title={setup?.description ?? undefined}
              onClick={() => actions.setup(app, setup)}
              data-testid="setup-action"
            >
              {setup !== null ? setup.title : "Set up"}
            </Button>
          )}
          <Button class="app-details" data-testid="app-details" onClick={() => actions.details(app)} aria-label={`Details of ${name}`}>
            Details
          </Button>
        </div>
      </div>
      <div class="app-badges">
        {app.dev === true && (
          <Badge text={{ label: "DEV", tone: "warn", title: "A development install (apphost dev): never trusted as signed" }} class="dev-badge" data={{ testid: "dev-badge" }} />
        )}
        <Badge text={trustBadge(app.trust)} class="trust-badge" data={{ trust: app.trust }} />
        {(app.enabled || app.readiness !== "disabled") && (
          <Badge text={readinessBadge(app.readiness)} class="readiness-badge" data={{ readiness: app.readiness }} />
        )}
        {!app.enabled && <Badge text={{ label: "Disabled", tone: "muted", title: "The app is turned off" }} class="enabled-badge" data={{ enabled: "false" }} />}
      </div>
    </li>
  );
}

const FILTERS: Array<[AppFilter, string]> = [
  ["all", "All"],
  ["ready", "Ready"],
  ["attention", "Needs attention"],
  ["disabled", "Disabled"],
  ["sideloaded", "Sideloaded"],
];

/** Cards in the first frame (more than a screen), then per following frame. */
export const CARD_FIRST = 24;
export const CARD_CHUNK = 96;

/** The list of cards, filtered; at most `limit` of them (no state: render-tested under node). */
export function AppCards(props: {
  apps: readonly AppSummary[];
  query: string;
  filter: AppFilter;
  actions: CardActions;
  limit?: number;
  /** Per app name, what the catalog it follows offers (loaded after the first paint). */
  offers?: ReadonlyMap<string, CardOffer>;
}): JSX.Element {
  const matching = filterApps(props.apps, props.query, props.filter);
  const shown = props.limit === undefined ? matching : matching.slice(0, props.limit);
  return (
    <>
      <p class="list-count" role="status" aria-live="polite">
        {matching.length === props.apps.length ? `${matching.length} apps` : `${matching.length} of ${props.apps.length} apps`}
      </p>
      <ul id="app-list" class="app-list">
        {shown.map((app) => (
          <AppCard key={app.name} app={app} actions={props.actions} offer={props.offers?.get(app.name)} />
        ))}
      </ul>
    </>
  );
}

export function AppListPage(props: { onAdd: () => void; error: unknown; shown?: boolean }): JSX.Element {
  const host = useContext(HostContext);
  const [query, setQuery] = useState("");
  const [filter, setFilter] = useState<AppFilter>("all");
  const actions = useMemo<CardActions>(
    () => ({
      open: (app, entry) => void host.openEntry(app.name, entry.key),
      details: (app) => host.navigate({ page: "app", appId: app.name, tab: "overview" }),
      setup: (app, action) => host.navigate(setupRoute(app.name, action)),
      update: (app, offer) => {
        if (offer.update === null) return;
        host.reviewCatalog({ appId: app.name, catalog: offer.catalog, version: offer.update.version, channel: offer.channel }, true);
      },
    }),
    [host],
  );
  const apps = host.apps ?? [];
  // Catalog offers for the cards: cached metadata only (browse_catalog never goes out), asked
  // after the list has painted, again whenever the installed apps change and whenever the page is
  // shown again (it stays mounted; a refresh on the Browse page may have brought updates). A
  // failure leaves the cards as they are.
  const [offers, setOffers] = useState<ReadonlyMap<string, CardOffer>>(new Map());
  const shown = props.shown !== false;
  useEffect(() => {
    if (!shown || host.apps === null || host.apps.length === 0) return undefined;
    let live = true;
    afterFirstPaint(() => {
      if (!live) return;
      api
        .browseCatalog("")
        .then((b) => {
          if (live) setOffers(cardOffers(b));
        })
        .catch((error: unknown) => console.warn("browse_catalog failed", error));
    });
    return () => {
      live = false;
    };
  }, [host.apps, shown]);
  // Progressive rendering: a screenful first, then CARD_CHUNK more cards each frame until all are
  // in (500 apps stay responsive: the first screen paints at once, input is never blocked for the
  // whole list; cards already shown are not re-diffed, see AppCard).
  const [limit, setLimit] = useState(CARD_FIRST);
  // The search field and the filter (native form controls, the costliest part of the first
  // frame to paint: docs/benchmarks.md "Window start-up") come right after the first paint; the
  // space they take is kept, so the list does not move.
  const [tools, setTools] = useState(false);
  useEffect(() => {
    let live = true;
    afterFirstPaint(() => live && setTools(true));
    return () => {
      live = false;
    };
  }, []);
  useEffect(() => {
    if (limit >= apps.length) {
      return undefined;
    }
    const id = requestAnimationFrame(() => setLimit((l) => l + CARD_CHUNK));
    return () => cancelAnimationFrame(id);
  }, [limit, apps.length]);
  return (
    <section aria-labelledby="installed-heading" class="page">
      <div class="page-head">
        <h2 id="installed-heading">Installed apps</h2>
        <Button variant="primary" data-testid="add-app" onClick={props.onAdd}>
          Add app…
        </Button>
      </div>
      {tools ? (
        <div class="list-tools" role="search">
          <label class="field field--inline">
            <span>Search</span>
            <input
              type="search"
              data-testid="app-search"
              value={query}
              onInput={(e) => {
                setQuery(e.currentTarget.value);
                setLimit(CARD_FIRST);
              }}
              placeholder="Name, publisher or description"
            />
          </label>
          <label class="field field--inline">
            <span>Show</span>
            <select data-testid="app-filter" value={filter} onChange={(e) => {
                setFilter(e.currentTarget.value as AppFilter);
                setLimit(CARD_FIRST);
              }}>
              {FILTERS.map(([value, label]) => (
                <option key={value} value={value}>
                  {label}
                </option>
              ))}
            </select>
          </label>
        </div>
      ) : (
        <div class="list-tools list-tools--pending" aria-hidden="true" />
      )}
      <AppCards apps={apps} query={query} filter={filter} actions={actions} limit={limit} offers={offers} />
      <div id="empty-state" class="empty-state" hidden={host.apps === null || apps.length > 0}>
        <p class="empty-title">No apps installed yet</p>
        <p>
          Choose <strong>Add app…</strong>, drop a <code>.zip</code> package on this window, or install from a terminal:
        </p>
        <code>apphost install &lt;package&gt;</code>
      </div>
      {props.error !== null && host.apps === null && <p class="hint">The list could not be loaded (see above).</p>}
    </section>
  );
}
