// The host UI's bridge relay: the one place app frames meet Rust.
//
// It creates each app frame from the mount Rust returned (`sandbox`, `src` and identity all come
// from Rust), listens to `message` events, refuses any event whose `event.source` is not a
// mounted frame's window (reported as `bridge.wrong_source`, never relayed as a call), relays the
// rest as JSON text with `event.origin`, and executes what Rust answers (`Outgoing`). It decides
// nothing else: origin, protocol, identity, handshake, schema and size are checked in Rust
// (host_core::bridge). The pure parts at the top are unit-tested under node (test/relay.test.mjs).

import { pickFiles, type FilePickTransport } from "./file-picker.js";
import type { Answer, Mount, Outgoing, PermissionQuestion } from "./types.js";

/** Rust asks whether to save a file an app offers (`Outgoing::ConfirmDownload`). */
export interface ConfirmDownload {
  kind: "confirmDownload";
  downloadId: string;
  mountId: string;
  appId: string;
  fileName: string;
  size: number;
  mimeType: string;
}

/** Everything Rust may ask the relay to do. */
export type RelayAction = Outgoing | ConfirmDownload;

/** A byte count for people: `512 bytes`, `1.5 KB`, `2.0 MB` (powers of 1024). */
export function formatSize(bytes: number): string {
  if (bytes < 1024) {
    return `${bytes} ${bytes === 1 ? "byte" : "bytes"}`;
  }
  const units = ["KB", "MB", "GB"];
  let v = bytes / 1024;
  let i = 0;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i += 1;
  }
  return `${v.toFixed(1)} ${units[i]}`;
}

/** Messages longer than this (in UTF-16 units, so at least this many bytes) are not relayed. */
export const MAX_RELAYED_CHARS = 1024 * 1024;

/** The mount whose frame window is `source`, or null (the `event.source` check). */
export function mountForSource<W>(
  source: unknown,
  frames: Iterable<{ mountId: string; window: W | null }>,
): string | null {
  if (source === null || source === undefined) {
    return null;
  }
  for (const frame of frames) {
    if (frame.window !== null && frame.window === source) {
      return frame.mountId;
    }
  }
  return null;
}

/** What to do with a message from a mounted frame. */
export type Relay =
  | { action: "relay"; text: string }
  | { action: "refuse"; reason: "bridge.too_large" | "bridge.not_json"; bytes: number };

/** Turns `event.data` into the JSON text Rust decodes. Never throws. */
export function encodeForRelay(data: unknown): Relay {
  let text: string | undefined;
  try {
    text = JSON.stringify(data);
  } catch {
    return { action: "refuse", reason: "bridge.not_json", bytes: 0 };
  }
  if (typeof text !== "string") {
    // undefined, functions, symbols: nothing JSON can carry.
    return { action: "refuse", reason: "bridge.not_json", bytes: 0 };
  }
  if (text.length > MAX_RELAYED_CHARS) {
    return { action: "refuse", reason: "bridge.too_large", bytes: text.length };
  }
  return { action: "relay", text };
}

/**
 * Whether a frame's message is a dev console report (posted by the host's dev-console script in
 * dev installs' pages, `hosting/surface/dev_console.js`). It goes to `dev_diagnostic`, not to the
 * bridge; Rust decides whether the frame may report at all (dev installs only).
 */
export function isDevReport(data: unknown): boolean {
  return typeof data === "object" && data !== null && (data as { apphostDevConsole?: unknown }).apphostDevConsole === 1;
}

/** The permission prompt's wording. */
export function promptText(q: PermissionQuestion, appName: string): { title: string; body: string } {
  const what = q.permission !== null ? `the permission “${q.permission}”` : `${q.capability}.${q.method}`;
  const title = `Allow ${appName} to use ${what}?`;
  const parts = [`${appName} asks to call ${q.capability}.${q.method}.`];
  if (q.reason !== null && q.reason.trim() !== "") {
    parts.push(`The app says: “${q.reason.trim()}”`);
  }
  return { title, body: parts.join(" ") };
}

/** The host of an http(s) URL, or null when it is not one. */
export function externalHost(url: string): string | null {
  try {
    const parsed = new URL(url);
    return parsed.protocol === "http:" || parsed.protocol === "https:" ? parsed.hostname : null;
  } catch {
    return null;
  }
}

/** Whether `host` is one of the declared domains (`*.example.com` matches subdomains). */
export function isDeclaredHost(host: string, declared: readonly string[]): boolean {
  const h = host.toLowerCase();
  return declared.some((d) => {
    const domain = d.toLowerCase().replace(/:\d+$/, "");
    if (domain.startsWith("*.")) {
      const base = domain.slice(2);
      return h.endsWith(`.${base}`);
    }
    return h === domain;
  });
}

// ---------------------------------------------------------------------------------------------
// DOM part: everything below touches the document only when called.

/** What the relay needs from the host (the Tauri transport, or a test double). */
export interface RelayTransport {
  bridgeMessage(mountId: string, origin: string, data: string): Promise<Outgoing[]>;
  bridgeRefused(mountId: string | null, reason: string, bytes: number): Promise<void>;
  answerPrompt(promptId: string, answer: Answer): Promise<Outgoing[]>;
  /** The user's answer to a `confirmDownload`; Rust writes the file and answers the app. */
  answerDownload(downloadId: string, save: boolean): Promise<RelayAction[]>;
  unmount(mountId: string): Promise<boolean>;
  openExternal(url: string): Promise<void>;
  /** The `lime.files.requestFiles` picker's grants and answer (`file-picker.ts`). */
  files: FilePickTransport;
  /** A dev console report of a frame (`isDevReport`); Rust bounds it and refuses non-dev apps. */
  devDiagnostic?(mountId: string, origin: string, data: string): Promise<unknown>;
}

interface Mounted {
  mount: Mount;
  frame: HTMLIFrameElement;
  title: string;
}

/** Optional observers of the relay (the running-app tabs show pending prompts). */
export interface RelayHooks {
  /** A permission prompt for `mountId` was queued (`pending` true) or answered (false). */
  prompt?(mountId: string, pending: boolean): void;
}

export class BridgeRelay {
  private readonly mounted = new Map<string, Mounted>();
  private dialogChain: Promise<void> = Promise.resolve();

  constructor(
    private readonly transport: RelayTransport,
    private readonly surface: HTMLElement,
    private readonly onError: (error: unknown) => void,
    private readonly hooks: RelayHooks = {},
  ) {
    window.addEventListener("message", (event) => void this.onMessage(event));
  }

  /** Creates the frame of `mount` inside the surface area (or `container`, e.g. a side pane). */
  attach(mount: Mount, title: string, container: HTMLElement = this.surface): HTMLIFrameElement {
    const frame = document.createElement("iframe");
    // The sandbox comes from Rust and is set before `src`, so the page never loads unsandboxed.
    frame.setAttribute("sandbox", mount.sandbox);
    frame.setAttribute("referrerpolicy", "no-referrer");
    frame.className = "app-frame";
    frame.title = title;
    frame.dataset.appId = mount.appId;
    frame.dataset.entryKey = mount.entryKey;
    frame.dataset.mountId = mount.mountId;
    frame.src = mount.url;
    this.mounted.set(mount.mountId, { mount, frame, title });
    container.append(frame);
    return frame;
  }

  /** Removes every frame and tells Rust. */
  async detachAll(): Promise<void> {
    const ids = [...this.mounted.keys()];
    for (const id of ids) {
      this.mounted.get(id)?.frame.remove();
      this.mounted.delete(id);
      try {
        await this.transport.unmount(id);
      } catch (error: unknown) {
        this.onError(error);
      }
    }
  }

  /** Removes the frames of mounts Rust already ended; returns how many frames are left. */
  drop(mountIds: readonly string[]): number {
    for (const id of mountIds) {
      this.mounted.get(id)?.frame.remove();
      this.mounted.delete(id);
    }
    return this.mounted.size;
  }

  private frames(): Array<{ mountId: string; window: Window | null }> {
    return [...this.mounted.values()].map((m) => ({
      mountId: m.mount.mountId,
      window: m.frame.contentWindow,
    }));
  }

  private async onMessage(event: MessageEvent): Promise<void> {
    const mountId = mountForSource(event.source, this.frames());
    if (mountId === null) {
      let bytes = 0;
      try {
        bytes = typeof event.data === "string" ? event.data.length : (JSON.stringify(event.data) ?? "").length;
      } catch {
        bytes = 0;
      }
      await this.report(null, "bridge.wrong_source", bytes);
      return;
    }
    const relay = encodeForRelay(event.data);
    if (relay.action === "refuse") {
      await this.report(mountId, relay.reason, relay.bytes);
      return;
    }
    if (isDevReport(event.data)) {
      try {
        await this.transport.devDiagnostic?.(mountId, event.origin, relay.text);
      } catch (error: unknown) {
        console.warn("dev_diagnostic failed", error);
      }
      return;
    }
    try {
      await this.execute(await this.transport.bridgeMessage(mountId, event.origin, relay.text));
    } catch (error: unknown) {
      this.onError(error);
    }
  }

  private async report(mountId: string | null, reason: string, bytes: number): Promise<void> {
    try {
      await this.transport.bridgeRefused(mountId, reason, bytes);
    } catch (error: unknown) {
      console.warn("bridge_refused failed", error);
    }
  }

  /** Carries out what Rust answered. */
  async execute(actions: readonly RelayAction[]): Promise<void> {
    for (const action of actions) {
      const target = this.mounted.get(action.mountId);
      if (target === undefined) {
        continue; // the frame went away meanwhile
      }
      switch (action.kind) {
        case "post":
          // Only ever to the app's own origin.
          target.frame.contentWindow?.postMessage(action.message, target.mount.origin);
          break;
        case "toast":
          showToast(`${target.title}: ${action.message}`, action.level);
          break;
        case "navigate":
          target.frame.dataset.route = action.route;
          break;
        case "prompt":
          this.hooks.prompt?.(action.mountId, true);
          this.queueDialog(async () => {
            try {
              const answer = await askPermission(action.question, target.title);
              await this.execute(await this.transport.answerPrompt(action.promptId, answer));
            } finally {
              this.hooks.prompt?.(action.mountId, false);
            }
          });
          break;
        case "confirmExternal":
          this.queueDialog(async () => {
            if (await confirmExternal(action.url, action.declaredDomains, target.title)) {
              await this.transport.openExternal(action.url);
            }
          });
          break;
        case "pickFiles":
          this.hooks.prompt?.(action.mountId, true);
          this.queueDialog(async () => {
            try {
              const refs = await pickFiles(action.appId, target.title, action.request, this.transport.files);
              await this.execute(await this.transport.files.answer(action.promptId, refs));
            } finally {
              this.hooks.prompt?.(action.mountId, false);
            }
          });
          break;
        case "confirmDownload":
          this.queueDialog(async () => {
            const save = await confirmDownload(action, target.title);
            await this.execute(await this.transport.answerDownload(action.downloadId, save));
          });
          break;
      }
    }
  }

  /** One dialog at a time, in order. */
  private queueDialog(show: () => Promise<void>): void {
    this.dialogChain = this.dialogChain.then(show).catch((error: unknown) => this.onError(error));
  }
}

function showToast(text: string, level: string): void {
  const region = document.getElementById("toasts");
  if (region === null) {
    return;
  }
  const toast = document.createElement("div");
  toast.className = `toast toast--${level}`;
  toast.setAttribute("role", level === "error" ? "alert" : "status");
  toast.textContent = text;
  region.append(toast);
  setTimeout(() => toast.remove(), 6000);
}

/**
 * Shows a modal `<dialog>` with the given buttons; resolves with the chosen value, or `closed`
 * when it is dismissed (Escape). Text goes in through textContent only.
 */
export function dialog<T extends string>(
  id: string,
  title: string,
  body: HTMLElement[],
  buttons: Array<{ value: T; label: string; id: string; primary?: boolean }>,
  closed: T,
): Promise<T> {
  return new Promise((resolve) => {
    const d = document.createElement("dialog");
    d.id = id;
    d.dataset.testid = id;
    d.className = "host-dialog";
    const heading = document.createElement("h2");
    heading.id = `${id}-title`;
    heading.textContent = title;
    d.setAttribute("aria-labelledby", heading.id);
    const actions = document.createElement("div");
    actions.className = "dialog-actions";
    let settled = false;
    const finish = (value: T): void => {
      if (settled) {
        return;
      }
      settled = true;
      d.close();
      d.remove();
      resolve(value);
    };
    for (const b of buttons) {
      const button = document.createElement("button");
      button.type = "button";
      button.id = b.id;
      button.textContent = b.label;
      button.className = b.primary === true ? "button button--primary" : "button";
      button.addEventListener("click", () => finish(b.value));
      actions.append(button);
    }
    d.addEventListener("cancel", () => finish(closed));
    d.addEventListener("close", () => finish(closed));
    d.append(heading, ...body, actions);
    document.body.append(d);
    d.showModal();
  });
}

function paragraph(text: string, className = ""): HTMLParagraphElement {
  const p = document.createElement("p");
  p.className = className;
  p.textContent = text;
  return p;
}

function askPermission(q: PermissionQuestion, appName: string): Promise<Answer> {
  const text = promptText(q, appName);
  return dialog<Answer>(
    "permission-prompt",
    text.title,
    [paragraph(text.body)],
    [
      { value: "deny", label: "Deny", id: "prompt-deny" },
      { value: "allow-once", label: "Allow once", id: "prompt-allow-once" },
      { value: "allow-always", label: "Allow always", id: "prompt-allow-always", primary: true },
    ],
    "dismissed",
  );
}

async function confirmExternal(url: string, declared: readonly string[], appName: string): Promise<boolean> {
  const host = externalHost(url);
  if (host === null) {
    return false;
  }
  const list = document.createElement("ul");
  list.id = "external-domains";
  for (const d of declared) {
    const li = document.createElement("li");
    li.textContent = d;
    list.append(li);
  }
  const body = [
    paragraph(url, "external-url"),
    paragraph(
      isDeclaredHost(host, declared)
        ? `${host} is one of the domains ${appName} declares:`
        : `${host} is NOT one of the domains ${appName} declares${declared.length > 0 ? ":" : " (it declares none)."}`,
    ),
    list,
  ];
  const choice = await dialog<"open" | "cancel">(
    "external-confirm",
    `Open a link from ${appName} in your browser?`,
    body,
    [
      { value: "cancel", label: "Cancel", id: "external-cancel" },
      { value: "open", label: "Open link", id: "external-open", primary: true },
    ],
    "cancel",
  );
  return choice === "open";
}

/** Asks whether to save the file an app offers; Rust has checked it and chose the name. */
async function confirmDownload(d: ConfirmDownload, appName: string): Promise<boolean> {
  const name = paragraph(d.fileName, "download-name");
  name.id = "download-name";
  const details = paragraph(`${formatSize(d.size)} · ${d.mimeType}`, "download-details");
  details.id = "download-details";
  const choice = await dialog<"save" | "cancel">(
    "download-confirm",
    `Save a file from ${appName} to your Downloads folder?`,
    [name, details],
    [
      { value: "cancel", label: "Cancel", id: "download-cancel" },
      { value: "save", label: "Save", id: "download-save", primary: true },
    ],
    "cancel",
  );
  return choice === "save";
}
