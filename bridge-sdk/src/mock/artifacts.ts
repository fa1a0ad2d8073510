// lime.artifacts in memory (crates/host-core/src/capability/services/artifacts.rs, runtime-core's
// app_artifacts.rs): closed arguments, content checks, metadata stamped by the host, a quota on
// distinct contents.
import { ErrorCodes } from "../errors.js";
import type { ArtifactMetadata } from "../handles.js";
import {
  bytes,
  closed,
  cursorSeq,
  invalid,
  isRuntimeId,
  limitOf,
  MAX_ARTIFACTS,
  MAX_CONTENT_BYTES,
  MAX_MIME_BYTES,
  MAX_NAME_BYTES,
  optStr,
  randomHex,
  refuse,
  utf8,
  type MockContext,
  type Service,
} from "./common.js";
import { decodeBase64, encodeBase64, sha256Hex } from "./encoding.js";
import { artifactCreateArgs } from "./shapes.js";
import type { MockArtifact } from "./types.js";

const INVISIBLE = /[\u0000-\u001f\u007f-\u009f\u200b-\u200f\u202a-\u202e\u2066-\u2069\ufeff]/;
function nameProblem(name: string): string | null {
  if (name.length === 0) return "empty";
  if (bytes(name) > MAX_NAME_BYTES) return "longer than 255 bytes";
  if (name === "." || name === "..") return "not a file name";
  if (/[/\\]/.test(name)) return "contains a path separator ('/' or '\\')";
  if (INVISIBLE.test(name)) return "contains a control or invisible formatting character";
  if (name.startsWith(" ") || name.endsWith(" ")) return "starts or ends with a space";
  return null;
}
function isMime(m: string): boolean {
  const tok = (s: string) => /^[A-Za-z0-9!#$&\-^_.+]+$/.test(s);
  const [essence = "", ...params] = m.split(";");
  const slash = essence.indexOf("/");
  return (
    bytes(m) <= MAX_MIME_BYTES &&
    slash > 0 &&
    tok(essence.slice(0, slash)) &&
    tok(essence.slice(slash + 1)) &&
    params.every((p) => {
      const t = p.trimStart();
      const eq = t.indexOf("=");
      return eq > 0 && tok(t.slice(0, eq)) && tok(t.slice(eq + 1).replace(/^"+|"+$/g, ""));
    })
  );
}

export function createArtifacts(ctx: MockContext) {
  const artifactQuota = ctx.options.artifactQuotaBytes ?? 256 * 1024 * 1024;
  /** Artifacts by id, oldest first. */
  const artifactStore = new Map<string, MockArtifact>();
  const artBad = (m: string) => invalid(m, "artifacts.invalid_argument");
  const artifactId = (a: Record<string, unknown>) => {
    const id = a["id"];
    if (id === undefined || id === null) throw artBad("args.id is required");
    if (typeof id !== "string") throw artBad("args.id must be a string");
    if (!isRuntimeId(id, "artifact_")) throw invalid("invalid artifact id", "artifacts.invalid_id");
    return id;
  };
  const meta = (art: MockArtifact): ArtifactMetadata => {
    const { bytes: _b, ...m } = art;
    return structuredClone(m);
  };
  const artifactBytes = () => {
    const seen = new Map<string, number>();
    for (const a of artifactStore.values()) seen.set(a.sha256, a.size);
    let n = 0;
    for (const s of seen.values()) n += s;
    return n;
  };
  let artifactSeq = 0;
  const artifactSeqs = new Map<string, number>();

  const service: Service = {
    create(args) {
      const a = artifactCreateArgs(args);
      closed(a, ["name", "mimeType", "text", "base64"], "artifacts.invalid_argument");
      const name = optStr(a, "name", artBad);
      if (name === undefined) throw artBad("args.name is required");
      const mime = optStr(a, "mimeType", artBad);
      const text = optStr(a, "text", artBad);
      const b64 = optStr(a, "base64", artBad);
      const tooLarge = (n: number) => invalid(`content is ${n} bytes or more (at most ${MAX_CONTENT_BYTES})`, "artifacts.too_large");
      let content: Uint8Array;
      if (text !== undefined && b64 === undefined) {
        content = utf8.encode(text);
        if (content.length > MAX_CONTENT_BYTES) throw tooLarge(content.length);
      } else if (b64 !== undefined && text === undefined) {
        if (b64.length > Math.ceil(MAX_CONTENT_BYTES / 3) * 4) throw tooLarge(Math.floor(b64.length / 4) * 3);
        const decoded = decodeBase64(b64);
        if (!decoded) throw invalid("args.base64 is not valid base64 (standard alphabet, padded)", "artifacts.invalid_base64");
        if (decoded.length > MAX_CONTENT_BYTES) throw tooLarge(decoded.length);
        content = decoded;
      } else if (text !== undefined) {
        throw artBad("give args.text or args.base64, not both");
      } else {
        throw artBad("args.text or args.base64 is required");
      }
      const why = nameProblem(name);
      if (why) throw invalid(`invalid artifact name: ${why}`, "artifacts.invalid_name");
      if (mime !== undefined && !isMime(mime)) throw invalid("invalid MIME type: must be type/subtype, at most 127 characters", "artifacts.invalid_mime_type");
      if (artifactStore.size >= MAX_ARTIFACTS) throw refuse(ErrorCodes.STORAGE_QUOTA_EXCEEDED, `the app already keeps ${MAX_ARTIFACTS} artifacts`, "artifacts.too_many");
      const sha256 = sha256Hex(content);
      const used = artifactBytes();
      const adding = [...artifactStore.values()].some((x) => x.sha256 === sha256) ? 0 : content.length;
      if (used + adding > artifactQuota) {
        throw refuse(ErrorCodes.STORAGE_QUOTA_EXCEEDED, `artifact quota exceeded: ${used} + ${adding} bytes > ${artifactQuota} bytes`, "artifacts.quota_exceeded");
      }
      const art: MockArtifact = {
        id: `artifact_${randomHex()}`, name, mimeType: mime ?? "application/octet-stream", size: content.length,
        sha256, createdAt: ctx.now(), provenance: ctx.provenance(), bytes: content,
      };
      artifactStore.set(art.id, art);
      artifactSeqs.set(art.id, ++artifactSeq);
      return meta(art);
    },
    read(a) {
      closed(a, ["id", "encoding"], "artifacts.invalid_argument");
      const id = artifactId(a);
      const encoding = optStr(a, "encoding", artBad) ?? "base64";
      if (encoding !== "base64" && encoding !== "text") throw artBad('args.encoding must be "base64" or "text"');
      const art = artifactStore.get(id);
      if (!art) throw refuse(ErrorCodes.NOT_FOUND, "no artifact with this id", "artifacts.not_found");
      let content: string;
      if (encoding === "text") {
        try {
          content = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(art.bytes);
        } catch {
          throw invalid("the artifact is not UTF-8 text; read it as base64", "artifacts.not_text");
        }
      } else {
        content = encodeBase64(art.bytes);
      }
      return { ...meta(art), encoding, content };
    },
    list(a) {
      closed(a, ["cursor", "limit"], "artifacts.invalid_argument");
      const cursor = optStr(a, "cursor", artBad);
      const limit = limitOf(a, artBad);
      const all = [...artifactStore.values()].map((x) => ({ m: meta(x), seq: artifactSeqs.get(x.id)! }));
      const after = cursorSeq(cursor, artBad);
      const rest = all.filter((x) => x.seq > after);
      const out = rest.slice(0, limit);
      const last = out[out.length - 1];
      return { items: out.map((x) => x.m), nextCursor: rest.length > limit && last ? `c${last.seq}` : null };
    },
    delete(a) {
      closed(a, ["id"], "artifacts.invalid_argument");
      const id = artifactId(a);
      artifactSeqs.delete(id);
      return { deleted: artifactStore.delete(id) };
    },
  };
  const notAnObject = artBad("args must be an object");
  return { artifactStore, service, notAnObject };
}
