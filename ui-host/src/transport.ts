// The host UI's one door to Rust (docs/host-api.md). Desktop: the Tauri command `host_call`
// through the global `__TAURI__` (tauri.conf.json sets app.withGlobalTauri). The browser
// transport (`apphost serve`) replaces this file with the same three exports.

import type { EventsPage, HostError } from "./types.js";

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

function tauri(): TauriGlobal {
  const global = window.__TAURI__;
  if (global === undefined) {
    const error: HostError = {
      code: "internal",
      message: "the AppHost desktop bridge is not available (open this page in the AppHost window)",
    };
    throw error;
  }
  return global;
}

/** Whether the shell has `host_call` (null until the first call tells). */
let hasHostCall: boolean | null = null;

function isMissingCommand(error: unknown): boolean {
  return typeof error === "string" && /host_call not found/.test(error);
}

/**
 * Calls one host command; rejects with a HostError. A shell without `host_call` (older builds)
 * gets the legacy per-command Tauri name with the same arguments.
 */
export async function invoke<T>(command: string, args?: unknown): Promise<T> {
  const core = tauri().core;
  if (hasHostCall !== false) {
    try {
      const answer = await core.invoke<T>("host_call", { command, args: args ?? null });
      hasHostCall = true;
      return answer;
    } catch (error: unknown) {
      if (!isMissingCommand(error)) {
        throw error;
      }
      hasHostCall = false;
    }
  }
  return core.invoke<T>(command, (args ?? {}) as Record<string, unknown>);
}

/** Uploads a package's bytes (raw-body invoke); the answer's uploadId goes to `review_install`. */
export async function uploadPackage(bytes: Uint8Array): Promise<{ uploadId: string; bytes: number }> {
  return tauri().core.invoke("upload_package", bytes);
}

/** Host→UI events with a sequence greater than `after`, waiting up to `timeoutMs`. */
export async function nextEvents(after: number, timeoutMs: number): Promise<EventsPage> {
  return invoke<EventsPage>("next_events", { after, timeoutMs });
}
