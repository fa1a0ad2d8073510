// What the host does to a `host:download` offer before it asks the user
// (crates/host-core/src/downloads.rs `sanitize_file_name`, bridge/host/download.rs `clean_mime`).
import { utf8 } from "./common.js";

/** The host's longest saved file name, in UTF-8 bytes. */
const MAX_FILE_NAME_BYTES = 200;
export const FALLBACK_NAME = "download";

/** `type/subtype`, lowercased, parameters dropped; `null` when it is not one (RFC 6838 names). */
export function cleanMime(mime: string): string | null {
  const essence = (mime.split(";")[0] ?? "").trim().toLowerCase();
  const slash = essence.indexOf("/");
  if (slash < 0) return null;
  const token = (x: string) => x.length > 0 && x.length <= 63 && /^[a-z0-9!#$&\-^_.+]+$/.test(x);
  return token(essence.slice(0, slash)) && token(essence.slice(slash + 1)) ? essence : null;
}

/** `name` cut to at most `max` UTF-8 bytes on a character boundary, keeping a short extension. */
function shorten(name: string, max: number): string {
  const dot = name.lastIndexOf(".");
  const [stem, ext0] = dot > 0 ? [name.slice(0, dot), name.slice(dot)] : [name, ""];
  const ext = utf8.encode(ext0).length <= 16 ? ext0 : "";
  let room = Math.max(0, max - utf8.encode(ext).length);
  let out = "";
  for (const ch of stem) {
    const n = utf8.encode(ch).length;
    if (n > room) break;
    room -= n;
    out += ch;
  }
  return `${out.replace(/[. ]+$/, "")}${ext}`;
}

/**
 * The name the host saves under: the last path component (either separator), without control,
 * format, separator, unassigned, private-use or surrogate characters, `: * ? " < > |` as `_`, no
 * leading dots or spaces, no trailing ones, at most 200 bytes; `download` when nothing is left.
 */
export function sanitizeFileName(suggested: string): string {
  const last = suggested.split(/[/\\]/).pop() ?? "";
  let name = last
    .replace(/[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Cn}\p{Co}\p{Cs}]/gu, "")
    .replace(/[:*?"<>|]/g, "_")
    .replace(/^[. ]+/, "")
    .replace(/[. ]+$/, "");
  if (utf8.encode(name).length > MAX_FILE_NAME_BYTES) name = shorten(name, MAX_FILE_NAME_BYTES);
  return name === "" ? FALLBACK_NAME : name;
}
