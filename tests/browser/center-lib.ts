// Shared helpers of the app-center specs (center-*.spec.ts): a fresh data dir, `apphost serve`
// on a free port, fixture packages zipped for upload, the CLI for setup, and axe-core.
import AxeBuilder from "@axe-core/playwright";
import { expect, test, type Page } from "@playwright/test";
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { createInterface } from "node:readline";

export const REPO = resolve(__dirname, "../..");
export const APPHOST_BIN = process.env.APPHOST_BIN ?? join(REPO, "target/debug/apphost");
export const FIXTURES = join(REPO, "fixtures/packages/good");

/** Why the specs cannot run against this build, or null: a missing binary or `serve` command. */
export function missingBackend(): string | null {
  if (!existsSync(APPHOST_BIN)) {
    return `APPHOST_BIN ${APPHOST_BIN} does not exist (cargo build -p apphost)`;
  }
  try {
    execFileSync(APPHOST_BIN, ["serve", "--help"], { stdio: "ignore", timeout: 10_000 });
    return null;
  } catch {
    return "`apphost serve` is missing from this build";
  }
}

export interface Served {
  url: string;
  port: number;
  dataDir: string;
  /** Runs the apphost CLI on the same data dir; returns stdout. */
  cli(...args: string[]): string;
  stop(): Promise<void>;
}

/** Starts `apphost serve --json --port 0` on a fresh data directory. */
export async function serve(): Promise<Served> {
  const dataDir = mkdtempSync(join(tmpdir(), "apphost-center-"));
  const env = { ...process.env, APPHOST_DATA_DIR: dataDir };
  const child: ChildProcess = spawn(APPHOST_BIN, ["serve", "--json", "--port", "0"], {
    env,
    stdio: ["ignore", "pipe", "inherit"],
  });
  const lines = createInterface({ input: child.stdout! });
  const first = await new Promise<string>((ok, fail) => {
    const timer = setTimeout(() => fail(new Error("apphost serve printed nothing in 30 s")), 30_000);
    lines.once("line", (line) => {
      clearTimeout(timer);
      ok(line);
    });
    child.once("exit", (code) => fail(new Error(`apphost serve exited (${code}) before printing its URL`)));
  });
  const { url, port } = JSON.parse(first) as { url: string; port: number };
  return {
    url,
    port,
    dataDir,
    cli: (...args) => execFileSync(APPHOST_BIN, args, { env, encoding: "utf8", timeout: 60_000 }),
    stop: async () => {
      if (child.exitCode === null) {
        const exited = new Promise((ok) => child.once("exit", ok));
        child.kill("SIGTERM");
        await exited;
      }
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** Zips a fixture package folder (files at the zip's root) and returns the zip's path. */
export function zipFixture(name: string): string {
  const folder = join(FIXTURES, name);
  const out = join(mkdtempSync(join(tmpdir(), "apphost-zip-")), `${name}.zip`);
  execFileSync("python3", ["-m", "zipfile", "-c", out, ...readdirSync(folder)], { cwd: folder });
  return out;
}

/** Opens the host UI (the URL with the launch token) and waits for the list to load. */
export async function openHost(page: Page, served: Served): Promise<void> {
  await page.goto(served.url);
  // The launch token is good once: a second sign-in would show no host UI at all.
  await expect(page.locator("#app-list")).toBeAttached();
  await expect(page.locator("body")).toHaveAttribute("data-state", /^(ready|empty|error)$/);
}

/** Uploads a package through "Add app" and waits for the review sheet's review phase. */
export async function review(page: Page, zip: string): Promise<void> {
  await page.getByTestId("add-app-file").setInputFiles(zip);
  await expect(page.getByTestId("review-sheet").locator("[data-phase]")).toHaveAttribute("data-phase", "review");
}

/**
 * Marks the running test fixme when the backend does not offer one of `commands` yet
 * (`api.unknown_command`), naming the missing ones. Asked through the page (it holds the cookie).
 */
export async function requireCommands(page: Page, commands: string[]): Promise<void> {
  const missing = await page.evaluate(async (names) => {
    const out: string[] = [];
    for (const name of names) {
      const response = await fetch(`/api/${name}`, {
        method: "POST",
        credentials: "same-origin",
        headers: { "Content-Type": "application/json" },
        body: "{}",
      });
      const answer = (await response.json().catch(() => null)) as { code?: string } | null;
      if (answer?.code === "api.unknown_command") out.push(name);
    }
    return out;
  }, commands);
  test.fixme(missing.length > 0, `the backend has no ${missing.join(", ")} yet`);
}

export const card = (page: Page, app: string) => page.locator(`[data-testid="app-card"][data-app-name="${app}"]`);

/** axe-core on the current page: no serious or critical violation. */
export async function expectAccessible(page: Page, what: string): Promise<void> {
  const { violations } = await new AxeBuilder({ page }).analyze();
  const bad = violations
    .filter((v) => v.impact === "serious" || v.impact === "critical")
    .map((v) => `${v.id} (${v.impact}): ${v.nodes.map((n) => n.target.join(" ")).join(", ")}`);
  expect(bad, `axe on ${what}`).toEqual([]);
}
