// `lime.files`: documents the user chose for this app, by opaque refs (`fref_` + 32 hex digits).
// The app never sees a path. Shapes are the host's (crates/host-core/src/hosting/capability/
// services/files.rs, docs/bridge-protocol.md "lime.files").

import type { CallOptions, Invoke } from "./handles.js";

/** A ref the user granted: a file or a folder. */
export interface FileRefInfo {
  /** `fref_` + 32 lowercase hex digits; opaque, per app. */
  ref: string;
  name: string;
  kind: "file" | "folder";
  /** Seconds since the epoch. */
  mtime: number;
  grantedAt: string;
  /** Files only. */
  size?: number;
  /** Files only: guessed from the name. */
  mimeType?: string;
}

/** A file's metadata (`stat`, and `readRef`'s answer without the content). */
export interface FileStat {
  ref: string;
  name: string;
  kind: "file";
  size: number;
  mtime: number;
  mimeType: string;
  /** The relative path under a folder ref, when one was given. */
  path?: string;
}

/** `readRef`: at most 4 MiB per read; larger files are read in ranges. */
export interface FileContent extends FileStat {
  offset: number;
  /** Bytes answered. */
  length: number;
  /** Whether the read reached the end of the file. */
  eof: boolean;
  encoding: "base64" | "text";
  content: string;
}

export interface ReadRefArgs {
  ref: string;
  /** A file under a folder ref: a relative path of plain names (no `..`, no leading `/`). */
  path?: string;
  /** Default 0. */
  offset?: number;
  /** At most 4 MiB (4194304); without it the rest of the file, which must be at most 4 MiB. */
  length?: number;
  /** Default `"base64"`; `"text"` fails (`files.not_text`) unless the bytes are UTF-8. */
  encoding?: "base64" | "text";
}

export interface FolderEntry {
  name: string;
  kind: "file" | "folder";
  mtime: number;
  size?: number;
  mimeType?: string;
}

export interface FolderListing {
  ref: string;
  path: string;
  /** Regular files (with one link) and folders, by name; at most 1000. */
  entries: FolderEntry[];
  /** Links, special files, hard-linked files and names that are not UTF-8, left out. */
  skipped: number;
  truncated: boolean;
}

/** `requestFiles`: what the user is asked to choose. */
export interface RequestFilesArgs {
  /** More than one file may be chosen (default false). */
  multiple?: boolean;
  /** Ask for a folder instead of files (default false). */
  folder?: boolean;
  /** Name suffixes or MIME types to suggest (`.md`, `text/plain`; at most 16): a hint only. */
  accept?: string[];
}

/** Default deadline of `requestFiles`: the user answers a picker. */
export const REQUEST_FILES_TIMEOUT_MS = 5 * 60_000;

export interface LimeFiles {
  /**
   * Asks the user to choose files (or a folder) to share with the app, in a picker the host
   * draws; resolves `{cancelled, refs}` with the new refs (never a path). Waits for the user:
   * the default deadline is 5 minutes.
   */
  requestFiles(args?: RequestFilesArgs, opts?: CallOptions): Promise<{ cancelled: boolean; refs: FileRefInfo[] }>;
  /** The app's refs (what the user granted it). */
  list(opts?: CallOptions): Promise<{ refs: FileRefInfo[] }>;
  /** `readRef(ref)` (the standard's form) or `readRef({ref, path?, offset?, length?, encoding?})`. */
  readRef(args: string | ReadRefArgs, opts?: CallOptions): Promise<FileContent>;
  /** A file ref's (or a file under a folder ref's) metadata; a folder ref alone answers its `FileRefInfo`. */
  stat(args: string | { ref: string; path?: string }, opts?: CallOptions): Promise<FileStat | FileRefInfo>;
  /** The children of a folder ref (or of `path` under it). */
  listFolder(args: string | { ref: string; path?: string }, opts?: CallOptions): Promise<FolderListing>;
}

export function buildFiles(invoke: Invoke): LimeFiles {
  const byRef = (a: string | object) => (typeof a === "string" ? { ref: a } : { ...a });
  return {
    list: (o) => invoke("lime.files", "list", {}, o),
    requestFiles: (a, o) => invoke("lime.files", "requestFiles", { ...(a ?? {}) }, { timeoutMs: REQUEST_FILES_TIMEOUT_MS, ...o }),
    readRef: (a, o) => invoke("lime.files", "readRef", byRef(a), o),
    stat: (a, o) => invoke("lime.files", "stat", byRef(a), o),
    listFolder: (a, o) => invoke("lime.files", "listFolder", byRef(a), o),
  };
}
