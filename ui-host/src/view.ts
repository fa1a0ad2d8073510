// DOM rendering of the app list. Every string from a package (names, descriptions) is untrusted:
// it only ever reaches the page through textContent / attributes, never as HTML.

import {
  enabledBadge,
  errorText,
  monogram,
  readinessBadge,
  shownVersion,
  summaryText,
  trustBadge,
  type BadgeText,
} from "./format.js";
import type { AppSummary, EntrySummary } from "./types.js";

/** Called when the user clicks "Open <entry>" on an app card. */
export type OpenEntry = (app: AppSummary, entry: EntrySummary) => void;

let openEntry: OpenEntry = () => undefined;

/** Sets what the "Open <entry>" buttons do. */
export function onOpenEntry(handler: OpenEntry): void {
  openEntry = handler;
}

type PageState = "loading" | "ready" | "empty" | "error";

function byId(id: string): HTMLElement {
  const element = document.getElementById(id);
  if (element === null) {
    throw new Error(`host UI is missing #${id}`);
  }
  return element;
}

function el<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  className: string,
  text?: string,
): HTMLElementTagNameMap[K] {
  const element = document.createElement(tag);
  element.className = className;
  if (text !== undefined) {
    element.textContent = text;
  }
  return element;
}

function badge(kind: string, text: BadgeText, dataKey: string, dataValue: string): HTMLElement {
  const span = el("span", `badge ${kind} badge--${text.tone}`, text.label);
  span.title = text.title;
  span.dataset[dataKey] = dataValue;
  return span;
}

function setState(state: PageState): void {
  document.body.dataset.state = state;
}

/** One `li.app-row[data-app-name]`. */
export function appRow(app: AppSummary): HTMLLIElement {
  const version = shownVersion(app.activeVersion, app.versions);
  const row = el("li", "app-row");
  row.dataset.appName = app.name;
  row.dataset.trust = app.trust;
  row.dataset.readiness = app.readiness;
  row.dataset.enabled = String(app.enabled);
  if (!app.enabled) {
    row.classList.add("app-row--disabled");
  }

  const icon = el("div", "app-icon", monogram(app.displayName, app.name));
  icon.setAttribute("aria-hidden", "true");

  const title = el("div", "app-title");
  title.append(el("span", "app-display-name", app.displayName ?? app.name));
  title.append(el("span", "app-name", app.name));
  const versionEl = el("span", "app-version", `v${version}`);
  versionEl.dataset.version = version;
  if (app.versions.length > 1) {
    versionEl.title = `Installed versions: ${app.versions.join(", ")}`;
  }
  title.append(versionEl);

  const main = el("div", "app-main");
  main.append(title);
  if (app.description.trim() !== "") {
    main.append(el("p", "app-description", app.description));
  }

  const badges = el("div", "app-badges");
  badges.append(badge("trust-badge", trustBadge(app.trust), "trust", app.trust));
  // A turned-off app is "disabled" in both senses; one badge says it.
  if (app.enabled || app.readiness !== "disabled") {
    badges.append(
      badge("readiness-badge", readinessBadge(app.readiness), "readiness", app.readiness),
    );
  }
  badges.append(
    badge("enabled-badge", enabledBadge(app.enabled), "enabled", String(app.enabled)),
  );

  const mountable = (app.entries ?? []).filter((e) => e.mountable);
  if (mountable.length > 0) {
    const actions = el("div", "app-entries");
    for (const entry of mountable) {
      const button = el("button", "button open-entry", `Open ${entry.title ?? entry.key}`);
      button.type = "button";
      button.dataset.entryKey = entry.key;
      button.disabled = !app.enabled;
      button.addEventListener("click", () => openEntry(app, entry));
      actions.append(button);
    }
    main.append(actions);
  }

  row.append(icon, main, badges);
  return row;
}

/** Shows the list (or the empty state). */
export function renderApps(apps: readonly AppSummary[]): void {
  const list = byId("app-list");
  list.replaceChildren(...apps.map(appRow));
  byId("empty-state").hidden = apps.length > 0;
  byId("error").hidden = true;
  byId("summary").textContent = summaryText(apps.length);
  setState(apps.length > 0 ? "ready" : "empty");
}

/** Shows the error banner with `{code}: {message}`. */
export function renderError(error: unknown): void {
  const banner = byId("error");
  banner.textContent = errorText(error);
  banner.hidden = false;
  byId("summary").textContent = "Could not load the installed apps";
  setState("error");
}
