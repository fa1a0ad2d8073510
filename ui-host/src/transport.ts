// The host UI's one door to Rust: the command layer of docs/host-api.md, over one of two
// transports chosen once at load:
// - desktop: Tauri's IPC, `window.__TAURI_INTERNALS__.invoke` (always in the window's top page;
//   tauri.conf.json leaves app.withGlobalTauri off, so the 41 KB `__TAURI__` API script is not
//   injected before the first paint; a `__TAURI__` global is still used when a page has one), command
//   `host_call {command, args}` and the raw-body `upload_package`;
// - browser (`apphost serve`): `POST /api/<command>` with the JSON arguments as the body, on the
//   host UI's own origin, with the session secret in the `X-AppHost-Session` header.
// Both answer the command's JSON or reject with a HostError `{code, message, details}`.
//
// The browser session (see src/serve/http.rs): the answer to the launch link (`?token=…`) is the
// only one that carries the session secret, in `<meta name="apphost-session">`. When this module
// loads it moves the secret to the origin's localStorage (reloads, deep links and a second tab of
// this origin read it back; other origins, such as app frames or another loopback port, cannot),
// removes the meta and takes the token out of the address bar. The HttpOnly cookie the same
// answer sets only lets the browser load the UI's documents: it is sent to every port of
// 127.0.0.1, so the server never trusts it for the API.

import type {
  Answer,
  AppSummary,
  HostError,
  LaunchTarget,
  Mount,
  Outgoing,
  SyncReport,
} from "./types.js";

interface TauriGlobal {
  core: {
    invoke<T>(command: string, args?: unknown, options?: { headers?: Record<string, string> }): Promise<T>;
  };
}

/** What Tauri injects into the window's top page whatever the configuration. */
interface TauriInternals {
  invoke<T>(command: string, args?: unknown, options?: { headers?: Record<string, string> }): Promise<T>;
}

declare global {
  interface Window {
    __TAURI__?: TauriGlobal;
    __TAURI_INTERNALS__?: TauriInternals;
  }
}

/** The desktop transport's door in this page: `__TAURI__.core`, else Tauri's internals. */
function pageTauri(): TauriGlobal | undefined {
  if (typeof window === "undefined") return undefined;
  if (window.__TAURI__ !== undefined) return window.__TAURI__;
  const internals = window.__TAURI_INTERNALS__;
  return internals === undefined ? undefined : { core: internals };
}

/** One event of the outbox (`next_events`). */
export interface HostEvent {
  seq: number;
  kind: string;
  payload: unknown;
}

/** One `next_events` answer: `next` is the `after` of the following call. */
export interface EventBatch {
  events: HostEvent[];
  next: number;
  missed: number;
}

/** What a transport needs from its surroundings (the page, or a test double). */
export interface TransportEnv {
  tauri?: TauriGlobal | undefined;
  fetch?: typeof fetch | undefined;
  /** The browser session's secret, read at each call (null: not signed in). */
  session?: (() => string | null) | undefined;
}

/** The request header that carries the session secret of browser-mode API calls. */
export const SESSION_HEADER = "X-AppHost-Session";
/** The `<meta name>` of the launch answer that carries the secret. */
export const SESSION_META = "apphost-session";
/** Where the page keeps the secret (its own origin's localStorage). */
export const SESSION_KEY = "apphost.session";

/** What adopting the browser session touches (the page, or a test double). */
export interface SessionPage {
  meta(): { content: string | null; remove(): void } | null;
  storage: { getItem(key: string): string | null; setItem(key: string, value: string): void } | undefined;
  href: string;
  replaceUrl(url: string): void;
}

/**
 * Takes the session secret the launch answer embedded (once: the meta is removed), keeps it in
 * storage and removes `token` from the address. Answers the secret this page holds, or null.
 */
export function adoptSession(page: SessionPage): string | null {
  const meta = page.meta();
  let secret: string | null = null;
  if (meta !== null) {
    secret = meta.content;
    meta.remove();
    if (secret !== null && secret !== "") {
      try {
        page.storage?.setItem(SESSION_KEY, secret);
      } catch {
        // Storage refused (quota, privacy mode): the secret lives in memory until a reload.
      }
    }
  }
  try {
    const url = new URL(page.href);
    if (url.searchParams.has("token")) {
      url.searchParams.delete("token");
      page.replaceUrl(`${url.pathname}${url.search}${url.hash}`);
    }
  } catch {
    // Not a URL this page can rewrite: leave it.
  }
  return secret !== null && secret !== "" ? secret : null;
}

/** The secret a browser page holds: its storage first (the newest sign-in), else `adopted`. */
export function storedSession(
  storage: SessionPage["storage"],
  adopted: string | null,
): string | null {
  try {
    return storage?.getItem(SESSION_KEY) ?? adopted;
  } catch {
    return adopted;
  }
}

/** The two calls every transport offers. */
export interface Invoker {
  readonly kind: "tauri" | "http";
  invoke<T>(command: string, args?: unknown): Promise<T>;
  upload(bytes: Uint8Array): Promise<{ uploadId: string; bytes: number }>;
}

function hostError(code: string, message: string, details?: unknown): HostError {
  return details === undefined ? { code, message } : { code, message, details };
}

function isHostError(value: unknown): value is HostError {
  return (
    typeof value === "object" &&
    value !== null &&
    typeof (value as { code?: unknown }).code === "string" &&
    typeof (value as { message?: unknown }).message === "string"
  );
}

/** Tauri when the page runs in the desktop window, HTTP otherwise. */
export function makeInvoker(env: TransportEnv): Invoker {
  const tauri = env.tauri;
  if (tauri !== undefined) {
    return {
      kind: "tauri",
      invoke: <T>(command: string, args?: unknown) =>
        tauri.core.invoke<T>("host_call", { command, args: args ?? {} }),
      upload: (bytes) =>
        tauri.core.invoke("upload_package", bytes, {
          headers: { "Content-Type": "application/zip" },
        }),
    };
  }
  const fetcher = env.fetch;
  if (fetcher === undefined) {
    return {
      kind: "http",
      invoke: () => Promise.reject(unavailable()),
      upload: () => Promise.reject(unavailable()),
    };
  }
  const session = env.session;
  const post = async <T>(command: string, body: BodyInit, contentType: string): Promise<T> => {
    const headers: Record<string, string> = { "Content-Type": contentType };
    const secret = session?.() ?? null;
    if (secret !== null) {
      headers[SESSION_HEADER] = secret;
    }
    let response: Response;
    try {
      response = await fetcher(`/api/${encodeURIComponent(command)}`, {
        method: "POST",
        credentials: "same-origin",
        headers,
        body,
      });
    } catch (error: unknown) {
      throw hostError("internal", "the AppHost server cannot be reached (is `apphost serve` still running?)", {
        reason: String(error),
      });
    }
    let answer: unknown;
    try {
      answer = await response.json();
    } catch {
      throw hostError("internal", `the AppHost server answered ${response.status} without JSON`, {
        status: response.status,
      });
    }
    if (!response.ok) {
      throw isHostError(answer)
        ? answer
        : hostError("internal", `the AppHost server answered ${response.status}`, { status: response.status });
    }
    return answer as T;
  };
  return {
    kind: "http",
    invoke: <T>(command: string, args?: unknown) =>
      post<T>(command, JSON.stringify(args ?? {}), "application/json"),
    upload: (bytes) => post("upload_package", bytes as BodyInit, "application/zip"),
  };
}

function unavailable(): HostError {
  return hostError(
    "internal",
    "the AppHost host API is not available (open this page in the AppHost window or through `apphost serve`)",
  );
}

/** This page's localStorage, or undefined where there is none or it is refused. */
function pageStorage(): SessionPage["storage"] {
  try {
    return typeof localStorage === "undefined" ? undefined : localStorage;
  } catch {
    return undefined;
  }
}

// Adopted as soon as the page loads this module, before anything renders, so the token leaves
// the address bar at once and the meta never outlives the first script.
const adopted: string | null =
  typeof document === "undefined" || typeof window === "undefined" || pageTauri() !== undefined
    ? null
    : adoptSession({
        meta: () => {
          const element = document.querySelector(`meta[name="${SESSION_META}"]`);
          return element === null
            ? null
            : { content: element.getAttribute("content"), remove: () => element.remove() };
        },
        storage: pageStorage(),
        href: window.location.href,
        replaceUrl: (url) => window.history.replaceState(window.history.state, "", url),
      });

let chosen: Invoker | undefined;

function invoker(): Invoker {
  chosen ??= makeInvoker({
    tauri: pageTauri(),
    fetch: typeof fetch === "undefined" ? undefined : fetch.bind(globalThis),
    session: () => storedSession(pageStorage(), adopted),
  });
  return chosen;
}

/** Which transport this page uses. */
export function transportKind(): "tauri" | "http" {
  return invoker().kind;
}

/** Calls one command of the host API. Rejects with a HostError. */
export async function invoke<T>(command: string, args?: unknown): Promise<T> {
  return invoker().invoke<T>(command, args);
}

/** Keeps a package (`.zip` bytes) for review; answers its `uploadId`. */
export async function uploadPackage(bytes: Uint8Array): Promise<{ uploadId: string; bytes: number }> {
  return invoker().upload(bytes);
}

/** The events after `after`, waiting up to `timeoutMs` (at most 25 s) for one. */
export async function nextEvents(after: number, timeoutMs: number): Promise<EventBatch> {
  return invoke<EventBatch>("next_events", { after, timeoutMs });
}

/** The installed apps. Rejects with a HostError. */
export async function listApps(): Promise<AppSummary[]> {
  return invoke<AppSummary[]>("list_apps");
}

/** Mounts an app entry; Rust checks the app, the entry and its readiness. */
export async function mountEntry(appId: string, entryKey: string): Promise<Mount> {
  return invoke<Mount>("mount_entry", { appId, entryKey });
}

/** Relays one message a frame posted; returns what to do. */
export async function bridgeMessage(
  mountId: string,
  origin: string,
  data: string,
): Promise<Outgoing[]> {
  return invoke<Outgoing[]>("bridge_message", { mountId, origin, data });
}

/** Reports a message the relay refused itself (never acted on). */
export async function bridgeRefused(
  mountId: string | null,
  reason: string,
  bytes: number,
): Promise<void> {
  await invoke<null>("bridge_refused", { mountId, reason, bytes });
}

export async function answerPrompt(promptId: string, answer: Answer): Promise<Outgoing[]> {
  return invoke<Outgoing[]>("answer_prompt", { promptId, answer });
}

/** The user's answer to a download Rust asked about (`confirmDownload`). */
export async function answerDownload(downloadId: string, save: boolean): Promise<Outgoing[]> {
  return invoke<Outgoing[]>("answer_download", { downloadId, save });
}

export async function unmount(mountId: string): Promise<boolean> {
  return invoke<boolean>("unmount", { mountId });
}

/**
 * Opens an http(s) link after the user confirmed it (Rust checks the URL again). The desktop
 * opens it in the user's browser; in browser mode Rust answers `{url}` and the page opens it.
 */
export async function openExternal(url: string): Promise<void> {
  const answer = await invoke<{ url: string } | null>("open_external", { url });
  if (answer !== null && typeof answer.url === "string") {
    window.open(answer.url, "_blank", "noopener,noreferrer");
  }
}

/** The entry the window was started to open, or null. */
export async function launchTarget(): Promise<LaunchTarget | null> {
  return invoke<LaunchTarget | null>("launch_target");
}

/** Mounts Rust ended because another process changed the app (disable, uninstall, update). */
export async function syncMounts(): Promise<SyncReport> {
  return invoke<SyncReport>("sync_mounts");
}

/**
 * The entry a browser-mode URL asks for: `/apps/<app>/<entry>` (each part percent-decoded, no
 * further slashes), or null for any other path.
 */
export function launchFromPath(pathname: string): LaunchTarget | null {
  const match = /^\/apps\/([^/]+)\/([^/]+)\/?$/.exec(pathname);
  if (match === null) {
    return null;
  }
  try {
    const appId = decodeURIComponent(match[1] ?? "");
    const entryKey = decodeURIComponent(match[2] ?? "");
    return appId === "" || entryKey === "" ? null : { appId, entryKey };
  } catch {
    return null;
  }
}
