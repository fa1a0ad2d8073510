// The Browse page (views/browse.tsx) and its pure flow (app/catalog-flow.ts): when an update needs
// the review sheet, the stale notice, the Install button's state, and what a card shows.
import assert from "node:assert/strict";
import { test } from "node:test";

import { h } from "preact";
import { renderToString } from "preact-render-to-string";

import { installState, needsSheet, staleText, trustLabel } from "../build/test/app/catalog-flow.js";
import { CatalogCard } from "../build/test/ui/testing.js";

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
