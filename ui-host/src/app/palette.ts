// The command palette's items (pure, unit-tested in ui-host/test/launches.test.mjs): the host's
// own pages, every ready app's UI entries, the `command` entries of enabled apps (with their
// readiness: choosing one that is not ready is refused by Rust like any mount) and the concrete
// routes apps registered with `lime.ui.registerRoute` (a route with `:param` segments is reached
// by a deep link, not listed).

import type { PaletteCommand, RegisteredRoute } from "../generated/host-api.js";
import type { Route } from "../router.js";
import type { AppSummary } from "../types.js";

export type PaletteAction =
  | { kind: "page"; page: Route["page"] }
  | { kind: "entry"; appId: string; entryKey: string }
  | { kind: "command"; appId: string; entryKey: string; command: string | null; surfaceEntry: string }
  | { kind: "route"; appId: string; entryKey: string; path: string };

export interface PaletteItem {
  id: string;
  group: "Host" | "Apps" | "Commands" | "Routes";
  label: string;
  detail: string;
  action: PaletteAction;
}

const HOST_PAGES: Array<[Route["page"], string]> = [
  ["apps", "Apps"],
  ["running", "Running apps"],
  ["tasks", "Tasks"],
  ["grants", "Grants"],
  ["model", "Model"],
  ["settings", "Settings"],
  ["diagnostics", "Diagnostics"],
];

export function paletteItems(
  apps: readonly AppSummary[] | null,
  palette: { commands: PaletteCommand[]; routes: RegisteredRoute[] } | null,
): PaletteItem[] {
  const items: PaletteItem[] = HOST_PAGES.map(([page, label]) => ({
    id: `page:${page}`,
    group: "Host",
    label: `Go to ${label}`,
    detail: "AppHost",
    action: { kind: "page", page },
  }));
  const title = (appId: string) => apps?.find((a) => a.name === appId)?.displayName ?? appId;
  for (const app of apps ?? []) {
    if (!app.enabled || (app.readiness !== "ready" && app.readiness !== "ready-degraded")) continue;
    for (const e of app.entries ?? []) {
      if (!e.mountable) continue;
      items.push({
        id: `entry:${app.name}/${e.key}`,
        group: "Apps",
        label: `Open ${app.displayName ?? app.name} · ${e.title ?? e.key}`,
        detail: e.kind,
        action: { kind: "entry", appId: app.name, entryKey: e.key },
      });
    }
  }
  for (const c of palette?.commands ?? []) {
    items.push({
      id: `command:${c.appId}/${c.entryKey}`,
      group: "Commands",
      label: c.title,
      detail: `${c.appTitle}${c.command ? ` · ${c.command}` : ""}${c.status === "ready" || c.status === "ready-degraded" ? "" : ` · ${c.status}`}`,
      action: { kind: "command", appId: c.appId, entryKey: c.entryKey, command: c.command ?? null, surfaceEntry: c.surfaceEntry },
    });
  }
  for (const r of palette?.routes ?? []) {
    if (r.path.split("/").some((s) => s.startsWith(":"))) continue;
    items.push({
      id: `route:${r.appId}/${r.entryKey}${r.path}`,
      group: "Routes",
      label: r.title,
      detail: `${title(r.appId)} · ${r.path}`,
      action: { kind: "route", appId: r.appId, entryKey: r.entryKey, path: r.path },
    });
  }
  return items;
}

/** The items whose label or detail contains every word of `query` (case-insensitive). */
export function filterItems(items: readonly PaletteItem[], query: string): PaletteItem[] {
  const words = query.toLowerCase().split(/\s+/).filter((w) => w !== "");
  return items.filter((i) => {
    const text = `${i.label} ${i.detail}`.toLowerCase();
    return words.every((w) => text.includes(w));
  });
}
