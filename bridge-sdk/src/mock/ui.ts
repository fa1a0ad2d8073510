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

  const service: Service = {
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
