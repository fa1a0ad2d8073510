// lime.ui in the host UI: deep-link hashes, the command palette's items and filter, and the
// launch flows (open the entry, then `ui_launch`; viewer choice remembered per type) with
// stand-ins for Rust and the relay. Run against build/test/ (node build.mjs --test).
import assert from "node:assert/strict";
import { test } from "node:test";

import { launchInto, openArtifact, pickViewer } from "../build/test/app/launches.js";
import { filterItems, paletteItems } from "../build/test/app/palette.js";
import { parseRoute, routeHash } from "../build/test/router.js";

test("deep links parse and print back; malformed ones fall back to the app list", () => {
  const launch = parseRoute("#/app/standard-conformance/main/reports/42");
  assert.deepEqual(launch, { page: "launch", appId: "standard-conformance", entryKey: "main", route: "/reports/42" });
  assert.equal(routeHash(launch), "#/app/standard-conformance/main/reports/42");
  assert.deepEqual(parseRoute("#/app/a/b"), { page: "launch", appId: "a", entryKey: "b", route: "/" });
  const art = parseRoute("#/artifact/app-1/artifact_1/conformance-report");
  assert.deepEqual(art, { page: "artifact", appId: "app-1", artifactId: "artifact_1", artifactType: "conformance-report" });
  assert.equal(routeHash(art), "#/artifact/app-1/artifact_1/conformance-report");
  for (const bad of ["#/app", "#/app/x", "#/app/%E0%A4%A/e/r", "#/artifact/a/b"]) assert.deepEqual(parseRoute(bad), { page: "apps" }, bad);
  // The route is percent-decoded per segment and passed as text: Rust validates it.
  assert.equal(parseRoute("#/app/a/b/%2F%2Fevil.example").route, "///evil.example");
});

const APPS = [
  { name: "notes", displayName: "Notes", enabled: true, readiness: "ready", entries: [{ key: "main", kind: "page", title: "Main", mountable: true }, { key: "cmd", kind: "command", title: "Cmd", mountable: false }] },
  { name: "off", displayName: "Off", enabled: false, readiness: "ready", entries: [{ key: "main", kind: "page", title: "Main", mountable: true }] },
  { name: "blocked", displayName: "Blocked", enabled: true, readiness: "blocked", entries: [{ key: "main", kind: "page", title: "Main", mountable: true }] },
];

test("the palette lists host pages, ready apps' UI entries, commands with their readiness and concrete routes", () => {
  const items = paletteItems(APPS, {
    commands: [
      { appId: "notes", appTitle: "Notes", entryKey: "cmd", title: "Summarize notes", command: "/summarize", surfaceEntry: "main", status: "ready" },
      { appId: "notes", appTitle: "Notes", entryKey: "cmd2", title: "Needs setup", command: null, surfaceEntry: "main", status: "needs-setup" },
    ],
    routes: [
      { appId: "notes", entryKey: "main", path: "/notes/archive", title: "Archive" },
      { appId: "notes", entryKey: "main", path: "/notes/:id", title: "A note" },
    ],
  });
  const ids = items.map((i) => i.id);
  assert.ok(ids.includes("page:tasks"));
  assert.ok(ids.includes("entry:notes/main"));
  assert.ok(!ids.includes("entry:notes/cmd"), "a command entry is not mounted");
  assert.ok(!ids.some((i) => i.startsWith("entry:off/") || i.startsWith("entry:blocked/")), "disabled and blocked apps offer no entries");
  const cmd = items.find((i) => i.id === "command:notes/cmd");
  assert.deepEqual(cmd.action, { kind: "command", appId: "notes", entryKey: "cmd", command: "/summarize", surfaceEntry: "main" });
  assert.match(items.find((i) => i.id === "command:notes/cmd2").detail, /needs-setup/);
  assert.ok(ids.includes("route:notes/main/notes/archive"));
  assert.ok(!ids.some((i) => i.includes(":id")), "parameter routes are reached by deep links only");
  assert.deepEqual(filterItems(items, "notes arch").map((i) => i.id), ["route:notes/main/notes/archive"]);
  assert.equal(filterItems(items, "zzz").length, 0);
});

function deps(overrides = {}) {
  const log = [];
  const store = new Map();
  const d = {
    log,
    open: async (appId, entryKey) => {
      log.push(["open", appId, entryKey]);
      return `m-${appId}-${entryKey}`;
    },
    launch: async (mountId, launch) => {
      log.push(["launch", mountId, launch]);
      return [{ kind: "post", mountId, message: { type: "ui:launch", payload: launch } }];
    },
    execute: async (out) => log.push(["execute", out.length]),
    viewers: async () => [],
    choose: async () => null,
    remembered: { get: (t) => store.get(t) ?? null, set: (t, v) => store.set(t, v) },
    fail: (e) => log.push(["fail", e.code ?? String(e)]),
    ...overrides,
  };
  return d;
}

test("a launch opens the entry first, then asks Rust, then executes its answer; a refused launch is shown", async () => {
  const d = deps();
  assert.equal(await launchInto(d, "notes", "main", { kind: "route", route: "/notes/archive" }), true);
  assert.deepEqual(d.log.map((l) => l[0]), ["open", "launch", "execute"]);
  const refused = deps({
    launch: async () => {
      throw { code: "ui.launch_refused", message: "no" };
    },
  });
  assert.equal(await launchInto(refused, "notes", "main", { kind: "route", route: "/x" }), false);
  assert.deepEqual(refused.log.at(-1), ["fail", "ui.launch_refused"]);
  const unmounted = deps({ open: async () => null });
  assert.equal(await launchInto(unmounted, "notes", "main", { kind: "route", route: "/x" }), false);
  assert.equal(unmounted.log.length, 0, "nothing launched when the mount failed");
});

const V1 = { appId: "a", appTitle: "A", entryKey: "view", title: "Viewer" };
const V2 = { appId: "b", appTitle: "B", entryKey: "view", title: "Viewer" };

test("viewer choice: the only viewer, else the user's remembered choice, else ask", async () => {
  assert.equal(pickViewer([], null), null);
  assert.equal(pickViewer([V1], null), V1);
  assert.equal(pickViewer([V1, V2], null), "ask");
  assert.equal(pickViewer([V1, V2], "b/view"), V2);
  assert.equal(pickViewer([V1, V2], "gone/view"), "ask");

  let asked = 0;
  const d = deps({
    viewers: async () => [V1, V2],
    choose: async () => {
      asked += 1;
      return V2;
    },
  });
  assert.equal(await openArtifact(d, "owner", "art_1", "report"), true);
  assert.equal(await openArtifact(d, "owner", "art_2", "report"), true);
  assert.equal(asked, 1, "asked once, then remembered");
  const launches = d.log.filter((l) => l[0] === "launch");
  assert.deepEqual(launches[1], ["launch", "m-b-view", { kind: "artifact", artifactId: "art_2", artifactType: "report", ownerAppId: "owner" }]);

  const none = deps();
  assert.equal(await openArtifact(none, "owner", "art_1", "report"), false);
  assert.deepEqual(none.log, [["fail", "ui.no_viewer"]]);
  const cancelled = deps({ viewers: async () => [V1, V2] });
  assert.equal(await openArtifact(cancelled, "owner", "art_1", "report"), false);
  assert.equal(cancelled.remembered.get("report"), null, "a cancelled choice is not remembered");
});
