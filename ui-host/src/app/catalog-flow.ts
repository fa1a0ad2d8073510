// Pure parts of the Browse page's flow (views/browse.tsx, app/use-review.ts): when a catalog
// update needs the review sheet, and how a card words its state. No DOM, no Preact: unit-tested
// (ui-host/test/catalog.test.mjs).

import type { BrowseApp, CatalogInfo } from "../generated/host-api.js";
import type { InstallReview } from "../types.js";

/** Permission changes that ask the user again. */
const GROWS = new Set(["added", "changed", "widened"]);

/**
 * Whether a reviewed catalog release must be shown in the review sheet before it installs:
 * always for an install; for an update when a permission grows, a consent or a publisher change
 * is needed, data is reattached or the review has blockers. An update that asks for nothing new
 * installs on the Update button alone (the user consented to these permissions before).
 */
export function needsSheet(r: InstallReview): boolean {
  if (r.mode !== "update") return true;
  if (r.blockers.length > 0 || r.existingData) return true;
  if (r.needsConsent.length > 0) return true;
  if (r.publisherChange?.needsAcceptance === true) return true;
  return r.permissions.some((p) => GROWS.has(p.change ?? ""));
}

/** "catalog stale since …" for a catalog, with why; null when fresh. */
export function staleText(c: Pick<CatalogInfo, "stale" | "staleSince" | "staleReason">): string | null {
  if (!c.stale) return null;
  const since = c.staleSince != null ? ` since ${c.staleSince}` : "";
  const why = c.staleReason != null ? ` (${c.staleReason})` : "";
  return `Catalog stale${since}${why}: installed apps keep working; nothing new can be installed from it until a refresh succeeds.`;
}

/** The words of a card's trust badge. */
export function trustLabel(trust: string): { label: string; tone: "good" | "warn" | "muted"; title: string } {
  switch (trust) {
    case "pinned":
      return { label: "Pinned", tone: "good", title: "Signed by a publisher key this host trusts" };
    case "signed":
      return { label: "Signed", tone: "warn", title: "Signed by a key this host does not trust yet (installing it is a sideload)" };
    default:
      return { label: "Unknown publisher", tone: "warn", title: "The package is not signed (installing it is a sideload)" };
  }
}

/** What Install does for a card: install the offered release, or why it cannot. */
export function installState(app: BrowseApp): { enabled: boolean; why: string | null } {
  if (app.stale) return { enabled: false, why: "The catalog is stale: refresh it first." };
  if (app.offered == null) return { enabled: false, why: "Every release of this channel is revoked by its publisher." };
  if (app.readiness.status === "incompatible") return { enabled: false, why: app.readiness.reasons.join("; ") };
  return { enabled: true, why: null };
}
