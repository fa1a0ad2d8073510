// App cards as issue #8 asks: icon (a data: URL from the verified store; the initial when none),
// publisher and trust, readiness reason in words and its setup action (a secret to bind, "Set up a
// model" -> the Model page); the danger zone's one chooser of the four uninstall states with the
// manifest's default; and (APPHOST_SCREENSHOTS=1) a dark-theme screenshot of a mounted app.
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

import { expect, test } from "@playwright/test";

import { card, expectAccessible, FIXTURES, installed, openHost, requireCommands } from "./lib/center.mjs";
import { cli, REPO, startServer } from "./lib/server.mjs";

let server;
let work;

// A 1×1 PNG.
const PNG = Buffer.from(
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==",
  "base64",
);

/** A copy of hello-app named `name`, its APP.md edited by `edit`, installed with the CLI. */
function installVariant(name, edit, files = {}) {
  const folder = join(work, name);
  cpSync(join(FIXTURES, "hello-app"), folder, { recursive: true });
  const md = readFileSync(join(folder, "APP.md"), "utf8")
    .replace("name: hello-app", `name: ${name}`)
    .replace("namespace: hello-app", `namespace: ${name}`);
  writeFileSync(join(folder, "APP.md"), edit(md));
  for (const [path, bytes] of Object.entries(files)) writeFileSync(join(folder, path), bytes);
  cli(server.data, ["install", "--yes", "--sideload", folder]);
}

test.beforeEach(async () => {
  server = await startServer({ install: ["fixtures/packages/good/hello-app"] });
  work = mkdtempSync(join(tmpdir(), "apphost-cards-"));
});
test.afterEach(async () => {
  await server?.stop();
  rmSync(work, { recursive: true, force: true });
});

test("cards show icon, publisher and trust, the readiness reason and its setup action", async ({ page }) => {
  installVariant(
    "icon-app",
    (md) =>
      md.replace(
        "triggers:",
        "presentation:\n  icon: ./dist/ui/icon.png\nsecrets:\n  - {key: api_token, provider: example, required: true, scope: app}\ntriggers:",
      ),
    { "dist/ui/icon.png": PNG },
  );
  installVariant("agent-app", (md) => md.replace('lime.storage: "^0.10.0"', 'lime.storage: "^0.10.0"\n    lime.agent: "^0.10.0"'));
  await openHost(page, server);
  await requireCommands(page, ["list_apps", "model_settings", "bind_secret"]);

  const icon = card(page, "icon-app");
  await expect(icon.locator("img.app-icon")).toHaveAttribute("src", `data:image/png;base64,${PNG.toString("base64")}`);
  await expect(icon.getByTestId("app-publisher")).toHaveText("by AppHost Fixtures (not verified)");
  await expect(icon.locator(".trust-badge")).toHaveAttribute("data-trust", "unsigned");
  await expect(icon).toHaveAttribute("data-readiness", "needs-setup");
  await expect(icon.getByTestId("readiness-reason")).toContainText("secret api_token is not bound");
  await expect(icon.getByTestId("setup-action")).toHaveAttribute("data-setup-kind", "configure-secret");
  await expect(icon.getByTestId("setup-action")).toHaveText("Bind secret api_token");
  // No icon: the initial.
  await expect(card(page, "hello-app").locator("div.app-icon")).toHaveText("H");

  const agent = card(page, "agent-app");
  await expect(agent.getByTestId("readiness-reason")).toContainText("lime.agent needs a model");
  await agent.getByTestId("setup-action").click();
  await expect(page).toHaveURL(/#\/model$/);

  await page.goto(`${server.origin}/#/apps`);
  await icon.getByTestId("setup-action").click();
  await expect(page).toHaveURL(/#\/apps\/icon-app$/);
  await expect(page.getByTestId("setup-actions")).toContainText("apphost secrets set icon-app api_token");
  await expectAccessible(page, "the overview with a secret to bind");
  // Bind it here: write-only, the app stops needing setup.
  await page.getByTestId("secret-value-api_token").fill("canary-value-from-the-browser");
  await page.getByTestId("bind-secret-api_token").click();
  await expect(page.getByTestId("setup-actions")).toHaveCount(0);
  await expect(page.getByTestId("secret-value-api_token")).toHaveCount(0);
  await page.goto(`${server.origin}/#/apps`);
  await expect(icon).not.toHaveAttribute("data-readiness", "needs-setup");
  await expect(icon.getByTestId("setup-action")).toHaveCount(0);
  expect(JSON.stringify(cli(server.data, ["secrets", "list", "icon-app"]))).not.toContain("canary-value-from-the-browser");
});

test("the danger zone is one chooser of four states; disable only hides the app and keeps it", async ({ page }) => {
  installVariant("retain-app", (md) => md.replace("uninstallPolicy: ask", "uninstallPolicy: retain"));
  await openHost(page, server);
  await requireCommands(page, ["app_detail", "uninstall_plan", "set_enabled"]);

  // uninstallPolicy: retain preselects "Uninstall, keep data" and shows its plan.
  await page.goto(`${server.origin}/#/apps/retain-app/danger`);
  await expect(page.getByTestId("uninstall-chooser")).toHaveAttribute("data-default", "keep-data");
  await expect(page.getByTestId("uninstall-plan-keep-data")).toBeChecked();
  await expect(page.getByTestId("uninstall-plan")).toBeVisible();

  // ask: nothing preselected.
  await page.goto(`${server.origin}/#/apps/hello-app/danger`);
  await expect(page.getByTestId("uninstall-chooser")).toHaveAttribute("data-default", "");
  for (const mode of ["disable", "keep-data", "delete-data", "export"]) {
    await expect(page.getByTestId(`uninstall-plan-${mode}`)).not.toBeChecked();
  }
  await page.getByTestId("uninstall-plan-disable").check();
  const plan = page.getByTestId("uninstall-plan");
  await expect(plan).toHaveAttribute("data-mode", "disable");
  await expect(plan).toContainText("entry notes");
  await expect(plan).toContainText("Removes: nothing.");
  await page.getByTestId("uninstall-confirm").click();
  await expect.poll(() => (cli(server.data, ["list"]) ?? []).find((a) => a.name === "hello-app")?.enabled).toBe(false);
  expect(installed(server)).toContain("hello-app");
  await expect(page.getByTestId("toggle-enabled")).toBeVisible();
  await expect(page.getByTestId("uninstall-plan-disable")).toBeDisabled();
  await page.getByTestId("toggle-enabled").click();
  await expect.poll(() => (cli(server.data, ["list"]) ?? []).find((a) => a.name === "hello-app")?.enabled).toBe(true);
});

test("dark-theme screenshot of a mounted app (APPHOST_SCREENSHOTS=1)", async ({ page }) => {
  test.skip(process.env.APPHOST_SCREENSHOTS !== "1", "screenshots only when APPHOST_SCREENSHOTS=1");
  await page.setViewportSize({ width: 1200, height: 760 });
  await page.emulateMedia({ colorScheme: "dark" });
  // The Notes sample app follows the host's theme (theme:update).
  cli(server.data, ["install", "--yes", "--sideload", join(REPO, "fixtures/apps/notes")]);
  await openHost(page, server);
  await expect(page.locator("html")).toHaveAttribute("data-theme", "dark");
  await card(page, "notes").locator('button.open-entry[data-entry-key="notes"]').click();
  await expect(page.locator('iframe[data-app-id="notes"]')).toBeVisible();
  // The app answered the handshake and drew itself.
  await expect(page.frameLocator('iframe[data-app-id="notes"]').locator("body")).not.toBeEmpty();
  await page.waitForTimeout(300);
  mkdirSync(join(REPO, "docs/img"), { recursive: true });
  const out = join(REPO, "docs/img/mounted-app-dark.png");
  await page.screenshot({ path: out }); // referenced from README.md
});
