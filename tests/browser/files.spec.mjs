// lime.files end to end under `apphost serve`: a file granted with `apphost files grant` is
// listed and read by the app from its own frame (by ref; the path never reaches it), revoked on
// the app detail page (Data tab, Files section), and the app's next read is refused with
// `files.ref_not_found` (APP_E904).
import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

import { expect, test } from "@playwright/test";

import { cli, REPO, startServer } from "./lib/server.mjs";

test.describe.configure({ mode: "serial" });

const APP = "files-app";
const FRAME = `iframe[data-app-id="${APP}"][data-entry-key="main"][data-mount-id]`;
let server;
let page;
let root;
let ref;
let docPath;

const frame = () => page.frameLocator(FRAME);

/** Clicks a button in the frame and waits for its action to finish; returns #out's text.
 * `meanwhile` runs after the click (the user answering a picker the host draws). */
async function click(id, meanwhile = async () => {}) {
  const body = frame().locator("body");
  await expect(body).toHaveAttribute("data-status", "ready", { timeout: 20_000 });
  const before = Number(await body.getAttribute("data-runs"));
  await frame().locator(`#${id}`).click();
  await meanwhile();
  await expect.poll(async () => Number(await body.getAttribute("data-runs")), { timeout: 20_000 }).toBeGreaterThan(before);
  return (await frame().locator("#out").textContent()).trim();
}

async function openApp() {
  await page.goto(`${server.origin}/apps/${APP}/main`);
  await expect(frame().locator("body")).toHaveAttribute("data-status", "ready", { timeout: 20_000 });
}

test.beforeAll(async ({ browser }) => {
  root = mkdtempSync(join(tmpdir(), "apphost-files-"));
  const folder = join(root, APP);
  cpSync(join(REPO, "tests", "browser", "fixtures", APP), folder, { recursive: true });
  cpSync(join(REPO, "fixtures", "apps", "notes", "ui", "sdk"), join(folder, "ui", "sdk"), { recursive: true });
  mkdirSync(join(root, "docs"));
  docPath = join(root, "docs", "letter.txt");
  writeFileSync(docPath, "Dear app, hello.");
  server = await startServer();
  cli(server.data, ["install", "--yes", "--sideload", folder]);
  page = await (await browser.newContext()).newPage();
  await page.goto(server.signIn("/"));
  await expect(page.locator("#app-list")).toBeAttached();
});

test.afterAll(async () => {
  await page?.context().close();
  if (server) expect(await server.stop()).toBe(0);
  if (root) rmSync(root, { recursive: true, force: true });
});

test("a file granted with the CLI is listed and read by the app, never by its path", async () => {
  const granted = cli(server.data, ["files", "grant", APP, docPath]);
  ref = granted.ref;
  expect(ref).toMatch(/^fref_[0-9a-f]{32}$/);
  expect(cli(server.data, ["files", "list", APP]).map((r) => r.ref)).toEqual([ref]);
  await openApp();
  const listed = await click("list");
  expect(listed).toBe(`${ref} letter.txt file 16`);
  expect(listed).not.toContain(root);
  await frame().locator("#ref").fill(ref);
  expect(await click("read")).toBe("ok:Dear app, hello.");
  // A path handed in as a ref is refused.
  await frame().locator("#ref").fill(docPath);
  expect(await click("read")).toBe("err:APP_E900 files.path_not_allowed");
});

test("requestFiles: the user picks in the host's picker (a path and an upload); the app gets refs", async () => {
  const picker = page.getByTestId("file-picker");
  // Cancelled: the app hears so, nothing is granted.
  expect(
    await click("pick", async () => {
      await expect(picker).toBeVisible({ timeout: 20_000 });
      await page.locator("#pick-cancel").click();
    }),
  ).toBe("cancelled");
  // A path outside what may be shared is refused in the picker, which stays open.
  const picked = await click("pick", async () => {
    await expect(picker).toBeVisible({ timeout: 20_000 });
    await page.getByTestId("pick-paths").fill(server.data);
    await page.locator("#pick-share").click();
    await expect(page.getByTestId("pick-error")).toContainText("files.path_not_allowed");
    await page.getByTestId("pick-paths").fill(docPath);
    await page.getByTestId("pick-upload").setInputFiles({ name: "note.txt", mimeType: "text/plain", buffer: Buffer.from("uploaded words") });
    await page.locator("#pick-share").click();
  });
  expect(picked).toBe("picked:letter.txt,note.txt");
  const refs = cli(server.data, ["files", "list", APP]);
  expect(refs.map((r) => r.displayName).sort()).toEqual(["letter.txt", "letter.txt", "note.txt"]);
  const upload = refs.find((r) => r.origin === "upload");
  await frame().locator("#ref").fill(upload.ref);
  expect(await click("read")).toBe("ok:uploaded words");
  for (const r of refs.filter((x) => x.ref !== ref)) cli(server.data, ["files", "revoke", APP, r.ref]);
});

test("Revoke on the detail page: the app's next read is files.ref_not_found", async () => {
  await page.goto(`${server.origin}/#/apps/${APP}/data`);
  const item = page.locator(`[data-testid="file-ref"][data-ref="${ref}"]`);
  await expect(item).toBeVisible({ timeout: 20_000 });
  await expect(item).toContainText("letter.txt");
  await page.getByTestId(`file-ref-revoke-${ref}`).click();
  await expect(item).toHaveCount(0);
  await expect(page.getByTestId("detail-files")).toContainText("No files are shared with this app.");
  expect(cli(server.data, ["files", "list", APP])).toEqual([]);
  await openApp();
  await frame().locator("#ref").fill(ref);
  expect(await click("read")).toBe("err:APP_E904 files.ref_not_found");
  expect(await click("list")).toBe("none");
});
