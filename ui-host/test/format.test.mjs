// Unit tests of the host UI's pure helpers, run against the built dist/ (npm test -w ui-host).
import assert from "node:assert/strict";
import { test } from "node:test";

import {
  enabledBadge,
  errorText,
  monogram,
  publisherText,
  readinessBadge,
  setupRoute,
  shownVersion,
  summaryText,
  toHostError,
  trustBadge,
} from "../dist/format.js";

test("unsigned and unknown-key apps are visibly sideloaded", () => {
  assert.equal(trustBadge("trusted").label, "Verified");
  assert.equal(trustBadge("trusted").tone, "good");
  assert.equal(trustBadge("unsigned").label, "Sideloaded · unsigned");
  assert.equal(trustBadge("unsigned").tone, "warn");
  assert.equal(trustBadge("unknown-key").label, "Sideloaded · unknown key");
  assert.equal(trustBadge("unknown-key").tone, "warn");
  assert.equal(trustBadge("something-new").tone, "bad");
});

test("every readiness state has a label", () => {
  const labels = ["ready", "ready-degraded", "needs-setup", "blocked", "disabled"].map(
    (state) => readinessBadge(state).label,
  );
  assert.deepEqual(labels, ["Ready", "Ready · limited", "Needs setup", "Blocked", "Disabled"]);
  assert.equal(readinessBadge("future-state").label, "future-state");
});

test("enabled badge", () => {
  assert.equal(enabledBadge(true).label, "Enabled");
  assert.equal(enabledBadge(false).label, "Disabled");
});

test("shown version prefers the active one", () => {
  assert.equal(shownVersion("1.0.0", ["0.9.0", "1.0.0"]), "1.0.0");
  assert.equal(shownVersion(null, ["0.9.0", "1.1.0"]), "1.1.0");
  assert.equal(shownVersion(null, []), "?");
});

test("monogram", () => {
  assert.equal(monogram("Hello Notes", "hello-app"), "H");
  assert.equal(monogram(null, "ledger"), "L");
  assert.equal(monogram("  ", "x-app"), "X");
  assert.equal(monogram("émoji", "e"), "É");
});

test("errors are shown as {code}: {message}", () => {
  assert.equal(
    errorText({ code: "store.corrupt", message: "bad catalog", details: {} }),
    "store.corrupt: bad catalog",
  );
  assert.equal(errorText("command list_apps not found"), "internal: command list_apps not found");
  assert.equal(errorText(new Error("boom")), "internal: boom");
  assert.equal(errorText(undefined), "internal: unexpected error");
  assert.deepEqual(toHostError({ code: 1, message: "x" }), {
    code: "internal",
    message: "unexpected error",
  });
});

test("summary line", () => {
  assert.equal(summaryText(0), "No apps installed");
  assert.equal(summaryText(1), "1 app installed");
  assert.equal(summaryText(3), "3 apps installed");
});

test("a setup action leads where it is fixed: a model to the Model page, a grant to the permissions", () => {
  assert.deepEqual(setupRoute("a", { key: "model", title: "Set up a model", kind: "model" }), { page: "model" });
  assert.deepEqual(setupRoute("a", { key: "p", title: "Grant p", kind: "grant-permission", target: "p" }), { page: "app", appId: "a", tab: "permissions" });
  assert.deepEqual(setupRoute("a", { key: "s", title: "Bind secret s", kind: "configure-secret", target: "s" }), { page: "app", appId: "a", tab: "overview" });
  assert.deepEqual(setupRoute("a", null), { page: "app", appId: "a", tab: "overview" });
});

test("a publisher is a claim unless a trusted key vouches for it", () => {
  assert.equal(publisherText("Acme", "trusted"), "by Acme (verified)");
  assert.equal(publisherText("Acme", "unsigned"), "by Acme (not verified)");
  assert.equal(publisherText(null, "unsigned"), null);
  assert.equal(publisherText("", "trusted"), "by a trusted publisher");
});
