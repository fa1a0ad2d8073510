// Host Bridge SDK: what an Agent App imports to talk to AppHost from its sandboxed frame.
// See docs/bridge-protocol.md for the wire contract; the wire types are generated from Rust.

export * from "./protocol.js";
export { ErrorCodes, LimeCapabilityError, type LimeCapabilityErrorInit } from "./errors.js";
export { applyLimeHostTheme, type ThemeTarget } from "./theme.js";
export type {
  ArtifactContent,
  ArtifactCreateArgs,
  ArtifactMetadata,
  Args,
  CallOptions,
  DownloadRequest,
  DownloadResult,
  EvidenceArtifactRef,
  EvidencePack,
  EvidencePackArtifact,
  EvidenceRecord,
  EvidenceRecordArgs,
  Invoke,
  LimeAppEvent,
  LimeArtifacts,
  LimeEvents,
  LimeEvidence,
  LimeHandles,
  LimePolicy,
  LimeSecrets,
  LimeStorage,
  LimeStorageTable,
  LimeUi,
  Page,
  PermissionResult,
  Provenance,
  RowId,
  SecretRef,
  StorageListPage,
  TableQueryArgs,
  TableRow,
} from "./handles.js";
export {
  createLimeRuntime,
  getLimeRuntime,
  windowEndpoint,
  type BridgeEndpoint,
  type LimeRuntime,
  type RuntimeOptions,
} from "./runtime.js";
export {
  createMockEventBus,
  createMockLimeRuntime,
  MOCK_CAPABILITIES,
  type MockArtifact,
  type MockBusMember,
  type MockCall,
  type MockEventBus,
  type MockPermission,
  type MockTable,
  type MockLimeRuntime,
  type MockOptions,
} from "./mock.js";
