// The dev console's pure parts: the relay tells dev reports from bridge messages; the overlay
// checks the shape of a `dev:diagnostic` payload, bounds what it keeps and says where a line
// happened; `handleHostEvent` hands `dev:diagnostic` to its handler.
import assert from "node:assert/strict";
import { test } from "node:test";

import { isDevReport } from "../dist/bridge-relay.js";
import { handleHostEvent } from "../build/test/app/host-events.js";
import { MAX_DEV_LINES, appendBounded, asDevLine, devLineWhere } from "../build/test/ui/testing.js";

test("only {apphostDevConsole: 1} is a dev report", () => {
  assert.equal(isDevReport({ apphostDevConsole: 1, kind: "error" }), true);
  for (const other of [null, undefined, "x", 1, [], {}, { apphostDevConsole: true }, { apphostDevConsole: "1" }, { protocol: "lime.agentApp.bridge" }]) {
    assert.equal(isDevReport(other), false, JSON.stringify(other));
  }
});

test("a payload becomes a line only with its string fields; everything is cut", () => {
  assert.equal(asDevLine(null), null);
  assert.equal(asDevLine({ mountId: "m", appId: "a", kind: "error" }), null);
  assert.equal(asDevLine({ mountId: "m", appId: "a", kind: "error", text: 5 }), null);
  const l = asDevLine({ mountId: "m", appId: "a", kind: "k".repeat(100), text: "t".repeat(10_000), source: 7, line: "3", column: 4 });
  assert.equal(l.kind.length, 32);
  assert.equal(l.text.length, 2000);
  assert.equal(l.source, null);
  assert.equal(l.line, null);
  assert.equal(l.column, 4);
});

test("the overlay keeps the newest MAX_DEV_LINES lines", () => {
  let lines = [];
  for (let i = 0; i < MAX_DEV_LINES + 10; i++) {
    lines = appendBounded(lines, { mountId: "m", appId: "a", kind: "error", text: `${i}` });
  }
  assert.equal(lines.length, MAX_DEV_LINES);
  assert.equal(lines[0].text, "10");
  assert.equal(lines.at(-1).text, `${MAX_DEV_LINES + 9}`);
});

test("where: source, line and column when given", () => {
  const base = { mountId: "m", appId: "a", kind: "csp", text: "t" };
  assert.equal(devLineWhere({ ...base, source: "http://x/index.html", line: 7, column: 13 }), "http://x/index.html:7:13");
  assert.equal(devLineWhere({ ...base, source: "http://x/index.html", line: 0, column: 0 }), "http://x/index.html");
  assert.equal(devLineWhere({ ...base, source: null, line: 3 }), "");
});

test("dev:diagnostic events reach their handler", async () => {
  const seen = [];
  const on = {
    progress() {},
    async storeChanged() {},
    async mountsEnded() {},
    async outgoing() {},
    tasksChanged() {},
    approvalsChanged() {},
    devDiagnostic: (p) => seen.push(p),
  };
  await handleHostEvent({ seq: 1, kind: "dev:diagnostic", payload: { text: "x" } }, on);
  assert.deepEqual(seen, [{ text: "x" }]);
});
