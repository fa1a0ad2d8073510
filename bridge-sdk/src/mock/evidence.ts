// lime.evidence in memory (crates/host-core/src/capability/services/evidence.rs, runtime-core's
// app_evidence.rs): bounded records with refs to the app's artifacts at their recorded hash, and
// the `apphost.evidence-pack.v1` export.
import { ErrorCodes } from "../errors.js";
import type { EvidencePack, EvidencePackArtifact, EvidenceRecord, RuntimeCorrelation } from "../handles.js";
import {
  bytes,
  closed,
  cursorSeq,
  invalid,
  isRuntimeId,
  json,
  limitOf,
  MAX_ARTIFACT_REFS,
  MAX_DATA_BYTES,
  MAX_KIND_BYTES,
  MAX_RECORDS,
  MAX_SUMMARY_BYTES,
  optStr,
  randomHex,
  refuse,
  type MockContext,
  type Service,
} from "./common.js";
import { evidenceRecordArgs } from "./shapes.js";
import type { MockArtifact } from "./types.js";

const isKind = (k: string) => k.length > 0 && k.length <= MAX_KIND_BYTES && /^[A-Za-z0-9._:-]+$/.test(k);

/** The ids of `runtimeCorrelation`, in the standard's order (`services/evidence_correlation.rs`). */
const CORRELATION_IDS = ["runtimeId", "sessionId", "threadId", "turnId", "taskId", "runId", "traceId"] as const;

export function createEvidence(
  ctx: MockContext,
  artifactStore: Map<string, MockArtifact>,
  correlate: (taskId: string) => RuntimeCorrelation | undefined = () => undefined,
) {
  const { appId, appVersion, packageHash, manifestHash, artifactsReadable } = ctx;
  const evidenceQuota = ctx.options.evidenceQuotaBytes ?? 16 * 1024 * 1024;
  const evidenceRecords: EvidenceRecord[] = [];
  const evidenceBytes: number[] = [];
  const evBad = (m: string) => invalid(m, "evidence.invalid_argument");
  // As the host: a task of this app gives its latest run's ids; none, the call's trace only.
  const exportCorrelation = (taskId: unknown): RuntimeCorrelation => {
    if (taskId === undefined || taskId === null) {
      return {
        runtimeId: null, sessionId: null, threadId: null, turnId: null, taskId: null, runId: null,
        traceId: ctx.provenance().traceId, missing: CORRELATION_IDS.filter((k) => k !== "traceId"),
      };
    }
    if (typeof taskId !== "string" || taskId.length === 0 || bytes(taskId) > 128) {
      throw evBad("args.taskId must be the id of one of the app's agent tasks");
    }
    const c = correlate(taskId);
    if (!c) throw refuse(ErrorCodes.NOT_FOUND, "no agent task with this id in this app", "evidence.task_not_found");
    return c;
  };
  let evidenceSeq = 0;
  const evidenceSeqs: number[] = [];
  const evidencePage = (kind: string | undefined, cursor: string | undefined, limit: number) => {
    if (kind !== undefined && !isKind(kind)) throw invalid("invalid kind: 1..=64 characters of [A-Za-z0-9._:-]", "evidence.invalid_kind");
    const after = cursorSeq(cursor, evBad);
    const rest = evidenceRecords
      .map((r, i) => ({ r, seq: evidenceSeqs[i]! }))
      .filter((x) => x.seq > after && (kind === undefined || x.r.kind === kind));
    const out = rest.slice(0, limit);
    const last = out[out.length - 1];
    return { items: structuredClone(out.map((x) => x.r)), nextCursor: rest.length > limit && last ? `c${last.seq}` : null };
  };

  const service: Service = {
    record(args) {
      const a = evidenceRecordArgs(args);
      closed(a, ["kind", "summary", "data", "artifactIds"], "evidence.invalid_argument");
      const kind = optStr(a, "kind", evBad);
      if (kind === undefined) throw evBad("args.kind is required");
      if (!isKind(kind)) throw invalid("invalid kind: 1..=64 characters of [A-Za-z0-9._:-]", "evidence.invalid_kind");
      const summary = optStr(a, "summary", evBad) ?? "";
      const data = a["data"] === undefined ? null : structuredClone(a["data"]);
      const rawIds = a["artifactIds"] ?? [];
      if (!Array.isArray(rawIds)) throw evBad("args.artifactIds must be an array");
      if (rawIds.length > MAX_ARTIFACT_REFS) throw invalid(`at most ${MAX_ARTIFACT_REFS} artifactIds`, "evidence.too_large");
      if (rawIds.some((x) => typeof x !== "string")) throw evBad("args.artifactIds must be strings");
      if (bytes(summary) > MAX_SUMMARY_BYTES) throw invalid(`summary longer than ${MAX_SUMMARY_BYTES} bytes`, "evidence.too_large");
      const dataText = json(data);
      if (bytes(dataText) > MAX_DATA_BYTES) throw invalid(`data is ${bytes(dataText)} bytes of JSON (at most ${MAX_DATA_BYTES})`, "evidence.too_large");
      const refs: { artifactId: string; sha256: string }[] = [];
      if (rawIds.length > 0 && !artifactsReadable()) {
        throw refuse(ErrorCodes.PERMISSION_DENIED, "this entry may not read the app's artifacts (lime.artifacts and a granted artifact permission)", "evidence.artifacts_not_allowed");
      }
      for (const id of rawIds as string[]) {
        if (!isRuntimeId(id, "artifact_")) throw invalid("artifact ref: invalid artifact id", "artifacts.invalid_id");
        if (refs.some((r) => r.artifactId === id)) continue;
        const art = artifactStore.get(id);
        if (!art) throw refuse(ErrorCodes.NOT_FOUND, "artifact ref: no artifact with this id", "artifacts.not_found");
        refs.push({ artifactId: art.id, sha256: art.sha256 });
      }
      const size = bytes(kind) + bytes(summary) + bytes(dataText) + bytes(JSON.stringify(refs));
      if (evidenceRecords.length >= MAX_RECORDS) throw refuse(ErrorCodes.STORAGE_QUOTA_EXCEEDED, `the app already keeps ${MAX_RECORDS} evidence records`, "evidence.too_many");
      const used = evidenceBytes.reduce((x, y) => x + y, 0);
      if (used + size > evidenceQuota) {
        throw refuse(ErrorCodes.STORAGE_QUOTA_EXCEEDED, `evidence quota exceeded: ${used} + ${size} bytes > ${evidenceQuota} bytes`, "evidence.quota_exceeded");
      }
      const rec: EvidenceRecord = {
        id: `evidence_${randomHex()}`, kind, summary, data, artifacts: refs, createdAt: ctx.now(), provenance: ctx.provenance(),
      };
      evidenceRecords.push(rec);
      evidenceBytes.push(size);
      evidenceSeqs.push(++evidenceSeq);
      return structuredClone(rec);
    },
    list(a) {
      closed(a, ["kind", "cursor", "limit"], "evidence.invalid_argument");
      const kind = optStr(a, "kind", evBad);
      const cursor = optStr(a, "cursor", evBad);
      const limit = limitOf(a, evBad);
      return evidencePage(kind, cursor, limit);
    },
    export(a) {
      closed(a, ["kind", "taskId"], "evidence.invalid_argument");
      const kind = optStr(a, "kind", evBad);
      const runtimeCorrelation = exportCorrelation(a["taskId"]);
      const records = evidencePage(kind, undefined, Number.MAX_SAFE_INTEGER).items;
      const refs = new Map<string, EvidencePackArtifact>();
      for (const r of records) {
        for (const ref of r.artifacts) {
          const k = `${ref.artifactId}\u0000${ref.sha256}`;
          if (refs.has(k)) continue;
          const art = artifactStore.get(ref.artifactId);
          if (!artifactsReadable()) {
            refs.set(k, { artifactId: ref.artifactId, sha256: ref.sha256, withheld: true });
            continue;
          }
          refs.set(
            k,
            art && art.sha256 === ref.sha256
              ? { artifactId: art.id, sha256: art.sha256, present: true, name: art.name, mimeType: art.mimeType, size: art.size, createdAt: art.createdAt, provenance: structuredClone(art.provenance) }
              : { artifactId: ref.artifactId, sha256: ref.sha256, present: false },
          );
        }
      }
      const pack: EvidencePack = {
        schemaVersion: "apphost.evidence-pack.v1",
        app: { appId, appVersion, packageHash, manifestHash },
        generatedAt: ctx.now(),
        kind: kind ?? null,
        records,
        artifacts: [...refs.entries()].sort(([x], [y]) => (x < y ? -1 : x > y ? 1 : 0)).map(([, v]) => v),
        runtimeCorrelation,
      };
      return pack;
    },
  };
  const notAnObject = evBad("args must be an object");
  return { evidenceRecords, service, notAnObject };
}
