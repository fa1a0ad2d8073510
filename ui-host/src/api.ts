// Typed wrappers over the host command layer (docs/host-api.md). Every function rejects with a
// HostError `{code, message, details}`; nothing here decides anything, Rust does.

import type {
  AppMaterial,
  Browse,
  Bundle,
  CatalogInfo,
  FileRef,
  FileRefRevoked,
  HostCommandName,
  RunDetail,
  RunSummary,
  ScheduleRecord,
  HostCommands,
  Indexed,
  ModelSet,
  ModelStatus,
  Refreshed,
  SecretBound,
  SessionDiagnostics,
  TestReport,
  ThemeSet,
  UpdateStatus,
  VerifyReport,
} from "./generated/host-api.js";
import type { TaskDetail, TaskView } from "./tasks.js";
import { invoke, nextEvents, uploadPackage } from "./transport.js";
import type {
  Answer,
  AppDetail,
  AppSummary,
  AuditRow,
  CleanupPlan,
  DevStatus,
  DisablePlan,
  EventsPage,
  GrantRow,
  HostSettings,
  InstallReview,
  LaunchTarget,
  Mount,
  Outgoing,
  SyncReport,
  ThemeMode,
  TrustedKey,
  UninstallMode,
  UninstallResult,
} from "./types.js";

export { nextEvents, uploadPackage };

type ArgsOf<K extends HostCommandName> = HostCommands[K]["args"];
type AnswerOf<K extends HostCommandName> = HostCommands[K]["answer"];

/**
 * Calls a host command, typed by the generated `HostCommands` map (crates/host-core/src/api/schema.rs):
 * a command name or an argument Rust does not know is a TypeScript error. Commands whose
 * arguments are all optional may be called without them.
 */
export function call<K extends HostCommandName>(
  command: K,
  ...args: Record<string, never> extends ArgsOf<K> ? [args?: ArgsOf<K>] : [args: ArgsOf<K>]
): Promise<AnswerOf<K>> {
  return invoke<AnswerOf<K>>(command, args[0]);
}

/**
 * The UI's reading of an answer Rust leaves open JSON in the schema (the task views, parts of
 * `InstallReview`; see types.ts and tasks.ts): the shape is the UI's, not checked here.
 */
function readAs<T>(answer: Promise<unknown>): Promise<T> {
  return answer as Promise<T>;
}

// Apps and mounts.
export const listApps = (): Promise<AppSummary[]> => call("list_apps");
export const mountEntry = (appId: string, entryKey: string): Promise<Mount> =>
  call("mount_entry", { appId, entryKey });
export const bridgeMessage = (mountId: string, origin: string, data: string): Promise<Outgoing[]> =>
  call("bridge_message", { mountId, origin, data });
export async function bridgeRefused(mountId: string | null, reason: string, bytes: number): Promise<void> {
  await call("bridge_refused", { mountId, reason, bytes });
}
export const answerPrompt = (promptId: string, answer: Answer): Promise<Outgoing[]> =>
  call("answer_prompt", { promptId, answer });
export const unmount = (mountId: string): Promise<boolean> => call("unmount", { mountId });
export const syncMounts = (): Promise<SyncReport> => call("sync_mounts");
export const bridgeDiagnostics = (): Promise<SessionDiagnostics> => call("bridge_diagnostics");
/**
 * Opens an http(s) link after the user confirmed it (Rust checks the URL again). In the browser
 * Rust answers `{url}` and the page opens it itself.
 */
export async function openExternal(url: string): Promise<void> {
  const answer = await call("open_external", { url });
  if (answer !== null && typeof answer === "object" && typeof answer.url === "string") {
    window.open(answer.url, "_blank", "noopener,noreferrer");
  }
}
export const launchTarget = (): Promise<LaunchTarget | null> => call("launch_target");
/** Whether a newer AppHost exists, from the signed update feed (a notice; nothing is installed). */
export const checkUpdate = (): Promise<UpdateStatus> => call("check_update");
/** The package file the window was started to review (`apphost open <file>`, a file manager), once. */
export const launchPackage = (): Promise<{ path: string } | null> => call("launch_package");
export const events = (after: number, timeoutMs: number): Promise<EventsPage> => nextEvents(after, timeoutMs);

// App center.
export type ReviewSource = { path: string } | { uploadId: string };
export const reviewInstall = (source: ReviewSource): Promise<InstallReview> =>
  readAs(call("review_install", { source }));
export interface InstallOptions {
  acceptPublisherChange?: boolean;
  reattachData?: boolean;
}
export const install = (reviewId: string, options: InstallOptions = {}): Promise<AppSummary> =>
  call("install", { reviewId, consent: true, ...options });
export async function cancelReview(reviewId: string): Promise<void> {
  await call("cancel_review", { reviewId });
}
export const appDetail = (appId: string): Promise<AppDetail> => call("app_detail", { appId });

// Remote catalogs (api/catalog.rs): the Browse page.
export type CatalogReviewArgs = HostCommands["catalog_review_install"]["args"];
export const catalogList = (): Promise<CatalogInfo[]> => call("catalog_list");
export const catalogRefresh = (name?: string): Promise<Refreshed> => call("catalog_refresh", name === undefined ? {} : { name });
export const browseCatalog = (text = ""): Promise<Browse> => call("browse_catalog", { text });
export const catalogReviewInstall = (args: CatalogReviewArgs): Promise<InstallReview> => readAs(call("catalog_review_install", args));
export const catalogSetChannel = (appId: string, catalog: string, channel: string): Promise<Browse> =>
  call("catalog_set_channel", { appId, catalog, channel });
/** Binds a declared secret slot (the value is write-only: no answer carries it). */
export const bindSecret = (
  appId: string,
  slot: string,
  value: string,
): Promise<SecretBound> => call("bind_secret", { appId, slot, value });
/** Binds a folder (an absolute path) to a declared knowledge template and indexes it. */
export const bindKnowledge = (appId: string, template: string, folder: string): Promise<Indexed> =>
  call("bind_knowledge", { appId, template, folder });
export const grant = (appId: string, scope: string): Promise<GrantRow> => call("grant", { appId, scope });
/** lime.files refs of an app (with their paths: the host UI is the user's). */
export const fileRefs = (appId: string): Promise<FileRef[]> => call("file_refs", { appId });
export const fileRefRevoke = (appId: string, ref: string): Promise<FileRefRevoked> => call("file_ref_revoke", { appId, ref });
export const fileGrantPath = (appId: string, path: string): Promise<FileRef> => call("file_grant_path", { appId, path });
/** An app's declared tool refs and knowledge templates with their state (the detail page). */
export const appMaterial = (appId: string): Promise<AppMaterial> =>
  call("app_material", { appId });
export const grantTool = (appId: string, tool: string): Promise<boolean> => call("grant_tool", { appId, tool });
export const revokeTool = (appId: string, tool: string): Promise<boolean> => call("revoke_tool", { appId, tool });
export const unbindKnowledge = (appId: string, template: string): Promise<boolean> =>
  call("unbind_knowledge", { appId, template });
export const revoke = (appId: string, scope: string): Promise<GrantRow> => call("revoke", { appId, scope });
export const listGrants = (appId?: string): Promise<GrantRow[]> =>
  call("list_grants", appId === undefined ? {} : { appId });
export const setEnabled = (appId: string, enabled: boolean): Promise<AppSummary> =>
  call("set_enabled", { appId, enabled });
export const uninstallPlan = (appId: string, mode: UninstallMode): Promise<CleanupPlan | DisablePlan> =>
  call("uninstall_plan", { appId, mode });
export const uninstall = (appId: string, mode: UninstallMode, exportPath?: string): Promise<UninstallResult> =>
  call("uninstall", exportPath === undefined ? { appId, mode } : { appId, mode, exportPath });
// Dev loop.
export const devStatus = (): Promise<DevStatus[]> => call("dev_status");
/** Consents to the change a dev app holds, only if it is still the one shown (`digest`). */
export const devConsent = (appId: string, digest: string): Promise<DevStatus> =>
  call("dev_consent", { appId, digest, consent: true });
export const rollback = (appId: string): Promise<AppSummary> => call("rollback", { appId });
export interface AuditQuery {
  appId?: string;
  capability?: string;
  decision?: string;
  limit?: number;
  before?: number;
}
export const audit = (query: AuditQuery = {}): Promise<AuditRow[]> => call("audit", query);
export const verifyStore = (quick = false): Promise<VerifyReport> => call("verify_store", { quick });
export const diagnosticsBundle = (): Promise<Bundle> => call("diagnostics_bundle");
export const trustedKeys = (): Promise<TrustedKey[]> => call("trusted_keys");
export const addTrustedKey = (publicKey: string, label?: string): Promise<TrustedKey[]> =>
  call("add_trusted_key", label === undefined || label === "" ? { publicKey } : { publicKey, label });
export const removeTrustedKey = (keyId: string): Promise<TrustedKey[]> => call("remove_trusted_key", { keyId });
export const hostSettings = (): Promise<HostSettings> => call("host_settings");
/** Keeps the choice; `effective` (what the page shows) is passed on to frames as `theme:update`. */
export const setTheme = (
  theme: ThemeMode,
  effective: "light" | "dark",
): Promise<ThemeSet> => call("set_theme", { theme, effective });
/** A frame was shown or hidden (tab switch); Rust answers the `host:visibility` post. */
export const setVisibility = (mountId: string, visible: boolean): Promise<Outgoing[]> =>
  call("set_visibility", { mountId, visible });

/** The transport the bridge relay needs, over this command layer. */
export const answerDownload = (downloadId: string, save: boolean): Promise<Outgoing[]> =>
  call("answer_download", { downloadId, save });

/** A dev install's frame reported an error, a CSP violation… (`api/dev_console.rs`). */
export const devDiagnostic = (mountId: string, origin: string, data: string): Promise<unknown> =>
  call("dev_diagnostic", { mountId, origin, data });

/** The `lime.files.requestFiles` picker's commands (`api/files.rs`). */
export const fileUpload = (appId: string, name: string, base64: string): Promise<FileRef> => call("file_upload", { appId, name, base64 });
export const answerFilePick = (promptId: string, refs: string[] | null): Promise<Outgoing[]> =>
  call("answer_file_pick", refs === null ? { promptId } : { promptId, refs });

export const relayTransport = {
  bridgeMessage,
  files: { grantPath: fileGrantPath, upload: fileUpload, answer: answerFilePick },
  devDiagnostic,
  bridgeRefused,
  answerPrompt,
  answerDownload,
  unmount,
  openExternal,
};

/** The model settings (`api/agent.rs`): the API key is write-only, never answered. */
export type { ModelStatus, TestReport as ModelTest } from "./generated/host-api.js";
export const modelSettings = (): Promise<ModelStatus> => call("model_settings");
export const setModel = (baseUrl: string, model: string, apiKey: string): Promise<ModelSet> =>
  call("set_model", apiKey.trim() === "" ? { baseUrl, model } : { baseUrl, model, apiKey });
export const testModel = (): Promise<TestReport> => call("test_model");

/** Agent tasks of every app (`api/tasks.rs`), acted on as the host's user. */
export const listTasks = (appId?: string, status?: string): Promise<TaskView[]> =>
  readAs(call("list_tasks", { ...(appId === undefined ? {} : { appId }), ...(status === undefined ? {} : { status }) }));
export const taskDetail = (appId: string, taskId: string, afterSequence = 0): Promise<TaskDetail> =>
  readAs(call("task_detail", { appId, taskId, afterSequence }));
export const taskCancel = (appId: string, taskId: string): Promise<TaskView> => readAs(call("task_cancel", { appId, taskId }));
export const taskRetry = (appId: string, taskId: string): Promise<TaskView> => readAs(call("task_retry", { appId, taskId }));
export const taskRespond = (
  appId: string,
  taskId: string,
  actionId: string,
  decision: "approve" | "reject",
): Promise<{ responded: boolean }> => call("task_respond", { appId, taskId, actionId, decision });

/** Workflow runs of every app (`api/workflow.rs`), acted on as the host's user. */
export type { RunDetail, RunSummary, ScheduleRecord } from "./generated/host-api.js";
export const workflowRuns = (appId?: string): Promise<RunSummary[]> => call("workflow_runs", appId === undefined ? {} : { appId });
export const workflowRun = (runId: string): Promise<RunDetail> => call("workflow_run", { runId });
export const workflowStart = (appId: string, entryKey: string, input?: unknown): Promise<RunSummary> =>
  call("workflow_start", input === undefined ? { appId, entryKey } : { appId, entryKey, input });
export const workflowRespond = (runId: string, decision: string, data?: unknown): Promise<RunSummary> =>
  call("workflow_respond", data === undefined ? { runId, decision } : { runId, decision, data });
export const workflowCancel = (runId: string): Promise<RunSummary> => call("workflow_cancel", { runId });
export const workflowSchedules = (): Promise<ScheduleRecord[]> => call("workflow_schedules");
