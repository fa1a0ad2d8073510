// Unit tests of app/ui/counter.js on the SDK's mock runtime (app/ui/sdk/mock.js): no host, no
// browser, no npm install. Run: npm test (node --test).
import assert from "node:assert/strict";
import { test } from "node:test";

import { createMockLimeRuntime } from "../app/ui/sdk/index.js";
import { addClick, CLICKS_KEY, clicksLabel, errorLabel, readClicks } from "../app/ui/counter.js";

const runtime = (options = {}) => createMockLimeRuntime({ appId: "{{name}}", entryKey: "main", ...options });

test("a click is stored and read back", async () => {
  const lime = runtime();
  assert.equal(await readClicks(lime.storage), 0);
  assert.equal(await addClick(lime.storage), 1);
  assert.equal(await addClick(lime.storage), 2);
  assert.equal(lime.store.get(CLICKS_KEY), 2);
});

test("a refused set rejects with the host's code and stores nothing", async () => {
  const lime = runtime({ denied: ["lime.storage.set"] });
  const error = await addClick(lime.storage).then(
    () => assert.fail("the click should be refused"),
    (e) => e,
  );
  assert.equal(error.code, "APP_E002");
  assert.match(errorLabel(error), /^APP_E002/);
  assert.equal(await readClicks(lime.storage), 0);
});

test("labels", () => {
  assert.deepEqual([0, 1, 2].map(clicksLabel), ["0 clicks", "1 click", "2 clicks"]);
});
