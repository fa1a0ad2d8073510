// Typed wrappers over the host command layer (docs/host-api.md). Every function rejects with a
// HostError `{code, message, details}`; nothing here decides anything, Rust does.

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

// Apps and mounts.
export const listApps = (): Promise<AppSummary[]> => invoke("list_apps");
export const mountEntry = (appId: string, entryKey: string): Promise<Mount> =>
  invoke("mount_entry", { appId, entryKey });
export const bridgeMessage = (mountId: string, origin: string, data: string): Promise<Outgoing[]> =>
  invoke("bridge_message", { mountId, origin, data });
export async function bridgeRefused(mountId: string | null, reason: string, bytes: number): Promise<void> {
  await invoke<null>("bridge_refused", { mountId, reason, bytes });
}
export const answerPrompt = (promptId: string, answer: Answer): Promise<Outgoing[]> =>
  invoke("answer_prompt", { promptId, answer });
export const unmount = (mountId: string): Promise<boolean> => invoke("unmount", { mountId });
export const syncMounts = (): Promise<SyncReport> => invoke("sync_mounts");
export const bridgeDiagnostics = (): Promise<Record<string, unknown>> => invoke("bridge_diagnostics");
/**
 * Opens an http(s) link after the user confirmed it (Rust checks the URL again). In the browser
 * Rust answers `{url}` and the page opens it itself.
 */
export async function openExternal(url: string): Promise<void> {
  const answer = await invoke<{ url?: unknown } | null>("open_external", { url });
  if (answer !== null && typeof answer === "object" && typeof answer.url === "string") {
    window.open(answer.url, "_blank", "noopener,noreferrer");
  }
}
export const launchTarget = (): Promise<LaunchTarget | null> => invoke("launch_target");
export const events = (after: number, timeoutMs: number): Promise<EventsPage> => nextEvents(after, timeoutMs);

// App center.
export type ReviewSource = { path: string } | { uploadId: string };
export const reviewInstall = (source: ReviewSource): Promise<InstallReview> =>
  invoke("review_install", { source });
export interface InstallOptions {
  acceptPublisherChange?: boolean;
  reattachData?: boolean;
}
export const install = (reviewId: string, options: InstallOptions = {}): Promise<AppSummary> =>
  invoke("install", { reviewId, consent: true, ...options });
export async function cancelReview(reviewId: string): Promise<void> {
  await invoke<null>("cancel_review", { reviewId });
}
export const appDetail = (appId: string): Promise<AppDetail> => invoke("app_detail", { appId });
/** Binds a declared secret slot (the value is write-only: no answer carries it). */
export const bindSecret = (
  appId: string,
  slot: string,
  value: string,
): Promise<{ appId: string; slot: string; store: string; boundAt: string }> => invoke("bind_secret", { appId, slot, value });
export const grant = (appId: string, scope: string): Promise<GrantRow> => invoke("grant", { appId, scope });
export const revoke = (appId: string, scope: string): Promise<GrantRow> => invoke("revoke", { appId, scope });
export const listGrants = (appId?: string): Promise<GrantRow[]> =>
  invoke("list_grants", appId === undefined ? {} : { appId });
export const setEnabled = (appId: string, enabled: boolean): Promise<AppSummary> =>
  invoke("set_enabled", { appId, enabled });
export const uninstallPlan = (appId: string, mode: UninstallMode): Promise<CleanupPlan | DisablePlan> =>
  invoke("uninstall_plan", { appId, mode });
export const uninstall = (appId: string, mode: UninstallMode, exportPath?: string): Promise<UninstallResult> =>
  invoke("uninstall", exportPath === undefined ? { appId, mode } : { appId, mode, exportPath });
// Dev loop.
export const devStatus = (): Promise<DevStatus[]> => invoke("dev_status");
/** Consents to the change a dev app holds, only if it is still the one shown (`digest`). */
export const devConsent = (appId: string, digest: string): Promise<DevStatus> =>
  invoke("dev_consent", { appId, digest, consent: true });
export const rollback = (appId: string): Promise<AppSummary> => invoke("rollback", { appId });
export interface AuditQuery {
  appId?: string;
  capability?: string;
  decision?: string;
  limit?: number;
  before?: number;
}
export const audit = (query: AuditQuery = {}): Promise<AuditRow[]> => invoke("audit", query);
export const verifyStore = (quick = false): Promise<Record<string, unknown>> => invoke("verify_store", { quick });
export const diagnosticsBundle = (): Promise<{ path: string; bytes: number }> => invoke("diagnostics_bundle");
export const trustedKeys = (): Promise<TrustedKey[]> => invoke("trusted_keys");
export const addTrustedKey = (publicKey: string, label?: string): Promise<TrustedKey[]> =>
  invoke("add_trusted_key", label === undefined || label === "" ? { publicKey } : { publicKey, label });
export const removeTrustedKey = (keyId: string): Promise<TrustedKey[]> => invoke("remove_trusted_key", { keyId });
export const hostSettings = (): Promise<HostSettings> => invoke("host_settings");
/** Keeps the choice; `effective` (what the page shows) is passed on to frames as `theme:update`. */
export const setTheme = (
  theme: ThemeMode,
  effective: "light" | "dark",
): Promise<{ theme: ThemeMode; outgoing?: Outgoing[] }> => invoke("set_theme", { theme, effective });
/** A frame was shown or hidden (tab switch); Rust answers the `host:visibility` post. */
export const setVisibility = (mountId: string, visible: boolean): Promise<Outgoing[]> =>
  invoke("set_visibility", { mountId, visible });

/** The transport the bridge relay needs, over this command layer. */
export const answerDownload = (downloadId: string, save: boolean): Promise<Outgoing[]> =>
  invoke("answer_download", { downloadId, save });

export const relayTransport = {
  bridgeMessage,
  bridgeRefused,
  answerPrompt,
  answerDownload,
  unmount,
  openExternal,
};

/** The model settings (`api/agent.rs`): the API key is write-only, never answered. */
export interface ModelStatus {
  status: "ready" | "needs-setup";
  baseUrl: string | null;
  model: string | null;
  apiKey: { set: boolean; location?: string | null; present?: boolean | null; problem?: string | null };
}
export interface ModelTest {
  ok: boolean;
  baseUrl: string;
  model: string;
  latencyMs: number;
  firstEventMs: number;
  finishReason: string;
}
export const modelSettings = (): Promise<ModelStatus> => invoke("model_settings");
export const setModel = (baseUrl: string, model: string, apiKey: string): Promise<{ apiKeyChange: string; status: ModelStatus }> =>
  invoke("set_model", apiKey.trim() === "" ? { baseUrl, model } : { baseUrl, model, apiKey });
export const testModel = (): Promise<ModelTest> => invoke("test_model");

/** Agent tasks of every app (`api/tasks.rs`), acted on as the host's user. */
export const listTasks = (appId?: string, status?: string): Promise<TaskView[]> =>
  invoke("list_tasks", { ...(appId === undefined ? {} : { appId }), ...(status === undefined ? {} : { status }) });
export const taskDetail = (appId: string, taskId: string, afterSequence = 0): Promise<TaskDetail> =>
  invoke("task_detail", { appId, taskId, afterSequence });
export const taskCancel = (appId: string, taskId: string): Promise<TaskView> => invoke("task_cancel", { appId, taskId });
export const taskRetry = (appId: string, taskId: string): Promise<TaskView> => invoke("task_retry", { appId, taskId });
export const taskRespond = (
  appId: string,
  taskId: string,
  actionId: string,
  decision: "approve" | "reject",
): Promise<{ responded: boolean }> => invoke("task_respond", { appId, taskId, actionId, decision });
