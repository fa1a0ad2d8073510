// The SDK's hand-written argument and result types against the generated per-method types
// (src/generated/capabilities.ts, from crates/host-core/src/hosting/capability/contract/).
// `npm run typecheck` compiles this file: an SDK type that stops fitting the host's schema, in
// either direction where the shapes are meant to be equal, fails the build.
import type {
  ArtifactContent,
  ArtifactCreateArgs,
  ArtifactMetadata,
  CapabilityArgs,
  CapabilityResult,
  EvidencePack,
  EvidenceRecord,
  EvidenceRecordArgs,
  LocaleInfo,
  PermissionResult,
  SecretRef,
  StorageListPage,
  ThemeSnapshot,
} from "@apphost/bridge-sdk";

/** `true` only when A is assignable to B. */
type Fits<A, B> = [A] extends [B] ? true : false;
type Same<A, B> = Fits<A, B> extends true ? Fits<B, A> : false;

// What an app may pass is what the host's schema accepts.
export const createArgs: Fits<ArtifactCreateArgs, CapabilityArgs<"lime.artifacts", "create">> = true;
export const recordArgs: Fits<EvidenceRecordArgs, CapabilityArgs<"lime.evidence", "record">> = true;
// What the SDK promises is what the host's schema says it answers.
export const created: Fits<CapabilityResult<"lime.artifacts", "create">, ArtifactMetadata> = true;
export const read: Fits<CapabilityResult<"lime.artifacts", "read">, ArtifactContent> = true;
export const recorded: Fits<CapabilityResult<"lime.evidence", "record">, EvidenceRecord> = true;
export const listed: Fits<CapabilityResult<"lime.storage", "list">, StorageListPage> = true;
export const locale: Same<CapabilityResult<"lime.ui", "getLocale">, LocaleInfo> = true;
export const theme: Fits<CapabilityResult<"lime.ui", "getTheme">, ThemeSnapshot> = true;
export const secret: Same<CapabilityResult<"lime.secrets", "getRef">, SecretRef> = true;
export const permission: Same<CapabilityResult<"lime.policy", "requestPermission">, PermissionResult> = true;
// The SDK's pack is stricter than the schema (artifact entries by presence); it still fits it.
export const pack: Fits<EvidencePack, CapabilityResult<"lime.evidence", "export">> = true;
