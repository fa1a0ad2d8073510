// Unit tests of the app center's pure modules (router, markdown, tabs, theme, list filter),
// run against build/test/ (node build.mjs --test).
import assert from "node:assert/strict";
import { test } from "node:test";

import {
  changeLabel,
  errorHelp,
  filterApps,
  formatBytes,
  networkDomains,
  percent,
  permissionId,
  readinessReasons,
  reviewTrustBadge,
  signerText,
  stringList,
  valueText,
} from "../build/test/format.js";
import { MAX_README_CHARS, parseInline, parseMarkdown } from "../build/test/markdown.js";
import { parseRoute, routeHash } from "../build/test/router.js";
import { closeApp, closeTab, keepInstalled, MAX_SAVED_TABS, openTab, restoreTabs, saveTabs, tabKey } from "../build/test/tabs.js";
import { effectiveTheme, parseThemeChoice } from "../build/test/theme.js";

test("routes: every page round-trips; unknown hashes fall back to the list", () => {
  const routes = [
    { page: "apps" },
    { page: "app", appId: "hello-app", tab: "overview" },
    { page: "app", appId: "a b/c", tab: "permissions" },
    { page: "app", appId: "x", tab: "danger" },
    { page: "running" },
    { page: "grants" },
    { page: "diagnostics" },
    { page: "settings" },
    { page: "model" },
    { page: "browse" },
  ];
  for (const r of routes) {
    assert.deepEqual(parseRoute(routeHash(r)), r, routeHash(r));
  }
  assert.deepEqual(parseRoute(""), { page: "apps" });
  assert.deepEqual(parseRoute("#/nope"), { page: "apps" });
  assert.deepEqual(parseRoute("#/apps/hello-app/bogus"), { page: "app", appId: "hello-app", tab: "overview" });
  // A malformed escape is not thrown at the user.
  assert.deepEqual(parseRoute("#/apps/%E0%A4%A"), { page: "apps" });
});

test("markdown: structure is read, HTML stays literal text", () => {
  const blocks = parseMarkdown("# Title\n\nHello **bold** and `code`.\n\n- one\n- two\n\n```\n<b>x</b>\n```\n\n<script>alert(1)</script>\n> quoted");
  assert.deepEqual(blocks[0], { kind: "heading", level: 1, inlines: [{ kind: "text", text: "Title" }] });
  assert.deepEqual(blocks[1].inlines.map((i) => i.kind), ["text", "strong", "text", "code", "text"]);
  assert.equal(blocks[2].kind, "list");
  assert.equal(blocks[2].items.length, 2);
  assert.deepEqual(blocks[3], { kind: "code", text: "<b>x</b>" });
  assert.deepEqual(blocks[4], { kind: "paragraph", inlines: [{ kind: "text", text: "<script>alert(1)</script>" }] });
  assert.equal(blocks[5].kind, "quote");
  assert.deepEqual(parseInline("[site](javascript:alert(1))"), [
    { kind: "link", text: "site", url: "javascript:alert(1" },
    { kind: "text", text: ")" },
  ]);
  // Bounded: a huge readme is cut, not parsed whole.
  const huge = parseMarkdown("x".repeat(MAX_README_CHARS * 3));
  assert.equal(huge[0].inlines[0].text.length, MAX_README_CHARS);
});

test("tabs: open focuses, panels do not steal focus, close picks the left neighbour", () => {
  let s = { tabs: [], active: null };
  s = openTab(s, { appId: "a", entryKey: "main", kind: "page", title: "A" });
  s = openTab(s, { appId: "b", entryKey: "main", kind: "page", title: "B" });
  s = openTab(s, { appId: "b", entryKey: "side", kind: "panel", title: "B side" });
  assert.equal(s.active, "b/main");
  assert.equal(s.tabs.length, 3);
  s = openTab(s, { appId: "a", entryKey: "main", kind: "page", title: "A again" });
  assert.equal(s.tabs.length, 3, "reopening focuses the tab instead of adding one");
  assert.equal(s.active, "a/main");
  s = { ...s, active: "b/main" };
  s = closeTab(s, "b/main");
  assert.equal(s.active, "a/main");
  s = closeApp(s, "a");
  assert.equal(s.active, null);
  assert.deepEqual(s.tabs.map(tabKey), ["b/side"]);
  assert.equal(closeTab(s, "nope"), s);
});

test("tabs survive a restart; malformed saved state is dropped, bounded", () => {
  const s = { tabs: [{ appId: "a", entryKey: "main", kind: "page", title: "A" }], active: "a/main" };
  assert.deepEqual(restoreTabs(saveTabs(s)), s);
  for (const bad of [null, "", "{", "[]", "null", '{"tabs":{}}', '{"tabs":[1,null,{"appId":1}]}', "x".repeat(200_000)]) {
    assert.deepEqual(restoreTabs(bad), { tabs: [], active: null }, String(bad).slice(0, 20));
  }
  const many = { tabs: Array.from({ length: 100 }, (_, i) => ({ appId: `a${i}`, entryKey: "e", kind: "page", title: "t" })), active: "zzz" };
  const restored = restoreTabs(JSON.stringify(many));
  assert.equal(restored.tabs.length, MAX_SAVED_TABS);
  assert.equal(restored.active, "a0/e", "an unknown active tab falls back to the first page");
  const dup = restoreTabs(JSON.stringify({ tabs: [s.tabs[0], s.tabs[0]], active: "a/main" }));
  assert.equal(dup.tabs.length, 1);
});

test("theme: system follows the preference; unknown choices are system", () => {
  assert.equal(effectiveTheme("system", true), "dark");
  assert.equal(effectiveTheme("system", false), "light");
  assert.equal(effectiveTheme("light", true), "light");
  assert.equal(effectiveTheme("dark", false), "dark");
  assert.equal(parseThemeChoice("dark"), "dark");
  assert.equal(parseThemeChoice("purple"), "system");
  assert.equal(parseThemeChoice(null), "system");
});

test("search and filter over the list", () => {
  const apps = [
    { name: "notes", displayName: "Notes", description: "Write things", readiness: "ready", enabled: true, trust: "trusted", publisher: "Acme" },
    { name: "ledger", displayName: null, description: "Money", readiness: "needs-setup", enabled: true, trust: "unsigned" },
    { name: "old", displayName: "Old", description: "", readiness: "disabled", enabled: false, trust: "trusted" },
  ];
  const names = (q, f) => filterApps(apps, q, f).map((a) => a.name);
  assert.deepEqual(names("", "all"), ["notes", "ledger", "old"]);
  assert.deepEqual(names("acme", "all"), ["notes"]);
  assert.deepEqual(names("  MONEY ", "all"), ["ledger"]);
  assert.deepEqual(names("", "ready"), ["notes"]);
  assert.deepEqual(names("", "attention"), ["ledger"]);
  assert.deepEqual(names("", "disabled"), ["old"]);
  assert.deepEqual(names("", "sideloaded"), ["ledger"]);
});

test("sizes, progress, trust and change labels, and what to do on failure", () => {
  assert.equal(formatBytes(0), "0 B");
  assert.equal(formatBytes(1536), "1.5 KB");
  assert.equal(formatBytes(5 * 1024 * 1024), "5.0 MB");
  assert.equal(formatBytes(-1), "?");
  assert.equal(percent(50, 200), 25);
  assert.equal(percent(300, 200), 100);
  assert.equal(percent(1, 0), 0);
  for (const s of ["untrusted-signature", "unsigned", "dev"]) {
    assert.equal(reviewTrustBadge(s).tone, "warn", s);
  }
  assert.equal(reviewTrustBadge("trusted").tone, "good");
  assert.equal(changeLabel("changed").tone, "warn");
  assert.equal(changeLabel("removed").tone, "muted");
  assert.equal(changeLabel("added").tone, "warn");
  assert.equal(changeLabel(undefined), null);
  assert.match(errorHelp("verify.untrusted_key"), /Trusted keys/);
  assert.match(errorHelp("archive.path_traversal"), /damaged or unsafe/);
  assert.match(errorHelp("totally.new_code"), /diagnostics bundle/);
});

test("manifest values, permission ids, readiness reasons and signers in words", () => {
  assert.equal(valueText("x"), "x");
  assert.equal(valueText(["a", "b"]), "a, b");
  assert.equal(valueText(null), "");
  assert.equal(valueText({ a: 1 }), '{"a":1}');
  assert.deepEqual(stringList(["a", 1, "b"]), ["a", "b"]);
  assert.deepEqual(stringList("a"), []);
  assert.equal(permissionId({ key: "notes_storage", scope: "storage" }), "notes_storage");
  assert.equal(permissionId({ scope: "storage" }), "storage");
  // A review's reasons, or a full readiness report's blockers then warnings.
  assert.deepEqual(readinessReasons({ reasons: ["r"], blockers: ["b"] }), ["r"]);
  assert.deepEqual(readinessReasons({ status: "needs-setup", blockers: ["b"], warnings: ["w"] }), ["b", "w"]);
  assert.deepEqual(readinessReasons(undefined), []);
  assert.equal(signerText({ name: "Acme", keyId: "k1", fingerprint: "ab12" }), "Acme · key k1 · ab12");
  assert.equal(signerText(null), "unsigned");
  assert.equal(signerText({ keyId: null, fingerprint: null }), "unsigned");
});

test("restored tabs of apps that are not installed are dropped", () => {
  const s = {
    tabs: [
      { appId: "a", entryKey: "main", kind: "page", title: "A" },
      { appId: "gone", entryKey: "main", kind: "page", title: "Gone" },
      { appId: "gone", entryKey: "side", kind: "panel", title: "Gone side" },
    ],
    active: "gone/main",
  };
  const kept = keepInstalled(s, new Set(["a"]));
  assert.deepEqual(kept.tabs.map(tabKey), ["a/main"]);
  assert.equal(kept.active, "a/main");
  assert.equal(keepInstalled(kept, new Set(["a"])), kept, "nothing to drop: the same state");
});

test("network domains: the projection's objects are shown in words, optional ones say so", () => {
  assert.deepEqual(
    networkDomains([
      { domain: "notes.example.com", permission: "sync_notes", required: false },
      { domain: "api.example.com", permission: "api", required: true },
      "plain.example.org",
      { nope: 1 },
      7,
    ]),
    ["notes.example.com (optional via sync_notes)", "api.example.com (via api)", "plain.example.org"],
  );
  assert.deepEqual(networkDomains(undefined), []);
});
