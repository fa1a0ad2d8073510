// Helpers of the app-center specs (center-*.spec.mjs): sign in, fixture packages zipped for
// upload, "Add app" to the review sheet, a marker for commands the backend lacks, and axe-core.
import AxeBuilder from "@axe-core/playwright";
import { expect, test } from "@playwright/test";
import { execFileSync } from "node:child_process";
import { mkdtempSync, readdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

import { cli, REPO } from "./server.mjs";

export const FIXTURES = join(REPO, "fixtures/packages/good");

/** Installed app names (`apphost --json list`). */
export function installed(server) {
  return (cli(server.data, ["list"]) ?? []).map((a) => a.name);
}

/** Whether `permission` of `app` is granted (`apphost --json grants`). */
export function granted(server, app, permission) {
  return (cli(server.data, ["grants", app]) ?? []).find((g) => g.permission === permission)?.granted;
}

/** Zips a fixture package folder (its files at the zip's root) and returns the zip's path. */
export function zipFixture(name) {
  const folder = join(FIXTURES, name);
  const out = join(mkdtempSync(join(tmpdir(), "apphost-zip-")), `${name}.zip`);
  execFileSync("python3", ["-m", "zipfile", "-c", out, ...readdirSync(folder)], { cwd: folder });
  return out;
}

/** Signs in (the launch token is good once) and waits for the list to load. */
export async function openHost(page, server, path = "/") {
  await page.goto(server.signIn(path));
  await expect(page.locator("#app-list")).toBeAttached();
  await expect(page.locator("body")).toHaveAttribute("data-state", /^(ready|empty|error)$/);
}

/** Uploads a package through "Add app" and waits for the review sheet's review phase. */
export async function review(page, zip) {
  await page.getByTestId("add-app-file").setInputFiles(zip);
  await expect(page.getByTestId("review-sheet").locator("[data-phase]")).toHaveAttribute("data-phase", "review");
}

export const card = (page, app) => page.locator(`[data-testid="app-card"][data-app-name="${app}"]`);

/**
 * Marks the running test fixme when the backend does not offer one of `commands` yet
 * (`api.unknown_command`), naming them. Asked from the host page (it holds the session).
 */
export async function requireCommands(page, commands) {
  const missing = await page.evaluate(async (names) => {
    const out = [];
    for (const name of names) {
      const response = await fetch(`/api/${name}`, {
        method: "POST",
        credentials: "same-origin",
        headers: { "Content-Type": "application/json", "X-AppHost-Session": localStorage.getItem("apphost.session") },
        body: "{}",
      });
      const answer = await response.json().catch(() => null);
      if (answer?.code === "api.unknown_command") out.push(name);
    }
    return out;
  }, commands);
  test.fixme(missing.length > 0, `the backend has no ${missing.join(", ")} yet`);
}

/** axe-core on the current page: no serious or critical violation. */
export async function expectAccessible(page, what) {
  const { violations } = await new AxeBuilder({ page }).analyze();
  const bad = violations
    .filter((v) => v.impact === "serious" || v.impact === "critical")
    .map((v) => `${v.id} (${v.impact}): ${v.nodes.map((n) => n.target.join(" ")).join(", ")}`);
  expect(bad, `axe on ${what}`).toEqual([]);
}
