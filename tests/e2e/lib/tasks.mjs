// Helpers for driving lime.agent tasks from inside an app frame (tasks.test.mjs, tasks.bench.mjs):
// a collector of the frame's host:event task events, a raw Host Bridge v1 call (the same
// envelope as the SDK the app vendors in ui/sdk/), and the task event schema validator.
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

import Ajv2020 from "ajv/dist/2020.js";

import { waitFor } from "./webdriver.mjs";

export const REPO = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "..");

/** `iframe[data-app-id=APP][data-entry-key=queue]`: the review-queue page (or its copy). */
export const queueFrame = (app) => `iframe[data-app-id="${app}"][data-entry-key="queue"]`;

/**
 * Installed in the frame once: records every lime.agent `host:event` (with its arrival time on
 * the page's clock, `performance.timeOrigin + performance.now()`) and the answers to the calls
 * `CALL` sends (requestIds `e2e-N`, which the app's own client ignores).
 */
const COLLECTOR = `
  if (!window.__e2e) {
    const q = new URLSearchParams(location.search);
    const st = (window.__e2e = { events: [], answers: {}, seq: 0, appId: q.get("app"), entryKey: q.get("entry") });
    window.addEventListener("message", (e) => {
      const at = performance.timeOrigin + performance.now();
      const m = e.data;
      if (e.source !== parent || !m || m.protocol !== "lime.agentApp.bridge") return;
      if (m.type === "host:event" && m.payload && m.payload.capability === "lime.agent") {
        st.events.push({ event: m.payload.event, at });
      } else if (typeof m.requestId === "string" && m.requestId.startsWith("e2e-")) {
        st.answers[m.requestId] = { type: m.type, payload: m.payload, at };
      }
    });
  }
  return true;`;

const CALL = `
  const [capability, method, args] = arguments;
  const done = arguments[arguments.length - 1];
  const st = window.__e2e;
  const id = "e2e-" + ++st.seq;
  const sent = performance.timeOrigin + performance.now();
  parent.postMessage({ protocol: "lime.agentApp.bridge", version: 1, type: "capability:invoke", requestId: id,
    appId: st.appId, entryKey: st.entryKey, payload: { capability, method, args } }, "*");
  const t0 = Date.now();
  (function poll() {
    const a = st.answers[id];
    if (a) done({ ...a, sent });
    else if (Date.now() - t0 > 15000) done({ type: "timeout" });
    else setTimeout(poll, 2);
  })();`;

/** Switches into the app's queue frame, waits for its handshake and installs the collector. */
export async function enterQueue(session, app = "review-queue") {
  return enterFrame(session, queueFrame(app), app);
}

/**
 * Switches into the frame `css` selects, waits for its handshake (body[data-status=ready]) and
 * installs the collector (kept across calls while the frame stays mounted).
 */
export async function enterFrame(session, css, app) {
  await session.switchToTop();
  const frame = await session.waitForElement(css, 20_000);
  await session.switchToFrame(frame);
  await waitFor(async () => (await session.execute("return document.body && document.body.dataset.status")) === "ready", {
    timeoutMs: 20_000,
    what: `the ${app} handshake (body[data-status=ready])`,
  });
  await session.execute(COLLECTOR);
  return frame;
}

/** Opens the app's `queue` entry from the app list (closing what is shown) and enters it. */
export async function openQueue(session, app) {
  await session.switchToTop();
  const close = await session.find("#surface-close");
  if (close !== null && (await session.displayed(close)) && (await session.attribute(close, "disabled")) === null) {
    await session.click(close);
  }
  await session.click(await session.waitForElement(`li.app-row[data-app-name="${app}"] button.open-entry[data-entry-key="queue"]`));
  return enterQueue(session, app);
}

/**
 * One `capability:invoke` from the frame: `{ok: value}` for host:response, `{error: {code,
 * causeCode, message}}` for host:error.
 */
export async function call(session, capability, method, args) {
  const a = await session.executeAsync(CALL, [capability, method, args]);
  if (a.type === "host:response") return { ok: a.payload?.value ?? null, sent: a.sent, at: a.at };
  if (a.type === "host:error") return { error: a.payload };
  throw new Error(`${capability}.${method}: no answer (${JSON.stringify(a)})`);
}

/** Every task event the frame received so far, in arrival order. */
export function events(session) {
  return session.execute("return window.__e2e.events.map((x) => x.event);");
}

/** Waits for a received event matching `pred` (an `(event) => boolean` on the node side). */
export async function waitForEvent(session, pred, what, timeoutMs = 20_000) {
  return waitFor(async () => (await events(session)).find(pred) ?? null, { timeoutMs, what });
}

/** The task event validator (schemas/apphost/agent-task-event.schema.json, draft 2020-12). */
export function taskEventValidator() {
  const ajv = new Ajv2020({ allErrors: true, strictSchema: true, strictTypes: false, strictRequired: false, strictTuples: false });
  // RFC 3339 date-time, as the host writes it (the schema's `format: date-time`).
  ajv.addFormat("date-time", {
    type: "string",
    validate: (s) => /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/.test(s) && !Number.isNaN(Date.parse(s)),
  });
  const schema = JSON.parse(readFileSync(join(REPO, "schemas/apphost/agent-task-event.schema.json"), "utf8"));
  const validate = ajv.compile(schema);
  return (event) => (validate(event) ? null : ajv.errorsText(validate.errors));
}
