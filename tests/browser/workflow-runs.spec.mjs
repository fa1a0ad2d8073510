// Workflow runs in the host UI (issue 20 §3) against `apphost serve` and a stand-in
// OpenAI-compatible provider (lib/provider.mjs): the sample app fixtures/apps/reply-workflow's
// `workflow` entry is started from its Entries tab (the Run action, with its input), the run
// shows on the Tasks page with its step timeline and the review the host draws (the draft the
// model wrote); Approve runs it on to storage and an artifact, the result and the run's evidence
// show; a second run is rejected and takes the other branch.

import { expect, test } from "@playwright/test";

import { openHost } from "./lib/center.mjs";
import { finish, startProvider, text } from "./lib/provider.mjs";
import { startServer } from "./lib/server.mjs";
import { setModel, startFromEntries } from "./lib/workflow.mjs";

let server;
let provider;

test.beforeEach(async () => {
  provider = await startProvider(() => [text("Dear "), text("owls"), finish("stop")]);
  server = await startServer({ install: ["fixtures/apps/reply-workflow"] });
});
test.afterEach(async () => {
  await server?.stop();
  await provider?.stop();
});

test("Run from the entry, review on the Tasks page, approve, see the result and evidence", async ({ page }) => {
  await openHost(page, server);
  await setModel(page, provider.baseUrl);
  await page.reload();

  await startFromEntries(page, server, "reply-workflow", "reply", { topic: "owls" });
  const row = page.getByTestId("run-row").first();
  await expect(row).toBeVisible();
  await row.click();
  const detail = page.getByTestId("run-detail");
  const pending = detail.getByTestId("run-pending");
  await expect(pending).toHaveAttribute("data-kind", "review", { timeout: 30_000 });
  await expect(pending.getByTestId("run-pending-prompt")).toContainText("Approve this reply?");
  await expect(pending.getByTestId("run-review-show")).toContainText("Dear owls");
  await expect(detail.locator('[data-testid="run-step"][data-state="draft"]')).toHaveAttribute("data-status", "succeeded");

  await pending.getByTestId("run-approve").click();
  await expect(detail).toHaveAttribute("data-status", "succeeded", { timeout: 30_000 });
  await expect(detail.getByTestId("run-result")).toContainText('"approved":true');
  for (const state of ["draft", "review", "save", "publish"]) {
    await expect(detail.locator(`[data-testid="run-step"][data-state="${state}"]`)).toHaveCount(1);
  }
  await expect(detail.locator('[data-testid="run-step"][data-state="review"]')).toHaveAttribute("data-status", "approved");
  await expect(detail.getByTestId("run-evidence")).toHaveAttribute("data-evidence-id", /^evidence_/, { timeout: 10_000 });

  // A second run, rejected: the other branch, nothing saved or published.
  await startFromEntries(page, server, "reply-workflow", "reply", { topic: "bees" });
  const second = page.locator('[data-testid="run-row"]').first();
  await second.click();
  const pending2 = page.getByTestId("run-detail").getByTestId("run-pending");
  await expect(pending2).toHaveAttribute("data-kind", "review", { timeout: 30_000 });
  await pending2.getByTestId("run-reject").click();
  const detail2 = page.getByTestId("run-detail");
  await expect(detail2).toHaveAttribute("data-status", "succeeded", { timeout: 30_000 });
  await expect(detail2.getByTestId("run-result")).toContainText('"approved":false');
  await expect(detail2.locator('[data-testid="run-step"][data-state="save"]')).toHaveCount(0);
});
