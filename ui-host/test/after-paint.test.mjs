// The start-up gate (ui-host/src/app/after-paint.ts): work the app center's first frame does not
// need runs two animation frames after the first view showed, at an idle moment, never before;
// and it still runs if the first view never shows. Run against build/test/ (node build.mjs --test).
import assert from "node:assert/strict";
import { test } from "node:test";

import { AfterPaintGate, IDLE_CAP_MS, SHOW_CAP_MS } from "../build/test/app/after-paint.js";

/** A scheduler whose frames, idle callbacks and timers run only when the test says so. */
function scheduler() {
  const s = { frames: [], idles: [], timers: [] };
  s.api = {
    frame: (run) => s.frames.push(run),
    idle: (run, capMs) => s.idles.push({ run, capMs }),
    timer: (run, ms) => s.timers.push({ run, ms }),
  };
  s.nextFrame = () => {
    const due = s.frames.splice(0);
    for (const run of due) run();
  };
  return s;
}

test("deferred work waits for the first view, two frames and an idle moment", () => {
  const s = scheduler();
  const gate = new AfterPaintGate(s.api);
  const ran = [];
  gate.after(() => ran.push("approvals"));
  gate.after(() => ran.push("events"));
  s.nextFrame(); // frames before the list showed do not count
  assert.deepEqual(ran, []);
  gate.shownNow();
  gate.shownNow(); // a second call changes nothing
  assert.equal(s.frames.length, 1);
  s.nextFrame();
  assert.deepEqual(ran, [], "not in the frame that paints the list");
  s.nextFrame();
  assert.deepEqual(ran, [], "not before an idle moment");
  assert.equal(s.idles.length, 1);
  assert.equal(s.idles[0].capMs, IDLE_CAP_MS);
  s.idles[0].run();
  assert.deepEqual(ran, ["approvals", "events"], "in the order asked");
  assert.equal(gate.released(), true);
  gate.after(() => ran.push("later"));
  assert.deepEqual(ran, ["approvals", "events", "later"], "once open, work runs at once");
  s.idles[0].run();
  assert.equal(ran.length, 3, "released once");
});

test("deferred work runs even if the first view never shows", () => {
  const s = scheduler();
  const gate = new AfterPaintGate(s.api);
  let ran = 0;
  gate.after(() => ran++);
  assert.equal(s.timers.length, 1);
  assert.equal(s.timers[0].ms, SHOW_CAP_MS);
  s.timers[0].run();
  assert.equal(ran, 1);
  gate.shownNow();
  s.nextFrame();
  s.nextFrame();
  s.idles[0]?.run();
  assert.equal(ran, 1, "not run twice");
});

test("a failing piece of work does not stop the others", () => {
  const s = scheduler();
  const gate = new AfterPaintGate(s.api);
  const ran = [];
  const error = console.error;
  console.error = () => {};
  try {
    gate.after(() => {
      throw new Error("boom");
    });
    gate.after(() => ran.push("next"));
    s.timers[0].run();
  } finally {
    console.error = error;
  }
  assert.deepEqual(ran, ["next"]);
});
