// Pure presentation helpers: no DOM, so they are unit-tested under node (test/format.test.mjs).

import type { HostError } from "./types.js";

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
