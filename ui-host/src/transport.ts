// The host UI's one door to Rust. Desktop: Tauri commands through the global `__TAURI__`
// (tauri.conf.json sets app.withGlobalTauri). A browser transport arrives with `apphost serve`.

import type { AppSummary, HostError } from "./types.js";

interface TauriGlobal {
  core: {
    invoke<T>(command: string, args?: Record<string, unknown>): Promise<T>;
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

/** The installed apps. Rejects with a HostError. */
export async function listApps(): Promise<AppSummary[]> {
  return tauri().core.invoke<AppSummary[]>("list_apps");
}
