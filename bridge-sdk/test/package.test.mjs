// The published package: only dist/ and the README, typed entry points that exist.
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");

test("npm pack ships only dist/, README.md and package.json, with a .d.ts beside every module", () => {
  const out = execFileSync("npm", ["pack", "--dry-run", "--json", "--ignore-scripts"], { cwd: root, encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] });
  const files = JSON.parse(out)[0].files.map((f) => f.path).sort();
  for (const f of files) {
    assert.ok(f === "README.md" || f === "package.json" || f.startsWith("dist/"), `unexpected file in the package: ${f}`);
  }
  for (const f of files.filter((f) => f.endsWith(".js"))) {
    assert.ok(files.includes(f.replace(/\.js$/, ".d.ts")), `${f} has no declarations`);
  }
  assert.ok(files.includes("dist/generated/bridge.d.ts"));
  assert.ok(files.includes("README.md"));
});

test("main, types and exports point at files that exist", () => {
  const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));
  assert.equal(pkg.type, "module");
  for (const p of [pkg.main, pkg.types, pkg.exports["."].types, pkg.exports["."].default]) {
    assert.ok(existsSync(join(root, p)), p);
  }
  assert.equal(Object.keys(pkg.exports["."])[0], "types", "`types` must come first in the exports condition list");
});
