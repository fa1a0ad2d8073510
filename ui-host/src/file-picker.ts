// The picker an app's `lime.files.requestFiles` asks for (`Outgoing` kind `pickFiles`): the user
// types paths (a file or folder on this machine; the window has no native dialog, see
// docs/bridge-protocol.md) and/or uploads files from the browser's file chooser. Each choice is
// granted in Rust (`file_grant_path`, `file_upload`), which checks it; the refs go back with
// `answer_file_pick`. The app never sees a path. Nothing is decided here.

import type { Outgoing, PickRequest } from "./generated/host-api.js";

/** What the picker needs from the host command layer. */
export interface FilePickTransport {
  grantPath(appId: string, path: string): Promise<{ ref: string }>;
  upload(appId: string, name: string, base64: string): Promise<{ ref: string }>;
  /** `refs: null` = cancelled. */
  answer(promptId: string, refs: string[] | null): Promise<Outgoing[]>;
}

/** Bytes as base64 (standard alphabet, padded). */
export function toBase64(bytes: Uint8Array): string {
  let s = "";
  for (let i = 0; i < bytes.length; i += 0x8000) {
    s += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  }
  return btoa(s);
}

/** The lines of the path field: trimmed, without empty ones. */
export function pathLines(text: string): string[] {
  return text
    .split("\n")
    .map((l) => l.trim())
    .filter((l) => l !== "");
}

function errorText(e: unknown): string {
  if (typeof e === "object" && e !== null && "code" in e) {
    const h = e as { code: unknown; message?: unknown };
    return `${String(h.code)}: ${String(h.message ?? "")}`;
  }
  return String(e);
}

/** Shows the picker; resolves with the refs granted from the user's choice, or `null`. */
export function pickFiles(appId: string, appName: string, request: PickRequest, t: FilePickTransport): Promise<string[] | null> {
  return new Promise((resolve) => {
    const d = document.createElement("dialog");
    d.id = "file-picker";
    d.dataset.testid = "file-picker";
    d.className = "host-dialog";
    const heading = document.createElement("h2");
    heading.id = "file-picker-title";
    const what = request.folder ? "a folder" : request.multiple ? "files" : "a file";
    heading.textContent = `${appName} asks you to choose ${what} to share with it`;
    d.setAttribute("aria-labelledby", heading.id);
    const note = document.createElement("p");
    note.textContent =
      "The app reads what you share by an opaque reference, never by its path. You can revoke it on the app's Data tab." +
      (request.accept.length > 0 ? ` It would like: ${request.accept.join(", ")}.` : "");
    const pathLabel = document.createElement("label");
    pathLabel.htmlFor = "pick-paths";
    pathLabel.textContent = request.multiple ? "Full paths on this computer (one per line)" : "Full path on this computer";
    const paths = document.createElement("textarea");
    paths.id = "pick-paths";
    paths.dataset.testid = "pick-paths";
    paths.rows = request.multiple ? 3 : 1;
    const body: HTMLElement[] = [heading, note, pathLabel, paths];
    const upload = document.createElement("input");
    if (!request.folder) {
      const uploadLabel = document.createElement("label");
      uploadLabel.htmlFor = "pick-upload";
      uploadLabel.textContent = "Or upload (at most 3 MB each)";
      upload.type = "file";
      upload.id = "pick-upload";
      upload.dataset.testid = "pick-upload";
      upload.multiple = request.multiple;
      body.push(uploadLabel, upload);
    }
    const problem = document.createElement("p");
    problem.className = "error-message";
    problem.dataset.testid = "pick-error";
    problem.setAttribute("role", "alert");
    const granted: string[] = [];
    let settled = false;
    const finish = (refs: string[] | null): void => {
      if (settled) return;
      settled = true;
      d.close();
      d.remove();
      resolve(refs);
    };
    const share = async (): Promise<void> => {
      problem.textContent = "";
      try {
        for (const p of pathLines(paths.value)) {
          granted.push((await t.grantPath(appId, p)).ref);
        }
        paths.value = "";
        for (const f of Array.from(upload.files ?? [])) {
          granted.push((await t.upload(appId, f.name, toBase64(new Uint8Array(await f.arrayBuffer())))).ref);
        }
        upload.value = "";
      } catch (e: unknown) {
        problem.textContent = errorText(e);
        return;
      }
      finish(granted);
    };
    const actions = document.createElement("div");
    actions.className = "dialog-actions";
    const cancel = document.createElement("button");
    cancel.type = "button";
    cancel.id = "pick-cancel";
    cancel.className = "button";
    cancel.textContent = "Cancel";
    cancel.addEventListener("click", () => finish(granted.length > 0 ? granted : null));
    const ok = document.createElement("button");
    ok.type = "button";
    ok.id = "pick-share";
    ok.className = "button button--primary";
    ok.textContent = "Share";
    ok.addEventListener("click", () => void share());
    actions.append(cancel, ok);
    d.addEventListener("cancel", () => finish(granted.length > 0 ? granted : null));
    d.append(...body, problem, actions);
    document.body.append(d);
    d.showModal();
  });
}
