// Helpers of the workflow specs (workflow-runs.spec.mjs, workflow-app.spec.mjs): the model set
// through the host API, a `workflow` entry run from the app's Entries tab, a page of the host UI
// shown by its hash (open frames stay mounted), and a run's detail on the Tasks page.
import { expect } from "@playwright/test";

/** Sets the agent model to the stand-in at `baseUrl` as the host UI does (`set_model`). */
export async function setModel(page, baseUrl) {
  const answer = await page.evaluate(async (baseUrl) => {
    const r = await fetch("/api/set_model", {
      method: "POST",
      credentials: "same-origin",
      headers: { "Content-Type": "application/json", "X-AppHost-Session": localStorage.getItem("apphost.session") },
      body: JSON.stringify({ baseUrl, model: "stand-in-1" }),
    });
    return r.status;
  }, baseUrl);
  expect(answer).toBe(200);
}

/** Runs `app`'s workflow entry `entry` from its Entries tab with `input`; lands on the Tasks page. */
export async function startFromEntries(page, server, app, entry, input) {
  await page.goto(`${server.origin}/#/apps/${app}/entries`);
  const run = page.locator(`[data-testid="run-workflow"][data-entry-key="${entry}"]`);
  await expect(run).toBeEnabled();
  await run.click();
  await page.getByTestId("run-workflow-input").fill(JSON.stringify(input));
  await page.getByTestId("run-workflow-start").click();
  await expect(page).toHaveURL(/#\/tasks$/);
}

/** Shows a page of the host UI by its hash without reloading (app frames stay mounted). */
export async function showPage(page, hash) {
  await page.evaluate((h) => {
    location.hash = h;
  }, hash);
}

/** On the Tasks page: opens the run's detail (its row by id) and returns the detail. */
export async function openRun(page, runId) {
  await showPage(page, "#/tasks");
  await page.locator(`[data-testid="run-row"][data-run-id="${runId}"]`).click();
  const detail = page.locator(`[data-testid="run-detail"][data-run-id="${runId}"]`);
  await expect(detail).toBeVisible();
  return detail;
}
