// Shared set-up for the desktop tests: configuration from the environment, one app session per
// test that is ALWAYS deleted (killing tauri-driver does not kill the app), and failure
// artifacts (page source, screenshot) whose paths are printed.

import { execFileSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

import { Session, waitFor } from "./webdriver.mjs";

export const APPHOST_BIN = process.env.APPHOST_BIN ?? "";
export const WEBDRIVER_URL = process.env.WEBDRIVER_URL ?? "http://127.0.0.1:4444";
export const ARTIFACTS_DIR =
  process.env.E2E_ARTIFACTS_DIR ?? join(tmpdir(), `apphost-e2e-${process.pid}`);

/** Fails fast, with the reason, when the harness was started without its inputs. */
export function requireEnvironment() {
  if (APPHOST_BIN === "") {
    throw new Error("APPHOST_BIN is not set: run these tests through scripts/e2e.sh");
  }
}

function slug(text) {
  return text.toLowerCase().replace(/[^a-z0-9]+/g, "-").replace(/^-|-$/g, "").slice(0, 60);
}

/** Saves page source and a screenshot of the session; prints where they went. */
async function saveArtifacts(session, name) {
  mkdirSync(ARTIFACTS_DIR, { recursive: true });
  const base = join(ARTIFACTS_DIR, slug(name));
  const lines = [];
  try {
    const source = await session.source();
    writeFileSync(`${base}.html`, source);
    lines.push(`page source: ${base}.html`);
    const body = await session.execute("return document.body ? document.body.innerText : '';");
    lines.push(`page text:\n${String(body).slice(0, 2000)}`);
  } catch (error) {
    lines.push(`page source unavailable: ${error.message}`);
  }
  try {
    const png = await session.screenshot();
    writeFileSync(`${base}.png`, Buffer.from(png, "base64"));
    lines.push(`screenshot: ${base}.png`);
  } catch (error) {
    lines.push(`screenshot unavailable: ${error.message}`);
  }
  return lines.join("\n");
}

/**
 * Runs `body` with a fresh app session. On failure the artifacts are saved and their paths are
 * added to the error; the session is deleted in every case.
 * @param {import("node:test").TestContext} t
 * @param {(session: Session) => Promise<void>} body
 * @param {string[]} [args] arguments for `apphost` (e.g. ["open", "notes"])
 */
export async function withApp(t, body, args = []) {
  requireEnvironment();
  const session = await Session.create(WEBDRIVER_URL, { application: APPHOST_BIN, args });
  try {
    await body(session);
  } catch (error) {
    const where = await saveArtifacts(session, t.name);
    console.error(`# ${t.name} failed; artifacts:\n${where.replace(/^/gm, "#   ")}`);
    throw error;
  } finally {
    await session.delete();
  }
}

/**
 * Rust's bridge diagnostics (`bridge_diagnostics`: refusedByReason, recentRefusals, executions,
 * serveRefusals), asked from the host page: the only page the command guard lets call.
 */
export async function bridgeDiagnostics(session) {
  const result = await session.executeAsync(
    "const done = arguments[arguments.length - 1];" +
      "window.__TAURI_INTERNALS__.invoke('bridge_diagnostics').then((d) => done({ ok: d }), (e) => done({ err: e }));",
  );
  if (!result.ok) {
    throw new Error(`bridge_diagnostics failed: ${JSON.stringify(result.err)}`);
  }
  return result.ok;
}

/** Waits until the host UI finished its first load (body[data-state] is no longer "loading"). */
export async function waitForLoaded(session, timeoutMs = 20_000) {
  await session.waitForElement("#app-list", timeoutMs);
  return waitFor(
    async () => {
      const state = await session.execute("return document.body.dataset.state || '';");
      return state !== "" && state !== "loading" ? state : null;
    },
    { timeoutMs, what: "the app list to load (body[data-state] != loading)" },
  );
}

/**
 * Titles of the top-level X11 windows on $DISPLAY (xwininfo, from x11-utils), or null when
 * that cannot be asked.
 */
export function nativeWindowTitles() {
  if (!process.env.DISPLAY) {
    return null;
  }
  let output;
  try {
    output = execFileSync("xwininfo", ["-root", "-children"], { encoding: "utf8", timeout: 5_000 });
  } catch {
    return null;
  }
  return [...output.matchAll(/^\s+0x[0-9a-f]+ "(.*)":/gm)].map((m) => m[1]);
}
