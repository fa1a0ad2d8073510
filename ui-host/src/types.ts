// Wire types of the host commands: generated from the Rust types (crates/host-core/src/api/schema.rs
// → generated/host-api.ts, drift-tested by crates/host-core/tests/host_api_schemas.rs). Only
// UI-side readings of them are written here.

import type {
  Batch,
  Event,
  HostError as GeneratedHostError,
  InstallReview as GeneratedInstallReview,
  InstallProgress as GeneratedInstallProgress,
  PermissionChange as GeneratedPermissionChange,
  PermissionRow,
  TrustedKeyRow,
  Uninstalled,
} from "./generated/host-api.js";

export type {
  Answer,
  AppDetail,
  AppSummary,
  AuditRow,
  CleanupPlan,
  DevStatus,
  DisablePlan,
  EndedMount,
  EntrySummary,
  GrantRow,
  HostCommandName,
  HostCommands,
  HostEventPayloads,
  HostSettings,
  LaunchTarget,
  LifecyclePlan,
  Mount,
  Outgoing,
  PermissionQuestion,
  ReviewEntry,
  ReviewSigner,
  SetupAction,
  SyncReport,
  ToastLevel,
  UninstallMode,
  VerifyReport,
} from "./generated/host-api.js";

/**
 * `{code, message, details}`: the one error shape every AppHost surface reports. Rust always
 * sends `details`; errors the UI makes itself (transport failures) may have none.
 */
export type HostError = Omit<GeneratedHostError, "details"> & { details?: unknown };

/** One host→UI push read through `next_events`. */
export type HostEvent = Event;

/**
 * What `review_install` answers. Rust builds `network`, `storage` and `readiness` as open JSON
 * (`center/review.rs`); this is the UI's reading of them.
 */
export type InstallReview = Omit<GeneratedInstallReview, "network" | "storage" | "readiness"> & {
  network: { domains?: string[] };
  storage: {
    declared?: boolean;
    quota?: number | string | null;
    schema?: unknown;
    tables?: string[];
    migrations?: Array<{ id: string; path?: string; size?: number; sha256?: string }>;
  };
  readiness: ReadinessInfo;
};

export type Trust = "trusted" | "unsigned" | "unknown-key";

export type Readiness = "ready" | "ready-degraded" | "needs-setup" | "blocked" | "disabled";

/**
 * Readiness with its reasons in words and what the user can do about it. Reviews send
 * `{status, reasons, warnings, setupActions}`; `app_detail` sends the full readiness report
 * (`{status, blockers, warnings, setupActions, checks, …}`): `readinessReasons` reads both.
 */
export interface ReadinessInfo {
  status: Readiness | string;
  reasons?: string[];
  blockers?: string[];
  warnings?: string[];
  setupActions?: import("./generated/host-api.js").SetupAction[];
}

export type ReviewTrustState = "trusted" | "untrusted-signature" | "unsigned" | "dev";

/** `added`, `changed`, `unchanged`, `removed` (docs/host-api.md). */
export type PermissionChange = "added" | "changed" | "unchanged" | "removed";

/** A permission as the review shows it (`store::install::PermissionChange`). */
export type ReviewPermission = GeneratedPermissionChange;

/** One `install:progress` event payload. */
export type InstallProgress = GeneratedInstallProgress;

/** One `next_events` answer. */
export type EventsPage = Batch;

/** A permission of `app_detail` (`center::detail::PermissionRow`). */
export type DetailPermission = PermissionRow;

/** A trusted publisher key (`center::settings::TrustedKeyRow`). */
export type TrustedKey = TrustedKeyRow;

/** What `uninstall` answers. */
export type UninstallResult = Uninstalled;

export type ThemeMode = "system" | "light" | "dark";
