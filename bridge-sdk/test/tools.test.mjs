// lime.tools in the mock follows the host (services/tools.rs): declared + granted tools listed,
// undeclared / ungranted / malformed refs refused with the host's causes, and a destructive tool
// run only when the mock user approves it.
import { test } from "node:test";
import assert from "node:assert/strict";
import { createMockLimeRuntime, ErrorCodes } from "../dist/index.js";

const tools = {
  "notes/echo": { description: "Echo", run: (a) => ({ content: [{ type: "text", text: String(a.text) }], isError: false }) },
  "notes/delete_note": { needsApproval: true, run: (a) => ({ content: [{ type: "text", text: `deleted ${a.id}` }] }) },
  "notes/add": { declared: false },
  "notes/secret": { granted: false },
};

async function refusal(p) {
  try {
    await p;
  } catch (e) {
    return [e.code, e.causeCode];
  }
  assert.fail("expected a refusal");
}

test("lime.tools lists declared granted tools and invokes them", async () => {
  const rt = createMockLimeRuntime({ tools });
  const { tools: listed } = await rt.tools.list();
  assert.deepEqual(
    listed.map((t) => [t.tool, t.needsApproval]),
    [["notes/delete_note", true], ["notes/echo", false]],
  );
  const r = await rt.tools.invoke({ tool: "notes/echo", arguments: { text: "hi" } });
  assert.equal(r.content[0].text, "hi");
});

test("lime.tools refuses what the host refuses, with its causes", async () => {
  const rt = createMockLimeRuntime({ tools });
  assert.deepEqual(await refusal(rt.tools.invoke({ tool: "notes/add" })), [ErrorCodes.PERMISSION_DENIED, "tools.not_declared"]);
  assert.deepEqual(await refusal(rt.tools.invoke({ tool: "notes/secret" })), [ErrorCodes.PERMISSION_DENIED, "tools.not_granted"]);
  assert.deepEqual(await refusal(rt.tools.invoke({ tool: "nonsense" })), [ErrorCodes.INVALID_ARGUMENT, "tools.invalid"]);
  assert.deepEqual(await refusal(rt.tools.invoke({ tool: "notes/delete_note", arguments: { id: "1" } })), [ErrorCodes.PERMISSION_DENIED, "tools.denied"]);
  assert.deepEqual(rt.toolPrompts, ["notes/delete_note"]);
});

test("a destructive tool runs when the mock user approves it", async () => {
  const rt = createMockLimeRuntime({ tools, approveTools: true });
  const r = await rt.tools.invoke({ tool: "notes/delete_note", arguments: { id: "7" } });
  assert.equal(r.content[0].text, "deleted 7");
});
