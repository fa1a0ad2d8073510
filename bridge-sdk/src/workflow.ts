// `lime.workflow`: typed run handles over `invoke` (shared by the real runtime and the mock).
// Run events arrive as `host:event` payloads `{capability: "lime.workflow", runId, event}`; the
// hub buffers them per run (deduplicated by `sequence`, so a re-watch after a reload never
// yields an event twice) and each run handle reads its own.
// Contract: docs/bridge-protocol.md §5 `lime.workflow`; the events are the runtime's profile
// `job.*` facts (docs/package-format.md §8).

import type { CallOptions, Invoke } from "./handles.js";

/** A run's status. */
export type WorkflowRunStatus = "running" | "succeeded" | "failed" | "cancelled";

/** What a running run waits for: a step's call, a person (`review`, `input`, a retry
 * `decision`: the user answers reviews and decisions in AppHost), or a timer. */
export type WorkflowPending =
  | { type: "call"; idempotencyKey: string; state: string; capability: string; method: string; args: unknown; timeoutMs: number | null }
  | { type: "review"; key: string; state: string; prompt: string; show: unknown; timeoutMs: number | null }
  | { type: "input"; key: string; state: string; prompt: string; schema: unknown; timeoutMs: number | null }
  | { type: "timer" | "backoff"; key: string; state: string; wake: { afterMs: number } | { at: string } }
  | { type: "decision"; key: string; state: string; code: string; message: string };

/** A run as the host shows it to its app. */
export interface WorkflowRunView {
  runId: string;
  app: string;
  workflow: string;
  idempotencyKey: string | null;
  /** The app entry whose frame started the run (absent: the user, the CLI). */
  startedBy?: string;
  /** When the run started (RFC 3339). */
  startedAt: string;
  status: WorkflowRunStatus;
  /** The run machine's state: the start input, each state's output, visits, its status. */
  state: {
    runId: string;
    input: unknown;
    outputs: Record<string, unknown>;
    visits: Record<string, number>;
    steps: number;
    status: { status: string; result?: unknown; code?: string; message?: string; [field: string]: unknown };
  };
  /** What a running run waits for (null when it has ended). */
  waiting: WorkflowPending | null;
  /** When its timer or deadline is due (RFC 3339). */
  dueAt: string | null;
  finished: boolean;
}

/** One run event: a runtime profile fact of the run (`job.created`, `job.item.started`,
 * `job.item.completed`, `job.item.failed`, `job.progress`, `job.completed`, `job.failed`,
 * `job.cancelled`); `payload.workflowFact` names it (`run_started`, `step_started`,
 * `step_result`, `review_requested`, `input_requested`, `review_answered`, `wait_scheduled`,
 * `timer_fired`, `ended`, `cancelled`, …). */
export interface WorkflowRunEvent {
  /** Per run, from 1, gap-free. */
  sequence: number;
  type: string;
  timestamp: string;
  eventId: string;
  sessionId: string;
  payload: { workflowFact: string; [field: string]: unknown };
  [field: string]: unknown;
}

/** The `host:event` payload that carries a run event. */
export interface WorkflowRunEventMessage {
  capability: "lime.workflow";
  runId: string;
  event: WorkflowRunEvent;
}

export interface StartWorkflowArgs {
  /** A workflow key the app's own manifest declares (`workflows[].key`). */
  workflow: string;
  /** The run's start input (any JSON, at most 256 KiB; default `{}`). */
  input?: unknown;
  /** Same key, same workflow, same input => the same run (another input:
   * `workflow.idempotency_conflict`). 1-200 bytes. */
  idempotencyKey?: string;
}

/** A run: its id, its events, and what the app may do to it. */
export interface WorkflowRun {
  runId: string;
  /** The run's events from the first one received (a started run: from `run_started`), ending
   * after its end (`job.completed`, `job.failed` or `job.cancelled`). Events already received are
   * replayed. */
  events(): AsyncIterableIterator<WorkflowRunEvent>;
  [Symbol.asyncIterator](): AsyncIterableIterator<WorkflowRunEvent>;
  /** Resolves with the run's final view once it has ended. */
  result(): Promise<WorkflowRunView>;
  cancel(opts?: CallOptions): Promise<WorkflowRunView>;
  get(opts?: CallOptions): Promise<WorkflowRunView>;
  /** Data for the `user-input` state the run waits for (checked against its schema). */
  respond(input: unknown, opts?: CallOptions): Promise<WorkflowRunView>;
}

export interface LimeWorkflow {
  /** Starts a run of a workflow the app declares; its events stream to this frame. */
  start(args: StartWorkflowArgs, opts?: CallOptions): Promise<WorkflowRun>;
  /** Follows an existing run of this app from `afterSequence` (after a reload). */
  watch(runId: string, afterSequence?: number, opts?: CallOptions): Promise<WorkflowRun>;
  get(runId: string, opts?: CallOptions): Promise<WorkflowRunView>;
  /** The app's own runs, newest first (at most 100). */
  list(q?: { status?: WorkflowRunStatus }, opts?: CallOptions): Promise<{ runs: WorkflowRunView[] }>;
  cancel(runId: string, opts?: CallOptions): Promise<WorkflowRunView>;
  /**
   * Answers a `user-input` state with `input` (checked against the state's `schema`:
   * `APP_E900` `workflow.input_invalid`, `details.path`). A `human-review` or retry decision is
   * the user's, in AppHost's Tasks page: from an app it is `APP_E002`
   * `workflow.answer_not_by_user` (`details.answerIn`).
   */
  respond(args: { runId: string; input: unknown }, opts?: CallOptions): Promise<WorkflowRunView>;
}

/** Most events kept per run. */
export const MAX_BUFFERED_RUN_EVENTS = 10_000;
/** Most runs whose events are buffered. */
const MAX_BUFFERED_RUNS = 256;

const ENDS = new Set(["job.completed", "job.failed", "job.cancelled"]);

interface RunBuffer {
  events: WorkflowRunEvent[];
  last: number;
  wake: Set<() => void>;
}

export interface WorkflowHub {
  /** Takes a `host:event` payload; returns whether it was a run event. */
  deliver(payload: unknown): boolean;
  clear(): void;
}

function isRunEvent(p: unknown): p is WorkflowRunEventMessage {
  if (typeof p !== "object" || p === null) return false;
  const m = p as { capability?: unknown; runId?: unknown; event?: { sequence?: unknown } };
  return m.capability === "lime.workflow" && typeof m.runId === "string" && typeof m.event?.sequence === "number";
}

export function buildWorkflow(invoke: Invoke): { workflow: LimeWorkflow; hub: WorkflowHub } {
  const buffers = new Map<string, RunBuffer>();
  const buffer = (id: string): RunBuffer => {
    let b = buffers.get(id);
    if (!b) {
      if (buffers.size >= MAX_BUFFERED_RUNS) {
        const oldest = buffers.keys().next().value;
        if (oldest !== undefined) buffers.delete(oldest);
      }
      b = { events: [], last: 0, wake: new Set() };
      buffers.set(id, b);
    }
    return b;
  };
  const hub: WorkflowHub = {
    deliver(payload) {
      if (!isRunEvent(payload)) return false;
      const b = buffer(payload.runId);
      const e = payload.event;
      if (e.sequence <= b.last) return true;
      b.last = e.sequence;
      b.events.push(e);
      if (b.events.length > MAX_BUFFERED_RUN_EVENTS) b.events.splice(0, b.events.length - MAX_BUFFERED_RUN_EVENTS);
      for (const w of [...b.wake]) w();
      return true;
    },
    clear() {
      for (const b of buffers.values()) for (const w of [...b.wake]) w();
      buffers.clear();
    },
  };

  const viewOf = async (method: string, args: object, o?: CallOptions) => (await invoke<{ run: WorkflowRunView }>("lime.workflow", method, args, o)).run;

  function run(runId: string): WorkflowRun {
    const b = buffer(runId);
    async function* iterate(): AsyncIterableIterator<WorkflowRunEvent> {
      let i = 0;
      for (;;) {
        if (i < b.events.length) {
          const e = b.events[i++]!;
          yield e;
          if (ENDS.has(e.type)) return;
          continue;
        }
        if (buffers.get(runId) !== b) return;
        await new Promise<void>((resolve) => {
          const w = () => {
            b.wake.delete(w);
            resolve();
          };
          b.wake.add(w);
        });
      }
    }
    return {
      runId,
      events: iterate,
      [Symbol.asyncIterator]: iterate,
      async result() {
        const now = await viewOf("get", { runId });
        if (now.finished) return now;
        for await (const e of iterate()) if (ENDS.has(e.type)) return viewOf("get", { runId });
        throw new Error("the run's events stopped before its end");
      },
      cancel: (o) => viewOf("cancel", { runId }, o),
      get: (o) => viewOf("get", { runId }, o),
      respond: (input, o) => viewOf("respond", { runId, input }, o),
    };
  }

  const workflow: LimeWorkflow = {
    async start(args, o) {
      const started = await invoke<{ runId: string; run: WorkflowRunView }>("lime.workflow", "start", args, o);
      return run(started.runId);
    },
    async watch(runId, afterSequence = 0, o) {
      await invoke("lime.workflow", "watch", { runId, afterSequence }, o);
      return run(runId);
    },
    get: (runId, o) => viewOf("get", { runId }, o),
    list: (q = {}, o) => invoke("lime.workflow", "list", q, o),
    cancel: (runId, o) => viewOf("cancel", { runId }, o),
    respond: (args, o) => viewOf("respond", args, o),
  };
  return { workflow, hub };
}
