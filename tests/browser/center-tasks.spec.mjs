// Task activity in the host UI (the Tasks page) against `apphost serve` and a stand-in
// OpenAI-compatible provider (lib/provider.mjs): the mounted review-queue frame starts a task
// whose model streams a reply and then asks for a risky tool (storage_write); the Tasks page
// shows the streamed text and the approval with its tool input, the app's tab shows a badge,
// Approve resolves it and the result shows; Cancel on a second task ends it as cancelled and
// Retry starts a new run;
// axe-core on the Tasks page, light and dark. APPHOST_SCREENSHOTS=1 saves
// docs/img/task-activity.png (the README's screenshot).

import { join } from "node:path";

import { expect, test } from "@playwright/test";

import { card, expectAccessible, openHost } from "./lib/center.mjs";
import { finish, startProvider, text, toolCall } from "./lib/provider.mjs";
import { REPO, startServer } from "./lib/server.mjs";

let server;
let provider;

/** The provider's script: a slow run for "SLOW" items, else text then storage_write, then done. */
function respond(body) {
  const messages = body.messages ?? [];
  const prompt = JSON.stringify(messages.filter((m) => m.role === "user"));
  if (prompt.includes("SLOW")) {
    return { hold: [text("Working through a long list")] };
  }
  if (messages.some((m) => m.role === "tool")) {
    return [text("The notes "), text("are written."), finish("stop")];
  }
  return [
    text("I will write "),
    text("the triage notes "),
    text("now."),
    toolCall("call_1", "storage_write", { path: "triage-notes.md", content: "- [ ] crash on save\n" }),
    finish("tool_calls"),
  ];
}

test.beforeEach(async () => {
  provider = await startProvider(respond);
  server = await startServer({ install: ["fixtures/apps/review-queue"] });
});
test.afterEach(async () => {
  await server?.stop();
  await provider?.stop();
});

async function call(page, command, args) {
  return page.evaluate(
    async ([name, body]) => {
      const r = await fetch(`/api/${name}`, {
        method: "POST",
        credentials: "same-origin",
        headers: { "Content-Type": "application/json", "X-AppHost-Session": localStorage.getItem("apphost.session") },
        body: JSON.stringify(body),
      });
      return r.json();
    },
    [command, args],
  );
}

test("a task's stream, approval, result and cancel on the Tasks page", async ({ page }) => {
  await openHost(page, server);
  const set = await call(page, "set_model", { baseUrl: provider.baseUrl, model: "stand-in-1" });
  expect(set.status?.status ?? set.status).toBeTruthy();
  // Opened from its card (a deep link /apps/<app>/<entry> is left for the first nav click).
  await page.reload();
  await expect(card(page, "review-queue")).toHaveAttribute("data-readiness", "ready");
  await card(page, "review-queue").locator('button.open-entry[data-entry-key="queue"]').click();
  const frame = page.frameLocator('iframe[data-app-id="review-queue"][data-entry-key="queue"]');
  const tab = page.locator('[data-testid="app-tab"][data-app-id="review-queue"]');
  await expect(tab).toHaveAttribute("data-state", "mounted");

  // The app starts a task that needs approval.
  await frame.locator("#items").fill("crash on save");
  await expect(frame.locator("#write-notes")).toBeEnabled();
  await frame.locator("#write-notes").click();
  await expect(frame.locator("#stream")).toContainText("I will write the triage notes now.");

  // The tab's badge says one approval is waiting, to screen readers too.
  const badge = tab.getByTestId("tab-approvals");
  await expect(badge).toHaveText(/1/);
  await expect(badge).toContainText("1 approval waiting");

  // The Tasks page: the task, its streamed text, the approval with the tool's input.
  await page.getByTestId("nav-tasks").click();
  const row = page.locator('[data-testid="task-row"][data-app-id="review-queue"]');
  await expect(row).toHaveCount(1);
  await expect(row).toHaveAttribute("data-status", "waiting_approval");
  await row.click();
  const detail = page.getByTestId("task-detail");
  await expect(detail.getByTestId("task-text").first()).toContainText("I will write the triage notes now.");
  const approval = detail.getByTestId("task-approval");
  await expect(approval).toContainText("storage_write");
  await expect(approval.getByTestId("task-approval-input")).toContainText("triage-notes.md");
  await expect(approval.getByTestId("task-approval-input")).toContainText("crash on save");
  await expect(detail.getByTestId("task-retry")).toBeDisabled();

  // axe on the Tasks page with a task open, light and dark.
  await page.emulateMedia({ colorScheme: "light" });
  await expectAccessible(page, "#/tasks (light)");
  await page.emulateMedia({ colorScheme: "dark" });
  await expectAccessible(page, "#/tasks (dark)");
  await page.emulateMedia({ colorScheme: "light" });
  if (process.env.APPHOST_SCREENSHOTS === "1") {
    await page.setViewportSize({ width: 1280, height: 860 });
    await page.screenshot({ path: join(REPO, "docs/img/task-activity.png"), fullPage: false });
  }

  // Approve as the host's user: the tool runs, the run ends with its result.
  await approval.getByTestId("task-approve").click();
  await expect(detail).toHaveAttribute("data-status", "succeeded");
  await expect(detail.getByTestId("task-result")).toHaveAttribute("data-subtype", "success");
  await expect(detail.getByTestId("task-text").first()).toContainText("The notes are written.");
  await expect(detail.getByTestId("task-approval")).toHaveCount(0);
  await expect(detail.getByTestId("task-tool").first()).toHaveAttribute("data-status", "done");
  await expect(badge).toHaveCount(0);

  // The frame saw the same run end (one runtime: the app's events and the host's view agree).
  await page.getByTestId("nav-running").click();
  await expect(tab).toHaveAttribute("data-state", "mounted");
  await expect(frame.locator("#task-state")).toHaveText("result/success");

  // A second task, cancelled from the Tasks page while it streams.
  await frame.locator("#items").fill("SLOW: a long list");
  await expect(frame.locator("#write-notes")).toBeEnabled();
  await frame.locator("#write-notes").click();
  await expect(frame.locator("#stream")).toContainText("Working through a long list");
  await page.getByTestId("nav-tasks").click();
  const second = page.locator('[data-testid="task-row"][data-status="running"]');
  await expect(second).toHaveCount(1);
  await second.click();
  await expect(detail.getByTestId("task-text").first()).toContainText("Working through a long list");
  await detail.getByTestId("task-cancel").click();
  await expect(detail).toHaveAttribute("data-status", "cancelled");
  await expect(detail.getByTestId("task-result")).toHaveAttribute("data-subtype", "cancelled");
  await expect(detail.getByTestId("task-retry")).toBeEnabled();
  await expect(page.locator('[data-testid="task-row"]')).toHaveCount(2);
  // Retry starts a new run of the same task (the stand-in holds it again), cancelled in turn.
  await detail.getByTestId("task-retry").click();
  await expect(detail.getByTestId("task-run")).toHaveCount(2);
  await expect(detail).toHaveAttribute("data-status", "running");
  await expect(detail.getByTestId("task-text").nth(1)).toContainText("Working through a long list");
  await detail.getByTestId("task-cancel").click();
  await expect(detail).toHaveAttribute("data-status", "cancelled");
  await expect(detail.getByTestId("task-result")).toHaveCount(2);
  await expect(page.locator('[data-testid="task-row"]')).toHaveCount(2);

  // The host's actions are in the audit log.
  const audit = await call(page, "audit", { appId: "review-queue" });
  const actions = (Array.isArray(audit) ? audit : []).map((r) => r.action);
  expect(actions).toContain("task.respond");
  expect(actions).toContain("task.cancel");
  expect(actions).toContain("task.retry");
});
