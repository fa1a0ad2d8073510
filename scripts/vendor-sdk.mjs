#!/usr/bin/env node
// Vendors the SDK's built ESM (bridge-sdk/dist, from `npm run build -w bridge-sdk`) into each
// sample app's UI folder, `ui/sdk/`: an app's CSP allows scripts from its own origin only, so it
// ships the SDK inside its package. Only the bridge client's module graph is copied: `runtime.js`
// (getLimeRuntime and the typed lime.* handles) and every module it imports, byte for byte; the
// mock and the typings stay out of the packages.
//
//   node scripts/vendor-sdk.mjs           copy (and remove vendored files the build no longer has)
//   node scripts/vendor-sdk.mjs --check   exit 1 when a vendored copy differs from the build
//
// bridge-sdk/test/vendored-sdk.test.mjs runs the check. review-queue is signed: after vendoring
// into it, sign it again (apphost sign fixtures/apps/review-queue --key
// fixtures/keys/fixture-publisher.json), which rewrites its app.lock.json.
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join, posix, relative } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

export const REPO = join(dirname(fileURLToPath(import.meta.url)), "..");
export const DIST = join(REPO, "bridge-sdk", "dist");
/** The modules an app imports; everything they import comes along. */
export const ENTRIES = ["runtime.js"];
/** The sample apps that use the SDK, and whether their package is signed. */
export const SAMPLES = [
  { app: "notes", dir: join(REPO, "fixtures", "apps", "notes", "ui", "sdk"), signed: false },
  { app: "review-queue", dir: join(REPO, "fixtures", "apps", "review-queue", "ui", "sdk"), signed: true },
  { app: "doc-parser", dir: join(REPO, "fixtures", "apps", "doc-parser", "ui", "sdk"), signed: false },
  // Written from the standard's SDK page: it imports the standard's helpers too.
  {
    app: "standard-conformance",
    dir: join(REPO, "fixtures", "apps", "standard-conformance", "ui", "sdk"),
    signed: false,
    entries: ["runtime.js", "standard.js", "theme.js"],
  },
];

/** `from "./x.js"`, `import "./x.js"` and `export * from "./x.js"` specifiers of one module. */
function relativeImports(source) {
  const out = [];
  for (const m of source.matchAll(/(?:^|[\s;}])(?:import|export)\s*(?:[^'"]*?\sfrom\s*)?["'](\.{1,2}\/[^"']+)["']/g)) {
    out.push(m[1]);
  }
  return out;
}

/** The files to vendor, relative to dist (posix separators), and their bytes, from the build. */
export function expectedFiles(dist = DIST, entries = ENTRIES) {
  if (!existsSync(join(dist, "runtime.js"))) {
    throw new Error(`${relative(REPO, dist)} has no runtime.js: run \`npm run build -w bridge-sdk\` first`);
  }
  const files = new Map();
  const queue = [...entries];
  while (queue.length > 0) {
    const file = queue.shift();
    if (files.has(file)) continue;
    const bytes = readFileSync(join(dist, file));
    files.set(file, bytes);
    for (const spec of relativeImports(bytes.toString("utf8"))) {
      const target = posix.normalize(posix.join(posix.dirname(file), spec));
      if (target.startsWith("../")) throw new Error(`${file} imports ${spec}, outside dist/`);
      queue.push(target);
    }
  }
  return new Map([...files.entries()].sort(([a], [b]) => (a < b ? -1 : 1)));
}

function listFiles(dir, base = dir) {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? listFiles(join(dir, e.name), base) : [relative(base, join(dir, e.name)).split("\\").join("/")],
  );
}

/** How `dir` differs from `expected`: `{missing, changed, extra}` (paths relative to `dir`). */
export function drift(dir, expected) {
  const present = new Set(listFiles(dir));
  const missing = [];
  const changed = [];
  for (const [file, bytes] of expected) {
    if (!present.has(file)) missing.push(file);
    else if (!readFileSync(join(dir, file)).equals(bytes)) changed.push(file);
  }
  const extra = [...present].filter((f) => !expected.has(f)).sort();
  return { missing, changed, extra };
}

function vendor() {
  for (const { app, dir, signed, entries } of SAMPLES) {
    const expected = expectedFiles(DIST, entries);
    const before = drift(dir, expected);
    for (const file of before.extra) rmSync(join(dir, file));
    for (const [file, bytes] of expected) {
      mkdirSync(dirname(join(dir, file)), { recursive: true });
      writeFileSync(join(dir, file), bytes);
    }
    const touched = before.missing.length + before.changed.length + before.extra.length;
    console.log(`${app}: ${expected.size} files in ${relative(REPO, dir)} (${touched} changed)`);
    if (touched > 0 && signed) {
      console.log(`  ${app} is signed: apphost sign fixtures/apps/${app} --key fixtures/keys/fixture-publisher.json`);
    }
  }
}

function check() {
  let ok = true;
  for (const { app, dir, entries } of SAMPLES) {
    const d = drift(dir, expectedFiles(DIST, entries));
    for (const [what, files] of Object.entries(d)) {
      if (files.length > 0) {
        ok = false;
        console.error(`${app}: ${what}: ${files.join(", ")}`);
      }
    }
  }
  if (!ok) console.error("the vendored SDK differs from bridge-sdk/dist: run `node scripts/vendor-sdk.mjs`");
  return ok;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  if (process.argv.includes("--check")) process.exit(check() ? 0 : 1);
  vendor();
}
