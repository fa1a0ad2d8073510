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
}

/** `{code, message, details}`: the one error shape every AppHost surface reports. */
export interface HostError {
  code: string;
  message: string;
  details?: unknown;
}
