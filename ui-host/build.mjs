// Builds the host UI into dist/: a clean tsc compile of src/ plus a copy of public/.
// No bundler: the browser loads the ES modules tsc writes (imports name their ".js" files).
import { spawnSync } from "node:child_process";
import { cpSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const dist = join(here, "dist");
const tsc = createRequire(import.meta.url).resolve("typescript/bin/tsc");

rmSync(dist, { recursive: true, force: true });
const result = spawnSync(process.execPath, [tsc, "-p", join(here, "tsconfig.json")], {
  stdio: "inherit",
});
if (result.status !== 0) {
  process.exit(result.status ?? 1);
}
cpSync(join(here, "public"), dist, { recursive: true });
console.log(`ui-host: built ${dist}`);
