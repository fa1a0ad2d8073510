// The host UI's one door to Rust. Desktop: Tauri commands through the global `__TAURI__`
// (tauri.conf.json sets app.withGlobalTauri). A browser transport arrives with `apphost serve`.

import type { Answer, AppSummary, HostError, LaunchTarget, Mount, Outgoing, SyncReport } from "./types.js";

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

/** Mounts an app entry; Rust checks the app, the entry and its readiness. */
export async function mountEntry(appId: string, entryKey: string): Promise<Mount> {
  return tauri().core.invoke<Mount>("mount_entry", { appId, entryKey });
}

/** Relays one message a frame posted; returns what to do. */
export async function bridgeMessage(
  mountId: string,
  origin: string,
  data: string,
): Promise<Outgoing[]> {
  return tauri().core.invoke<Outgoing[]>("bridge_message", { mountId, origin, data });
}

/** Reports a message the relay refused itself (never acted on). */
export async function bridgeRefused(
  mountId: string | null,
  reason: string,
  bytes: number,
): Promise<void> {
  await tauri().core.invoke<null>("bridge_refused", { mountId, reason, bytes });
}

export async function answerPrompt(promptId: string, answer: Answer): Promise<Outgoing[]> {
  return tauri().core.invoke<Outgoing[]>("answer_prompt", { promptId, answer });
}

/** The user's answer to a download Rust asked about (`confirmDownload`). */
export async function answerDownload(downloadId: string, save: boolean): Promise<Outgoing[]> {
  return tauri().core.invoke<Outgoing[]>("answer_download", { downloadId, save });
}

export async function unmount(mountId: string): Promise<boolean> {
  return tauri().core.invoke<boolean>("unmount", { mountId });
}

/** Opens an http(s) link after the user confirmed it (Rust checks the URL again). */
export async function openExternal(url: string): Promise<void> {
  await tauri().core.invoke<null>("open_external", { url });
}

/** The entry the window was started to open, or null. */
export async function launchTarget(): Promise<LaunchTarget | null> {
  return tauri().core.invoke<LaunchTarget | null>("launch_target");
}

/** Mounts Rust ended because another process changed the app (disable, uninstall, update). */
export async function syncMounts(): Promise<SyncReport> {
  return tauri().core.invoke<SyncReport>("sync_mounts");
}
