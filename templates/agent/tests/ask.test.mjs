// Unit tests of app/ui/ask.js on the SDK's mock runtime (app/ui/sdk/mock.js): a scripted agent,
// no host, no browser, no model, no npm install. Run: npm test (node --test).
import assert from "node:assert/strict";
import { test } from "node:test";

import { createMockLimeRuntime } from "../app/ui/sdk/index.js";
import { ask, errorLabel, LAST_QUESTION_KEY, lastQuestion } from "../app/ui/ask.js";

const runtime = (options = {}) => createMockLimeRuntime({ appId: "{{name}}", entryKey: "main", ...options });

test("the answer streams in and the question is kept", async () => {
  const lime = runtime({
    agent: {
      script: () => [
        { type: "assistant:delta", payload: { text: "Hello" } },
        { type: "assistant:delta", payload: { text: ", world" } },
        { type: "result", subtype: "success" },
      ],
    },
  });
  const seen = [];
  const tasks = [];
  const result = await ask(lime, "  say hello  ", { onText: (t) => seen.push(t), onTask: (id) => tasks.push(id) });
  assert.deepEqual(result, { subtype: "success", text: "Hello, world" });
  assert.deepEqual(seen, ["Hello", "Hello, world"]);
  assert.equal(tasks.length, 1);
  assert.equal(lime.store.get(LAST_QUESTION_KEY), "say hello");
  assert.equal(await lastQuestion(lime.storage), "say hello");
});

test("without a model the host refuses the task with APP_E012, and the page says what to do", async () => {
  const lime = runtime(); // no `agent`: like AppHost with no model set up
  const error = await ask(lime, "anything").then(
    () => assert.fail("the task should be refused"),
    (e) => e,
  );
  assert.equal(error.code, "APP_E012");
  assert.match(errorLabel(error), /Set up a model/);
});

test("a blank question asks nothing", async () => {
  const lime = runtime({ agent: { script: () => [{ type: "result", subtype: "success" }] } });
  await assert.rejects(ask(lime, "   "), /Type a question/);
  assert.equal(lime.calls.length, 0);
  assert.equal(await lastQuestion(lime.storage), "");
});
