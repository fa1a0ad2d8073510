// lime.workflow in memory (crates/host-core/src/hosting/capability/services/workflow.rs and
// runtime-core's workflow runs): the workflows the test declares (`options.workflows`) run
// their states in order: `start`, `end` (its `result`), `human-review` (the mock user answers,
// `options.workflowUser` or `answerReview`: never the app), `user-input` (the app's `respond`,
// checked against the state's `schema`), `wait` (a real timer), `branch` (`choose`, else
// `default`), and any step that calls a capability (`agent-task`, `tool-call`, `storage-write`,
// `artifact-create`: its `returns`, a value or a function; a throw fails the run). Expressions
// are not evaluated: values are given as JS values or functions of `{input, outputs}`. The
// refusals and their causeCodes are the host's.
import { ErrorCodes } from "../errors.js";
import type { WorkflowPending, WorkflowRunEvent, WorkflowRunStatus, WorkflowRunView } from "../workflow.js";
import { bytes, closed, invalid, isRecord, json, optStr, randomHex, refuse, Refusal, type MockContext, type Service } from "./common.js";
import { firstViolation } from "./json-schema.js";
import type { MockWorkflow, MockWorkflowState } from "./types.js";

/** The host's bounds (runtime-core `workflow::limits`, host-core `driver.rs`). */
const MAX_INPUT_BYTES = 256 * 1024;
const MAX_UNFINISHED_RUNS = 16;
const MAX_KEY_BYTES = 200;
const MAX_STEPS = 1000;
const MAX_LISTED = 100;
const ANSWER_IN = "AppHost: Tasks page (the run's pending review)";
const ENDED = new Set(["succeeded", "failed", "cancelled"]);

interface MockRun {
  runId: string;
  workflow: string;
  idempotencyKey: string | null;
  inputJson: string;
  input: unknown;
  startedBy: string;
  startedAt: string;
  outputs: Record<string, unknown>;
  visits: Record<string, number>;
  steps: number;
  status: { status: WorkflowRunStatus; [field: string]: unknown };
  waiting: WorkflowPending | null;
  dueAt: string | null;
  seq: number;
  events: WorkflowRunEvent[];
  /** Resolves what the run waits for (an answer, a timer, a cancel). */
  wake: ((answer: unknown) => void) | undefined;
}

const sessionOf = (runId: string) => `sess_wf_${runId}`;

function parseDuration(d: unknown): number {
  if (typeof d === "number") return d;
  const m = typeof d === "string" ? /^(\d+)(ms|s|m|h|d)$/.exec(d) : null;
  if (!m) return 0;
  const unit = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 }[m[2] as "ms" | "s" | "m" | "h" | "d"];
  return Number(m[1]) * unit;
}

export function createWorkflow(ctx: MockContext) {
  const declared: Record<string, MockWorkflow> = ctx.options.workflows ?? {};
  const runs = new Map<string, MockRun>();
  const notFound = () => refuse(ErrorCodes.NOT_FOUND, "no run with this id in this app", "workflow.run_not_found");
  const bad = (m: string) => invalid(m, "workflow.invalid_argument");
  const own = (a: Record<string, unknown>): MockRun => {
    const id = optStr(a, "runId", bad);
    if (id === undefined) throw bad("args.runId is required");
    const r = runs.get(id);
    if (!r) throw notFound();
    return r;
  };
  const view = (r: MockRun): WorkflowRunView => ({
    runId: r.runId,
    app: ctx.appId,
    workflow: r.workflow,
    idempotencyKey: r.idempotencyKey,
    startedBy: r.startedBy,
    startedAt: r.startedAt,
    status: r.status.status,
    state: { runId: r.runId, input: r.input, outputs: { ...r.outputs }, visits: { ...r.visits }, steps: r.steps, status: { ...r.status } },
    waiting: r.waiting,
    dueAt: r.dueAt,
    finished: ENDED.has(r.status.status),
  });
  const emit = (r: MockRun, type: string, fact: string, fields: Record<string, unknown> = {}) => {
    r.seq += 1;
    const event: WorkflowRunEvent = {
      sequence: r.seq,
      type,
      timestamp: ctx.now(),
      eventId: `event_${randomHex()}`,
      sessionId: sessionOf(r.runId),
      payload: { workflowFact: fact, ...fields },
    };
    r.events.push(event);
    ctx.deliver({ capability: "lime.workflow", runId: r.runId, event });
  };
  const value = (r: MockRun, v: unknown) => (typeof v === "function" ? (v as (d: { input: unknown; outputs: Record<string, unknown> }) => unknown)({ input: r.input, outputs: r.outputs }) : v);
  const waitFor = (r: MockRun, pending: WorkflowPending): Promise<unknown> => {
    r.waiting = pending;
    return new Promise((resolve) => {
      r.wake = (answer) => {
        r.wake = undefined;
        resolve(answer);
      };
    });
  };
  const cancelled = (r: MockRun) => r.status.status === "cancelled";

  async function drive(r: MockRun, def: MockWorkflow): Promise<void> {
    const byKey = new Map(def.states.map((s) => [s.key, s]));
    let state: MockWorkflowState | undefined = def.states.find((s) => s.kind === "start") ?? def.states[0];
    const fail = (code: string, message: string) => {
      r.status = { status: "failed", code, message, state: state?.key ?? null };
      r.waiting = null;
      emit(r, "job.failed", "ended", { status: r.status });
    };
    while (state && !cancelled(r)) {
      const s: MockWorkflowState = state;
      r.visits[s.key] = (r.visits[s.key] ?? 0) + 1;
      if (++r.steps > MAX_STEPS) return fail("workflow.step_limit", `more than ${MAX_STEPS} steps`);
      const key = `wf:${r.runId}:${s.key}:${r.visits[s.key]}:1`;
      let output: unknown = undefined;
      let next = s.next;
      switch (s.kind) {
        case "start":
          break;
        case "end":
          r.status = { status: "succeeded", result: value(r, s.result) ?? null };
          r.waiting = null;
          emit(r, "job.completed", "ended", { status: r.status });
          return;
        case "branch":
          next = s.choose ? s.choose({ input: r.input, outputs: r.outputs }) : s.default;
          break;
        case "wait": {
          const ms = parseDuration(s.duration);
          r.dueAt = new Date(Date.now() + ms).toISOString();
          emit(r, "job.progress", "wait_scheduled", { key, dueAt: r.dueAt });
          const timer = setTimeout(() => r.wake?.(undefined), ms);
          await waitFor(r, { type: "timer", key, state: s.key, wake: { afterMs: ms } });
          clearTimeout(timer);
          r.dueAt = null;
          if (cancelled(r)) return;
          emit(r, "job.progress", "timer_fired", { key });
          break;
        }
        case "human-review": {
          const show = value(r, s.show) ?? null;
          const prompt = s.prompt ?? "";
          emit(r, "job.progress", "review_requested", { key, dueAt: null });
          const pending = waitFor(r, { type: "review", key, state: s.key, prompt, show, timeoutMs: null });
          const user = ctx.options.workflowUser?.({ runId: r.runId, state: s.key, prompt, show });
          if (user !== undefined) void Promise.resolve(user).then((a) => r.wake?.(a));
          const a = await pending;
          if (cancelled(r)) return;
          const approved = a === "approve" || (isRecord(a) && a["approved"] === true);
          const data = isRecord(a) && "data" in a ? a["data"] : null;
          output = { decision: approved ? "approved" : "rejected", data };
          emit(r, "job.progress", "review_answered", { by: "user", key });
          break;
        }
        case "user-input": {
          emit(r, "job.progress", "input_requested", { key, dueAt: null });
          output = await waitFor(r, { type: "input", key, state: s.key, prompt: s.prompt ?? "", schema: s.schema ?? null, timeoutMs: null });
          if (cancelled(r)) return;
          emit(r, "job.progress", "input_answered", { by: "app", key });
          break;
        }
        default: {
          r.waiting = { type: "call", idempotencyKey: key, state: s.key, capability: "mock", method: s.kind, args: null, timeoutMs: null };
          emit(r, "job.item.started", "step_started", { key, state: s.key });
          try {
            output = await value(r, s.returns);
          } catch (e) {
            if (cancelled(r)) return;
            emit(r, "job.item.failed", "step_result", { key });
            return fail("workflow.step_failed", e instanceof Error ? e.message : String(e));
          }
          if (cancelled(r)) return;
          emit(r, "job.item.completed", "step_result", { key });
        }
      }
      r.waiting = null;
      if (s.output !== undefined && output !== undefined) r.outputs[s.output] = output;
      state = next === undefined ? undefined : byKey.get(next);
      if (!state) return fail("workflow.no_next_state", `state ${s.key} has no next state`);
    }
  }

  const service: Service = {
    start(a) {
      closed(a, ["workflow", "key", "input", "idempotencyKey"], "workflow.invalid_argument");
      // The standard's shape names the workflow `key`.
      const w = optStr(a, "workflow", bad);
      const k = optStr(a, "key", bad);
      if (w !== undefined && k !== undefined && w !== k) throw bad("args.workflow and args.key name different workflows");
      const name = w ?? k;
      if (name === undefined) throw bad("args.workflow is required");
      const def = Object.hasOwn(declared, name) ? declared[name] : undefined;
      if (!def) throw refuse(ErrorCodes.NOT_FOUND, `${ctx.appId} declares no workflow ${name.slice(0, 128)}`, "workflow.not_declared");
      const key = optStr(a, "idempotencyKey", bad) ?? null;
      if (key !== null && (key.length === 0 || bytes(key) > MAX_KEY_BYTES)) throw invalid(`1 to ${MAX_KEY_BYTES} bytes`, "workflow.invalid_idempotency_key");
      const input = a["input"] === undefined ? {} : a["input"];
      const inputJson = json(input);
      if (bytes(inputJson) > MAX_INPUT_BYTES) throw invalid(`the input is over ${MAX_INPUT_BYTES} bytes`, "workflow.input_too_large");
      const existing = key === null ? undefined : [...runs.values()].find((r) => r.workflow === name && r.idempotencyKey === key);
      if (existing) {
        if (existing.inputJson !== inputJson) throw invalid("this idempotency key started a run with another input", "workflow.idempotency_conflict");
        return { runId: existing.runId, run: view(existing) };
      }
      const unfinished = [...runs.values()].filter((r) => !ENDED.has(r.status.status)).length;
      if (unfinished >= MAX_UNFINISHED_RUNS) {
        throw refuse(ErrorCodes.RATE_LIMITED, `${ctx.appId} has ${unfinished} unfinished runs (at most ${MAX_UNFINISHED_RUNS})`, "workflow.too_many_runs");
      }
      const r: MockRun = {
        runId: `run_${randomHex()}`,
        workflow: name,
        idempotencyKey: key,
        inputJson,
        input: JSON.parse(inputJson),
        startedBy: ctx.entryKey,
        startedAt: ctx.now(),
        outputs: {},
        visits: {},
        steps: 0,
        status: { status: "running" },
        waiting: null,
        dueAt: null,
        seq: 0,
        events: [],
        wake: undefined,
      };
      runs.set(r.runId, r);
      emit(r, "job.created", "run_started", { workflow: name, input: r.input, idempotencyKey: key, startedBy: ctx.entryKey });
      // The run moves on its own, after the answer (as the host's driver does).
      queueMicrotask(() => void drive(r, def));
      return { runId: r.runId, run: view(r) };
    },
    get(a) {
      closed(a, ["runId"], "workflow.invalid_argument");
      return { run: view(own(a)) };
    },
    list(a) {
      closed(a, ["status"], "workflow.invalid_argument");
      const status = optStr(a, "status", bad);
      if (status !== undefined && !["running", "succeeded", "failed", "cancelled"].includes(status)) {
        throw bad('args.status must be "running", "succeeded", "failed" or "cancelled"');
      }
      const all = [...runs.values()].reverse().filter((r) => status === undefined || r.status.status === status);
      return { runs: all.slice(0, MAX_LISTED).map(view) };
    },
    cancel(a) {
      closed(a, ["runId"], "workflow.invalid_argument");
      const r = own(a);
      if (ENDED.has(r.status.status)) throw refuse(ErrorCodes.WORKFLOW_INVALID_STATE, `run ${r.runId} has ended`, "workflow.run_finished");
      r.status = { status: "cancelled", inFlight: r.waiting?.type === "call" ? r.waiting.idempotencyKey : null };
      r.waiting = null;
      emit(r, "job.cancelled", "cancelled");
      r.wake?.(undefined);
      return { run: view(r) };
    },
    respond(a) {
      closed(a, ["runId", "input", "decision"], "workflow.invalid_argument");
      const r = own(a);
      const w = r.waiting;
      if (ENDED.has(r.status.status)) throw refuse(ErrorCodes.WORKFLOW_INVALID_STATE, "the run has ended", "workflow.run_finished");
      if (w?.type === "review" || w?.type === "decision") {
        throw new Refusal(ErrorCodes.PERMISSION_DENIED, "a review or retry decision is answered by the user in AppHost, not by the app", "workflow.answer_not_by_user", false, { answerIn: ANSWER_IN });
      }
      if (w?.type !== "input") throw refuse(ErrorCodes.WORKFLOW_INVALID_STATE, "the run waits for a step or a timer, not an answer", "workflow.not_waiting_for_answer");
      const data = a["input"];
      if (data === undefined || data === null) throw bad("args.input is required");
      if (bytes(json(data)) > MAX_INPUT_BYTES) throw invalid(`the answer is over ${MAX_INPUT_BYTES} bytes`, "workflow.input_too_large");
      const violation = firstViolation(w.schema, data);
      if (violation) throw new Refusal(ErrorCodes.INVALID_ARGUMENT, `${violation.message} (at ${violation.path || "/"})`, "workflow.input_invalid", false, { path: violation.path });
      r.waiting = null;
      r.wake?.(data);
      return { run: view(r) };
    },
    watch(a) {
      closed(a, ["runId", "afterSequence"], "workflow.invalid_argument");
      const r = own(a);
      const after = a["afterSequence"] ?? 0;
      if (typeof after !== "number" || !Number.isInteger(after) || after < 0) throw bad("args.afterSequence must be a non-negative integer");
      for (const event of r.events.filter((e) => e.sequence > after)) ctx.deliver({ capability: "lime.workflow", runId: r.runId, event });
      return { watching: true, runId: r.runId, afterSequence: after };
    },
  };

  /** The user answering a run's pending review in the host (the app never can). */
  const answerReview = (runId: string, approved: boolean, data?: unknown): void => {
    const r = runs.get(runId);
    if (!r || r.waiting?.type !== "review") throw new Error(`run ${runId} does not wait for a review`);
    r.waiting = null;
    r.wake?.({ approved, data: data ?? null });
  };

  return { service, notAnObject: bad("args must be an object"), answerReview };
}
