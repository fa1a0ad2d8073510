// The app detail page's "Tools and knowledge" section under `apphost serve`: the MCP tools the
// app declares (toolRefs[]) with their state, granted and revoked from the page (the CLI sees
// the same grants), and a knowledge template bound to a folder and unbound from the page.
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

import { expect, test } from "@playwright/test";

import { cli, REPO, startServer } from "./lib/server.mjs";

test.describe.configure({ mode: "serial" });

const APP = "material-app";
let server;
let page;
let root;
let docs;

test.beforeAll(async ({ browser }) => {
  root = mkdtempSync(join(tmpdir(), "apphost-material-"));
  const folder = join(root, APP);
  cpSync(join(REPO, "fixtures", "packages", "good", "hello-app"), folder, { recursive: true });
  const md = join(folder, "APP.md");
  writeFileSync(
    md,
    readFileSync(md, "utf8")
      .replaceAll("hello-app", APP)
      .replace('    lime.storage: "^0.10.0"\n', '    lime.storage: "^0.10.0"\n    lime.tools: "^0.10.0"\n    lime.knowledge: "^0.10.0"\n')
      .replace(
        "runtimePackage:",
        "toolRefs:\n  - {key: t/echo}\n  - {key: delete_note, provider: t}\nknowledgeTemplates:\n  - {key: handbook, standard: agentknowledge, type: pack}\nruntimePackage:",
      ),
  );
  docs = join(root, "docs");
  mkdirSync(docs);
  writeFileSync(join(docs, "refunds.md"), "# Refunds\nRefunds reach the card in five days.\n");
  server = await startServer();
  cli(server.data, ["install", "--yes", "--sideload", folder]);
  cli(server.data, ["tools", "add", "t", "--", "/usr/bin/python3", join(REPO, "fixtures", "mcp", "test_server.py")]);
  page = await (await browser.newContext()).newPage();
  await page.goto(server.signIn("/"));
  await expect(page.locator("#app-list")).toBeAttached();
});

test.afterAll(async () => {
  await page?.context().close();
  if (server) expect(await server.stop()).toBe(0);
  if (root) rmSync(root, { recursive: true, force: true });
});

test("declared tools are granted and revoked on the detail page", async () => {
  await page.goto(`${server.origin}/#/apps/${APP}/data`);
  const echo = page.locator('[data-testid="material-tool"][data-tool="t/echo"]');
  await expect(echo).toBeVisible({ timeout: 20_000 });
  await expect(echo).toHaveAttribute("data-granted", "false");
  await expect(page.locator('[data-testid="material-tool"]')).toHaveCount(2);
  await page.getByTestId("material-grant-t/echo").click();
  await expect(echo).toHaveAttribute("data-granted", "true");
  // The grant is the host's: the app's call on the host's own path now works...
  const echoCall = () => cli(server.data, ["tools", "call", APP, "t/echo", JSON.stringify({ text: "granted" })]);
  expect(JSON.stringify(echoCall())).toContain("granted");
  await page.getByTestId("material-revoke-t/echo").click();
  await expect(echo).toHaveAttribute("data-granted", "false");
  // ...and after the revoke it is refused.
  expect(echoCall).toThrow(/tools\.not_granted/);
});

test("a knowledge template is bound to a folder and unbound on the detail page", async () => {
  await page.goto(`${server.origin}/#/apps/${APP}/data`);
  const kb = page.locator('[data-testid="material-knowledge"][data-template="handbook"]');
  await expect(kb).toHaveAttribute("data-bound", "false", { timeout: 20_000 });
  await page.getByTestId("material-bind-path-handbook").fill(docs);
  await page.getByTestId("material-bind-handbook").click();
  await expect(kb).toHaveAttribute("data-bound", "true");
  await expect(kb).toContainText("1 files");
  const status = cli(server.data, ["knowledge", "status", APP]);
  expect(JSON.stringify(status)).toContain("handbook");
  await page.getByTestId("material-unbind-handbook").click();
  await expect(kb).toHaveAttribute("data-bound", "false");
});
