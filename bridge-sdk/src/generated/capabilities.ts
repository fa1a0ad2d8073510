// GENERATED from crates/host-core/src/hosting/capability/contract/ by contract/emit.rs. DO NOT EDIT.
// Regenerate: APPHOST_BLESS=1 cargo test -p host-core --test capability_schemas
// Schemas: schemas/capabilities/<namespace>.schema.json

/** Arguments of `lime.agent.cancelTask`. */
export interface AgentCancelTaskArgs {
  taskId: string;
}

/** Result of `lime.agent.cancelTask`: Cancel a task. */
export type AgentCancelTaskResult = Record<string, unknown>;

/** Arguments of `lime.agent.getTask`. */
export interface AgentGetTaskArgs {
  taskId: string;
}

/** Arguments of `lime.agent.getTaskEvents`. */
export interface AgentGetTaskEventsArgs {
  taskId: string;
  afterSequence?: number;
  limit?: number;
}

/** Result of `lime.agent.getTaskEvents`: A task's events after a sequence. */
export interface AgentGetTaskEventsResult {
  events: Array<unknown>;
  nextAfterSequence?: number | null;
}

/** Result of `lime.agent.getTask`: A task's status, runs, pending actions and result. */
export interface AgentGetTaskResult {
  taskId: string;
  traceId?: string;
  sessionId?: string;
  status: "queued" | "running" | "waiting_approval" | "succeeded" | "failed" | "cancelled";
  runs?: Array<unknown>;
  pendingActions?: Array<unknown>;
  result?: unknown;
}

/** Arguments of `lime.agent.listTasks`. */
export type AgentListTasksArgs = {
  cursor?: string | null;
  limit?: number;
} | null;

/** Result of `lime.agent.listTasks`: The app's tasks, a page at a time. */
export interface AgentListTasksResult {
  items: Array<unknown>;
  nextCursor?: string | null;
}

/** Arguments of `lime.agent.respondAction`. */
export interface AgentRespondActionArgs {
  taskId: string;
  actionId: string;
  decision: "approve" | "reject" | "answer";
  remember?: string;
  updatedInput?: Record<string, unknown>;
}

/** Result of `lime.agent.respondAction`: The app's one answer to a pending action: reject. */
export interface AgentRespondActionResult {
  responded: boolean;
}

/** Arguments of `lime.agent.retryTask`. */
export interface AgentRetryTaskArgs {
  taskId: string;
}

/** Result of `lime.agent.retryTask`: Start a new run of an ended task. */
export type AgentRetryTaskResult = Record<string, unknown>;

/** Arguments of `lime.agent.startTask`. */
export interface AgentStartTaskArgs {
  /** A string or any JSON (≤ 256 KiB as text). */
  input: unknown;
  idempotencyKey?: string;
  expectedOutput?: Record<string, unknown>;
  sessionPolicy?: string | Record<string, unknown>;
  options?: Record<string, unknown>;
  appId?: string;
  entry?: string;
  entryKey?: string;
  taskKind?: string;
  context?: Record<string, unknown>;
  metadata?: Record<string, unknown>;
  businessObjectRef?: string | Record<string, unknown>;
  capabilityHints?: Array<unknown>;
  knowledge?: unknown;
  tools?: unknown;
  files?: unknown;
  secrets?: unknown;
  /** The task's token budget per run; the app's budget still applies (the lower wins). */
  budget?: {
    maxTokens?: number;
  };
}

/** Result of `lime.agent.startTask`: Start a task; answers at once, events follow as `host:event`s. */
export interface AgentStartTaskResult {
  taskId: string;
  traceId: string;
  sessionId: string;
  created: boolean;
}

/** Arguments of `lime.agent.watchTask`. */
export interface AgentWatchTaskArgs {
  taskId: string;
  afterSequence?: number;
}

/** Result of `lime.agent.watchTask`: Forward a task's events to this frame. */
export type AgentWatchTaskResult = Record<string, unknown>;

/** Arguments of `lime.artifacts.create`. */
export type ArtifactsCreateArgs =
  /** The host's form with text content. */
  | {
    name: string;
    mimeType?: string;
    text: string;
  }
  /** The host's form with base64 content. */
  | {
    name: string;
    mimeType?: string;
    base64: string;
  }
  /** The standard's `{kind, title?, content}`. */
  | {
    kind: string;
    title?: string;
    content: unknown;
    mimeType?: string;
  }
  /** The standard's `{type, data, title?}`. */
  | {
    type: string;
    data: unknown;
    title?: string;
    mimeType?: string;
  };

/** Result of `lime.artifacts.create`: Create an artifact (≤ 1 MiB of content). */
export interface ArtifactsCreateResult {
  id: string;
  name: string;
  mimeType: string;
  size: number;
  sha256: string;
  createdAt: string;
  provenance: {
    appId: string;
    appVersion: string;
    entryKey: string;
    packageHash: string;
    manifestHash: string;
    traceId: string;
  };
}

/** Arguments of `lime.artifacts.delete`. */
export interface ArtifactsDeleteArgs {
  id: string;
}

/** Result of `lime.artifacts.delete`: Delete one of the app's artifacts. */
export interface ArtifactsDeleteResult {
  deleted: boolean;
}

/** Arguments of `lime.artifacts.list`. */
export type ArtifactsListArgs = {
  cursor?: string | null;
  limit?: number;
} | null;

/** Result of `lime.artifacts.list`: The app's artifacts, oldest first. */
export interface ArtifactsListResult {
  items: Array<{
    id: string;
    name: string;
    mimeType: string;
    size: number;
    sha256: string;
    createdAt: string;
    provenance: {
      appId: string;
      appVersion: string;
      entryKey: string;
      packageHash: string;
      manifestHash: string;
      traceId: string;
    };
  }>;
  nextCursor: string | null;
}

/** Arguments of `lime.artifacts.read`. */
export interface ArtifactsReadArgs {
  id: string;
  encoding?: "base64" | "text";
}

/** Result of `lime.artifacts.read`: An artifact's metadata and content. */
export interface ArtifactsReadResult {
  id: string;
  name: string;
  mimeType: string;
  size: number;
  sha256: string;
  createdAt: string;
  provenance: {
    appId: string;
    appVersion: string;
    entryKey: string;
    packageHash: string;
    manifestHash: string;
    traceId: string;
  };
  encoding: "base64" | "text";
  content: string;
}

/** Arguments of `lime.capabilities.list`. */
export type CapabilitiesListArgs = Record<string, never> | null;

/** Result of `lime.capabilities.list`: Every capability the standard names, with each method's standing for the calling entry and why a blocked one is blocked. */
export interface CapabilitiesListResult {
  appId: string;
  entryKey: string;
  available: Array<string>;
  capabilities: Array<{
    capability: string;
    status: "available" | "ask" | "blocked";
    reason: "not-available" | "undeclared" | "not-ready" | "permission-undeclared" | "denied" | "policy" | "not-granted" | "policy-confirmation" | null;
    causeCode: string | null;
    code: string | null;
    methods: Array<{
      method: string;
      status: "available" | "ask" | "blocked";
      reason: "not-available" | "undeclared" | "not-ready" | "permission-undeclared" | "denied" | "policy" | "not-granted" | "policy-confirmation" | null;
      causeCode: string | null;
    }>;
  }>;
}

/** Arguments of `lime.events.publish`. */
export interface EventsPublishArgs {
  topic: string;
  payload?: unknown;
}

/** Result of `lime.events.publish`: Deliver to the app's other subscribed frames. */
export interface EventsPublishResult {
  delivered: number;
}

/** Arguments of `lime.events.subscribe`. */
export interface EventsSubscribeArgs {
  topic: string;
}

/** Result of `lime.events.subscribe`: Receive a declared topic as `host:event`s. */
export interface EventsSubscribeResult {
  subscribed: true;
  topic: string;
}

/** Arguments of `lime.events.unsubscribe`. */
export interface EventsUnsubscribeArgs {
  topic: string;
}

/** Result of `lime.events.unsubscribe`: Stop receiving a topic. */
export interface EventsUnsubscribeResult {
  unsubscribed: boolean;
  topic: string;
}

/** Arguments of `lime.evidence.export`. */
export type EvidenceExportArgs = {
  kind?: string | null;
  taskId?: string | null;
} | null;

/** Result of `lime.evidence.export`: The evidence pack (apphost.evidence-pack.v1) with its runtimeCorrelation: the ids of `taskId`'s latest run, or the call's trace and every other id named missing. */
export interface EvidenceExportResult {
  schemaVersion: "apphost.evidence-pack.v1";
  app: Record<string, unknown>;
  generatedAt: string;
  kind?: string | null;
  records: Array<{
    id: string;
    kind: string;
    summary: string;
    data: unknown;
    artifacts: Array<{
      artifactId: string;
      sha256: string;
    }>;
    createdAt: string;
    provenance: {
      appId: string;
      appVersion: string;
      entryKey: string;
      packageHash: string;
      manifestHash: string;
      traceId: string;
    };
  }>;
  artifacts: Array<Record<string, unknown>>;
  runtimeCorrelation: {
    runtimeId: string | null;
    sessionId: string | null;
    threadId: string | null;
    turnId: string | null;
    taskId: string | null;
    runId: string | null;
    traceId: string | null;
    missing: Array<"runtimeId" | "sessionId" | "threadId" | "turnId" | "taskId" | "runId" | "traceId">;
  };
}

/** Arguments of `lime.evidence.list`. */
export type EvidenceListArgs = {
  kind?: string;
  cursor?: string | null;
  limit?: number;
} | null;

/** Result of `lime.evidence.list`: The app's records, oldest first. */
export interface EvidenceListResult {
  items: Array<{
    id: string;
    kind: string;
    summary: string;
    data: unknown;
    artifacts: Array<{
      artifactId: string;
      sha256: string;
    }>;
    createdAt: string;
    provenance: {
      appId: string;
      appVersion: string;
      entryKey: string;
      packageHash: string;
      manifestHash: string;
      traceId: string;
    };
  }>;
  nextCursor: string | null;
}

/** Arguments of `lime.evidence.record`. */
export type EvidenceRecordArgs =
  /** The host's form. */
  | {
    kind: string;
    summary?: string;
    data?: unknown;
    artifactIds?: Array<string>;
  }
  /** The standard's `{kind, message?, refs?}`. */
  | {
    kind: string;
    message?: string;
    refs?: unknown;
  }
  /** The standard's `{subject, sources?, kind?}`. */
  | {
    subject: unknown;
    sources?: unknown;
    kind?: string;
  };

/** Result of `lime.evidence.record`: Record one piece of evidence. */
export interface EvidenceRecordResult {
  id: string;
  kind: string;
  summary: string;
  data: unknown;
  artifacts: Array<{
    artifactId: string;
    sha256: string;
  }>;
  createdAt: string;
  provenance: {
    appId: string;
    appVersion: string;
    entryKey: string;
    packageHash: string;
    manifestHash: string;
    traceId: string;
  };
}

/** Arguments of `lime.files.list`. */
export type FilesListArgs = Record<string, never> | null;

/** Arguments of `lime.files.listFolder`. */
export interface FilesListFolderArgs {
  ref: string;
  path?: string;
}

/** Result of `lime.files.listFolder`: A granted folder's entries (at most 1000). */
export interface FilesListFolderResult {
  ref: string;
  path?: string;
  entries: Array<Record<string, unknown>>;
  skipped?: number;
  truncated?: boolean;
}

/** Result of `lime.files.list`: The refs the user granted this app. */
export interface FilesListResult {
  refs: Array<{
    ref: string;
    name: string;
    kind: "file" | "folder";
    mtime?: unknown;
    grantedAt?: unknown;
    size?: number;
    mimeType?: string;
  }>;
}

/** Arguments of `lime.files.readRef`. */
export interface FilesReadRefArgs {
  ref: string;
  path?: string;
  offset?: number;
  length?: number;
  encoding?: "base64" | "text";
}

/** Result of `lime.files.readRef`: Read (a range of) a granted file, ≤ 4 MiB per read. */
export interface FilesReadRefResult {
  ref: string;
  name: string;
  kind: "file" | "folder";
  size?: number;
  mtime?: unknown;
  mimeType?: string;
  path?: string;
  offset: number;
  length: number;
  eof: boolean;
  encoding: "base64" | "text";
  content: string;
}

/** Arguments of `lime.files.requestFiles`. */
export type FilesRequestFilesArgs = {
  multiple?: boolean;
  folder?: boolean;
  accept?: Array<string>;
} | null;

/** Result of `lime.files.requestFiles`: Ask the user to choose files or a folder. */
export interface FilesRequestFilesResult {
  refs: Array<{
    ref: string;
    name: string;
    kind: "file" | "folder";
    mtime?: unknown;
    grantedAt?: unknown;
    size?: number;
    mimeType?: string;
  }>;
  cancelled: boolean;
}

/** Arguments of `lime.files.stat`. */
export interface FilesStatArgs {
  ref: string;
  path?: string;
}

/** Result of `lime.files.stat`: A granted file's metadata. */
export interface FilesStatResult {
  ref: string;
  name: string;
  kind: "file" | "folder";
  size?: number;
  mtime?: unknown;
  mimeType?: string;
  path?: string;
}

/** Arguments of `lime.knowledge.search`. */
export interface KnowledgeSearchArgs {
  template: string;
  query: string;
  topK?: number;
}

/** Result of `lime.knowledge.search`: The best chunks of a bound template's documents, best first. */
export interface KnowledgeSearchResult {
  template: string;
  hits: Array<{
    document: string;
    section?: unknown;
    start?: number;
    end?: number;
    snippet: string;
    score?: number;
  }>;
}

/** Arguments of `lime.modelSettings.get`. */
export type ModelSettingsGetArgs = Record<string, never> | null;

/** Result of `lime.modelSettings.get`: The effective model profile, the app's token limits, the setup status and what fixes it. */
export interface ModelSettingsGetResult {
  status: "ready" | "needs-setup";
  profile: {
    provider: "openai-compatible";
    model: string;
    apiKeyConfigured: boolean;
  } | null;
  limits: {
    maxTokensPerTask: number | null;
    maxTokensPerTaskCeiling: number;
  };
  setupAction: {
    key: string;
    title: string;
    kind: string;
    description?: string;
  } | null;
}

/** Arguments of `lime.policy.requestPermission`. */
export interface PolicyRequestPermissionArgs {
  permission: string;
}

/** Result of `lime.policy.requestPermission`: Ask for one optional permission the manifest declares. */
export interface PolicyRequestPermissionResult {
  granted: boolean;
  persistence: "once" | "always" | "denied";
}

/** Arguments of `lime.secrets.getRef`. */
export interface SecretsGetRefArgs {
  key: string;
}

/** Result of `lime.secrets.getRef`: An opaque ref to the value bound to a declared slot. */
export interface SecretsGetRefResult {
  ref: string;
  key: string;
}

/** Arguments of `lime.services.call`. */
export interface ServicesCallArgs {
  service: string;
  method: string;
  params?: unknown;
}

/** The service's JSON-RPC result. */
export type ServicesCallResult = unknown;

/** Arguments of `lime.services.list`. */
export type ServicesListArgs = Record<string, never> | null;

/** Result of `lime.services.list`: The app's declared services and their state. */
export interface ServicesListResult {
  services: Array<{
    key: string;
    required: boolean;
    state: "running" | "stopped" | "degraded" | "blocked" | "remote";
    code?: string;
    reason?: string;
    pid?: number;
    restarts: number;
    lastExit?: string;
    lastStop?: string;
    protocol: string;
    remote?: {
      endpoint: string;
      origin: string;
      auth: "none" | "bearer" | "header";
      secret?: string;
      dataBoundary: string;
      allowed: boolean;
    };
  }>;
}

/** Arguments of `lime.storage.delete`. */
export interface StorageDeleteArgs {
  /** 1–512 bytes, no control characters. */
  key: string;
}

/** Result of `lime.storage.delete`: Delete a key. */
export interface StorageDeleteResult {
  deleted: boolean;
}

/** Arguments of `lime.storage.get`. */
export interface StorageGetArgs {
  /** 1–512 bytes, no control characters. */
  key: string;
}

/** Result of `lime.storage.get`: The stored JSON value, or null. */
export type StorageGetResult = unknown;

/** Arguments of `lime.storage.list`. */
export type StorageListArgs = {
  prefix?: string;
  cursor?: string | null;
  limit?: number;
} | null;

/** Result of `lime.storage.list`: Keys in byte order, a page at a time. */
export interface StorageListResult {
  items: Array<{
    key: string;
    value: unknown;
  }>;
  nextCursor: string | null;
}

/** Arguments of `lime.storage.set`. */
export interface StorageSetArgs {
  /** 1–512 bytes, no control characters. */
  key: string;
  value: unknown;
}

/** Result of `lime.storage.set`: Store a JSON value (≤ 1 MiB) under a key. */
export type StorageSetResult = null;

/** Arguments of `lime.storage.tableDelete`. */
export interface StorageTableDeleteArgs {
  /** A table the app's storage/schema.json declares. */
  table: string;
  /** The row's primary key. */
  id: string | number;
}

/** Result of `lime.storage.tableDelete`: Delete a row by primary key. */
export interface StorageTableDeleteResult {
  deleted: boolean;
}

/** Arguments of `lime.storage.tableGet`. */
export interface StorageTableGetArgs {
  /** A table the app's storage/schema.json declares. */
  table: string;
  /** The row's primary key. */
  id: string | number;
}

/** Result of `lime.storage.tableGet`: One row by primary key, or null. */
export type StorageTableGetResult = Record<string, unknown> | null;

/** Arguments of `lime.storage.tableInsert`. */
export interface StorageTableInsertArgs {
  /** A table the app's storage/schema.json declares. */
  table: string;
  /** Column name → value. */
  row: Record<string, unknown>;
}

/** Result of `lime.storage.tableInsert`: Insert a row; answers its primary key. */
export interface StorageTableInsertResult {
  /** The row's primary key. */
  id: string | number;
}

/** Arguments of `lime.storage.tableQuery`. */
export interface StorageTableQueryArgs {
  /** A table the app's storage/schema.json declares. */
  table: string;
  /** Column name → value. */
  where?: Record<string, unknown>;
  orderBy?: string;
  descending?: boolean;
  limit?: number;
  offset?: number;
}

/** Result of `lime.storage.tableQuery`: Rows matching an AND of equalities. */
export interface StorageTableQueryResult {
  rows: Array<Record<string, unknown>>;
}

/** Arguments of `lime.storage.tableUpdate`. */
export interface StorageTableUpdateArgs {
  /** A table the app's storage/schema.json declares. */
  table: string;
  /** The row's primary key. */
  id: string | number;
  /** Column name → value. */
  patch: Record<string, unknown>;
}

/** Result of `lime.storage.tableUpdate`: Patch a row by primary key. */
export interface StorageTableUpdateResult {
  updated: boolean;
}

/** Arguments of `lime.tools.invoke`. */
export interface ToolsInvokeArgs {
  /** `<server>/<tool>`. */
  tool: string;
  arguments?: Record<string, unknown>;
}

/** Result of `lime.tools.invoke`: Call a granted tool (the MCP `tools/call` result). */
export interface ToolsInvokeResult {
  content: Array<unknown>;
  structuredContent?: unknown;
  isError?: boolean;
}

/** Arguments of `lime.tools.list`. */
export type ToolsListArgs = Record<string, never> | null;

/** Result of `lime.tools.list`: The declared tool refs the user granted, from the servers' last listings. */
export interface ToolsListResult {
  tools: Array<{
    tool: string;
    server: string;
    name: string;
    description?: string;
    inputSchema?: unknown;
    needsApproval?: boolean;
  }>;
}

/** Arguments of `lime.ui.getLocale`. */
export type UiGetLocaleArgs = Record<string, never> | null;

/** Result of `lime.ui.getLocale`: The user's locale (BCP 47) and IANA time zone. */
export interface UiGetLocaleResult {
  locale: string;
  timezone: string;
}

/** Arguments of `lime.ui.getSnapshot`. */
export type UiGetSnapshotArgs = Record<string, never> | null;

/** Result of `lime.ui.getSnapshot`: The frame's snapshot (the `host:snapshot` payload). */
export type UiGetSnapshotResult = Record<string, unknown>;

/** Arguments of `lime.ui.getTheme`. */
export type UiGetThemeArgs = Record<string, never> | null;

/** Result of `lime.ui.getTheme`: The current theme and its CSS tokens. */
export interface UiGetThemeResult {
  themeMode: string;
  effectiveThemeMode: string;
  colorSchemeId: string;
  tokens: Record<string, string>;
}

/** Arguments of `lime.ui.listRoutes`. */
export type UiListRoutesArgs = Record<string, never> | null;

/** Result of `lime.ui.listRoutes`: The routes this app registered in this host session. */
export interface UiListRoutesResult {
  routes: Array<{
    appId: string;
    entryKey: string;
    path: string;
    title: string;
  }>;
}

/** Arguments of `lime.ui.registerRoute`. */
export interface UiRegisterRouteArgs {
  path: string;
  title?: string;
}

/** Result of `lime.ui.registerRoute`: Registers one of the app's in-app routes (`/notes/:id`) so the host can deep-link to it and list it in its command palette (at most 64 per app). */
export interface UiRegisterRouteResult {
  appId: string;
  entryKey: string;
  path: string;
  title: string;
}

/** Arguments of `lime.workflow.cancel`. */
export interface WorkflowCancelArgs {
  runId: string;
}

/** Result of `lime.workflow.cancel`: Cancel a run. */
export interface WorkflowCancelResult {
  /** The run view: {runId, workflow, status, waiting, …}. */
  run: Record<string, unknown>;
}

/** Arguments of `lime.workflow.get`. */
export interface WorkflowGetArgs {
  runId: string;
}

/** Result of `lime.workflow.get`: One of the app's runs. */
export interface WorkflowGetResult {
  /** The run view: {runId, workflow, status, waiting, …}. */
  run: Record<string, unknown>;
}

/** Arguments of `lime.workflow.list`. */
export type WorkflowListArgs = {
  status?: string;
} | null;

/** Result of `lime.workflow.list`: The app's runs, newest first. */
export interface WorkflowListResult {
  runs: Array<Record<string, unknown>>;
}

/** Arguments of `lime.workflow.respond`. */
export interface WorkflowRespondArgs {
  runId: string;
  input: unknown;
}

/** Result of `lime.workflow.respond`: Answer a run's `user-input` state. */
export interface WorkflowRespondResult {
  /** The run view: {runId, workflow, status, waiting, …}. */
  run: Record<string, unknown>;
}

/** Arguments of `lime.workflow.start`. */
export type WorkflowStartArgs = {
  workflow: string;
  input?: unknown;
  idempotencyKey?: string;
} | {
  key: string;
  input?: unknown;
  idempotencyKey?: string;
};

/** Result of `lime.workflow.start`: Start a declared workflow (host `{workflow}` or the standard's `{key}`). */
export interface WorkflowStartResult {
  runId: string;
  /** The run view: {runId, workflow, status, waiting, …}. */
  run: Record<string, unknown>;
}

/** Arguments of `lime.workflow.watch`. */
export interface WorkflowWatchArgs {
  runId: string;
  afterSequence?: number;
}

/** Result of `lime.workflow.watch`: Forward a run's events to this frame. */
export interface WorkflowWatchResult {
  watching: boolean;
  runId: string;
}

/** Arguments of `lime.workspace.get`. */
export type WorkspaceGetArgs = Record<string, never> | null;

/** Result of `lime.workspace.get`: The workspace's and tenant's ids, the workspace's display name, the locale and the IANA time zone. */
export interface WorkspaceGetResult {
  workspaceId: string;
  tenantId: string;
  displayName: string;
  locale: string;
  timezone: string;
}

/** Every implemented method: its arguments and its result. */
export interface CapabilityMethods {
  "lime.ui": {
    /** The frame's snapshot (the `host:snapshot` payload). */
    getSnapshot: { args: UiGetSnapshotArgs; result: UiGetSnapshotResult };
    /** The user's locale (BCP 47) and IANA time zone. */
    getLocale: { args: UiGetLocaleArgs; result: UiGetLocaleResult };
    /** The current theme and its CSS tokens. */
    getTheme: { args: UiGetThemeArgs; result: UiGetThemeResult };
    /** Registers one of the app's in-app routes (`/notes/:id`) so the host can deep-link to it and list it in its command palette (at most 64 per app). */
    registerRoute: { args: UiRegisterRouteArgs; result: UiRegisterRouteResult };
    /** The routes this app registered in this host session. */
    listRoutes: { args: UiListRoutesArgs; result: UiListRoutesResult };
  };
  "lime.storage": {
    /** The stored JSON value, or null. */
    get: { args: StorageGetArgs; result: StorageGetResult };
    /** Store a JSON value (≤ 1 MiB) under a key. */
    set: { args: StorageSetArgs; result: StorageSetResult };
    /** Delete a key. */
    delete: { args: StorageDeleteArgs; result: StorageDeleteResult };
    /** Keys in byte order, a page at a time. */
    list: { args: StorageListArgs; result: StorageListResult };
    /** One row by primary key, or null. */
    tableGet: { args: StorageTableGetArgs; result: StorageTableGetResult };
    /** Rows matching an AND of equalities. */
    tableQuery: { args: StorageTableQueryArgs; result: StorageTableQueryResult };
    /** Insert a row; answers its primary key. */
    tableInsert: { args: StorageTableInsertArgs; result: StorageTableInsertResult };
    /** Patch a row by primary key. */
    tableUpdate: { args: StorageTableUpdateArgs; result: StorageTableUpdateResult };
    /** Delete a row by primary key. */
    tableDelete: { args: StorageTableDeleteArgs; result: StorageTableDeleteResult };
  };
  "lime.secrets": {
    /** An opaque ref to the value bound to a declared slot. */
    getRef: { args: SecretsGetRefArgs; result: SecretsGetRefResult };
  };
  "lime.events": {
    /** Deliver to the app's other subscribed frames. */
    publish: { args: EventsPublishArgs; result: EventsPublishResult };
    /** Receive a declared topic as `host:event`s. */
    subscribe: { args: EventsSubscribeArgs; result: EventsSubscribeResult };
    /** Stop receiving a topic. */
    unsubscribe: { args: EventsUnsubscribeArgs; result: EventsUnsubscribeResult };
  };
  "lime.policy": {
    /** Ask for one optional permission the manifest declares. */
    requestPermission: { args: PolicyRequestPermissionArgs; result: PolicyRequestPermissionResult };
  };
  "lime.artifacts": {
    /** Create an artifact (≤ 1 MiB of content). */
    create: { args: ArtifactsCreateArgs; result: ArtifactsCreateResult };
    /** An artifact's metadata and content. */
    read: { args: ArtifactsReadArgs; result: ArtifactsReadResult };
    /** The app's artifacts, oldest first. */
    list: { args: ArtifactsListArgs; result: ArtifactsListResult };
    /** Delete one of the app's artifacts. */
    delete: { args: ArtifactsDeleteArgs; result: ArtifactsDeleteResult };
  };
  "lime.evidence": {
    /** Record one piece of evidence. */
    record: { args: EvidenceRecordArgs; result: EvidenceRecordResult };
    /** The app's records, oldest first. */
    list: { args: EvidenceListArgs; result: EvidenceListResult };
    /** The evidence pack (apphost.evidence-pack.v1) with its runtimeCorrelation: the ids of `taskId`'s latest run, or the call's trace and every other id named missing. */
    export: { args: EvidenceExportArgs; result: EvidenceExportResult };
  };
  "lime.agent": {
    /** Start a task; answers at once, events follow as `host:event`s. */
    startTask: { args: AgentStartTaskArgs; result: AgentStartTaskResult };
    /** A task's status, runs, pending actions and result. */
    getTask: { args: AgentGetTaskArgs; result: AgentGetTaskResult };
    /** The app's tasks, a page at a time. */
    listTasks: { args: AgentListTasksArgs; result: AgentListTasksResult };
    /** Cancel a task. */
    cancelTask: { args: AgentCancelTaskArgs; result: AgentCancelTaskResult };
    /** Start a new run of an ended task. */
    retryTask: { args: AgentRetryTaskArgs; result: AgentRetryTaskResult };
    /** The app's one answer to a pending action: reject. */
    respondAction: { args: AgentRespondActionArgs; result: AgentRespondActionResult };
    /** A task's events after a sequence. */
    getTaskEvents: { args: AgentGetTaskEventsArgs; result: AgentGetTaskEventsResult };
    /** Forward a task's events to this frame. */
    watchTask: { args: AgentWatchTaskArgs; result: AgentWatchTaskResult };
  };
  "lime.files": {
    /** The refs the user granted this app. */
    list: { args: FilesListArgs; result: FilesListResult };
    /** Read (a range of) a granted file, ≤ 4 MiB per read. */
    readRef: { args: FilesReadRefArgs; result: FilesReadRefResult };
    /** A granted file's metadata. */
    stat: { args: FilesStatArgs; result: FilesStatResult };
    /** A granted folder's entries (at most 1000). */
    listFolder: { args: FilesListFolderArgs; result: FilesListFolderResult };
    /** Ask the user to choose files or a folder. */
    requestFiles: { args: FilesRequestFilesArgs; result: FilesRequestFilesResult };
  };
  "lime.tools": {
    /** The declared tool refs the user granted, from the servers' last listings. */
    list: { args: ToolsListArgs; result: ToolsListResult };
    /** Call a granted tool (the MCP `tools/call` result). */
    invoke: { args: ToolsInvokeArgs; result: ToolsInvokeResult };
  };
  "lime.workflow": {
    /** Start a declared workflow (host `{workflow}` or the standard's `{key}`). */
    start: { args: WorkflowStartArgs; result: WorkflowStartResult };
    /** One of the app's runs. */
    get: { args: WorkflowGetArgs; result: WorkflowGetResult };
    /** The app's runs, newest first. */
    list: { args: WorkflowListArgs; result: WorkflowListResult };
    /** Cancel a run. */
    cancel: { args: WorkflowCancelArgs; result: WorkflowCancelResult };
    /** Answer a run's `user-input` state. */
    respond: { args: WorkflowRespondArgs; result: WorkflowRespondResult };
    /** Forward a run's events to this frame. */
    watch: { args: WorkflowWatchArgs; result: WorkflowWatchResult };
  };
  "lime.knowledge": {
    /** The best chunks of a bound template's documents, best first. */
    search: { args: KnowledgeSearchArgs; result: KnowledgeSearchResult };
  };
  "lime.modelSettings": {
    /** The effective model profile, the app's token limits, the setup status and what fixes it. */
    get: { args: ModelSettingsGetArgs; result: ModelSettingsGetResult };
  };
  "lime.capabilities": {
    /** Every capability the standard names, with each method's standing for the calling entry and why a blocked one is blocked. */
    list: { args: CapabilitiesListArgs; result: CapabilitiesListResult };
  };
  "lime.workspace": {
    /** The workspace's and tenant's ids, the workspace's display name, the locale and the IANA time zone. */
    get: { args: WorkspaceGetArgs; result: WorkspaceGetResult };
  };
  "lime.services": {
    /** Call a method of one of the app's own declared services (started on demand). */
    call: { args: ServicesCallArgs; result: ServicesCallResult };
    /** The app's declared services and their state. */
    list: { args: ServicesListArgs; result: ServicesListResult };
  };
}

/** A capability this host implements. */
export type CapabilityName = keyof CapabilityMethods;

/** A method of capability `C`. */
export type CapabilityMethod<C extends CapabilityName> = keyof CapabilityMethods[C] & string;

/** The arguments of `C.M`. */
export type CapabilityArgs<C extends CapabilityName, M extends CapabilityMethod<C>> =
  CapabilityMethods[C][M] extends { args: infer A } ? A : never;

/** The result of `C.M`. */
export type CapabilityResult<C extends CapabilityName, M extends CapabilityMethod<C>> =
  CapabilityMethods[C][M] extends { result: infer R } ? R : never;
