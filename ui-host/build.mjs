// Builds the host UI into dist/ with esbuild: dist/main.js (the app, Preact included, one file),
// dist/index.html and dist/styles.css (copied from public/; Tauri embeds ../ui-host/dist), plus
// dist/format.js, dist/bridge-relay.js and dist/transport.js (standalone modules the node tests
// import).
// `--test` also writes build/test/: the pure modules (app/: the shell's) and the views with preact
// left external, so node tests render them with preact-render-to-string against the same preact
// instance.
// Type checking is `npm run typecheck` (tsc --noEmit); esbuild only strips types.
import { cpSync, rmSync } from "node:fs";
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
await build({
  ...common,
  entryPoints: [join(here, "src/main.tsx")],
  outfile: join(dist, "main.js"),
  minify: true,
  sourcemap: false,
});
await build({
  ...common,
  entryPoints: ["format", "bridge-relay", "transport"].map((m) => join(here, `src/${m}.ts`)),
  outdir: dist,
});
cpSync(join(here, "public"), dist, { recursive: true });

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
