// Render tests of the host UI's views (preact-render-to-string over build/test/ui/testing.js):
// what the user sees, the stable data-testids, and that package text never becomes markup.
import assert from "node:assert/strict";
import { test } from "node:test";

import { h } from "preact";
import { renderToString } from "preact-render-to-string";

import { AppCards, AuditTable, DevBannerView, ErrorBox, GrantsTable, MODES, Markdown, PlanView, ReviewBody, TabStrip, devBannerKey, devBannersShown, devStatusList, noticeOf } from "../build/test/ui/testing.js";

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
    trust: { state: "unsigned", sideload: true },
    packageHash: "sha256:abc",
    bytes: 2048,
    entries: [{ key: "notes", kind: "page", title: "Notes", readiness: "ready" }],
    files: 3,
    permissions: [
      { key: "notes_storage", scope: "storage", access: "read-write", reason: "Save your notes.", required: true, domains: [], paths: [], change: "added", grant: "asked" },
      { key: "sync", scope: "network", access: "read-write", reason: "Sync", required: false, domains: ["api.example.com"], paths: [], change: "added", grant: "at-first-use" },
    ],
    network: { domains: ["api.example.com"] },
    storage: { declared: true, quota: 1048576, migrations: [{ id: "001_init", path: "storage/migrations/001_init.sql", size: 10, sha256: "x" }] },
    services: [],
    readiness: { status: "ready", reasons: [], warnings: [], setupActions: [] },
    findings: [],
    prunes: [],
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
  assert.match(html, /2.0 KB in 3 files/);
  assert.match(html, /data-key="notes_storage"/);
  assert.match(html, /granted by your consent/);
  assert.match(html, /asked when first used/);
  assert.match(html, />Required</);
  assert.match(html, />Optional</);
  assert.match(html, /Save your notes\./);
  assert.match(html, /data-testid="review-domains">api\.example\.com</);
  assert.match(html, /001_init/);
  assert.match(html, /data-testid="review-needs-consent">Installing grants: notes_storage\./);
  assert.doesNotMatch(html, /review-publisher-change/);
  const trusted = body(review({ trust: { state: "trusted", sideload: false, signer: { keyId: "k1", fingerprint: "ab12 cd34", name: "Acme" } } }));
  assert.doesNotMatch(trusted, /review-trust-warning/);
  assert.match(trusted, /Acme · key k1 · ab12 cd34/);
  for (const state of ["untrusted-signature", "unsigned", "dev"]) {
    assert.match(body(review({ trust: { state, sideload: false } })), /review-trust-warning/, state);
  }
});

test("an update review shows the permission diff; a publisher change needs its own checkbox", () => {
  const html = body(
    review({
      mode: "update",
      fromVersion: "1.0.0",
      publisherChange: { status: "changed", from: { keyId: "k1", name: "Acme" }, to: { keyId: "k2", name: "Evil Corp" }, needsAcceptance: true },
      permissions: [
        { key: "net", scope: "network", required: false, change: "changed", fields: [{ field: "domains", old: ["a.com"], new: ["a.com", "b.com"] }], grant: "dropped" },
        { key: "files", scope: "filesystem", required: true, change: "added", grant: "asked" },
        { key: "notes_storage", scope: "storage", required: true, change: "unchanged", grant: "kept" },
      ],
    }),
  );
  assert.match(html, /data-testid="review-publisher-change"/);
  assert.match(html, /from Acme · key k1 to Evil Corp · key k2/);
  assert.match(html, /data-testid="review-accept-publisher"/);
  assert.match(html, /data-key="net" data-change="changed"/);
  assert.match(html, />Changed</);
  assert.match(html, />New</);
  assert.match(html, /data-field="domains">domains: <span class="diff-old">a\.com<\/span> → <span class="diff-new">a\.com, b\.com</);
  assert.match(html, /stays granted/);
  assert.match(html, /Installed now/);
  assert.match(html, /Planned migrations/);
  assert.match(html, /Updating grants/);
  // A signed continuation needs no acceptance: no checkbox.
  const same = body(review({ mode: "update", publisherChange: { status: "signed", to: { keyId: "k1" }, needsAcceptance: false } }));
  assert.doesNotMatch(same, /review-publisher-change/);
});

test("blockers are listed with their codes", () => {
  const html = body(review({ blockers: [{ code: "compat.requires_unsatisfied", message: "needs AppHost 9" }] }));
  assert.match(html, /data-testid="review-blockers"/);
  assert.match(html, /compat\.requires_unsatisfied/);
  assert.match(html, /update AppHost or choose another version/);
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
    h(GrantsTable, {
      rows: [
        { appId: "a", key: "sync", scope: "network", access: "read-write", required: false, granted: true },
        { appId: "b", key: "files", scope: "filesystem", required: true, granted: false },
      ],
      busy: false,
      onToggle: noop,
    }),
  );
  assert.match(grants, /data-testid="grant-row" data-app-id="a" data-key="sync" data-granted="true"/);
  assert.match(grants, /network · read-write/);
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
  const status = (t) => ({ mounted: t.appId === "a", prompts: t.appId === "a" ? 1 : 0, error: t.appId === "b" ? "mount.not_ready: x" : null, dev: t.appId === "b" });
  const tabs = renderToString(h(TabStrip, { shown: true, state, status, select: noop, close: noop }));
  assert.equal(tabs.match(/data-testid="app-tab"/g).length, 2, "panels are not tabs");
  // DEV on the dev app's tab only (b), as on its card.
  assert.equal(tabs.match(/data-testid="tab-dev"/g).length, 1);
  assert.match(tabs, /data-app-id="b"[^>]*>B<span class="badge dev-badge badge--warn"[^>]*data-testid="tab-dev">DEV</);
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

test("audit rows show the call, decision and reason of capability calls", () => {
  const html = renderToString(
    h(AuditTable, {
      rows: [
        { id: 7, at: "2026-11-23T18:00:00Z", action: "capability.call", app: "notes", version: "1.0.0", details: { capability: "lime.storage", method: "set", decision: "deny", reason: "not-granted" } },
        { id: 6, at: "2026-11-23T17:00:00Z", action: "install", app: "notes", version: "1.0.0", details: null },
      ],
    }),
  );
  assert.match(html, /data-id="7" data-action="capability.call" data-decision="deny"/);
  assert.match(html, /lime\.storage\.set/);
  assert.match(html, /not-granted/);
  assert.match(html, /data-id="6" data-action="install" data-decision>/);
});

test("an uninstall plan says what goes and what stays", () => {
  const keep = renderToString(
    h(PlanView, {
      plan: {
        app: "notes",
        mode: "keep-data",
        versions: ["1.0.0"],
        rows: [{ table: "grants", rows: 2, what: "permission grants" }],
        blobBytesRemoved: 2048,
        dataFilesRemoved: [],
        dataFilesKept: [{ path: "storage.sqlite" }],
        dataDir: "/d/apps/notes",
        retained: ["audit log entries"],
      },
    }),
  );
  assert.match(keep, /versions 1\.0\.0/);
  assert.match(keep, /2 × permission grants/);
  assert.match(keep, /2\.0 KB of package files/);
  assert.match(keep, /1 data files in \/d\/apps\/notes/);
  assert.match(keep, /audit log entries/);
  const del = renderToString(h(PlanView, { plan: { mode: "delete-data", dataFilesRemoved: [{}, {}], dataFilesKept: [], dataBytes: 10, retained: [] } }));
  assert.match(del, /2 data files \(10 B\)/);
  assert.match(del, /<li>nothing<\/li>/);
});

test("a dev install is marked DEV on its card", () => {
  const html = renderToString(h(AppCards, { apps: [app(5, { dev: true }), app(6)], query: "", filter: "all", actions }));
  assert.equal(html.match(/data-testid="dev-badge"/g).length, 1);
  assert.match(html, /data-app-name="app-5"[^>]*data-dev="true"/);
});

test("model page: the key is write-only, the test result shows latency, errors carry their code", async () => {
  const { ModelView, keyText } = await import("../build/test/ui/testing.js");
  const status = { status: "ready", baseUrl: "http://127.0.0.1:9/v1", model: "m-1", apiKey: { set: true, location: "encrypted file", present: true } };
  const base = { status, tested: null, error: null, busy: false, baseUrl: status.baseUrl, model: "m-1", apiKey: "", onBaseUrl: noop, onModel: noop, onApiKey: noop, onSave: noop, onTest: noop };
  const html = renderToString(h(ModelView, base));
  assert.match(html, /data-testid="model-page"/);
  assert.match(html, /data-testid="model-api-key"[^>]*|type="password"/);
  assert.match(html, /type="password"/);
  assert.match(html, /set \(kept in the encrypted file\)/);
  assert.doesNotMatch(html, /model-test-result/);
  const tested = renderToString(h(ModelView, { ...base, tested: { ok: true, baseUrl: status.baseUrl, model: "m-1", latencyMs: 42, firstEventMs: 7, finishReason: "stop" } }));
  assert.match(tested, /data-testid="model-test-result"[^>]*>m-1 answered in 42 ms/);
  const failed = renderToString(h(ModelView, { ...base, error: { code: "provider.unreachable", message: "connection refused" } }));
  assert.match(failed, /data-testid="model-error"[^>]*data-code="provider.unreachable"|data-code="provider.unreachable"/);
  assert.equal(keyText(null), "not set");
  assert.equal(keyText({ ...status, apiKey: { set: true, present: false } }), "set, but missing from the secret store: enter it again");
  // Test connection needs a configured model.
  const unset = renderToString(h(ModelView, { ...base, status: { status: "needs-setup", baseUrl: null, model: null, apiKey: { set: false } } }));
  assert.match(unset, /<button[^>]*disabled[^>]*data-testid="model-test"|data-testid="model-test"[^>]*disabled/);
});

test("the dev banner shows a held change's diff with Approve and Dismiss, keyed by its digest", () => {
  const held = {
    appId: "hello-app",
    folder: "/src/hello",
    status: "awaiting-consent",
    version: "1.0.0+dev.1",
    at: "2026-11-23T00:00:00Z",
    findings: [],
    pending: [
      { key: "notes_files", change: "added", required: true, scope: "files", access: "read", reason: "Import notes", domains: [], paths: [], grant: "asked" },
      { key: "sync", change: "changed", required: false, scope: "network", access: "read-write", reason: "Sync", domains: ["api.example.com"], paths: [], grant: "at-first-use", fields: [{ field: "domains", old: [], new: ["api.example.com"] }] },
    ],
    pendingDigest: "d1",
    updates: 1,
  };
  const ok = { ...held, status: "updated", pending: undefined, pendingDigest: undefined };
  const actions = { approve: noop, dismiss: noop };
  const html = renderToString(h(DevBannerView, { statuses: [held, ok], dismissed: new Set(), busy: null, error: null, actions }));
  assert.equal(html.match(/data-testid="dev-banner"/g).length, 1, "only the held change has a banner");
  assert.match(html, /data-status="awaiting-consent"/);
  assert.match(html, /data-key="notes_files" data-change="added"/);
  assert.match(html, /domains api\.example\.com/);
  assert.match(html, /\(domains: {2}→ api\.example\.com\)/);
  assert.match(html, /data-testid="dev-approve"/);
  assert.match(html, /data-testid="dev-dismiss"/);
  assert.match(html, /v1\.0\.0\+dev\.1 keeps running/);
  // Dismissed: gone; the same app holding another change (new digest) shows again.
  const gone = renderToString(h(DevBannerView, { statuses: [held], dismissed: new Set([devBannerKey(held)]), busy: null, error: null, actions }));
  assert.equal(gone, "");
  assert.equal(devBannersShown([{ ...held, pendingDigest: "d2" }], new Set([devBannerKey(held)])).length, 1);
  // Busy: approve is disabled while a consent runs.
  const busy = renderToString(h(DevBannerView, { statuses: [held], dismissed: new Set(), busy: "hello-app", error: null, actions }));
  assert.match(busy, /disabled[^>]*data-testid="dev-approve"|data-testid="dev-approve"[^>]*disabled/);
  // A stale consent shows its code.
  const stale = renderToString(h(DevBannerView, { statuses: [held], dismissed: new Set(), busy: null, error: { code: "dev.consent_stale", message: "not the one shown", details: {} }, actions }));
  assert.match(stale, /data-code="dev\.consent_stale"/);
});

test("the uninstall chooser offers the standard's four states; disable's plan hides entries and keeps everything", () => {
  assert.deepEqual(MODES.map((m) => m.mode), ["disable", "keep-data", "delete-data", "export"]);
  const html = renderToString(
    h(PlanView, {
      plan: {
        app: "notes",
        mode: "disable",
        entriesHidden: ["notes", "settings"],
        versionsKept: ["1.0.0"],
        dataDir: "/d/apps/notes",
        dataFileCount: 2,
        dataBytes: 2048,
        retained: ["the package (versions 1.0.0)", "the app's data in /d/apps/notes"],
        alreadyDisabled: false,
      },
    }),
  );
  assert.match(html, /data-mode="disable"/);
  assert.match(html, /entry notes/);
  assert.match(html, /the package \(versions 1\.0\.0\)/);
  assert.match(html, /2 data files \(2\.0 KB\)/);
  assert.match(html, /Removes: nothing\./);
});

test("a card's setup action names its kind; its publisher says whether a key vouches for it", () => {
  const model = app(7, {
    readiness: "ready-degraded",
    publisher: "Acme",
    readinessReasons: ["lime.agent needs a model: none is set up in AppHost"],
    setupActions: [{ key: "model", title: "Set up a model", kind: "model" }],
  });
  const html = renderToString(h(AppCards, { apps: [model, app(8, { publisher: "Beta" })], query: "", filter: "all", actions }));
  assert.match(html, /data-setup-kind="model"[^>]*data-testid="setup-action">Set up a model</);
  assert.match(html, /data-testid="app-publisher" data-verified="false">by Acme \(not verified\)</);
  assert.match(html, /data-testid="app-publisher" data-verified="true">by Beta \(verified\)</);
  const icon = renderToString(h(AppCards, { apps: [app(9, { icon: "data:image/png;base64,iVBORw0KGgo=" }), app(10)], query: "", filter: "all", actions }));
  assert.match(icon, /<img class="app-icon" src="data:image\/png;base64,iVBORw0KGgo="/);
  assert.match(icon, /<div class="app-icon" aria-hidden="true">A<\/div>/, "no icon: the initial");
});

test("dev_status answered by an older host or a stub (null) gives no banner, never a crash", () => {
  assert.deepEqual(devStatusList(null), []);
  assert.deepEqual(devStatusList({ code: "api.unknown_command" }), []);
  assert.deepEqual(devStatusList([null, { appId: "a" }]), [{ appId: "a" }]);
});

test("the shared data table: column headers, row headers, row attributes, text cells; an empty one says so", async () => {
  const { DataTable, GrantToggle, KeysTable } = await import("../build/test/ui/testing.js");
  const columns = [
    { label: "Name", rowHeader: true, cell: (r) => r.name },
    { label: "Size", cell: (r) => String(r.size) },
  ];
  const rows = [{ name: "<b>a</b>", size: 1 }, { name: "b", size: 2 }];
  const html = renderToString(h(DataTable, { testid: "t", columns, rows, rowKey: (r) => r.name, rowAttrs: (r) => ({ "data-name": r.name, "data-size": r.size }), empty: "Nothing." }));
  assert.match(html, /^<table class="table" data-testid="t"><thead><tr><th scope="col">Name<\/th><th scope="col">Size<\/th><\/tr><\/thead><tbody>/);
  assert.match(html, /<tr data-name="b" data-size="2"><th scope="row">b<\/th><td>2<\/td><\/tr>/);
  assert.match(html, /<th scope="row">&lt;b>a&lt;\/b><\/th>/, "cell text stays text");
  assert.equal(renderToString(h(DataTable, { testid: "t", columns, rows: [], rowKey: (r) => r.name, empty: "Nothing." })), '<p class="empty-note">Nothing.</p>');
  const toggle = renderToString(h(GrantToggle, { granted: true, testid: "permission", label: "sync", disabled: false, onToggle: noop }));
  assert.match(toggle, /data-testid="permission-revoke"/);
  assert.match(toggle, /aria-label="Revoke sync"/);
  assert.match(toggle, />Revoke<\/button>/);
  const keys = renderToString(h(KeysTable, { keys: [{ keyId: "k1", name: "Acme", fingerprint: "ab12", publicKey: "pk" }], onRemove: noop }));
  assert.match(keys, /data-testid="trusted-keys"/);
  assert.match(keys, /<tr data-key-id="k1"><td>Acme<\/td><td><code>k1<\/code><\/td><td><code class="hash">ab12<\/code><\/td>/);
  assert.match(keys, /aria-label="Remove key Acme"/);
  assert.match(renderToString(h(KeysTable, { keys: [], onRemove: noop })), /No trusted publisher keys/);
});

test("the shared filter form: inline labelled fields in form.list-tools (the audit filter, the path install)", async () => {
  const { FilterBar, FilterSelect, FilterText, PathInstall, appOptions } = await import("../build/test/ui/testing.js");
  const html = renderToString(
    h(FilterBar, { onSubmit: noop }, [
      h(FilterSelect, { label: "App", value: "", options: appOptions(["notes", "<x>"], "All apps"), onChange: noop }),
      h(FilterText, { label: "Capability", value: "lime", placeholder: "lime.storage", onInput: noop }),
    ]),
  );
  assert.match(html, /^<form class="list-tools"><label class="field field--inline"><span>App<\/span><select><option selected value>All apps<\/option><option value="notes">notes<\/option><option value="&lt;x>">&lt;x><\/option><\/select><\/label>/);
  assert.match(html, /<label class="field field--inline"><span>Capability<\/span><input value="lime" placeholder="lime.storage"\/><\/label><\/form>$/);
  const path = renderToString(h(PathInstall, { reviewPath: noop }));
  assert.match(path, /<details class="path-install"><summary>Install from a folder or file path on this computer<\/summary><form class="list-tools">/);
  assert.match(path, /<span>Path<\/span><input value data-testid="install-path"\/>/);
  assert.match(path, /<button type="submit" class="button">Review<\/button>/);
});

test("the shell header: nav links with test ids, the current page, the running count, the summary", async () => {
  const { ShellHeader } = await import("../build/test/ui/testing.js");
  const html = renderToString(h(ShellHeader, { page: "app", pageTabs: 2, summary: "3 apps installed" }));
  assert.match(html, /<a class="skip-link" href="#content">Skip to content<\/a>/);
  assert.match(html, /<a href="#\/apps" data-testid="nav-apps" aria-current="page">Apps<\/a>/, "an app's page is under Apps");
  assert.match(html, /data-testid="nav-running">Running<span class="count"> \(2\)<\/span>/);
  assert.match(html, /<p id="summary" class="summary" aria-live="polite">3 apps installed<\/p>/);
  assert.doesNotMatch(renderToString(h(ShellHeader, { page: "grants", pageTabs: 0, summary: "" })), /class="count"/);
});

test("update notice: only an available update from the signed feed is shown", () => {
  const notice = { version: "9.0.0", notes: "n", url: "https://apphost.invalid/download" };
  assert.deepEqual(noticeOf({ current: "0.1.0", state: "available", notice }), notice);
  assert.equal(noticeOf({ current: "0.1.0", state: "upToDate" }), null);
  assert.equal(noticeOf({ current: "0.1.0", state: "disabled" }), null);
  assert.equal(noticeOf({ current: "0.1.0", state: "failed", error: { code: "update.bad_signature", message: "m" }, notice }), null);
  assert.equal(noticeOf({ current: "0.1.0", state: "available" }), null);
  assert.equal(noticeOf(null), null);
});
