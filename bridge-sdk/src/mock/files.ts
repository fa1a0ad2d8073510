// lime.files in memory (crates/host-core/src/hosting/capability/services/files.rs): the refs the
// mock user granted (`options.files`, `grantFile`), read at most 4 MiB at a time with ranges,
// folders by relative paths of plain names; the host's refusals and causeCodes.
import { ErrorCodes } from "../errors.js";
import type { FileRefInfo } from "../files.js";
import { closed, invalid, randomHex, Refusal, refuse, utf8, type MockContext, type Service } from "./common.js";
import { encodeBase64, sha256Hex } from "./encoding.js";

/** The host's per-read limit. */
export const MAX_FILE_READ_BYTES = 4 * 1024 * 1024;

/** A file or folder the mock user grants: a folder's files by relative path (`"sub/b.txt"`). */
export type MockFileGrant = { name: string; content: string | Uint8Array } | { name: string; folder: Record<string, string | Uint8Array> };

interface Held {
  info: FileRefInfo;
  content?: Uint8Array;
  folder?: Map<string, Uint8Array>;
}

const CAUSE = "files.invalid_argument";
const MIME: Record<string, string> = {
  txt: "text/plain", log: "text/plain", md: "text/markdown", markdown: "text/markdown", csv: "text/csv",
  html: "text/html", htm: "text/html", json: "application/json", pdf: "application/pdf", png: "image/png",
  jpg: "image/jpeg", jpeg: "image/jpeg", xml: "application/xml", yaml: "application/yaml", yml: "application/yaml",
};
export const mimeOf = (name: string) => MIME[(name.includes(".") ? name.slice(name.lastIndexOf(".") + 1) : "").toLowerCase()] ?? "application/octet-stream";
const asBytes = (c: string | Uint8Array) => (typeof c === "string" ? utf8.encode(c) : c);
const looksLikePath = (s: string) => /[/\\:]/.test(s) || s.startsWith("~") || s.startsWith(".");
const isRef = (s: string) => /^fref_[0-9a-f]{32}$/.test(s);

function components(rel: string): string[] {
  if (rel.length > 4096) throw refuse(ErrorCodes.INVALID_ARGUMENT, "the path is too long", "files.path_not_allowed");
  if (rel === "") return [];
  if (rel.startsWith("/")) throw refuse(ErrorCodes.INVALID_ARGUMENT, "an absolute path is not allowed; give a path relative to the folder", "files.path_not_allowed");
  const parts = rel.split("/");
  if (parts.some((c) => c === "" || c === "." || c === ".." || c.includes("\0"))) {
    throw refuse(ErrorCodes.INVALID_ARGUMENT, 'the path has an empty, "." or ".." component', "files.path_not_allowed");
  }
  return parts;
}

export function createFiles(ctx: MockContext) {
  const held = new Map<string, Held>();
  const grantFile = (g: MockFileGrant): string => {
    const ref = `fref_${randomHex()}`;
    const grantedAt = ctx.now();
    if ("folder" in g) {
      held.set(ref, { info: { ref, name: g.name, kind: "folder", mtime: 0, grantedAt }, folder: new Map(Object.entries(g.folder).map(([k, v]) => [k, asBytes(v)])) });
    } else {
      const content = asBytes(g.content);
      held.set(ref, { info: { ref, name: g.name, kind: "file", mtime: 0, grantedAt, size: content.length, mimeType: mimeOf(g.name) }, content });
    }
    return ref;
  };
  for (const g of ctx.options.files ?? []) grantFile(g);
  const revokeFile = (ref: string) => held.delete(ref);

  const theRef = (a: Record<string, unknown>): Held => {
    const ref = a["ref"];
    if (typeof ref !== "string") throw invalid(ref === undefined || ref === null ? "args.ref is required" : "args.ref must be a string", CAUSE);
    if (!isRef(ref) && looksLikePath(ref)) throw refuse(ErrorCodes.INVALID_ARGUMENT, "args.ref must be a ref the host gave this app, never a path or URL", "files.path_not_allowed");
    const h = held.get(ref);
    if (!h) throw refuse(ErrorCodes.NOT_FOUND, "this app has no such file ref (it may have been revoked)", "files.ref_not_found");
    return h;
  };
  const relOf = (a: Record<string, unknown>) => {
    const p = a["path"];
    if (p === undefined || p === null || p === "") return undefined;
    if (typeof p !== "string") throw invalid("args.path must be a string", CAUSE);
    return p;
  };
  /** The bytes and name of the file a ref (and path) names. */
  const fileOf = (h: Held, rel: string | undefined): { name: string; bytes: Uint8Array } => {
    const parts = components(rel ?? "");
    if (h.info.kind === "file") {
      if (parts.length > 0) throw refuse(ErrorCodes.INVALID_ARGUMENT, "this ref names a file: no path can be given under it", "files.path_not_allowed");
      return { name: h.info.name, bytes: h.content ?? new Uint8Array() };
    }
    if (parts.length === 0) throw refuse(ErrorCodes.INVALID_ARGUMENT, "this ref names a folder: give args.path of a file under it", "files.wrong_kind");
    const key = parts.join("/");
    const b = h.folder?.get(key);
    if (b) return { name: parts[parts.length - 1] ?? key, bytes: b };
    if ([...(h.folder?.keys() ?? [])].some((k) => k.startsWith(`${key}/`))) throw refuse(ErrorCodes.INVALID_ARGUMENT, "this is a folder, not a file", "files.wrong_kind");
    throw refuse(ErrorCodes.NOT_FOUND, "nothing is at this place any more", "files.path_not_found");
  };
  const meta = (h: Held, rel: string | undefined, f: { name: string; bytes: Uint8Array }) => {
    const v: Record<string, unknown> = { ref: h.info.ref, name: f.name, kind: "file", size: f.bytes.length, mtime: 0, mimeType: mimeOf(f.name) };
    if (rel !== undefined) v["path"] = rel;
    return v;
  };
  const whole = (a: Record<string, unknown>, k: string) => {
    const v = a[k];
    if (v === undefined || v === null) return undefined;
    if (typeof v !== "number" || !Number.isSafeInteger(v) || v < 0) throw invalid(`args.${k} must be a whole number ≥ 0`, CAUSE);
    return v;
  };
  const tooLarge = (n: number, size?: number) =>
    new Refusal(
      ErrorCodes.INVALID_ARGUMENT,
      `${n} bytes asked; one read answers at most ${MAX_FILE_READ_BYTES}: read in ranges (offset, length)`,
      "files.too_large",
      false,
      size === undefined ? { limit: MAX_FILE_READ_BYTES } : { limit: MAX_FILE_READ_BYTES, size },
    );

  const service: Service = {
    requestFiles(a) {
      closed(a, ["multiple", "folder", "accept"], CAUSE);
      for (const k of ["multiple", "folder"]) {
        if (a[k] !== undefined && a[k] !== null && typeof a[k] !== "boolean") throw invalid(`args.${k} must be true or false`, CAUSE);
      }
      const accept = a["accept"] ?? [];
      if (!Array.isArray(accept) || accept.length > 16 || accept.some((x) => typeof x !== "string" || x === "" || x.length > 64)) {
        throw invalid("args.accept must be an array of at most 16 strings", CAUSE);
      }
      const request = { multiple: a["multiple"] === true, folder: a["folder"] === true, accept: accept as string[] };
      ctx.filePickRequests.push(request);
      const chosen = ctx.options.pickFiles?.(request) ?? null;
      if (chosen === null) return { cancelled: true, refs: [] };
      const refs = (request.multiple ? chosen : chosen.slice(0, 1)).map((g) => ({ ...held.get(grantFile(g))!.info }));
      return { cancelled: false, refs };
    },
    list(a) {
      closed(a, [], CAUSE);
      return { refs: [...held.values()].map((h) => ({ ...h.info })) };
    },
    stat(a) {
      closed(a, ["ref", "path"], CAUSE);
      const h = theRef(a);
      const rel = relOf(a);
      if (rel === undefined && h.info.kind === "folder") return { ...h.info };
      return meta(h, rel, fileOf(h, rel));
    },
    listFolder(a) {
      closed(a, ["ref", "path"], CAUSE);
      const h = theRef(a);
      const rel = relOf(a);
      if (h.info.kind !== "folder") throw refuse(ErrorCodes.INVALID_ARGUMENT, "this ref names a file, not a folder", "files.wrong_kind");
      const prefix = components(rel ?? "").join("/");
      const under = prefix === "" ? "" : `${prefix}/`;
      const entries = new Map<string, Record<string, unknown>>();
      for (const [k, b] of h.folder ?? []) {
        if (!k.startsWith(under)) continue;
        const [first = "", ...rest] = k.slice(under.length).split("/");
        if (rest.length > 0) entries.set(first, { name: first, kind: "folder", mtime: 0 });
        else entries.set(first, { name: first, kind: "file", mtime: 0, size: b.length, mimeType: mimeOf(first) });
      }
      if (prefix !== "" && entries.size === 0) throw refuse(ErrorCodes.NOT_FOUND, "nothing is at this place any more", "files.path_not_found");
      const sorted = [...entries.values()].sort((x, y) => (String(x["name"]) < String(y["name"]) ? -1 : 1));
      return { ref: h.info.ref, path: rel ?? "", entries: sorted, skipped: 0, truncated: false };
    },
    readRef(a) {
      closed(a, ["ref", "path", "offset", "length", "encoding"], CAUSE);
      const enc = a["encoding"] ?? "base64";
      if (enc !== "base64" && enc !== "text") throw invalid('args.encoding must be "base64" or "text"', CAUSE);
      const offset = whole(a, "offset") ?? 0;
      const length = whole(a, "length");
      if (length !== undefined && length > MAX_FILE_READ_BYTES) throw tooLarge(length);
      const h = theRef(a);
      const rel = relOf(a);
      const f = fileOf(h, rel);
      const rest = Math.max(0, f.bytes.length - offset);
      if (length === undefined && rest > MAX_FILE_READ_BYTES) throw tooLarge(rest, f.bytes.length);
      const slice = f.bytes.subarray(Math.min(offset, f.bytes.length), Math.min(f.bytes.length, offset + (length ?? rest)));
      let content: string;
      if (enc === "text") {
        try {
          content = new TextDecoder("utf-8", { fatal: true }).decode(slice);
        } catch {
          throw invalid("the bytes are not UTF-8 text (or the range splits a character); read them as base64", "files.not_text");
        }
      } else content = encodeBase64(slice);
      return { ...meta(h, rel, f), offset, length: slice.length, eof: offset + slice.length >= f.bytes.length, encoding: enc, content };
    },
  };
  const notAnObject = invalid("args must be an object", CAUSE);
  /** `lime.agent.startTask({files})`: the task input with the files' text attached, as the host
   * builds it (crates/host-core/src/hosting/capability/services/attachments.rs). */
  const attach = (files: unknown, input: unknown): unknown => {
    if (files === undefined || files === null) return input;
    if (Array.isArray(files) ? files.length === 0 : typeof files === "object" && Object.keys(files).length === 0) return input;
    const bad = (m: string) => invalid(m, "agent.invalid_argument");
    if (!Array.isArray(files)) throw bad("args.files must be an array of file refs");
    if (!ctx.offered.has("lime.files")) throw refuse(ErrorCodes.PERMISSION_DENIED, "the app does not declare lime.files, so it has no file refs to attach", "files.not_declared");
    if (files.length > 8) throw bad("at most 8 files can be attached to a task");
    const attachments = files.map((item: unknown) => {
      let a: Record<string, unknown>;
      if (typeof item === "string") a = { ref: item };
      else if (typeof item === "object" && item !== null && !Array.isArray(item) && Object.keys(item).every((k) => k === "ref" || k === "path")) a = { ...(item as object) };
      else throw bad("each of args.files is a ref or {ref, path}");
      const h = theRef(a);
      const rel = relOf(a);
      const f = fileOf(h, rel);
      const slice = f.bytes.subarray(0, 64 * 1024);
      let text: string;
      try {
        text = new TextDecoder("utf-8", { fatal: true }).decode(slice);
      } catch {
        throw invalid("an attached file is not UTF-8 text", "files.not_text");
      }
      const v: Record<string, unknown> = {
        ref: h.info.ref, name: f.name, mimeType: mimeOf(f.name), size: f.bytes.length, sha256: sha256Hex(utf8.encode(text)),
        bytes: utf8.encode(text).length, truncated: f.bytes.length > slice.length, text,
      };
      if (rel !== undefined) v["path"] = rel;
      return v;
    });
    return { input, attachments };
  };
  return { service, notAnObject, grantFile, revokeFile, attach };
}
