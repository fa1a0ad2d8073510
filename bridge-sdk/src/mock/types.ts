// The mock's public types: its options, the scripted model, and what a test can inspect.
import type { ArtifactMetadata, EvidenceRecord, PermissionResult, RowId, TableRow } from "../handles.js";
import type { AgentTaskEventType, SessionPolicyMode } from "../agent.js";
import type { HostSnapshot, ThemeSnapshot } from "../protocol.js";
import type { LimeRuntime } from "../runtime.js";
import type { MockEventBus } from "./bus.js";
import type { MockFileGrant } from "./files.js";
import type { MockKnowledgeDoc } from "./knowledge.js";
import type { MockServiceHandler } from "./services.js";

/**
 * An optional permission as the mock host knows it: the user's answer when asked (`once`,
 * `always`, `denied`, or `dismissed`: the prompt closed unanswered), `granted` (already granted:
 * no prompt), or `required` (granted by install consent; requesting it is `APP_E900`).
 */
export type MockPermission = PermissionResult["persistence"] | "dismissed" | "granted" | "required";

/** A table the app's `storage/schema.json` declares. */
export interface MockTable {
  /** Default `"id"`. A row inserted without it gets the next integer, as SQLite's rowid. */
  primaryKey?: string;
  /** The columns the database has; any column is accepted when absent. */
  columns?: string[];
}

export interface MockOptions {
  appId?: string;
  entryKey?: string;
  /** Stamped in provenance (default `"1.0.0"`). */
  appVersion?: string;
  packageHash?: string;
  manifestHash?: string;
  /** Capabilities the mock host offers (default: all the host implements). */
  capabilities?: string[];
  /** Methods to deny as the host would (`"lime.storage.set"`): APP_E002. */
  denied?: string[];
  /** Storage quota in bytes of keys, JSON values and table rows, per app (default 64 MiB). */
  quotaBytes?: number;
  /** Artifact quota in bytes of distinct contents (default 256 MiB). */
  artifactQuotaBytes?: number;
  /** Evidence quota in bytes of kind + summary + data + refs (default 16 MiB). */
  evidenceQuotaBytes?: number;
  /**
   * Declared storage tables. When given, any other table is `APP_E900`
   * (`storage.undeclared_table`) and an unknown column `APP_E203`; when absent, every table is
   * accepted with primary key `id`.
   */
  tables?: Record<string, MockTable>;
  snapshot?: Partial<HostSnapshot>;
  /** The model the user set up in the mock host (`lime.modelSettings`); absent or `null`: none (`needs-setup`). */
  model?: { model: string; apiKeyConfigured?: boolean } | null;
  /** The app's token budget per agent task (`lime.modelSettings`'s `limits.maxTokensPerTask`). */
  tokenBudget?: number;
  /** `lime.workspace.get`'s facts (default: the local workspace, `en-US`, `UTC`). */
  workspace?: Partial<{ workspaceId: string; tenantId: string; displayName: string; locale: string; timezone: string }>;
  /**
   * MCP tools as the mock host brokers them (`lime.tools`), by `<server>/<tool>`: whether the
   * app declares it (`toolRefs[]`, default true) and the user granted it (default true), whether
   * it needs the user's approval, and what it answers. Absent: no tools.
   */
  tools?: Record<string, MockTool>;
  /** The mock user's answer to a destructive tool's prompt (default: deny). */
  approveTools?: boolean;
  /** Declared secret slots and whether each is bound (`getRef` of an unbound one: `APP_E011`). */
  secrets?: Record<string, boolean>;
  /**
   * Declared knowledge templates: the documents bound to each, or `null` when declared but
   * not bound (`search` of it: `APP_E003`; of an undeclared one: `APP_E002`).
   */
  knowledge?: Record<string, MockKnowledgeDoc[] | null>;
  /** The app's declared backend services (`lime.services`), each as a handler of its methods. */
  services?: Record<string, MockServiceHandler>;
  /** Declared optional (or required) permissions and how the mock user answers (default: none declared). */
  permissions?: Record<string, MockPermission>;
  /** Shares `lime.events` between mock runtimes of the same app. */
  bus?: MockEventBus;
  /**
   * The manifest's `events[]` as `{topic: direction}`. When given, publishing or subscribing to
   * a topic not declared for that direction is `APP_E002` (`events.undeclared_topic`), as in
   * the host; when absent, every topic is accepted.
   */
  events?: Record<string, "publish" | "subscribe" | "both">;
  /** Delay before each call answers, to exercise timeouts and cancellation (default 0). */
  latencyMs?: number;
  /** Default deadline of a call, as in the real runtime (default 30 s). */
  timeoutMs?: number;
  /**
   * The routes of the manifest's `entries[]`, the mounted entry's own first (the snapshot's
   * `route`, as in the host). When given, `lime.ui.navigate` to a route that is not one of them
   * or below one (`/notes` covers `/notes/1`; `?query` and `#hash` ignored) is `APP_E002`
   * (`navigate.foreign_route`), as in the host; when absent, the snapshot's route is `/` and any
   * path of the app's own (`/…`, not `//…`) is accepted.
   */
  routes?: string[];
  /** How the mock user answers `lime.ui.download` (default `"save"`). */
  downloadAnswer?: "save" | "cancel";
  /** The clock for `createdAt` / `generatedAt` (default: now). */
  now?: () => Date;
  /**
   * A scripted model for `lime.agent`. Without it the mock host has no model: `startTask` and
   * `retryTask` fail with `APP_E012` (`agent.needs_setup`), as the real host does.
   */
  agent?: MockAgent;
  /**
   * The manifest's `agentRuntime.sessionPolicy.modes` (default `["new"]`): `startTask` with an
   * undeclared mode is `APP_E002` (`agent.session_policy_not_declared`), as in the host.
   */
  sessionModes?: SessionPolicyMode[];
  /** Files and folders the mock user granted before the app starts (`lime.files`; more with `grantFile`). */
  files?: MockFileGrant[];
  /** How the mock user answers `lime.files.requestFiles`: what they choose, or `null` to cancel (the default). */
  pickFiles?: (request: { multiple: boolean; folder: boolean; accept: string[] }) => MockFileGrant[] | null;
  /**
   * The workflows the manifest declares, by key, for `lime.workflow` (a `start` of any other
   * is `APP_E904` `workflow.not_declared`, as in the host).
   */
  workflows?: Record<string, MockWorkflow>;
  /** The user answering a run's `human-review` in AppHost (also `answerReview`); `undefined`:
   * the user does not answer (yet). */
  workflowUser?: MockWorkflowUser;
}

/** One state of a mock workflow: the manifest's state, with values as JS (no expressions). */
export interface MockWorkflowState {
  key: string;
  kind: "start" | "agent-task" | "tool-call" | "human-review" | "user-input" | "storage-write" | "artifact-create" | "branch" | "wait" | "end";
  next?: string;
  /** The name the state's result gets in `outputs`. */
  output?: string;
  prompt?: string;
  /** `human-review`: what the reviewer sees. */
  show?: unknown;
  /** `user-input`: the answer's JSON Schema (the mock checks `type`, `required`, `properties`,
   * `additionalProperties: false`, `items`, `enum`, `const`, `minimum`/`maximum`,
   * `minLength`/`maxLength`; the host checks all of JSON Schema). */
  schema?: Record<string, unknown>;
  /** `wait`: milliseconds or `"<n>ms|s|m|h|d"`. */
  duration?: number | string;
  /** A step that calls a capability: its output (a value, or a function of `{input, outputs}`,
   * possibly async; a throw fails the run with `workflow.step_failed`). */
  returns?: unknown;
  /** `end`: the run's result (a value or a function of `{input, outputs}`). */
  result?: unknown;
  /** `branch`: the next state's key. */
  choose?: (data: { input: unknown; outputs: Record<string, unknown> }) => string;
  default?: string;
}

/** A workflow the mock app declares. */
export interface MockWorkflow {
  states: MockWorkflowState[];
}

/** How the mock user answers a review: `"approve"`, `"reject"`, `{approved, data}` (edited
 * data), a promise of one, or `undefined` (not now). */
export type MockWorkflowUser = (review: { runId: string; state: string; prompt: string; show: unknown }) =>
  | "approve"
  | "reject"
  | { approved: boolean; data?: unknown }
  | Promise<"approve" | "reject" | { approved: boolean; data?: unknown }>
  | undefined;

/** One scripted task event (the mock fills in the envelope: ids, sequence, time). */
export interface MockTaskStep {
  type: AgentTaskEventType;
  subtype?: string;
  payload?: Record<string, unknown>;
  /** Wait this long before the event (default 0). */
  delayMs?: number;
}

/**
 * The mock's model. `script` returns each run's events after `system:init` / `task:queued`;
 * an `approval:requested` step (its `payload.actionId` is filled in when absent) waits for
 * `respondAction`; a run without a `result` step ends with `result/success`.
 */
export interface MockAgent {
  /**
   * `history`: the inputs of the earlier runs that ended successfully in the task's session
   * (oldest first), i.e. the conversation a `resume`d task continues.
   */
  script(req: { input: unknown; run: number; taskId: string; expectedOutput: unknown; sessionId: string; history: unknown[] }): MockTaskStep[];
  /**
   * The user answering the prompt the host draws for an `approval:requested` step (only the
   * user approves: the app's `respondAction` may only reject), at once or when the promise
   * settles. `undefined`: the user does not answer.
   */
  user?(action: { taskId: string; actionId: string; toolName: string | null }): "approve" | "reject" | Promise<"approve" | "reject"> | undefined;
}

/** A recorded call, for assertions in app authors' tests. */
export interface MockCall {
  capability: string;
  method: string;
  args: unknown;
}

/** A stored artifact: its metadata and bytes. */
export interface MockArtifact extends ArtifactMetadata {
  bytes: Uint8Array;
}

export interface MockLimeRuntime extends LimeRuntime {
  readonly calls: MockCall[];
  /** The key-value storage contents, as the real host would keep them. */
  readonly store: Map<string, unknown>;
  /** Table rows by table name, then by primary key (values stored as the host stores them). */
  readonly tables: Map<string, Map<RowId, TableRow>>;
  /** Artifacts by id, oldest first. */
  readonly artifactStore: Map<string, MockArtifact>;
  readonly evidenceRecords: EvidenceRecord[];
  /** Permissions the mock user was asked for, in order. */
  readonly permissionPrompts: string[];
  /** Destructive tools the mock user was asked to approve, in order. */
  readonly toolPrompts: string[];
  /** Binds (new ref, the old one stops working) or unbinds a declared secret slot, as the user would. */
  setSecretBound(key: string, bound: boolean): void;
  /** Grants a file or folder as the user would (`lime.files`); returns its ref. */
  grantFile(grant: MockFileGrant): string;
  /** What `lime.files.requestFiles` asked the mock user for, in order. */
  readonly filePickRequests: { multiple: boolean; folder: boolean; accept: string[] }[];
  /** Revokes a ref as the user would on the detail page: the next read is `files.ref_not_found`. */
  revokeFile(ref: string): boolean;
  /** The user approving or rejecting a run's pending `human-review` in AppHost (an app never can). */
  answerReview(runId: string, approved: boolean, data?: unknown): void;
  /** Binds documents to (or, with `null`, unbinds) a declared knowledge template. */
  setKnowledgeBound(template: string, docs: MockKnowledgeDoc[] | null): void;
  /** Pushes a theme update to `onSnapshot` listeners. */
  setTheme(theme: Partial<ThemeSnapshot>): void;
  /** The routes the app registered with `lime.ui.registerRoute`, as the host keeps them. */
  readonly routes: { appId: string; entryKey: string; path: string; title: string }[];
  /** Delivers a `ui:launch` as the host would (a deep link, a palette command, an artifact). */
  launch(launch: import("../ui.js").UiLaunch): void;
  readonly toasts: { message: string; level: string }[];
  readonly navigations: string[];
  /** Files the mock user saved through `lime.ui.download`: the name and the bytes. */
  readonly downloads: { fileName: string; bytes: Uint8Array; mimeType: string }[];
}

/** One tool of the mock host's `lime.tools`. */
export interface MockTool {
  declared?: boolean;
  granted?: boolean;
  description?: string;
  inputSchema?: unknown;
  needsApproval?: boolean;
  /** The tool's result for the call's arguments (default: echoes them as text). */
  run?: (args: Record<string, unknown>) => unknown;
}

/** Every capability the real host implements (the mock's default offer). */
export const MOCK_CAPABILITIES = [
  "lime.ui", "lime.storage", "lime.artifacts", "lime.evidence", "lime.secrets", "lime.events", "lime.policy", "lime.agent",
  "lime.tools", "lime.workflow", "lime.files", "lime.knowledge", "lime.modelSettings", "lime.capabilities", "lime.workspace", "lime.services",
];
