// lime.ui routes, command entries and artifact viewers (the standard's `lime.ui.registerRoute`,
// palette `command` entries, artifact viewers bound to `artifactTypes[]`).
//
// - `registerRoute({path, title})` names one of the app's in-app routes (`/notes/:id`) so the host
//   lists it in its command palette and deep-links to it (`#/app/<app>/<entry>/<route>`). The
//   host keeps at most 64 per app, for its session; apps register them as they start.
// - The host tells the frame why it was opened with a `ui:launch` message: a route (deep link or
//   palette), one of the app's `command` entries, or an artifact of a type the entry declares.
//   `onRoute`, `onCommand` and `onOpenArtifact` receive them (a launch that arrives before a
//   handler is set is kept, the latest of each kind, and handed to the first handler).
// Artifact launches carry a ref only: read it with `lime.artifacts.read`, which the host's choke
// point allows only for artifacts the app may read.

import type { CallOptions, Invoke } from "./handles.js";

/** A route as `registerRoute` takes it. */
export interface RouteRegistration {
  /** Starts with one `/`; path characters only; `:name` segments are parameters. ≤ 256 bytes. */
  path: string;
  /** What the palette shows (default: the path). 1..=120 characters. */
  title?: string;
}

/** A route the host keeps for the app. */
export interface RegisteredRoute {
  appId: string;
  entryKey: string;
  path: string;
  title: string;
}

/** Why the host opened the frame (`ui:launch`). */
export type UiLaunch =
  | { kind: "route"; route: string }
  | { kind: "command"; entryKey: string; command?: string }
  | { kind: "artifact"; artifactId: string; artifactType: string; ownerAppId: string };

export interface LimeUiRoutes {
  /** Registers one of the app's in-app routes; answers the route the host keeps. */
  registerRoute(route: RouteRegistration, opts?: CallOptions): Promise<RegisteredRoute>;
  /** The routes this app registered in this host session. */
  listRoutes(opts?: CallOptions): Promise<{ routes: RegisteredRoute[] }>;
  /** Every `ui:launch`; returns the unsubscribe. */
  onLaunch(cb: (launch: UiLaunch) => void): () => void;
  /** A deep link or palette route of this app. */
  onRoute(cb: (route: string) => void): () => void;
  /** One of this app's `command` entries was chosen in the host's palette. */
  onCommand(cb: (command: { entryKey: string; command?: string }) => void): () => void;
  /** The user opened an artifact of a type this entry views. */
  onOpenArtifact(cb: (artifact: { artifactId: string; artifactType: string; ownerAppId: string }) => void): () => void;
}

/** Where `ui:launch` payloads go; the runtime and the mock deliver into it. */
export interface LaunchHub {
  /** Delivers one `ui:launch` payload; returns whether it was a launch. */
  deliver(payload: unknown): boolean;
  clear(): void;
}

const KINDS = new Set(["route", "command", "artifact"]);

function isLaunch(p: unknown): p is UiLaunch {
  return typeof p === "object" && p !== null && KINDS.has((p as { kind?: unknown }).kind as string);
}

/** The `lime.ui` route methods over `invoke`, and the hub `ui:launch` messages are delivered to. */
export function buildUiRoutes(invoke: Invoke): { routes: LimeUiRoutes; launches: LaunchHub } {
  const listeners = new Set<(l: UiLaunch) => void>();
  // The latest launch of each kind that found no listener yet.
  const early = new Map<string, UiLaunch>();
  const launches: LaunchHub = {
    deliver(payload) {
      if (!isLaunch(payload)) return false;
      if (listeners.size === 0) early.set(payload.kind, payload);
      listeners.forEach((cb) => cb(payload));
      return true;
    },
    clear() {
      listeners.clear();
      early.clear();
    },
  };
  const on = (kind: UiLaunch["kind"] | null, cb: (l: UiLaunch) => void) => {
    const listener = (l: UiLaunch) => {
      if (kind === null || l.kind === kind) cb(l);
    };
    listeners.add(listener);
    for (const [k, l] of [...early]) {
      if (kind === null || k === kind) {
        early.delete(k);
        cb(l);
      }
    }
    return () => {
      listeners.delete(listener);
    };
  };
  const routes: LimeUiRoutes = {
    registerRoute: (route, o) => invoke<RegisteredRoute>("lime.ui", "registerRoute", { ...route }, o),
    listRoutes: (o) => invoke<{ routes: RegisteredRoute[] }>("lime.ui", "listRoutes", {}, o),
    onLaunch: (cb) => on(null, cb),
    onRoute: (cb) => on("route", (l) => l.kind === "route" && cb(l.route)),
    onCommand: (cb) =>
      on("command", (l) => {
        if (l.kind === "command") cb(l.command === undefined ? { entryKey: l.entryKey } : { entryKey: l.entryKey, command: l.command });
      }),
    onOpenArtifact: (cb) =>
      on("artifact", (l) => {
        if (l.kind === "artifact") cb({ artifactId: l.artifactId, artifactType: l.artifactType, ownerAppId: l.ownerAppId });
      }),
  };
  return { routes, launches };
}

/** Why a route path is refused, as the host decides it (`null`: fine). */
export function checkRoutePath(path: unknown): string | null {
  if (typeof path !== "string" || !path.startsWith("/") || path.startsWith("//")) return "a route starts with one `/`";
  if (new TextEncoder().encode(path).length > 256) return "a route is at most 256 bytes";
  if (!/^[A-Za-z0-9\-._~/:@!$&'()*+,;=%]*$/.test(path)) return "a route has only path characters (no `?`, `#`, `\\`, spaces or controls)";
  if (path.split("/").some((s) => s === "." || s === "..")) return "a route has no `.` or `..` segment";
  return null;
}
