// Helpers for workflow runs in the real window (workflow.test.mjs): a collector of the frame's lime.workflow `host:event`s (answers to raw calls are kept
// where lib/tasks.mjs's `call` reads them), and the host page's Tasks page and run detail.
import { execFileSync } from "node:child_process";

import { APPHOST_BIN } from "./harness.mjs";
import { waitFor } from "./webdriver.mjs";

export { PAUSE, PAUSE_MS, PAUSE_WORKFLOW, SAMPLE, SAMPLE_WORKFLOW } from "./workflow-apps.mjs";

/** `apphost --json ARGS…` on the harness's data directory, parsed. */
export function cliJson(...args) {
  return JSON.parse(execFileSync(APPHOST_BIN, ["--json", ...args], { encoding: "utf8", timeout: 60_000, stdio: ["ignore", "pipe", "pipe"] }));
}


/**
 * Installed in the frame once: records every lime.workflow `host:event` and the answers to raw
 * calls (requestIds `e2e-N`, read by lib/tasks.mjs's `call`).
 */
const COLLECTOR = `
  if (!window.__e2e) {
    const q = new URLSearchParams(location.search);
    const st = (window.__e2e = { events: [], runEvents: [], answers: {}, seq: 0, appId: q.get("app"), entryKey: q.get("entry") });
    window.addEventListener("message", (e) => {
      const m = e.data;
      if (e.source !== parent || !m || m.protocol !== "lime.agentApp.bridge") return;
      if (m.type === "host:event" && m.payload && m.payload.capability === "lime.workflow") {
        st.runEvents.push({ runId: m.payload.runId, event: m.payload.event });
      } else if (typeof m.requestId === "string" && m.requestId.startsWith("e2e-")) {
        st.answers[m.requestId] = { type: m.type, payload: m.payload, at: Date.now() };
      }
    });
  }
  return true;`;

export const frameOf = (app, entry) => `iframe[data-app-id="${app}"][data-entry-key="${entry}"]`;

/** Switches into the app's frame, waits for its handshake and installs the collector. */
export async function enterFrame(session, app, entry = "main") {
  await session.switchToTop();
  const frame = await session.waitForElement(frameOf(app, entry), 30_000);
  await session.switchToFrame(frame);
  await waitFor(async () => (await session.execute("return document.body && document.body.dataset.status")) === "ready", {
    timeoutMs: 30_000,
    what: `the ${app} handshake (body[data-status=ready])`,
  });
  await session.execute(COLLECTOR);
  return frame;
}

/** The lime.workflow events of `runId` the frame received, in arrival order. */
export async function runEvents(session, runId) {
  const all = await session.execute("return window.__e2e.runEvents;");
  return all.filter((e) => e.runId === runId).map((e) => e.event);
}

/** The text of the first match of `css` in the current document ("" when none). */
export function textOf(session, css) {
  return session.execute("const e = document.querySelector(arguments[0]); return e ? e.textContent : '';", [css]);
}

/** Types `text` into an input or textarea as a user would (value + an input event). */
export function typeInto(session, css, text) {
  return session.execute(
    `const e = document.querySelector(arguments[0]);
     e.value = arguments[1];
     e.dispatchEvent(new Event("input", { bubbles: true }));`,
    [css, text],
  );
}

/** Shows a page of the host UI by its hash (`#/tasks`, `#/running`); open frames stay mounted. */
export async function showPage(session, hash) {
  await session.switchToTop();
  await session.execute("location.hash = arguments[0];", [hash]);
}

/** On the Tasks page: opens the run's detail and returns its selector. */
export async function openRun(session, runId) {
  await showPage(session, "#/tasks");
  const row = await session.waitForElement(`[data-testid="run-row"][data-run-id="${runId}"]`, 20_000);
  await session.click(row);
  const detail = `[data-testid="run-detail"][data-run-id="${runId}"]`;
  await session.waitForElement(detail, 20_000);
  return detail;
}

/** Waits until the run's detail shows `css` inside it; returns the element. */
export function waitIn(session, detail, css, timeoutMs = 30_000) {
  return session.waitForElement(`${detail} ${css}`, timeoutMs);
}

/** Waits for the run's detail to show `status` (`data-status` of the detail). */
export function waitForStatus(session, detail, status, timeoutMs = 30_000) {
  return waitFor(async () => (await session.find(`${detail}[data-status="${status}"]`)) !== null, {
    timeoutMs,
    what: `${detail} to be ${status}`,
  });
}
