// Unit tests of the shell's pure logic (ui-host/src/app/): the mount controller's lifecycle with
// stand-ins for Rust and the relay, the `next_events` loop and its dispatch, the review flow's
// decisions, the summary/state/tab-status helpers. Run against build/test/ (node build.mjs --test).
import assert from "node:assert/strict";
import { test } from "node:test";

import { EVENTS_RETRY_MS, EVENTS_WAIT_MS, handleHostEvent, runEventLoop } from "../build/test/app/host-events.js";
import { endedNotice, MountController } from "../build/test/app/mount-controller.js";
import { afterInstallRoute, installedNotice, installOptions, reviewToCancel } from "../build/test/app/review-flow.js";
import { countPrompt, devAppNames, isMissingCommand, ListMemo, loadState, summaryLine, tabStatus } from "../build/test/app/shell-state.js";

const APPS = [
  { name: "notes", displayName: "Notes", entries: [{ key: "main", kind: "page", title: "Main" }, { key: "side", kind: "panel", title: "Side" }] },
  { name: "todo", displayName: "Todo", entries: [{ key: "main", kind: "page", title: "List" }] },
];

/** A controller over stand-ins; `log` records every call to Rust, the relay and the page in order. */
function harness({ tabs = { tabs: [], active: null }, page = "apps", mountEntry } = {}) {
  const log = [];
  let seq = 0;
  const h = {
    log,
    page,
    notices: [],
    failures: [],
    deps: {
      mountEntry:
        mountEntry ??
        (async (appId, entryKey) => {
          log.push(["mount_entry", `${appId}/${entryKey}`]);
          return { mountId: `m${++seq}`, appId, entryKey, entryKind: "page" };
        }),
      unmount: async (mountId) => log.push(["unmount", mountId]),
      attach: (mount, title, kind) => log.push(["attach", mount.mountId, title, kind]),
      drop: (ids) => log.push(["drop", ...ids]),
      apps: () => APPS,
      currentPage: () => h.page,
      navigate: (route) => {
        log.push(["navigate", route.page]);
        h.page = route.page;
      },
      reload: async () => log.push(["reload"]),
      fail: (error) => h.failures.push(error),
      notice: (n) => h.notices.push(n),
    },
  };
  h.controller = new MountController(h.deps, tabs);
  return h;
}

test("mounting an entry attaches its frame, opens the tab and shows the Running page", async () => {
  const h = harness();
  const seen = [];
  h.controller.subscribe((s) => seen.push(s));
  await h.controller.mount("notes", "main", true);
  const s = h.controller.snapshot();
  assert.deepEqual(s.tabs, { tabs: [{ appId: "notes", entryKey: "main", kind: "page", title: "Notes · Main" }], active: "notes/main" });
  assert.equal(s.mounts["notes/main"].mountId, "m1");
  assert.deepEqual(h.log, [["mount_entry", "notes/main"], ["attach", "m1", "Notes · Main", "page"], ["navigate", "running"]]);
  assert.deepEqual(h.notices, [null], "showing a tab clears the notice");
  assert.equal(seen.at(-1), s, "subscribers get the new snapshot");
  // Opening it again mounts nothing: the tab is shown.
  await h.controller.mount("notes", "main", true);
  assert.equal(h.log.filter(([k]) => k === "mount_entry").length, 1);
});

test("two requests for one tab while its mount is in flight make one mount", async () => {
  let release;
  const gate = new Promise((r) => (release = r));
  let calls = 0;
  const h = harness({
    mountEntry: async (appId, entryKey) => {
      calls += 1;
      await gate;
      return { mountId: "m1", appId, entryKey, entryKind: "page" };
    },
  });
  const first = h.controller.mount("todo", "main", false);
  assert.equal(h.controller.isPending("todo/main"), true);
  const second = h.controller.mount("todo", "main", true);
  release();
  await Promise.all([first, second]);
  assert.equal(calls, 1);
  assert.equal(h.controller.isPending("todo/main"), false);
  assert.equal(h.page, "running", "the waiting request still shows the tab");
  assert.equal(h.controller.snapshot().tabs.tabs.length, 1);
});

test("a failed mount: shown, it goes to the banner; in the background, it marks the tab and is not retried", async () => {
  const refusal = { code: "mount.disabled", message: "todo is disabled" };
  const h = harness({
    tabs: { tabs: [{ appId: "todo", entryKey: "main", kind: "page", title: "Todo · List" }], active: "todo/main" },
    mountEntry: async () => {
      throw refusal;
    },
  });
  await h.controller.mount("todo", "main", true);
  assert.deepEqual(h.failures, [refusal]);
  assert.deepEqual(h.controller.snapshot().tabErrors, {});
  h.page = "running";
  const sleeping = h.controller.sleepingTabToWake("running", true);
  assert.equal(sleeping.appId, "todo");
  await h.controller.mount("todo", "main", false);
  assert.equal(h.failures.length, 1, "a background failure is not a banner");
  assert.match(h.controller.snapshot().tabErrors["todo/main"], /todo is disabled/);
  assert.equal(h.controller.sleepingTabToWake("running", true), null, "a tab with an error is not woken again");
  assert.deepEqual(h.controller.snapshot().mounts, {}, "nothing half-mounted stays");
});

test("a restored tab wakes only on the Running page, once the list is loaded, and not while it mounts", async () => {
  const h = harness({ page: "running", tabs: { tabs: [{ appId: "notes", entryKey: "main", kind: "page", title: "Notes · Main" }], active: "notes/main" } });
  assert.equal(h.controller.sleepingTabToWake("apps", true), null);
  assert.equal(h.controller.sleepingTabToWake("running", false), null);
  assert.equal(h.controller.sleepingTabToWake("running", true).entryKey, "main");
  const mounting = h.controller.mount("notes", "main", false);
  assert.equal(h.controller.sleepingTabToWake("running", true), null, "in flight");
  await mounting;
  assert.equal(h.controller.sleepingTabToWake("running", true), null, "mounted");
  assert.equal(h.page, "running", "a background mount does not navigate");
});

test("closing a disabled app's tab does not wake the sleeping neighbour it makes active", async () => {
  // The desktop e2e case: a restored, sleeping tab of another app beside the shown one; the CLI
  // disables the shown app. The render that follows may still carry route "running" while the
  // close has already left the Running page: the neighbour must stay asleep.
  const peer = { appId: "notes", entryKey: "main", kind: "page", title: "Notes · Main" };
  const h = harness({ page: "running", tabs: { tabs: [peer], active: "notes/main" } });
  await h.controller.mount("todo", "main", true);
  const shown = h.controller.snapshot().mounts["todo/main"];
  await h.controller.ended([{ mountId: shown.mountId, appId: "todo", entryKey: "main", reason: "disabled" }]);
  assert.equal(h.controller.snapshot().tabs.active, "notes/main", "the neighbour is the active tab");
  assert.equal(h.page, "apps", "no live page tab is left: the Running page is left");
  assert.equal(h.controller.sleepingTabToWake("running", true), null, "a stale render's route does not wake it");
  assert.ok(!h.log.some(([what, which]) => what === "mount_entry" && which === "notes/main"));
});

test("closing the last live page tab leaves the Running page before the unmount is awaited", async () => {
  const h = harness();
  await h.controller.mount("notes", "main", true);
  await h.controller.mount("todo", "main", true);
  h.log.length = 0;
  await h.controller.close("todo/main");
  assert.deepEqual(h.log, [["drop", "m2"], ["unmount", "m2"]], "notes/main is still live: the page stays");
  assert.equal(h.controller.snapshot().tabs.active, "notes/main");
  h.log.length = 0;
  await h.controller.close("notes/main");
  assert.deepEqual(h.log, [["navigate", "apps"], ["drop", "m1"], ["unmount", "m1"]]);
  assert.deepEqual(h.controller.snapshot().tabs, { tabs: [], active: null });
  assert.deepEqual(h.controller.snapshot().mounts, {});
});

test("an unmount Rust refuses goes to the banner; the tab is closed anyway", async () => {
  const h = harness();
  await h.controller.mount("notes", "main", true);
  h.deps.unmount = async () => {
    throw { code: "mount.unknown", message: "no such mount" };
  };
  await h.controller.close("notes/main");
  assert.equal(h.failures[0].code, "mount.unknown");
  assert.equal(h.controller.snapshot().tabs.tabs.length, 0);
});

test("mounts ended elsewhere: disabled and uninstalled apps close with a notice; an update reopens its tab", async () => {
  const h = harness();
  await h.controller.mount("notes", "main", true);
  await h.controller.mount("todo", "main", true);
  h.log.length = 0;
  await h.controller.ended([{ mountId: "m1", appId: "notes", entryKey: "main", reason: "uninstalled" }]);
  assert.deepEqual(h.notices.at(-1), { appId: "notes", reason: "uninstalled", text: "notes was closed: it was uninstalled outside this window." });
  assert.deepEqual(h.log, [["drop", "m1"], ["reload"]], "the ended mount is not unmounted again");
  assert.deepEqual(h.controller.snapshot().tabs.tabs.map((t) => t.appId), ["todo"]);

  h.log.length = 0;
  await h.controller.ended([{ mountId: "m2", appId: "todo", entryKey: "main", reason: "version-changed" }]);
  assert.deepEqual(h.log, [["drop", "m2"], ["reload"], ["mount_entry", "todo/main"], ["attach", "m3", "Todo · List", "page"], ["navigate", "running"]]);
  assert.equal(h.controller.snapshot().mounts["todo/main"].mountId, "m3");
  assert.equal(h.notices.at(-1).reason, "version-changed", "said after the remount (which clears notices)");

  h.log.length = 0;
  await h.controller.ended([]);
  assert.deepEqual(h.log, [["reload"]], "an empty batch only reloads the list");
});

test("select shows a tab; keepInstalled drops the tabs of apps that are gone, and keeps the snapshot when nothing is", () => {
  const tabs = {
    tabs: [
      { appId: "notes", entryKey: "main", kind: "page", title: "a" },
      { appId: "gone", entryKey: "main", kind: "page", title: "b" },
    ],
    active: "gone/main",
  };
  const h = harness({ tabs });
  h.controller.select("notes/main");
  assert.equal(h.controller.snapshot().tabs.active, "notes/main");
  assert.equal(h.page, "running");
  h.controller.keepInstalled(new Set(["notes"]));
  assert.deepEqual(h.controller.snapshot().tabs.tabs.map((t) => t.appId), ["notes"]);
  const before = h.controller.snapshot();
  h.controller.keepInstalled(new Set(["notes"]));
  assert.equal(h.controller.snapshot(), before, "no change, no new snapshot (no render)");
});

test("the ended notice says what happened", () => {
  assert.equal(endedNotice({ appId: "a", entryKey: "e", mountId: "m", reason: "disabled" }).text, "a was closed: it was disabled outside this window.");
  assert.equal(endedNotice({ appId: "a", entryKey: "e", mountId: "m", reason: "version-changed" }).text, "a changed version outside this window and was reopened.");
});

// ---------------------------------------------------------------------------------------------

function recorder() {
  const calls = [];
  return {
    calls,
    on: {
      progress: (done, total) => calls.push(["progress", done, total]),
      storeChanged: async () => calls.push(["store"]),
      mountsEnded: async (ended) => calls.push(["ended", ended.length]),
      outgoing: async (actions) => calls.push(["outgoing", actions.length]),
      tasksChanged: () => calls.push(["tasks"]),
      approvalsChanged: () => calls.push(["approvals"]),
    },
  };
}

test("each host event goes to its handler; unknown kinds are ignored", async () => {
  const r = recorder();
  for (const [kind, payload] of [
    ["install:progress", { bytesVerified: 5, bytesTotal: 10 }],
    ["store:changed", null],
    ["mounts:ended", [{}, {}]],
    ["outgoing", [{}]],
    ["tasks:changed", null],
    ["future:kind", { anything: true }],
  ]) {
    await handleHostEvent({ seq: 1, kind, payload }, r.on);
  }
  assert.deepEqual(r.calls, [["progress", 5, 10], ["store"], ["ended", 2], ["outgoing", 1], ["tasks"], ["tasks"], ["approvals"]]);
});

test("the event loop polls from each batch's cursor, in order, and waits after a failed poll", async () => {
  const r = recorder();
  const polls = [];
  const sleeps = [];
  const failures = [];
  const pages = [
    { events: [{ seq: 1, kind: "store:changed", payload: null }, { seq: 2, kind: "tasks:changed", payload: null }], next: 2 },
    new Error("connection reset"),
    { events: [], next: 2 },
    { events: [{ seq: 3, kind: "outgoing", payload: [] }], next: 3 },
  ];
  let stop = false;
  await runEventLoop(
    {
      poll: async (after, wait) => {
        polls.push([after, wait]);
        const page = pages.shift();
        if (pages.length === 0) stop = true;
        if (page instanceof Error) throw page;
        return page;
      },
      stopped: () => stop,
      sleep: async (ms) => sleeps.push(ms),
      failed: (e) => failures.push(e.message),
    },
    r.on,
  );
  assert.deepEqual(polls, [[0, EVENTS_WAIT_MS], [2, EVENTS_WAIT_MS], [2, EVENTS_WAIT_MS], [2, EVENTS_WAIT_MS]]);
  assert.deepEqual(sleeps, [EVENTS_RETRY_MS]);
  assert.deepEqual(failures, ["connection reset"]);
  assert.deepEqual(r.calls, [["store"], ["tasks"], ["approvals"], ["outgoing", 0], ["tasks"]]);
});

test("a stopped loop polls no more", async () => {
  let polls = 0;
  await runEventLoop({ poll: async () => (polls++, { events: [], next: 0 }), stopped: () => true, sleep: async () => undefined }, recorder().on);
  assert.equal(polls, 0);
});

// ---------------------------------------------------------------------------------------------

const REVIEW = { reviewId: "r1", mode: "install", app: { id: "notes" }, existingData: false, publisherChange: null };

test("install gets only the questions the review asked", () => {
  const both = { acceptPublisherChange: true, reattachData: false };
  assert.deepEqual(installOptions(REVIEW, both), {});
  assert.deepEqual(installOptions({ ...REVIEW, existingData: true }, both), { reattachData: false });
  assert.deepEqual(installOptions({ ...REVIEW, publisherChange: { needsAcceptance: true } }, both), { acceptPublisherChange: true });
  assert.deepEqual(installOptions({ ...REVIEW, publisherChange: { needsAcceptance: false } }, both), {});
});

test("after an install: the notice and the page; a cancel drops only a review Rust holds", () => {
  const summary = { name: "notes", displayName: "Notes", activeVersion: "1.2.0" };
  assert.deepEqual(installedNotice(summary, "install"), { appId: "notes", reason: "installed", text: "Notes 1.2.0 is installed." });
  assert.equal(installedNotice({ ...summary, displayName: undefined }, "update").text, "notes 1.2.0 is updated.");
  assert.deepEqual(afterInstallRoute(summary, "install"), { page: "apps" });
  assert.deepEqual(afterInstallRoute(summary, "update"), { page: "app", appId: "notes", tab: "versions" });
  assert.equal(reviewToCancel(null), null);
  assert.equal(reviewToCancel({ phase: "uploading", fileName: "x.zip", bytes: 1 }), null);
  assert.equal(reviewToCancel({ phase: "installing", review: REVIEW }), null, "an install under way is not cancelled");
  assert.equal(reviewToCancel({ phase: "review", review: REVIEW }), "r1");
  assert.equal(reviewToCancel({ phase: "failed", error: {}, review: REVIEW, fileName: "x" }), "r1");
  assert.equal(reviewToCancel({ phase: "failed", error: {}, review: null, fileName: "x" }), null);
});

// ---------------------------------------------------------------------------------------------

test("load state and summary line (body[data-state], #summary)", () => {
  assert.equal(loadState(null, null), "loading");
  assert.equal(loadState(null, { code: "x" }), "error");
  assert.equal(loadState([], { code: "x" }), "empty", "a failed reload keeps the list shown");
  assert.equal(loadState([{ name: "a" }], null), "ready");
  assert.equal(summaryLine("error", null), "Could not load the installed apps");
  assert.equal(summaryLine("loading", null), "Loading installed apps…");
  assert.match(summaryLine("ready", [{ name: "a" }]), /1/);
});

test("prompt counts never go below zero; tab status reads mounts, prompts, approvals and errors", () => {
  let counts = countPrompt({}, "m1", true);
  counts = countPrompt(counts, "m1", true);
  assert.deepEqual(counts, { m1: 2 });
  counts = countPrompt(countPrompt(countPrompt(counts, "m1", false), "m1", false), "m1", false);
  assert.deepEqual(counts, { m1: 0 });
  const tab = { appId: "notes", entryKey: "main", kind: "page", title: "t" };
  const approvals = new Map([["notes", 3]]);
  assert.deepEqual(tabStatus(tab, {}, { "notes/main": "refused" }, { m1: 4 }, approvals), { mounted: false, prompts: 0, approvals: 3, error: "refused", dev: false });
  assert.deepEqual(tabStatus(tab, { "notes/main": { mountId: "m1" } }, {}, { m1: 4 }, new Map()), { mounted: true, prompts: 4, approvals: 0, error: null, dev: false });
  // A development install's tab says DEV, as its card does; another app's does not.
  const dev = devAppNames([{ name: "notes", dev: true }, { name: "todo", dev: false }, { name: "plain" }]);
  assert.deepEqual([...dev], ["notes"]);
  assert.equal(tabStatus(tab, {}, {}, {}, new Map(), dev).dev, true);
  assert.equal(tabStatus({ ...tab, appId: "todo" }, {}, {}, {}, new Map(), dev).dev, false);
  assert.deepEqual([...devAppNames(null)], []);
});

test("the app list re-renders only on a change, and after a failed load", () => {
  const memo = new ListMemo();
  assert.equal(memo.changed([{ name: "a" }]), true);
  assert.equal(memo.changed([{ name: "a" }]), false);
  assert.equal(memo.changed([{ name: "a" }, { name: "b" }]), true);
  memo.forget();
  assert.equal(memo.changed([{ name: "a" }, { name: "b" }]), true);
});

test("older backends: an unknown command is told apart from a real failure", () => {
  assert.equal(isMissingCommand({ code: "api.unknown_command", message: "set_theme" }), true);
  assert.equal(isMissingCommand(new Error("command launch_target not found")), true);
  assert.equal(isMissingCommand({ code: "store.locked", message: "busy" }), false);
});
