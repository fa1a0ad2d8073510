// Starts `apphost serve --json` on a fresh data directory (with packages sideloaded first) and
// stops it. APPHOST_BIN names the binary (default: $CARGO_TARGET_DIR/debug/apphost, else
// target/debug/apphost).
import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { request as httpRequest } from "node:http";
import { tmpdir } from "node:os";
import { dirname, isAbsolute, join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";

export const REPO = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "..");

export function apphostBin() {
  if (process.env.APPHOST_BIN) return process.env.APPHOST_BIN;
  const target = process.env.CARGO_TARGET_DIR ?? join(REPO, "target");
  return join(target, "debug", "apphost");
}

/** `apphost --json --data-dir <data> ...args`, synchronously; returns parsed stdout. */
export function cli(data, args) {
  const out = spawnSync(apphostBin(), ["--json", "--data-dir", data, ...args], {
    encoding: "utf8",
    env: { ...process.env, APPHOST_SECRET_STORE: "file", APPHOST_SECRET_KEY_FILE: join(data, "..", "secrets.key") },
  });
  if (out.status !== 0) {
    throw new Error(`apphost ${args.join(" ")} failed (${out.status}): ${out.stderr}${out.stdout}`);
  }
  return out.stdout.trim() === "" ? null : JSON.parse(out.stdout);
}

/** `apphost serve` on `data` until its first line (the URL); the child and that line. */
async function spawnServe(root, data) {
  const child = spawn(apphostBin(), ["--json", "--data-dir", data, "serve"], {
    stdio: ["ignore", "pipe", "inherit"],
    env: { ...process.env, APPHOST_SECRET_STORE: "file", APPHOST_SECRET_KEY_FILE: join(root, "secrets.key") },
  });
  const first = await new Promise((resolve, reject) => {
    const lines = createInterface({ input: child.stdout });
    lines.once("line", (line) => resolve(JSON.parse(line)));
    child.once("exit", (code) => reject(new Error(`apphost serve exited with ${code} before its URL`)));
  });
  return { child, first };
}

async function stopChild(child) {
  if (child.exitCode === null) {
    const exited = new Promise((resolve) => child.once("exit", resolve));
    child.kill("SIGTERM");
    await exited;
  }
  return child.exitCode;
}

/**
 * Starts a server; `install` lists package folders (relative to the repo, or absolute) to
 * sideload first. `restart()` stops it and serves the same data directory again (a new port
 * and sign-in token).
 */
export async function startServer({ install = [] } = {}) {
  const root = mkdtempSync(join(tmpdir(), "apphost-browser-"));
  const data = join(root, "data");
  for (const pkg of install) {
    cli(data, ["install", "--yes", "--sideload", isAbsolute(pkg) ? pkg : join(REPO, pkg)]);
  }
  let { child, first } = await spawnServe(root, data);
  const server = {
    data,
    /** The sign-in URL for a path (the token is exchanged once, then redirected to `path`). */
    signIn(path = "/") {
      return `${server.origin}${path}?token=${server.token}`;
    },
    async restart() {
      await stopChild(child);
      ({ child, first } = await spawnServe(root, data));
      describe(first);
    },
    async stop() {
      const code = await stopChild(child);
      rmSync(root, { recursive: true, force: true });
      return code;
    },
  };
  const describe = (line) => {
    const url = new URL(line.url);
    Object.assign(server, { port: line.port, pid: line.pid, url: line.url, token: url.searchParams.get("token"), origin: url.origin });
  };
  describe(first);
  return server;
}

/** A raw HTTP request to the server's socket with exactly these headers (Host included). */
export function rawRequest(port, { method = "GET", path = "/", headers = {}, body } = {}) {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      { host: "127.0.0.1", port, method, path, headers, setHost: false },
      (res) => {
        const chunks = [];
        res.on("data", (c) => chunks.push(c));
        res.on("end", () => {
          const text = Buffer.concat(chunks).toString("utf8");
          let json = null;
          try {
            json = JSON.parse(text);
          } catch {
            // not JSON
          }
          resolve({ status: res.statusCode, headers: res.headers, text, json });
        });
      },
    );
    req.on("error", reject);
    if (body !== undefined) req.write(body);
    req.end();
  });
}
