// Builds the host UI into dist/ with esbuild: dist/main.js (the shell and the app list, Preact
// included) and dist/chunk-*.js (the other pages, loaded after the first paint),
// dist/index.html and dist/styles.css (copied from public/; Tauri embeds ../ui-host/dist), plus
// dist/format.js, dist/bridge-relay.js and dist/transport.js (standalone modules the node tests
// import).
// `--test` also writes build/test/: the pure modules (app/: the shell's) and the views with preact
// left external, so node tests render them with preact-render-to-string against the same preact
// instance.
// Type checking is `npm run typecheck` (tsc --noEmit); esbuild only strips types.
import { cpSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

import { build } from "esbuild";

const here = dirname(fileURLToPath(import.meta.url));
const dist = join(here, "dist");
const common = {
  bundle: true,
  format: "esm",
  target: "es2022",
  jsx: "automatic",
  jsxImportSource: "preact",
  logLevel: "warning",
  legalComments: "none",
};

rmSync(dist, { recursive: true, force: true });
const app = await build({
  ...common,
  entryPoints: [join(here, "src/main.tsx")],
  outdir: dist,
  // The pages that are not the first view (app/lazy-page.tsx) are chunks loaded after the first
  // paint: main.js stays small.
  splitting: true,
  chunkNames: "chunk-[hash]",
  minify: true,
  sourcemap: false,
  metafile: true,
});
await build({
  ...common,
  entryPoints: ["format", "bridge-relay", "transport"].map((m) => join(here, `src/${m}.ts`)),
  outdir: dist,
});
cpSync(join(here, "public"), dist, { recursive: true });
preloadEagerChunks(app.metafile);

if (process.argv.includes("--test")) {
  const out = join(here, "build/test");
  rmSync(out, { recursive: true, force: true });
  await build({
    ...common,
    entryPoints: [
      "router",
      "markdown",
      "tabs",
      "tasks",
      "theme",
      "format",
      "app/after-paint",
      "app/catalog-flow",
      "app/host-events",
      "app/mount-controller",
      "app/review-flow",
      "app/shell-state",
      "app/launches",
      "app/palette",
      "ui/testing",
    ].map((m) => join(here, `src/${m}.${m === "ui/testing" ? "tsx" : "ts"}`)),
    outdir: out,
    outbase: join(here, "src"),
    packages: "external",
  });
}
console.log(`ui-host: built ${dist}`);

// The chunks main.js imports statically (shared with the later pages) are fetched in parallel
// with it, not one import level after another: a <link rel="modulepreload"> each in index.html.
function preloadEagerChunks(metafile) {
  const outputs = metafile.outputs;
  const key = (file) => Object.keys(outputs).find((k) => k.endsWith(`/${file}`) || k === file);
  const eager = new Set();
  const visit = (file) => {
    for (const i of outputs[key(file)]?.imports ?? []) {
      const name = i.path.split("/").pop();
      if (i.kind === "import-statement" && !eager.has(name)) {
        eager.add(name);
        visit(name);
      }
    }
  };
  visit("main.js");
  const index = join(dist, "index.html");
  const links = [...eager].sort().map((n) => `    <link rel="modulepreload" href="/${n}" />\n`).join("");
  const html = readFileSync(index, "utf8");
  const at = html.indexOf("    <script type=\"module\"");
  if (at < 0) throw new Error("index.html: no module script to preload before");
  writeFileSync(index, html.slice(0, at) + links + html.slice(at));
}
