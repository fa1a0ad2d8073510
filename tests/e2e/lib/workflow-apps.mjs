// The workflow apps of the end-to-end tests (the window's tests/e2e/workflow.test.mjs and
// `apphost serve`'s tests/browser/workflow-app.spec.mjs): the sample made with `apphost new
// --template workflow` (agent task → human review → branch → storage write → artifact), and a
// copy with a second workflow (a `user-input` with a JSON Schema, then a durable `wait`).
import { execFileSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

export const SAMPLE = "draft-desk";
export const SAMPLE_WORKFLOW = "draft-review-publish";
/** The copy with the second workflow. */
export const PAUSE = "pause-desk";
export const PAUSE_WORKFLOW = "ask-then-wait";
/** How long the copy's `wait` state waits: long enough to close and reopen the window. */
export const PAUSE_MS = 20_000;

/** The second workflow: a `user-input` with a schema, a durable `wait`, then a storage write. */
const PAUSE_STATES = `
  - key: ${PAUSE_WORKFLOW}
    title: Ask for a count, wait, then keep it
    recovery: {onTimeout: fail, onError: fail}
    states:
      - {key: start, kind: start, next: ask}
      - key: ask
        kind: user-input
        prompt: How many copies?
        schema: {type: object, required: [copies], additionalProperties: false, properties: {copies: {type: integer, minimum: 1, maximum: 10}}}
        output: answer
        next: pause
      - {key: pause, kind: wait, duration: ${PAUSE_MS}ms, next: keep}
      - {key: keep, kind: storage-write, storageKey: copies, value: "outputs.answer.copies", next: done}
      - {key: done, kind: end, result: {copies: "outputs.answer.copies"}}
`;

/**
 * Makes the sample project in `dir` with `apphost new` (`apphost` = the binary) and, beside its
 * package, a copy named PAUSE with the second workflow and its `workflow` entry. Returns both
 * package folders.
 */
export function makeSampleApps(dir, apphost) {
  execFileSync(apphost, ["new", SAMPLE, "--template", "workflow", "--dir", dir], { encoding: "utf8", timeout: 60_000 });
  const sample = join(dir, SAMPLE, "app");
  const pause = join(dir, PAUSE);
  execFileSync("cp", ["-R", sample, pause]);
  const md = join(pause, "APP.md");
  let text = readFileSync(md, "utf8");
  const end = text.indexOf("\n---\n");
  const entry = `  - key: pause
    kind: workflow
    title: Ask, wait and keep
    workflow: ${PAUSE_WORKFLOW}
    requiredCapabilities: [lime.storage]
    permissions: [app_storage]
`;
  text = text.slice(0, end) + PAUSE_STATES.trimEnd() + text.slice(end);
  text = text
    .replace(`name: ${SAMPLE}\n`, `name: ${PAUSE}\n`)
    .replace(`namespace: ${SAMPLE}\n`, `namespace: ${PAUSE}\n`)
    .replace("\nstorage:\n", `\n${entry}storage:\n`);
  writeFileSync(md, text);
  return { sample, pause };
}
