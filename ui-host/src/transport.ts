// The host UI's one door to Rust: the command layer of docs/host-api.md, over one of two
// transports chosen once at load:
// - desktop: the Tauri global `__TAURI__` (tauri.conf.json sets app.withGlobalTauri), command
//   `host_call {command, args}` and the raw-body `upload_package`;
// - browser (`apphost serve`): `POST /api/<command>` with the JSON arguments as the body, on the
//   host UI's own origin with its HttpOnly session cookie (credentials: same-origin).
// Both answer the command's JSON or reject with a HostError `{code, message, details}`.

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

declare global {
  interface Window {
    __TAURI__?: TauriGlobal;
  }
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
  const post = async <T>(command: string, body: BodyInit, contentType: string): Promise<T> => {
    let response: Response;
    try {
      response = await fetcher(`/api/${encodeURIComponent(command)}`, {
        method: "POST",
        credentials: "same-origin",
        headers: { "Content-Type": contentType },
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

let chosen: Invoker | undefined;

function invoker(): Invoker {
  chosen ??= makeInvoker({
    tauri: typeof window === "undefined" ? undefined : window.__TAURI__,
    fetch: typeof fetch === "undefined" ? undefined : fetch.bind(globalThis),
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
