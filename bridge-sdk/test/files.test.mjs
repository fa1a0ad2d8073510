// lime.files in the mock: the same refs, ranges, limits and refusals as the host
// (crates/host-core/tests/files_service.rs holds the host to the same cases).
import { test } from "node:test";
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { createMockLimeRuntime } from "@apphost/bridge-sdk";

const cause = (code, causeCode) => (e) => e.code === code && e.causeCode === causeCode;

test("refs are listed and read, whole or in ranges, never by path", async () => {
  const lime = createMockLimeRuntime({ files: [{ name: "report.md", content: "# Report\nhello" }] });
  const { refs } = await lime.files.list();
  assert.equal(refs.length, 1);
  const [r] = refs;
  assert.match(r.ref, /^fref_[0-9a-f]{32}$/);
  assert.deepEqual([r.name, r.kind, r.size, r.mimeType], ["report.md", "file", 14, "text/markdown"]);
  const text = await lime.files.readRef({ ref: r.ref, encoding: "text" });
  assert.equal(text.content, "# Report\nhello");
  assert.equal(text.eof, true);
  const part = await lime.files.readRef({ ref: r.ref, offset: 2, length: 6 });
  assert.deepEqual([part.encoding, part.content, part.length, part.eof], ["base64", "UmVwb3J0", 6, false]);
  // The standard's readRef(ref).
  assert.equal((await lime.files.readRef(r.ref)).size, 14);
  assert.equal((await lime.files.stat(r.ref)).size, 14);
});

test("folders: plain relative paths only", async () => {
  const lime = createMockLimeRuntime();
  const ref = lime.grantFile({ name: "project", folder: { "a.txt": "A", "sub/b.txt": "B" } });
  const top = await lime.files.listFolder(ref);
  assert.deepEqual(top.entries.map((e) => [e.name, e.kind]), [["a.txt", "file"], ["sub", "folder"]]);
  assert.equal((await lime.files.readRef({ ref, path: "sub/b.txt", encoding: "text" })).content, "B");
  for (const path of ["../x", "/etc/passwd", "sub/../a.txt", "a//b"]) {
    await assert.rejects(lime.files.readRef({ ref, path }), cause("APP_E900", "files.path_not_allowed"), path);
  }
  await assert.rejects(lime.files.readRef({ ref, path: "nope.txt" }), cause("APP_E904", "files.path_not_found"));
  await assert.rejects(lime.files.readRef({ ref }), cause("APP_E900", "files.wrong_kind"));
  await assert.rejects(lime.files.readRef({ ref, path: "sub" }), cause("APP_E900", "files.wrong_kind"));
});

test("paths as refs, revoked and unknown refs, bad ranges and large reads are refused", async () => {
  const lime = createMockLimeRuntime();
  const ref = lime.grantFile({ name: "big.bin", content: new Uint8Array(5 * 1024 * 1024) });
  for (const bad of ["/etc/passwd", "file:///etc/passwd", "~/.ssh/id_ed25519", "../x"]) {
    await assert.rejects(lime.files.readRef(bad), cause("APP_E900", "files.path_not_allowed"), bad);
  }
  await assert.rejects(lime.files.readRef({ ref }), (e) => e.causeCode === "files.too_large" && e.details.size === 5 * 1024 * 1024);
  await assert.rejects(lime.files.readRef({ ref, length: 4 * 1024 * 1024 + 1 }), cause("APP_E900", "files.too_large"));
  assert.equal((await lime.files.readRef({ ref, offset: 1024 * 1024, length: 4 * 1024 * 1024 })).length, 4 * 1024 * 1024);
  assert.equal((await lime.files.readRef({ ref, offset: Number.MAX_SAFE_INTEGER, length: 10 })).length, 0);
  for (const args of [{ ref, offset: -1 }, { ref, offset: 1.5 }, { ref, length: "1" }, { ref, encoding: "utf-16" }, { ref, extra: 1 }]) {
    await assert.rejects(lime.files.readRef(args), (e) => e.code === "APP_E900", JSON.stringify(args));
  }
  assert.equal(lime.revokeFile(ref), true);
  await assert.rejects(lime.files.readRef({ ref, length: 1 }), cause("APP_E904", "files.ref_not_found"));
  await assert.rejects(lime.files.readRef(`fref_${"0".repeat(32)}`), cause("APP_E904", "files.ref_not_found"));
  const without = createMockLimeRuntime({ capabilities: ["lime.ui"] });
  await assert.rejects(without.files.list(), (e) => e.code === "APP_E001");
});

test("startTask({files}) attaches the files' text with ref, name and hash, as the host does", async () => {
  let seen;
  const lime = createMockLimeRuntime({
    agent: { script: ({ input }) => ((seen = input), [{ type: "result", subtype: "success", payload: { text: "ok" } }]) },
  });
  const ref = lime.grantFile({ name: "brief.md", content: "Summarise this brief." });
  const task = await lime.agent.startTask({ input: "Summarise", files: [ref] });
  for await (const _ of task.events());
  assert.equal(seen.input, "Summarise");
  assert.deepEqual(
    seen.attachments.map((a) => [a.ref, a.name, a.text, a.truncated, a.sha256]),
    [[ref, "brief.md", "Summarise this brief.", false, createHash("sha256").update("Summarise this brief.").digest("hex")]],
  );
  await assert.rejects(lime.agent.startTask({ input: "x", files: ["/etc/passwd"] }), cause("APP_E900", "files.path_not_allowed"));
  const without = createMockLimeRuntime({ capabilities: ["lime.ui", "lime.agent"], agent: { script: () => [] } });
  await assert.rejects(without.agent.startTask({ input: "x", files: [ref] }), cause("APP_E002", "files.not_declared"));
});

test("requestFiles: the mock user picks (or cancels) as the options say; the app gets refs, never paths", async () => {
  const lime = createMockLimeRuntime({ pickFiles: ({ multiple }) => (multiple ? [{ name: "a.md", content: "A" }, { name: "b.md", content: "B" }] : null) });
  assert.deepEqual(await lime.files.requestFiles(), { cancelled: true, refs: [] });
  const picked = await lime.files.requestFiles({ multiple: true, accept: [".md"] });
  assert.equal(picked.cancelled, false);
  assert.deepEqual(picked.refs.map((r) => r.name), ["a.md", "b.md"]);
  assert.equal((await lime.files.readRef({ ref: picked.refs[1].ref, encoding: "text" })).content, "B");
  assert.deepEqual(lime.filePickRequests, [{ multiple: false, folder: false, accept: [] }, { multiple: true, folder: false, accept: [".md"] }]);
  await assert.rejects(lime.files.requestFiles({ multiple: "yes" }), cause("APP_E900", "files.invalid_argument"));
  await assert.rejects(lime.files.requestFiles({ accept: ".md" }), cause("APP_E900", "files.invalid_argument"));
});
