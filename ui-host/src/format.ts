// Pure presentation helpers: no DOM, so they are unit-tested under node (test/format.test.mjs).

import type { Route } from "./router.js";
import type { HostError, SetupAction } from "./types.js";

/** How a badge is coloured (a CSS modifier class: `badge--<tone>`). */
export type Tone = "good" | "warn" | "bad" | "info" | "muted";

export interface BadgeText {
  label: string;
  tone: Tone;
  /** Longer explanation, shown as a tooltip. */
  title: string;
}

/** The trust badge. Anything not signed by a trusted key is shown as sideloaded. */
export function trustBadge(trust: string): BadgeText {
  switch (trust) {
    case "trusted":
      return { label: "Verified", tone: "good", title: "Signed by a trusted publisher key" };
    case "unsigned":
      return {
        label: "Sideloaded · unsigned",
        tone: "warn",
        title: "Installed without a signature: its publisher is not verified",
      };
    case "unknown-key":
      return {
        label: "Sideloaded · unknown key",
        tone: "warn",
        title: "Signed by a key this host does not trust",
      };
    default:
      return { label: `Trust: ${trust}`, tone: "bad", title: "Unrecognised trust state" };
  }
}

/** The readiness badge. */
export function readinessBadge(readiness: string): BadgeText {
  switch (readiness) {
    case "ready":
      return { label: "Ready", tone: "good", title: "Everything the app needs is available" };
    case "ready-degraded":
      return {
        label: "Ready · limited",
        tone: "warn",
        title: "Runs, but some optional capabilities are unavailable",
      };
    case "needs-setup":
      return { label: "Needs setup", tone: "info", title: "Finish setting the app up before use" };
    case "blocked":
      return { label: "Blocked", tone: "bad", title: "A requirement is not met: the app cannot run" };
    case "disabled":
      return { label: "Disabled", tone: "muted", title: "The app is turned off" };
    default:
      return { label: readiness, tone: "muted", title: "Unrecognised readiness state" };
  }
}

/** The enabled/disabled badge. */
export function enabledBadge(enabled: boolean): BadgeText {
  return enabled
    ? { label: "Enabled", tone: "good", title: "The app is turned on" }
    : { label: "Disabled", tone: "muted", title: "The app is turned off" };
}

/** The version to show: the active one, else the newest installed one, else "?". */
export function shownVersion(activeVersion: string | null, versions: readonly string[]): string {
  return activeVersion ?? versions[versions.length - 1] ?? "?";
}

/** One letter for the app's monogram icon. */
export function monogram(displayName: string | null, name: string): string {
  const source = (displayName ?? "").trim() || name;
  const first = Array.from(source)[0] ?? "?";
  return first.toUpperCase();
}

/** Whether `value` has the `{code, message}` shape of a HostError. */
export function isHostError(value: unknown): value is HostError {
  return (
    typeof value === "object" &&
    value !== null &&
    typeof (value as { code?: unknown }).code === "string" &&
    typeof (value as { message?: unknown }).message === "string"
  );
}

/** Turns whatever a failed command threw into a HostError (`code` "internal" when unknown). */
export function toHostError(value: unknown): HostError {
  if (isHostError(value)) {
    return value;
  }
  if (value instanceof Error) {
    return { code: "internal", message: value.message };
  }
  if (typeof value === "string") {
    return { code: "internal", message: value };
  }
  return { code: "internal", message: "unexpected error" };
}

/** The error banner's text: `{code}: {message}`. */
export function errorText(value: unknown): string {
  const error = toHostError(value);
  return `${error.code}: ${error.message}`;
}

/** The header summary line. */
export function summaryText(count: number): string {
  if (count === 0) {
    return "No apps installed";
  }
  return count === 1 ? "1 app installed" : `${count} apps installed`;
}

/** `1.5 MB`-style sizes (powers of 1024, one decimal). */
export function formatBytes(bytes: number): string {
  if (!Number.isFinite(bytes) || bytes < 0) {
    return "?";
  }
  const units = ["B", "KB", "MB", "GB", "TB"];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return unit === 0 ? `${bytes} B` : `${value.toFixed(1)} ${units[unit]}`;
}

/** Progress in percent (0–100, whole numbers), for the install progress bar. */
export function percent(done: number, total: number): number {
  if (!(total > 0) || !(done >= 0)) {
    return 0;
  }
  return Math.min(100, Math.floor((done / total) * 100));
}

/** What the user can do about a failure, by error code family (shown under code and message). */
export function errorHelp(code: string): string {
  const exact: Record<string, string> = {
    "install.already_installed": "The app is already installed: open it, or choose a newer package to update it.",
    "install.not_newer": "Choose a package with a higher version, or roll back from the app's Versions tab.",
    "install.publisher_changed": "The publisher changed: confirm the change in the review only if you trust the new publisher.",
    "install.consent_required": "Review the package and confirm the install.",
    "install.plan_stale": "The package or the store changed since the review: review it again.",
    "install.plan_mismatch": "The package changed since the review: review it again.",
    "verify.untrusted_key": "Add the publisher's key under Settings → Trusted keys if you trust it, then review again.",
    "verify.unsigned": "The package is unsigned: install it only if you trust where it came from.",
    "app.not_installed": "The app is no longer installed: reload the list.",
    "app.no_rollback_target": "There is no earlier version to go back to.",
    "mount.not_ready": "Finish the app's setup (see its readiness) and open it again.",
    "mount.app_disabled": "Enable the app in its Danger zone tab, then open it again.",
    "ipc.forbidden_origin": "Host commands only work from the AppHost window itself.",
    "desktop.unavailable": "Open this page in the AppHost window or through `apphost serve`.",
    "api.unknown_command": "This AppHost backend does not offer that command yet: update AppHost.",
  };
  const known = exact[code];
  if (known !== undefined) {
    return known;
  }
  const family = code.split(".")[0] ?? "";
  const byFamily: Record<string, string> = {
    source: "Check that the file exists and is readable, then choose it again.",
    archive: "The package file is damaged or unsafe: ask the publisher for a new package.",
    manifest: "The package's APP.md is invalid: ask the publisher to fix it (`apphost validate` shows details).",
    verify: "The package does not match its signature or lock: do not install it; get it again from the publisher.",
    compat: "This package needs a different AppHost: update AppHost or choose another version.",
    install: "Review the package again.",
    store: "The data directory has a problem: run Verify store on the Diagnostics page.",
    key: "Check the key text and try again.",
    permission: "Reload the app's permissions and try again.",
    api: "The request did not reach the backend as expected: reload the window.",
  };
  return byFamily[family] ?? "Try again; if it keeps failing, export a diagnostics bundle from the Diagnostics page.";
}

/** The review's trust line, as a badge. Anything not signed by a trusted key is a warning. */
export function reviewTrustBadge(state: string): BadgeText {
  switch (state) {
    case "trusted":
      return { label: "Signed · trusted publisher", tone: "good", title: "Signed by a key you trust" };
    case "untrusted-signature":
      return {
        label: "Signed · key not trusted",
        tone: "warn",
        title: "Signed, but by a key this host does not trust: the publisher is not verified",
      };
    case "unsigned":
      return { label: "Unsigned", tone: "warn", title: "No signature: the publisher is not verified" };
    case "dev":
      return { label: "DEV", tone: "warn", title: "A development install: never trusted as signed" };
    default:
      return { label: `Trust: ${state}`, tone: "bad", title: "Unrecognised trust state" };
  }
}

/** The label of a permission's change in an update review. */
export function changeLabel(change: string | undefined): BadgeText | null {
  switch (change) {
    case "added":
      return { label: "New", tone: "warn", title: "The update asks for this permission for the first time" };
    case "changed":
      return { label: "Changed", tone: "warn", title: "The update changes this permission: it is asked again" };
    case "removed":
      return { label: "Removed", tone: "muted", title: "The update no longer asks for this permission (its grant is dropped)" };
    case "widened":
      return { label: "Widened", tone: "warn", title: "The update asks for more than the installed version" };
    case "narrowed":
      return { label: "Narrowed", tone: "good", title: "The update asks for less" };
    case "unchanged":
      return { label: "Unchanged", tone: "muted", title: "Same as the installed version" };
    default:
      return null;
  }
}

/** What a readiness status means, in words (for cards without a reason from Rust). */
export function readinessWords(readiness: string): string {
  switch (readiness) {
    case "ready":
      return "Ready to open.";
    case "ready-degraded":
      return "Opens, but some optional capabilities are unavailable.";
    case "needs-setup":
      return "Needs setup before it can open.";
    case "blocked":
      return "A requirement is not met: it cannot open.";
    case "disabled":
      return "Turned off.";
    default:
      return readiness;
  }
}

export type AppFilter = "all" | "ready" | "attention" | "disabled" | "sideloaded";

interface Filterable {
  name: string;
  displayName: string | null;
  description: string;
  readiness: string;
  enabled: boolean;
  trust: string;
  publisher?: string | null;
}

/** The apps matching a search text (name, display name, description, publisher) and a filter. */
export function filterApps<T extends Filterable>(apps: readonly T[], query: string, filter: AppFilter): T[] {
  const q = query.trim().toLowerCase();
  return apps.filter((app) => {
    if (q !== "") {
      const hay = `${app.name}\n${app.displayName ?? ""}\n${app.description}\n${app.publisher ?? ""}`.toLowerCase();
      if (!hay.includes(q)) {
        return false;
      }
    }
    switch (filter) {
      case "ready":
        return app.enabled && (app.readiness === "ready" || app.readiness === "ready-degraded");
      case "attention":
        return app.enabled && (app.readiness === "needs-setup" || app.readiness === "blocked");
      case "disabled":
        return !app.enabled;
      case "sideloaded":
        return app.trust !== "trusted";
      default:
        return true;
    }
  });
}

/** A manifest value (string, list, anything) as one line of text; "" for none. */
export function valueText(value: unknown): string {
  if (value === null || value === undefined) {
    return "";
  }
  if (typeof value === "string") {
    return value;
  }
  if (Array.isArray(value)) {
    return value.map(valueText).join(", ");
  }
  if (typeof value === "number" || typeof value === "boolean") {
    return String(value);
  }
  return JSON.stringify(value);
}

/** A manifest value that should be a list of strings (domains, paths); anything else is []. */
export function stringList(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === "string") : [];
}

/**
 * The network domains of a review, in words: the projection lists `{domain, permission, required}`
 * objects (plain strings are accepted too); optional ones say so.
 */
export function networkDomains(value: unknown): string[] {
  if (!Array.isArray(value)) return [];
  const out: string[] = [];
  for (const v of value) {
    if (typeof v === "string") out.push(v);
    else if (v !== null && typeof v === "object" && typeof (v as { domain?: unknown }).domain === "string") {
      const d = v as { domain: string; permission?: unknown; required?: unknown };
      const via = typeof d.permission === "string" ? ` via ${d.permission}` : "";
      out.push(`${d.domain}${d.required === false ? ` (optional${via})` : via ? ` (${via.trim()})` : ""}`);
    }
  }
  return out;
}

/** The reasons of a readiness (a review's `reasons`, or a report's blockers then warnings). */
export function readinessReasons(r: {
  reasons?: unknown;
  blockers?: unknown;
  warnings?: unknown;
} | null | undefined): string[] {
  if (r === null || r === undefined) {
    return [];
  }
  const reasons = stringList(r.reasons);
  return reasons.length > 0 ? reasons : [...stringList(r.blockers), ...stringList(r.warnings)];
}

/** The id `grant`/`revoke` take for a permission row: its key (older shapes: its scope). */
export function permissionId(p: { key?: unknown; scope?: unknown }): string {
  return typeof p.key === "string" && p.key !== "" ? p.key : valueText(p.scope);
}

/** A signer in words: its name, key id and fingerprint, as far as known. */
export function signerText(s: { name?: string | null; keyId?: string | null; fingerprint?: string | null } | null | undefined): string {
  if (s === null || s === undefined) {
    return "unsigned";
  }
  const parts = [s.name, s.keyId !== null && s.keyId !== undefined ? `key ${s.keyId}` : null, s.fingerprint].filter(
    (p): p is string => typeof p === "string" && p !== "",
  );
  return parts.length > 0 ? parts.join(" · ") : "unsigned";
}

/**
 * Where a card's setup action leads (`AppSummary.setupActions[0]`): "Set up a model" to the
 * Model page, "Grant …" to the app's permissions (the reason is shown there before the grant),
 * anything else (bind a secret, knowledge, an integration) to the app's overview, which shows
 * the action's instructions.
 */
export function setupRoute(appId: string, action: SetupAction | null): Route {
  switch (action?.kind) {
    case "model":
      return { page: "model" };
    case "grant-permission":
      return { page: "app", appId, tab: "permissions" };
    default:
      return { page: "app", appId, tab: "overview" };
  }
}

/** The publisher line of a card: the manifest's claim, and whether a trusted key vouches for it. */
export function publisherText(publisher: string | null | undefined, trust: string): string | null {
  if (publisher === null || publisher === undefined || publisher.trim() === "") {
    return trust === "trusted" ? "by a trusted publisher" : null;
  }
  return trust === "trusted" ? `by ${publisher} (verified)` : `by ${publisher} (not verified)`;
}
