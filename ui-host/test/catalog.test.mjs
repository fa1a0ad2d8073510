// The Browse page (views/browse.tsx) and its pure flow (app/catalog-flow.ts): when an update needs
// the review sheet, the stale notice, the Install button's state, and what a card shows.
import assert from "node:assert/strict";
import { test } from "node:test";

import { h } from "preact";
import { renderToString } from "preact-render-to-string";

import { cardOffers, installState, needsSheet, staleText, trustLabel } from "../build/test/app/catalog-flow.js";
import { AppCards, CatalogCard } from "../build/test/ui/testing.js";

const noop = () => undefined;
const actions = { install: noop, update: noop, rollBack: noop, channel: noop };

function review(extra = {}) {
  return { mode: "update", blockers: [], existingData: false, needsConsent: [], permissions: [{ key: "a", change: "unchanged" }], ...extra };
}

function card(extra = {}) {
  return {
    catalog: "local",
    appId: "hello-app",
    displayName: "Hello <b>App</b>",
    description: "Notes.",
    publisher: "Example",
    trust: "unknown",
    permissions: ["notes_storage"],
    readiness: { status: "compatible", reasons: [] },
    offered: { version: "1.0.0", channel: "stable", revoked: null, rollbackTarget: null },
    releases: [{ version: "1.0.0", channel: "stable", revoked: null, rollbackTarget: null }],
    channels: ["stable"],
    stale: false,
    installed: null,
    ...extra,
  };
}

test("an install always opens the sheet; an update only when it asks for more", () => {
  assert.equal(needsSheet(review({ mode: "install" })), true);
  assert.equal(needsSheet(review()), false);
  assert.equal(needsSheet(review({ permissions: [{ key: "b", change: "added" }] })), true);
  assert.equal(needsSheet(review({ permissions: [{ key: "b", change: "widened" }] })), true);
  assert.equal(needsSheet(review({ permissions: [{ key: "b", change: "removed" }] })), false);
  assert.equal(needsSheet(review({ needsConsent: ["b"] })), true);
  assert.equal(needsSheet(review({ blockers: [{ code: "x", message: "y" }] })), true);
  assert.equal(needsSheet(review({ publisherChange: { needsAcceptance: true } })), true);
});

test("the stale notice says since when and why; a fresh catalog says nothing", () => {
  assert.equal(staleText({ stale: false, staleSince: null, staleReason: null }), null);
  const t = staleText({ stale: true, staleSince: "2026-11-26T10:00:00Z", staleReason: "catalog.fetch_failed" });
  assert.match(t, /stale since 2026-11-26T10:00:00Z \(catalog\.fetch_failed\)/);
  assert.match(t, /installed apps keep working/);
});

test("Install is off for a stale catalog, an all-revoked channel and an incompatible app", () => {
  assert.deepEqual(installState(card()), { enabled: true, why: null });
  assert.equal(installState(card({ stale: true })).enabled, false);
  assert.equal(installState(card({ offered: null })).enabled, false);
  assert.equal(installState(card({ readiness: { status: "incompatible", reasons: ["AppHost is 0.1; the app needs >=9"] } })).why, "AppHost is 0.1; the app needs >=9");
  assert.equal(trustLabel("pinned").label, "Pinned");
  assert.equal(trustLabel("whatever").label, "Unknown publisher");
});

test("a card: install button, escaped package text, revoked releases flagged", () => {
  const html = renderToString(
    h(CatalogCard, {
      app: card({ releases: [{ version: "1.1.0", channel: "stable", revoked: "leaks notes", rollbackTarget: null }, { version: "1.0.0", channel: "stable", revoked: null, rollbackTarget: null }] }),
      busy: false,
      actions,
    }),
  );
  assert.match(html, /data-testid="catalog-install"/);
  assert.match(html, /Hello &lt;b>App&lt;\/b>/);
  assert.match(html, /data-testid="revoked-releases"[^>]*>Revoked by the publisher: 1\.1\.0 \(leaks notes\)/);
});

test("an installed card: update with the permission diff, channel, roll back, revoked installed version", () => {
  const installed = {
    version: "1.0.0",
    previousVersion: "0.9.0",
    readiness: "ready",
    channel: "beta",
    follows: true,
    revoked: "bad build",
    update: { version: "1.1.0", channel: "beta", permissionsAdded: ["notes_files"], permissionsRemoved: ["old"] },
  };
  const html = renderToString(h(CatalogCard, { app: card({ installed, channels: ["beta", "stable"] }), busy: false, actions }));
  assert.doesNotMatch(html, /data-testid="catalog-install"/);
  assert.match(html, /data-testid="update-available"[^>]*data-version="1.1.0"[^>]*data-grows="true"/);
  assert.match(html, /\+notes_files/);
  assert.match(html, /−old/);
  assert.match(html, />Review update</);
  assert.match(html, /data-testid="catalog-rollback"[^>]*>Roll back to 0\.9\.0/);
  assert.match(html, /data-testid="installed-revoked"[^>]*>This version is revoked by its publisher: bad build/);
  assert.match(html, /<option selected value="beta">/);
  // A stale catalog: the installed app's own readiness still shows, the update is off.
  const stale = renderToString(h(CatalogCard, { app: card({ installed, stale: true }), busy: false, actions }));
  assert.match(stale, /data-testid="card-stale"/);
  assert.match(stale, /data-readiness="ready"/);
  assert.match(stale, /data-testid="catalog-update"[^>]*disabled/);
});

function installed(extra = {}) {
  return { version: "1.0.0", previousVersion: null, readiness: "ready", channel: "stable", follows: true, revoked: null, publisher: "same", update: null, ...extra };
}

const offer11 = { version: "1.1.0", channel: "stable", permissionsAdded: ["notes_files"], permissionsRemoved: ["sync"], publisherChanged: false };

test("Apps page offers: only from the catalog the app follows, only when there is something to show", () => {
  const offers = cardOffers({
    apps: [
      card({ appId: "a", installed: installed({ update: offer11 }) }),
      card({ appId: "b", installed: installed({ follows: false, update: offer11 }) }),
      card({ appId: "c", installed: installed() }),
      card({ appId: "d", installed: installed({ revoked: "leaks notes" }) }),
      card({ appId: "e" }),
    ],
  });
  assert.deepEqual([...offers.keys()], ["a", "d"]);
  assert.deepEqual(offers.get("a"), { catalog: "local", channel: "stable", stale: false, update: offer11, revoked: null });
  assert.equal(offers.get("d").revoked, "leaks notes");
});

test("an installed app's card shows Update available with the diff, a publisher change and a revoked release", () => {
  const app = { name: "hello-app", displayName: "Hello", description: "", activeVersion: "1.0.0", versions: ["1.0.0"], enabled: true, trust: "unsigned", readiness: "ready", entries: [] };
  const actions = { open: noop, details: noop, setup: noop, update: noop };
  const render = (o) => renderToString(h(AppCards, { apps: [app], query: "", filter: "all", actions, offers: new Map([["hello-app", o]]) }));
  const plain = renderToString(h(AppCards, { apps: [app], query: "", filter: "all", actions }));
  assert.doesNotMatch(plain, /card-update/);
  let html = render({ catalog: "local", channel: "stable", stale: false, update: offer11, revoked: null });
  assert.match(html, /data-update="1.1.0"/);
  assert.match(html, /Update available: 1.1.0/);
  assert.match(html, /data-grows="true"/);
  assert.match(html, /\+notes_files/);
  assert.match(html, /−sync/);
  assert.match(html, /Review update/);
  assert.doesNotMatch(html, /card-publisher-changed|card-revoked/);
  html = render({ catalog: "local", channel: "stable", stale: false, update: { ...offer11, permissionsAdded: [] }, revoked: null });
  assert.match(html, /data-grows="false"/);
  assert.match(html, />Update</);
  html = render({ catalog: "local", channel: "stable", stale: false, update: { ...offer11, permissionsAdded: [], publisherChanged: true }, revoked: null });
  assert.match(html, /card-publisher-changed/);
  assert.match(html, /data-grows="true"/);
  html = render({ catalog: "local", channel: "stable", stale: true, update: offer11, revoked: "leaks notes" });
  assert.match(html, /card-revoked[^>]*>This version is revoked by its publisher: leaks notes/);
  assert.match(html, /<button[^>]*disabled/);
});

test("a release signed by another key than the installed app's pinned one is a publisher change", () => {
  const t = trustLabel("changed");
  assert.equal(t.label, "Publisher changed");
  assert.equal(t.tone, "bad");
});
