// Render tests of the host UI's views (preact-render-to-string over build/test/ui/testing.js):
// what the user sees, the stable data-testids, and that package text never becomes markup.
import assert from "node:assert/strict";
import { test } from "node:test";

import { h } from "preact";
import { renderToString } from "preact-render-to-string";

import { AppCards, ErrorBox, GrantsTable, Markdown, ReviewBody, TabStrip } from "../build/test/ui/testing.js";

const noop = () => undefined;
const actions = { open: noop, details: noop, setup: noop };

function app(i, extra = {}) {
  return {
    name: `app-${i}`,
    displayName: `App ${i}`,
    description: `Description of app ${i}`,
    activeVersion: "1.0.0",
    versions: ["1.0.0"],
    enabled: true,
    trust: i % 2 === 0 ? "trusted" : "unsigned",
    readiness: "ready",
    entries: [{ key: "main", kind: "page", title: "Main", mountable: true }],
    ...extra,
  };
}

function review(extra = {}) {
  return {
    reviewId: "r1",
    mode: "install",
    app: { id: "hello-app", name: "Hello Notes", version: "1.0.0", description: "Notes", publisher: "Acme" },
    trust: { state: "sideload" },
    packageHash: "sha256:abc",
    bytes: 2048,
    entries: [{ key: "notes", kind: "page", title: "Notes", readiness: "ready" }],
    permissions: [
      { scope: "notes_storage", access: "read-write", reason: "Save your notes.", required: true, domains: [], paths: [] },
      { scope: "net", access: "fetch", reason: "Sync", required: false, domains: ["api.example.com"], paths: [] },
    ],
    network: { domains: ["api.example.com"] },
    storage: { quota: 1048576, tables: ["notes"], migrations: [{ id: "001_init", sha256: "x" }] },
    services: [],
    readiness: { status: "ready", reasons: [], setupActions: [] },
    blockers: [],
    existingData: false,
    needsConsent: ["notes_storage"],
    ...extra,
  };
}

const body = (r, accept = false) =>
  renderToString(h(ReviewBody, { review: r, acceptPublisher: accept, setAcceptPublisher: noop, reattach: false, setReattach: noop }));

test("app cards keep the e2e selectors and the stable test ids", () => {
  const html = renderToString(h(AppCards, { apps: [app(1)], query: "", filter: "all", actions }));
  assert.match(html, /<ul id="app-list"/);
  assert.match(html, /<li class="app-row app-card" data-testid="app-card" data-app-name="app-1" data-trust="unsigned"/);
  assert.match(html, /class="app-display-name"[^>]*>App 1</);
  assert.match(html, /class="app-version" data-version="1.0.0"/);
  assert.match(html, /class="badge trust-badge badge--warn"[^>]*data-trust="unsigned"[^>]*>Sideloaded · unsigned</);
  assert.match(html, /class="badge readiness-badge badge--good"/);
  assert.match(html, /class="button open-entry" data-entry-key="main"/);
});

test("a card that needs setup says why in words and offers the setup action", () => {
  const setup = app(2, {
    readiness: "needs-setup",
    readinessReasons: ["The secret OPENAI_KEY is not bound."],
    setupActions: [{ key: "secret:OPENAI_KEY", title: "Bind the secret OPENAI_KEY", kind: "secret" }],
  });
  const html = renderToString(h(AppCards, { apps: [setup], query: "", filter: "all", actions }));
  assert.match(html, /data-testid="readiness-reason">The secret OPENAI_KEY is not bound\.</);
  assert.match(html, /data-testid="setup-action">Bind the secret OPENAI_KEY</);
  const plain = renderToString(h(AppCards, { apps: [app(3, { readiness: "blocked" })], query: "", filter: "all", actions }));
  assert.match(plain, /A requirement is not met: it cannot open\./);
  assert.match(plain, /data-testid="setup-action">Set up</);
});

test("package text is escaped everywhere, never markup", () => {
  const evil = app(4, { displayName: '<img src=x onerror="alert(1)">', description: "<script>alert(2)</script>", icon: "https://evil.example/x.png" });
  const html = renderToString(h(AppCards, { apps: [evil], query: "", filter: "all", actions }));
  assert.doesNotMatch(html, /<img src=x/);
  assert.doesNotMatch(html, /<script>/);
  assert.match(html, /&lt;script>alert\(2\)&lt;\/script>/);
  assert.doesNotMatch(html, /evil\.example/, "a remote icon is never fetched");
  const md = renderToString(h(Markdown, { source: '# Hi\n<iframe src="x"></iframe>\n[click](javascript:alert(1))' }));
  assert.doesNotMatch(md, /<iframe/);
  assert.doesNotMatch(md, /href=/);
  assert.match(md, /&lt;iframe/);
});

test("500 cards render, and the render is timed", () => {
  const apps = Array.from({ length: 500 }, (_, i) => app(i));
  const start = performance.now();
  const html = renderToString(h(AppCards, { apps, query: "", filter: "all", actions }));
  const ms = performance.now() - start;
  assert.equal(html.match(/data-testid="app-card"/g).length, 500);
  console.log(`# 500 app cards rendered to HTML in ${ms.toFixed(1)} ms`);
  assert.ok(ms < 2000, `500 cards took ${ms} ms`);
  const filtered = renderToString(h(AppCards, { apps, query: "App 49", filter: "all", actions }));
  assert.match(filtered, /11 of 500 apps/);
});

test("the review sheet shows trust, hash, permissions, domains, storage and what consent grants", () => {
  const html = body(review());
  assert.match(html, /data-testid="review-trust-warning"/, "a sideload is a warning");
  assert.match(html, /sha256:abc/);
  assert.match(html, /2.0 KB/);
  assert.match(html, /data-scope="notes_storage"/);
  assert.match(html, />Required</);
  assert.match(html, />Optional</);
  assert.match(html, /Save your notes\./);
  assert.match(html, /data-testid="review-domains">api\.example\.com</);
  assert.match(html, /001_init/);
  assert.match(html, /data-testid="review-needs-consent">Installing grants: notes_storage\./);
  assert.doesNotMatch(html, /review-publisher-change/);
  const trusted = body(review({ trust: { state: "trusted", signer: { keyId: "k1", fingerprint: "SHA256:ff" } } }));
  assert.doesNotMatch(trusted, /review-trust-warning/);
  assert.match(trusted, /SHA256:ff/);
});

test("an update review shows the permission diff; a publisher change needs its own checkbox", () => {
  const html = body(
    review({
      mode: "update",
      publisherChange: { from: "Acme", to: "Evil Corp" },
      permissions: [
        { scope: "net", required: false, change: "widened", old: ["a.com"], new: ["a.com", "b.com"] },
        { scope: "files", required: true, change: "added" },
        { scope: "notes_storage", required: true, change: "unchanged" },
      ],
    }),
  );
  assert.match(html, /data-testid="review-publisher-change"/);
  assert.match(html, /from Acme to Evil Corp/);
  assert.match(html, /data-testid="review-accept-publisher"/);
  assert.match(html, /data-change="widened"/);
  assert.match(html, />Widened</);
  assert.match(html, />New</);
  assert.match(html, /was \[&quot;a\.com&quot;\]/);
  assert.match(html, /Planned migrations/);
  assert.match(html, /Updating grants/);
});

test("blockers are listed with their codes", () => {
  const html = body(review({ blockers: [{ code: "compat.requires_unsatisfied", message: "needs AppHost 9" }] }));
  assert.match(html, /data-testid="review-blockers"/);
  assert.match(html, /compat\.requires_unsatisfied/);
});

test("a failure shows code, message and what to do", () => {
  const html = renderToString(h(ErrorBox, { error: { code: "verify.untrusted_key", message: "key k1 is not trusted" } }));
  assert.match(html, /data-code="verify.untrusted_key"/);
  assert.match(html, /key k1 is not trusted/);
  assert.match(html, /Settings → Trusted keys/);
  assert.match(renderToString(h(ErrorBox, { error: new Error("boom") })), /internal/);
});

test("grants rows and tabs carry their test ids; prompts and errors show on the tab", () => {
  const grants = renderToString(
    h(GrantsTable, { rows: [{ appId: "a", scope: "net", granted: true }, { appId: "b", scope: "fs", granted: false }], busy: false, onToggle: noop }),
  );
  assert.match(grants, /data-testid="grant-row" data-app-id="a" data-scope="net" data-granted="true"/);
  assert.match(grants, /data-testid="grant-revoke"/);
  assert.match(grants, /data-testid="grant-grant"/);
  const state = {
    tabs: [
      { appId: "a", entryKey: "main", kind: "page", title: "A" },
      { appId: "b", entryKey: "main", kind: "page", title: "B" },
      { appId: "b", entryKey: "side", kind: "panel", title: "B side" },
    ],
    active: "a/main",
  };
  const status = (t) => ({ mounted: t.appId === "a", prompts: t.appId === "a" ? 1 : 0, error: t.appId === "b" ? "mount.not_ready: x" : null });
  const tabs = renderToString(h(TabStrip, { shown: true, state, status, select: noop, close: noop }));
  assert.equal(tabs.match(/data-testid="app-tab"/g).length, 2, "panels are not tabs");
  assert.match(tabs, /data-app-id="a" data-entry-key="main" data-state="mounted" aria-current="page"/);
  assert.match(tabs, /data-testid="tab-prompt"/);
  assert.match(tabs, /data-state="error"/);
  assert.match(tabs, /data-testid="tab-error"/);
});

test("a limit renders the first cards only, and the count still says how many match", () => {
  const apps = Array.from({ length: 500 }, (_, i) => app(i));
  const html = renderToString(h(AppCards, { apps, query: "", filter: "all", actions, limit: 80 }));
  assert.equal(html.match(/data-testid="app-card"/g).length, 80);
  assert.match(html, />500 apps</);
});
