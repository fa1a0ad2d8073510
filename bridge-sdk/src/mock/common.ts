// What every capability module of the mock shares: the host's limits, refusals (a service
// throws a `Refusal`; `invoke` turns it into the host's `LimeCapabilityError`), argument
// helpers, random ids, and the per-runtime context a module is built over.
import { ErrorCodes } from "../errors.js";
import type { Provenance } from "../handles.js";
import type { ErrorCode } from "../protocol.js";
import type { MockOptions } from "./types.js";

// The host's limits (docs/bridge-protocol.md §5).
export const MAX_KEY_BYTES = 512;
export const MAX_VALUE_BYTES = 1024 * 1024;
export const MAX_LIST_LIMIT = 1000;
export const MAX_QUERY_OFFSET = 100_000;
export const MAX_CONTENT_BYTES = 1024 * 1024;
export const MAX_NAME_BYTES = 255;
export const MAX_MIME_BYTES = 127;
export const MAX_ARTIFACTS = 100_000;
export const MAX_KIND_BYTES = 64;
export const MAX_SUMMARY_BYTES = 2000;
export const MAX_DATA_BYTES = 64 * 1024;
export const MAX_ARTIFACT_REFS = 64;
export const MAX_RECORDS = 100_000;
export const MAX_TOPIC_BYTES = 128;
export const MAX_PAYLOAD_BYTES = 64 * 1024;
export const MAX_SUBSCRIPTIONS = 32;
export const MAX_SLOT_BYTES = 256;
export const MAX_ID_BYTES = 128;

export const utf8 = new TextEncoder();
export const bytes = (s: string) => utf8.encode(s).length;
export const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);
export const json = (v: unknown) => JSON.stringify(v === undefined ? null : v);

/** A service's refusal: `invoke` turns it into the host's `LimeCapabilityError`. */
export class Refusal {
  constructor(
    readonly code: ErrorCode,
    readonly message: string,
    readonly causeCode?: string,
    readonly retryable = false,
    readonly details?: unknown,
  ) {}
}
export const refuse = (code: ErrorCode, message: string, cause?: string) => new Refusal(code, message, cause);
export const invalid = (message: string, cause: string) => refuse(ErrorCodes.INVALID_ARGUMENT, message, cause);

/** One capability's methods: JSON arguments (an object) in, the result value out. */
export type Service = Record<string, (a: Record<string, unknown>) => unknown>;

/** What a capability module knows of the runtime it belongs to. */
export interface MockContext {
  readonly options: MockOptions;
  readonly appId: string;
  readonly entryKey: string;
  readonly appVersion: string;
  readonly packageHash: string;
  readonly manifestHash: string;
  /** Capabilities the mock host offers. */
  readonly offered: Set<string>;
  /** Methods denied as the host would (`"lime.storage.set"`). */
  readonly denied: Set<string>;
  /** The clock, as an ISO string. */
  now(): string;
  /** Provenance of a record made by the current call (its trace id). */
  provenance(): Provenance;
  /** As in the host: evidence shows artifact data only while artifacts are readable. */
  artifactsReadable(): boolean;
  /** Hands one `host:event` payload to this runtime's listeners. */
  deliver(payload: unknown): void;
  /** What `lime.files.requestFiles` asked the mock user for, in order. */
  readonly filePickRequests: { multiple: boolean; folder: boolean; accept: string[] }[];
}

/** 32 random lowercase hex digits, as the host's ids. */
export function randomHex(): string {
  const b = new Uint8Array(16);
  const c = (globalThis as { crypto?: { getRandomValues?: (a: Uint8Array) => Uint8Array } }).crypto;
  if (c?.getRandomValues) c.getRandomValues(b);
  else for (let i = 0; i < b.length; i++) b[i] = Math.floor(Math.random() * 256);
  return hex(b);
}

export function hex(b: Uint8Array): string {
  let s = "";
  for (const x of b) s += x.toString(16).padStart(2, "0");
  return s;
}

// Checks the host applies (runtime-core's app_artifacts.rs and app_evidence.rs).
export const isRuntimeId = (id: string, prefix: string) => id.startsWith(prefix) && id.length <= MAX_ID_BYTES && /^[A-Za-z0-9_.:-]+$/.test(id);

/** An optional string argument. */
export const optStr = (a: Record<string, unknown>, field: string, err: (m: string) => Refusal) => {
  const v = a[field];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== "string") throw err(`args.${field} must be a string`);
  return v;
};

/** A page size: 1..=1000, default 100. */
export const limitOf = (a: Record<string, unknown>, err: (m: string) => Refusal) => {
  const v = a["limit"];
  if (v === undefined || v === null) return 100;
  if (typeof v !== "number" || !Number.isInteger(v) || v < 1 || v > MAX_LIST_LIMIT) throw err(`args.limit must be 1..=${MAX_LIST_LIMIT}`);
  return v;
};

/** A closed argument object: any field not in `allowed` is refused. */
export const closed = (a: Record<string, unknown>, allowed: string[], cause: string) => {
  const extra = Object.keys(a).find((k) => !allowed.includes(k));
  if (extra !== undefined) throw invalid(`unknown argument ${JSON.stringify(extra.slice(0, 64))}`, cause);
};

/** The sequence number after which a `c<seq>` cursor continues (0 without one). */
export const cursorSeq = (cursor: string | undefined, err: (m: string) => Refusal) => {
  if (cursor === undefined) return 0;
  if (!/^c[0-9]{1,19}$/.test(cursor)) throw err("invalid argument: unknown cursor");
  return Number(cursor.slice(1));
};
