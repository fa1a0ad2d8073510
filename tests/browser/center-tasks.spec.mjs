// Task activity in the host UI (the Tasks page) against `apphost serve` and a stand-in
// OpenAI-compatible provider (lib/provider.mjs): the mounted review-queue frame starts a task
// whose model streams a reply and then asks for a risky tool (storage_write); the Tasks page
// shows the streamed text and the approval with its tool input, the app's tab shows a badge,
// Approve resolves it and the result shows; Cancel on a second task ends it as cancelled and
// Retry starts a new run; the prompt the host draws above the mounted frame (outside it) shows
// the tool and its input, the app's own approve is refused (APP_E002) and the host's Approve
// runs the tool;
// axe-core on the Tasks page, light and dark, and on the running app with the prompt. APPHOST_SCREENSHOTS=1 saves
// docs/img/task-activity.png (the README's screenshot).

import { join } from "node:path";

import AxeBuilder from "@axe-core/playwright";
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

/** A raw `lime.agent` call from inside the frame, as any app could send it: its answer message. */
async function frameCall(frame, method, args) {
  return frame.locator("body").evaluate(
    (_, [m, a]) =>
      new Promise((resolve) => {
        const requestId = `pw-${Math.random().toString(36).slice(2)}`;
        const q = new URLSearchParams(location.search);
        window.addEventListener("message", (e) => {
          if (e.source === parent && e.data?.requestId === requestId) resolve({ type: e.data.type, payload: e.data.payload });
        });
        parent.postMessage(
          { protocol: "lime.agentApp.bridge", version: 1, type: "capability:invoke", requestId, appId: q.get("app"), entryKey: q.get("entry"),
            payload: { capability: "lime.agent", method: m, args: a } },
          "*",
        );
      }),
    [method, args],
  );
}

test("the host draws the approval prompt above the running app; only its Approve runs the tool", async ({ page }) => {
  await openHost(page, server);
  await call(page, "set_model", { baseUrl: provider.baseUrl, model: "stand-in-1" });
  await page.reload();
  await expect(card(page, "review-queue")).toHaveAttribute("data-readiness", "ready");
  await card(page, "review-queue").locator('button.open-entry[data-entry-key="queue"]').click();
  const frame = page.frameLocator('iframe[data-app-id="review-queue"][data-entry-key="queue"]');
  await expect(page.locator('[data-testid="app-tab"][data-app-id="review-queue"]')).toHaveAttribute("data-state", "mounted");
  await frame.locator("#items").fill("crash on save");
  await expect(frame.locator("#write-notes")).toBeEnabled();
  await frame.locator("#write-notes").click();

  // Without visiting the Tasks page: the host page shows the prompt, outside the frame.
  const prompt = page.getByTestId("approval-prompt-item");
  await expect(prompt).toHaveCount(1);
  await expect(prompt).toHaveAttribute("data-app-id", "review-queue");
  await expect(prompt.getByTestId("approval-prompt-tool")).toHaveText("storage_write");
  await expect(prompt.getByTestId("approval-prompt-input")).toContainText("triage-notes.md");
  await expect(prompt.getByTestId("approval-prompt-input")).toContainText("crash on save");
  await expect(frame.getByTestId("approval-prompt-item")).toHaveCount(0);
  await expect(frame.locator(".approval")).toHaveCount(1);
  await expect(frame.locator('.approval button[data-decision="approve"]')).toHaveCount(0);
  // axe on the host page around the frame (the sample app's own page is not the host's).
  const { violations } = await new AxeBuilder({ page }).exclude("iframe").analyze();
  expect(violations.filter((v) => v.impact === "serious" || v.impact === "critical").map((v) => v.id)).toEqual([]);

  // The app approving its own risky call, or rewriting its input: refused, nothing changes.
  const taskId = await prompt.getAttribute("data-task-id");
  const actionId = await prompt.getAttribute("data-action-id");
  for (const [args, causeCode] of [
    [{ decision: "approve" }, "agent.approval_requires_user"],
    [{ decision: "approve", remember: "session" }, "agent.approval_requires_user"],
    [{ decision: "approve", updatedInput: { path: "evil.md", content: "the app's" } }, "agent.updated_input_unsupported"],
  ]) {
    const r = await frameCall(frame, "respondAction", { taskId, actionId, ...args });
    expect(r.type).toBe("host:error");
    expect([r.payload.code, r.payload.causeCode]).toEqual(["APP_E002", causeCode]);
  }
  const still = await call(page, "task_detail", { appId: "review-queue", taskId });
  expect(still.task.status).toBe("waiting_approval");
  await expect(prompt).toHaveCount(1);

  // The user approves in the host's prompt: the tool runs, the run ends, the prompt goes.
  await prompt.getByTestId("approval-prompt-approve").click();
  await expect(frame.locator("#task-state")).toHaveText("result/success");
  await expect(page.getByTestId("approval-prompt")).toHaveCount(0);
  await expect(frame.locator(".approval")).toHaveCount(0);
  const done = await call(page, "task_detail", { appId: "review-queue", taskId });
  const tools = done.events.filter((e) => e.type === "tool:call" && e.subtype === "result");
  expect(tools).toHaveLength(1);
  const audit = await call(page, "audit", { appId: "review-queue" });
  const responded = (Array.isArray(audit) ? audit : []).filter((r) => r.action === "task.respond");
  expect(responded).toHaveLength(1);
});
