// Starts the real AppHost for tests/*.spec.mjs: `apphost dev app --serve` on a fresh data
// directory installs app/ as a dev app (running it on your own folder is the consent to its
// required permissions) and serves the host UI; its first stdout line is the URL to open.
import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";

export const APP_DIR = join(dirname(fileURLToPath(import.meta.url)), "..", "app");
export const APPHOST = process.env.APPHOST_BIN ?? "apphost";

/** Runs `apphost <args>` on the host's data directory; returns its parsed `--json` output. */
export function apphost(host, args) {
  const r = spawnSync(APPHOST, ["--json", "--data-dir", host.data, ...args], { encoding: "utf8", env: host.env });
  if (r.status !== 0) throw new Error(`apphost ${args.join(" ")} exited with ${r.status}: ${r.stderr}${r.stdout}`);
  return r.stdout.trim() === "" ? null : JSON.parse(r.stdout);
}

/**
 * A fresh host: `{url, entryUrl, data, stop()}`. `before(host)` runs on the new data directory
 * before the server starts (e.g. `apphost model set`). `url` signs in (one-time token) and opens
 * `entry`; `entryUrl` opens it again later.
 */
export async function startHost({ app, entry, before } = {}) {
  const root = mkdtempSync(join(tmpdir(), `${app}-e2e-`));
  const data = join(root, "data");
  // A file secret store inside the temporary folder: the test never touches your keyring.
  const env = { ...process.env, APPHOST_SECRET_STORE: "file", APPHOST_SECRET_KEY_FILE: join(root, "secrets.key") };
  const host = { root, data, env };
  if (before) before(host);
  const child = spawn(APPHOST, ["--json", "--data-dir", data, "dev", APP_DIR, "--serve"], { stdio: ["ignore", "pipe", "inherit"], env });
  const first = await new Promise((resolve, reject) => {
    createInterface({ input: child.stdout }).once("line", resolve);
    child.once("exit", (code) => reject(new Error(`apphost dev --serve exited with ${code}`)));
  });
  const served = new URL(JSON.parse(first).url);
  return {
    ...host,
    url: `${served.origin}/apps/${app}/${entry}?token=${served.searchParams.get("token")}`,
    // The same entry once signed in (the token is used once; the cookie keeps the session).
    entryUrl: `${served.origin}/apps/${app}/${entry}`,
    async stop() {
      if (child.exitCode === null) {
        const exited = new Promise((resolve) => child.once("exit", resolve));
        child.kill("SIGTERM");
        await exited;
      }
      rmSync(root, { recursive: true, force: true });
    },
  };
}
