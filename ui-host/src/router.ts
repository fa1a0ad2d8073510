// Hash routing: the same under Tauri's embedded assets and `apphost serve`. Pure, unit-tested.
// A page loaded at the path `/apps/<app>/<entry>` (the server serves index.html there) opens that
// entry: see `launchFromPath` in transport.ts.

export type Route =
  | { page: "apps" }
  | { page: "app"; appId: string; tab: DetailTab }
  | { page: "browse" }
  | { page: "running" }
  | { page: "grants" }
  | { page: "diagnostics" }
  | { page: "settings" }
  | { page: "model" }
  | { page: "tasks" }
  // `#/app/<app>/<entry>/<route…>`: open the entry and deliver the route (lime.ui deep links).
  | { page: "launch"; appId: string; entryKey: string; route: string }
  // `#/artifact/<owner app>/<artifact id>/<type>`: open the artifact in a viewer of its type.
  | { page: "artifact"; appId: string; artifactId: string; artifactType: string };

export const DETAIL_TABS = ["overview", "entries", "permissions", "data", "tasks", "versions", "danger"] as const;
export type DetailTab = (typeof DETAIL_TABS)[number];

function decode(part: string): string | null {
  try {
    return decodeURIComponent(part);
  } catch {
    return null;
  }
}

/** The route of a `location.hash` (`#/apps/hello-app/permissions`); unknown hashes are the list. */
export function parseRoute(hash: string): Route {
  const parts = hash.replace(/^#\/?/, "").split("/").filter((p) => p !== "");
  const [first, second, third] = parts;
  switch (first) {
    case "app": {
      const appId = decode(second ?? "");
      const entryKey = decode(third ?? "");
      const rest = parts.slice(3).map(decode);
      if (!appId || !entryKey || rest.some((p) => p === null)) return { page: "apps" };
      return { page: "launch", appId, entryKey, route: `/${rest.join("/")}` };
    }
    case "artifact": {
      const appId = decode(second ?? "");
      const artifactId = decode(third ?? "");
      const artifactType = decode(parts[3] ?? "");
      if (!appId || !artifactId || !artifactType) return { page: "apps" };
      return { page: "artifact", appId, artifactId, artifactType };
    }
    case undefined:
    case "apps": {
      if (second === undefined) {
        return { page: "apps" };
      }
      const appId = decode(second);
      if (appId === null || appId === "") {
        return { page: "apps" };
      }
      const tab = (DETAIL_TABS as readonly string[]).includes(third ?? "") ? (third as DetailTab) : "overview";
      return { page: "app", appId, tab };
    }
    case "browse":
    case "running":
    case "grants":
    case "diagnostics":
    case "settings":
    case "model":
    case "tasks":
      return { page: first };
    default:
      return { page: "apps" };
  }
}

/** The hash of a route (inverse of `parseRoute`). */
export function routeHash(route: Route): string {
  switch (route.page) {
    case "apps":
      return "#/apps";
    case "app":
      return route.tab === "overview"
        ? `#/apps/${encodeURIComponent(route.appId)}`
        : `#/apps/${encodeURIComponent(route.appId)}/${route.tab}`;
    case "launch":
      return `#/app/${encodeURIComponent(route.appId)}/${encodeURIComponent(route.entryKey)}${route.route
        .split("/")
        .filter((p) => p !== "")
        .map((p) => `/${encodeURIComponent(p)}`)
        .join("")}`;
    case "artifact":
      return `#/artifact/${encodeURIComponent(route.appId)}/${encodeURIComponent(route.artifactId)}/${encodeURIComponent(route.artifactType)}`;
    default:
      return `#/${route.page}`;
  }
}
