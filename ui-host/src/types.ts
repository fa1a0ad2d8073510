// Wire types of the host commands (mirrors host-core's serde output, camelCase).

export type Trust = "trusted" | "unsigned" | "unknown-key";

export type Readiness = "ready" | "ready-degraded" | "needs-setup" | "blocked" | "disabled";

/** One installed app, as `list_apps` returns it (`host_core::store::AppSummary`). */
export interface AppSummary {
  name: string;
  displayName: string | null;
  description: string;
  activeVersion: string;
  previousVersion?: string | null;
  versions: string[];
  enabled: boolean;
  trust: Trust;
  sideloaded?: boolean;
  readiness: Readiness;
  packageHash?: string;
  installedAt?: string;
  updatedAt?: string;
  /** The active version's entries, in manifest order (absent from older hosts). */
  entries?: EntrySummary[];
}

/** One entry of an app (`host_core::store::EntrySummary`). */
export interface EntrySummary {
  key: string;
  kind: string;
  title: string | null;
  /** A UI surface the window can mount. */
  mountable: boolean;
}

/** A mounted entry, as `mount_entry` returns it (`host_core::bridge::mounts::Mount`). */
export interface Mount {
  mountId: string;
  appId: string;
  entryKey: string;
  entryKind: string;
  version: string;
  packageHash: string;
  manifestHash: string;
  /** The app's own origin, e.g. `agentapp://hello-app`: the only target origin for posts. */
  origin: string;
  url: string;
  /** The iframe `sandbox` attribute, decided in Rust. */
  sandbox: string;
}

/** The question of a permission prompt (`capability::dispatch::PermissionQuestion`). */
export interface PermissionQuestion {
  appId: string;
  entryKey: string;
  capability: string;
  method: string;
  /** The permission asked for; null for a policy confirmation. */
  permission: string | null;
  /** The manifest's reason for the permission. */
  reason: string | null;
  askReason: string;
}

export type ToastLevel = "info" | "success" | "warning" | "error";

/** What Rust asks the host UI to do (`host_core::bridge::host::Outgoing`). */
export type Outgoing =
  | { kind: "post"; mountId: string; message: unknown }
  | { kind: "prompt"; promptId: string; mountId: string; question: PermissionQuestion }
  | { kind: "toast"; mountId: string; appId: string; message: string; level: ToastLevel }
  | {
      kind: "confirmExternal";
      mountId: string;
      appId: string;
      url: string;
      declaredDomains: string[];
    }
  | { kind: "navigate"; mountId: string; route: string };

/** The user's answer to a prompt (`host_core::bridge::host::Answer`). */
export type Answer = "allow-once" | "allow-always" | "deny" | "dismissed";

/** The entry the window was started to open (`apphost open <app> [--entry <key>]`). */
export interface LaunchTarget {
  appId: string;
  entryKey: string;
}

/** A mount Rust ended because the store changed under the window (`desktop::watch::EndedMount`). */
export interface EndedMount {
  mountId: string;
  appId: string;
  entryKey: string;
  reason: "uninstalled" | "disabled" | "version-changed";
}

/** One `sync_mounts` poll: whether the store changed, and the mounts that ended. */
export interface SyncReport {
  changed: boolean;
  ended: EndedMount[];
}

/** `{code, message, details}`: the one error shape every AppHost surface reports. */
export interface HostError {
  code: string;
  message: string;
  details?: unknown;
}
