// The sample apps (fixtures/apps/notes, fixtures/apps/review-queue) ship the SDK's built client
// in ui/sdk/, copied from bridge-sdk/dist by scripts/vendor-sdk.mjs. These tests fail when a
// vendored copy differs from the current build (run `node scripts/vendor-sdk.mjs`), when a
// sample still carries a hand-written bridge client, and when the signed sample's lock or
// signature no longer matches its files (sign it again after vendoring).
import assert from "node:assert/strict";
import { createHash, createPublicKey, verify } from "node:crypto";
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative } from "node:path";
import { test } from "node:test";

import { DIST, REPO, SAMPLES, drift, expectedFiles } from "../../scripts/vendor-sdk.mjs";

const sha256 = (bytes) => createHash("sha256").update(bytes).digest("hex");

function filesUnder(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? filesUnder(join(dir, e.name)) : [join(dir, e.name)],
  );
}

test("each sample's ui/sdk/ is byte for byte the bridge client of the current build", () => {
  const expected = expectedFiles();
  assert.deepEqual(
    [...expected.keys()],
    ["agent.js", "errors.js", "files.js", "generated/bridge.js", "handles.js", "projections.js", "protocol.js", "runtime.js", "services.js", "ui.js", "workflow.js"],
    "runtime.js and what it imports (no mock, no typings)",
  );
  for (const { app, dir, entries } of SAMPLES) {
    assert.deepEqual(drift(dir, expectedFiles(DIST, entries)), { missing: [], changed: [], extra: [] }, `${app}: run \`node scripts/vendor-sdk.mjs\``);
  }
});

test("the drift check sees a changed, a missing and an extra file", () => {
  const expected = expectedFiles();
  const copy = mkdtempSync(join(tmpdir(), "vendored-sdk-"));
  try {
    cpSync(SAMPLES[0].dir, copy, { recursive: true });
    assert.deepEqual(drift(copy, expected), { missing: [], changed: [], extra: [] });
    writeFileSync(join(copy, "handles.js"), `${readFileSync(join(copy, "handles.js"), "utf8")}\n`);
    rmSync(join(copy, "errors.js"));
    writeFileSync(join(copy, "mock.js"), "export {};\n");
    assert.deepEqual(drift(copy, expected), { missing: ["errors.js"], changed: ["handles.js"], extra: ["mock.js"] });
  } finally {
    rmSync(copy, { recursive: true, force: true });
  }
  // The build itself is what is compared: a module it no longer has is not expected.
  assert.ok(existsSync(join(DIST, "runtime.js")));
});

test("the samples import the SDK from their own package and carry no hand-written bridge client", () => {
  for (const { app, dir } of SAMPLES) {
    const ui = dirname(dir);
    assert.equal(existsSync(join(ui, "bridge.js")), false, `${app}/ui/bridge.js is gone`);
    const js = filesUnder(ui).filter((f) => f.endsWith(".js") && !f.startsWith(dir));
    for (const file of js) {
      const source = readFileSync(file, "utf8");
      for (const [, spec] of source.matchAll(/\bfrom\s*["']([^"']+)["']/g)) {
        assert.ok(spec.startsWith("./"), `${relative(REPO, file)} imports ${spec}: an app loads scripts from its own origin only`);
        assert.notEqual(spec, "./bridge.js", relative(REPO, file));
      }
    }
    const app_js = readFileSync(join(ui, "app.js"), "utf8");
    assert.match(app_js, /import \{ getLimeRuntime \} from "\.\/sdk\/runtime\.js";/, `${app} uses the SDK`);
    assert.doesNotMatch(app_js, /postMessage/, `${app} sends no bridge messages by hand`);
  }
});

test("the signed sample's lock and signature match its files (sign again after vendoring)", () => {
  for (const { app, dir, signed } of SAMPLES.filter((s) => s.signed)) {
    assert.ok(signed);
    const root = dirname(dirname(dir));
    const lock = JSON.parse(readFileSync(join(root, "app.lock.json"), "utf8"));
    const onDisk = filesUnder(root)
      .map((f) => relative(root, f).split("\\").join("/"))
      .filter((p) => p !== "app.lock.json" && p !== "app.signature.yaml")
      .sort();
    assert.deepEqual([...lock.files.map((f) => f.path)].sort(), onDisk, `${app}: app.lock.json lists every file`);
    let digest = "apphost.files.v1\n";
    for (const f of lock.files) {
      const bytes = readFileSync(join(root, f.path));
      assert.deepEqual([f.size, f.sha256], [bytes.length, sha256(bytes)], `${app}/${f.path} as locked`);
      digest += `${f.path}\u0000${f.size}\u0000${f.sha256}\n`;
    }
    const filesDigest = `sha256:${sha256(Buffer.from(digest, "utf8"))}`;
    assert.equal(lock.filesDigest, filesDigest, `${app}: the lock's filesDigest`);
    const yaml = readFileSync(join(root, "app.signature.yaml"), "utf8");
    const sig = JSON.parse(yaml.split("\n").filter((l) => !l.startsWith("#")).join("\n")).signature.ed25519;
    assert.equal(sig.filesDigest, filesDigest, `${app}: the signature covers these files`);
    assert.equal(sig.manifestHash, `sha256:${sha256(readFileSync(join(root, "APP.md")))}`);
    const key = createPublicKey({
      key: Buffer.concat([Buffer.from("302a300506032b6570032100", "hex"), Buffer.from(sig.publicKey, "base64")]),
      format: "der",
      type: "spki",
    });
    const message = `apphost.signature.v1\nmanifestHash=${sig.manifestHash}\nfilesDigest=${sig.filesDigest}\n`;
    assert.ok(verify(null, Buffer.from(message, "utf8"), key, Buffer.from(sig.signature, "base64")), `${app}: the Ed25519 signature verifies`);
  }
});
