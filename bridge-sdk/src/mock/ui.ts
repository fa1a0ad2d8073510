// lime.ui in memory: the host snapshot and theme, and the UI messages that are bridge messages
// rather than capability calls (navigate, toast, openExternal, host:download), recorded for
// tests to inspect.
import { ErrorCodes } from "../errors.js";
import type { UiMessages } from "../handles.js";
import type { HostSnapshot, ThemeSnapshot } from "../protocol.js";
import type { MockContext, Service } from "./common.js";
import { cleanMime, FALLBACK_NAME, sanitizeFileName } from "./download.js";
import { decodeBase64 } from "./encoding.js";
import { fail, type Wait } from "./invoke.js";
import { closed, invalid } from "./common.js";
import { checkRoutePath } from "../ui.js";
import type { MockArtifact } from "./types.js";

export function createUi(ctx: MockContext, artifactStore: Map<string, MockArtifact>, wait: Wait, modelStatus: () => string = () => "needs-setup") {
  const { appId, entryKey, offered, denied, options } = ctx;
  const toasts: { message: string; level: string }[] = [];
  const navigations: string[] = [];
  const downloads: { fileName: string; bytes: Uint8Array; mimeType: string }[] = [];
  const listeners = new Set<(s: HostSnapshot) => void>();
  const theme: ThemeSnapshot = { themeMode: "system", effectiveThemeMode: "light", colorSchemeId: "lime-default", tokens: {} };
  let snapshot: HostSnapshot = {
    appId, entryKey, entryKind: "page", route: options.routes?.[0] ?? "/", origin: `agentapp://${appId}`,
    locale: "en-US", timezone: "UTC", workspaceId: "local", tenantId: "local",
    ...theme, theme,
    capabilities: { available: [...offered], blocked: [] },
    installMode: "installed",
    readiness: { status: "ready", appStatus: "ready", missing: [], setupActions: [] },
    model: { status: modelStatus() },
    ...options.snapshot,
  };

  // As the host (bridge/host.rs `route_matches`): a declared route or a path below one.
  const isOwnRoute = (route: string) => {
    if (options.routes === undefined) return route.startsWith("/") && !route.startsWith("//");
    const path = route.split(/[?#]/)[0] ?? route;
    return options.routes.some((d) => path === d || (path.startsWith(d) && (d.endsWith("/") || path[d.length] === "/")));
  };

  // As the host (bridge/host/ui_launch.rs): per app, at most 64, the same path replaced.
  const routes: { appId: string; entryKey: string; path: string; title: string }[] = [];
  const service: Service = {
    registerRoute: (a) => {
      closed(a, ["path", "title"], "ui.route_invalid");
      const why = checkRoutePath(a["path"]);
      if (why !== null) throw invalid(why, "ui.route_invalid");
      const path = a["path"] as string;
      const t = a["title"];
      if (t !== undefined && t !== null && (typeof t !== "string" || t.trim() === "" || [...t].length > 120 || /\p{Cc}/u.test(t))) {
        throw invalid("args.title must be 1..=120 characters without control characters", "ui.route_invalid");
      }
      const route = { appId, entryKey, path, title: typeof t === "string" ? t.trim() : path };
      const i = routes.findIndex((r) => r.path === path);
      if (i >= 0) routes[i] = route;
      else if (routes.length >= 64) throw invalid("this app registered the most routes it may (64)", "ui.route_limit");
      else routes.push(route);
      return route;
    },
    listRoutes: () => ({ routes: routes.map((r) => ({ ...r })) }),
    getSnapshot: () => snapshot,
    getLocale: () => ({ locale: snapshot.locale, timezone: snapshot.timezone }),
    getTheme: () => snapshot.theme,
  };

  const messages: UiMessages = {
    navigate: async (route, o) => {
      await wait("lime.ui", "navigate", o ?? {});
      if (!isOwnRoute(route)) throw fail(ErrorCodes.PERMISSION_DENIED, "not one of this app's routes", "lime.ui", "navigate", "navigate.foreign_route");
      navigations.push(route);
    },
    toast: (message, level = "info") => {
      toasts.push({ message, level });
    },
    openExternal: () => undefined,
    download: async (what, o) => {
      await wait("lime.ui", "download", o ?? {});
      const w = what as { artifactId?: string; text?: string; base64?: string; fileName?: string; mimeType?: string };
      const sources = [w.artifactId, w.text, w.base64].filter((x) => x !== undefined).length;
      if (sources !== 1) throw fail(ErrorCodes.INVALID_ARGUMENT, "exactly one of artifactId, text, base64", "lime.ui", "download", "download.invalid_argument");
      let bytes: Uint8Array;
      let name = w.fileName ?? "";
      let mime = w.mimeType ?? "application/octet-stream";
      if (w.artifactId !== undefined) {
        if (!offered.has("lime.artifacts") || denied.has("lime.artifacts.read")) {
          throw fail(ErrorCodes.PERMISSION_DENIED, "downloading an artifact needs its artifact permission", "lime.artifacts", "read", "permission.denied");
        }
        const art = artifactStore.get(w.artifactId);
        if (!art) throw fail(ErrorCodes.NOT_FOUND, "no artifact with this id", "lime.artifacts", "read", "artifacts.not_found");
        bytes = art.bytes.slice();
        name = w.fileName ?? art.name;
        mime = w.mimeType ?? art.mimeType;
      } else if (w.text !== undefined) {
        bytes = new TextEncoder().encode(w.text);
        if (w.mimeType === undefined) mime = "text/plain";
      } else {
        const decoded = decodeBase64(w.base64 ?? "");
        if (!decoded) throw fail(ErrorCodes.INVALID_ARGUMENT, "args.base64 is not valid base64 (standard alphabet, padded)", "lime.ui", "download", "download.invalid_argument");
        bytes = decoded;
      }
      // As the host: the type cleaned (or refused), the name made safe to save under.
      const mimeType = cleanMime(mime);
      if (mimeType === null) throw fail(ErrorCodes.INVALID_ARGUMENT, "args.mimeType must look like type/subtype", "lime.ui", "download", "download.invalid_argument");
      const fileName = sanitizeFileName(name === "" ? FALLBACK_NAME : name);
      if (options.downloadAnswer === "cancel") return { saved: false };
      downloads.push({ fileName, bytes, mimeType });
      return { saved: true, fileName };
    },
  };

  return {
    toasts,
    routes,
    navigations,
    downloads,
    service,
    messages,
    snapshot: () => snapshot,
    onSnapshot(cb: (s: HostSnapshot) => void) {
      listeners.add(cb);
      return () => listeners.delete(cb);
    },
    /** Pushes a theme update to `onSnapshot` listeners. */
    setTheme(t: Partial<ThemeSnapshot>) {
      const th = { ...snapshot.theme, ...t };
      snapshot = { ...snapshot, ...th, theme: th };
      listeners.forEach((cb) => cb(snapshot));
    },
    close: () => listeners.clear(),
  };
}
