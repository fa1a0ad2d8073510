// Backend services under `apphost serve`: the doc-parser sample's page calls its Python service
// through lime.services.call (the outline appears in its frame), the app detail page's Services
// section (Data tab) shows the service running with its pid, Stop stops it, Show log shows its
// log, and Start starts it again. Needs apphost-service-shim beside the binary.
import { expect, test } from "@playwright/test";

import { startServer } from "./lib/server.mjs";

test.describe.configure({ mode: "serial" });

const APP = "doc-parser";
const FRAME = `iframe[data-app-id="${APP}"][data-entry-key="parser"][data-mount-id]`;
let server;
let page;

test.beforeAll(async ({ browser }) => {
  server = await startServer({ install: ["fixtures/apps/doc-parser"] });
  page = await (await browser.newContext()).newPage();
  await page.goto(server.signIn("/"));
  await expect(page.locator("#app-list")).toBeAttached();
});

test.afterAll(async () => {
  await page?.context().close();
  if (server) expect(await server.stop()).toBe(0);
});

test("the page parses through its own service", async () => {
  await page.goto(`${server.origin}/apps/${APP}/parser`);
  const frame = page.frameLocator(FRAME);
  await expect(frame.locator("body")).toHaveAttribute("data-status", "ready", { timeout: 20_000 });
  await frame.locator("#parse").click();
  await expect(frame.locator("body")).toHaveAttribute("data-status", "parsed", { timeout: 20_000 });
  await expect(frame.locator("#headings")).toHaveText("2");
  await expect(frame.locator("#outline")).toContainText("Part");
});

test("the detail page lists the service, stops it, shows its log and starts it", async () => {
  await page.goto(`${server.origin}/#/apps/${APP}/data`);
  const section = page.getByTestId("detail-services");
  await expect(section).toBeVisible({ timeout: 20_000 });
  const state = page.getByTestId("service-parser-state");
  await expect(state).toHaveText("running", { timeout: 20_000 });
  await expect(page.getByTestId("service-parser")).toContainText("pid");
  await page.getByTestId("service-parser").getByRole("button", { name: "Stop" }).click();
  await expect(state).toHaveText("stopped", { timeout: 20_000 });
  await page.getByTestId("service-parser").getByRole("button", { name: "Show log" }).click();
  await expect(page.getByTestId("service-log")).toBeVisible();
  await page.getByTestId("service-parser").getByRole("button", { name: "Start" }).click();
  await expect(state).toHaveText("running", { timeout: 20_000 });
});
