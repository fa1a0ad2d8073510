// Pure parts of the Browse page's flow (views/browse.tsx, app/use-review.ts): when a catalog
// update needs the review sheet, and how a card words its state. No DOM, no Preact: unit-tested
// (ui-host/test/catalog.test.mjs).

import type { Browse, BrowseApp, CatalogInfo, UpdateOffer } from "../generated/host-api.js";
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
export function trustLabel(trust: string): { label: string; tone: "good" | "warn" | "bad" | "muted"; title: string } {
  switch (trust) {
    case "pinned":
      return { label: "Pinned", tone: "good", title: "Signed by a publisher key this host trusts" };
    case "changed":
      return {
        label: "Publisher changed",
        tone: "bad",
        title: "The installed app's pinned publisher key did not sign this release: installing it needs your explicit acceptance of the new publisher",
      };
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

/** What an installed app's card on the Apps page shows from the catalog it follows. */
export interface CardOffer {
  catalog: string;
  channel: string;
  stale: boolean;
  update: UpdateOffer | null;
  /** The publisher's reason when the installed version is revoked. */
  revoked: string | null;
}

/**
 * Per installed app, the offer of the catalog it FOLLOWS (`installed.follows`), from a
 * `browse_catalog` answer (cached metadata, no network). Apps with nothing to show (no update,
 * not revoked) are left out, so their cards do not re-render.
 */
export function cardOffers(browse: Pick<Browse, "apps">): Map<string, CardOffer> {
  const out = new Map<string, CardOffer>();
  for (const app of browse.apps) {
    const inst = app.installed;
    if (inst == null || !inst.follows) continue;
    const update = inst.update ?? null;
    const revoked = inst.revoked ?? null;
    if (update === null && revoked === null) continue;
    out.set(app.appId, { catalog: app.catalog, channel: inst.channel, stale: app.stale, update, revoked });
  }
  return out;
}
