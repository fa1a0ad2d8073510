// lime.services in the mock: the app's declared services answer; the host's refusals hold.
import assert from "node:assert/strict";
import { test } from "node:test";
import { createMockLimeRuntime } from "../dist/index.js";

test("a declared service answers through lime.services.call and shows in list", async () => {
  const lime = createMockLimeRuntime({
    services: { parser: (method, params) => ({ method, words: String(params.text).split(/\s+/).length }) },
  });
  assert.deepEqual((await lime.services.list()).services[0].state, "stopped");
  const out = await lime.services.call({ service: "parser", method: "parse", params: { text: "a b c" } });
  assert.deepEqual(out, { method: "parse", words: 3 });
  assert.equal((await lime.services.list()).services[0].state, "running");
});

test("undeclared services, reserved methods and failing services are refused with stable codes", async () => {
  const lime = createMockLimeRuntime({
    services: {
      parser: () => {
        throw new Error("boom");
      },
    },
  });
  await assert.rejects(lime.services.call({ service: "other", method: "x" }), (e) => e.code === "APP_E904" && e.causeCode === "service.not_declared");
  for (const method of ["initialize", "$/cancelRequest", "lime.storage.set"]) {
    await assert.rejects(lime.services.call({ service: "parser", method }), (e) => e.code === "APP_E900" && e.causeCode === "services.invalid_argument");
  }
  await assert.rejects(lime.services.call({ service: "parser", method: "parse" }), (e) => e.causeCode === "service.error");
});
