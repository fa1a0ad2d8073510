// Host Bridge SDK: what an Agent App imports to talk to AppHost from its sandboxed frame.
// See docs/bridge-protocol.md for the wire contract; the wire types are generated from Rust.

export * from "./protocol.js";
// The per-method argument and result types, generated from the host's contract table
// (schemas/capabilities/*.schema.json): `Capabilities.StorageGetArgs`, … and the method map.
export type * as Capabilities from "./generated/capabilities.js";
export type {
  CapabilityArgs,
  CapabilityMethod,
  CapabilityMethods,
  CapabilityName,
  CapabilityResult,
} from "./generated/capabilities.js";
export { ErrorCodes, LimeCapabilityError, type LimeCapabilityErrorInit } from "./errors.js";
export { applyLimeHostTheme, type ThemeTarget } from "./theme.js";
export {
  createLimeHostBridgeCapabilityInvoker,
  syncLimeHostTheme,
  type LimeHostBridgeCapabilityInvoker,
  type LimeInvokeOptions,
  type ThemeSource,
} from "./standard.js";
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
  EvidenceRecordHostArgs,
  Invoke,
  LimeAppEvent,
  LimeArtifacts,
  LimeEvents,
  LimeEvidence,
  KnowledgeHit,
  KnowledgeSearchResult,
  LimeHandles,
  LimeKnowledge,
  LimePolicy,
  LimeSecrets,
  LimeStorage,
  LimeStorageTable,
  LimeTools,
  LimeUi,
  Page,
  PermissionResult,
  Provenance,
  RowId,
  RuntimeCorrelation,
  SecretRef,
  StorageKeyArg,
  StorageListPage,
  TableQueryArgs,
  TableRow,
  ToolDescriptor,
  ToolResult,
} from "./handles.js";
export { checkRoutePath, type LimeUiRoutes, type RegisteredRoute, type RouteRegistration, type UiLaunch } from "./ui.js";
export { REQUEST_FILES_TIMEOUT_MS, type FileContent, type FileRefInfo, type FileStat, type FolderEntry, type FolderListing, type LimeFiles, type ReadRefArgs, type RequestFilesArgs } from "./files.js";
export {
  MAX_BUFFERED_TASK_EVENTS,
  type AgentResultSubtype,
  type AgentTask,
  type AgentTaskEvent,
  type AgentTaskEventMessage,
  type AgentTaskEventType,
  type AgentTaskStarted,
  type AgentTaskStatus,
  type AgentTaskView,
  type LimeAgent,
  type AppDecision,
  type RespondOptions,
  type SessionPolicy,
  type SessionPolicyMode,
  type StartTaskArgs,
} from "./agent.js";
export {
  MAX_BUFFERED_RUN_EVENTS,
  type LimeWorkflow,
  type StartWorkflowArgs,
  type WorkflowPending,
  type WorkflowRun,
  type WorkflowRunEvent,
  type WorkflowRunEventMessage,
  type WorkflowRunStatus,
  type WorkflowRunView,
} from "./workflow.js";
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
  type MockAgent,
  type MockArtifact,
  type MockBusMember,
  type MockCall,
  type MockEventBus,
  type MockFileGrant,
  type MockPermission,
  type MockTable,
  type MockTaskStep,
  type MockTool,
  type MockWorkflow,
  type MockWorkflowState,
  type MockWorkflowUser,
  type MockLimeRuntime,
  type MockOptions,
} from "./mock.js";
export type { MockKnowledgeDoc } from "./mock/knowledge.js";
export type {
  CapabilityList,
  CapabilityStanding,
  LimeCapabilities,
  LimeModelSettings,
  LimeWorkspace,
  ModelSettings,
  WorkspaceInfo,
} from "./projections.js";
export type { MockServiceHandler } from "./mock/services.js";
export type { LimeServices, ServiceStatus } from "./services.js";
