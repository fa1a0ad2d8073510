// `lime.agent`: typed task handles over `invoke` (shared by the real runtime and the mock).
// Task events arrive as `host:event` payloads `{capability: "lime.agent", event}`; the hub
// buffers them per task (deduplicated by `sequence`, so a re-watch after a reload never yields
// an event twice) and each task object reads its own.
// Contract: docs/bridge-protocol.md §5 `lime.agent`; event schema:
// schemas/apphost/agent-task-event.schema.json (lime.agent-task-event.v1).

import type { CallOptions, Invoke } from "./handles.js";

export type AgentTaskEventType =
  | "system:init"
  | "system:compact_boundary"
  | "task:queued"
  | "task:progress"
  | "assistant:delta"
  | "tool:call"
  | "approval:requested"
  | "artifact:created"
  | "evidence:recorded"
  | "result";

/** `result` subtypes (standard §8.3). */
export type AgentResultSubtype =
  | "success"
  | "error_max_turns"
  | "error_during_execution"
  | "error_max_budget"
  | "error_max_structured_output_retries"
  | "error_permission_denied"
  | "cancelled";

/** One task event (`lime.agent-task-event.v1`). */
export interface AgentTaskEvent {
  schemaVersion: "lime.agent-task-event.v1";
  eventId: string;
  /** Monotonic per task (gaps allowed). */
  sequence: number;
  type: AgentTaskEventType;
  subtype?: string;
  appId: string;
  taskId: string;
  traceId: string;
  sessionId: string;
  turnId?: string;
  parentTaskId?: string;
  at: string;
  /** The runtime fact's payload plus `runtimeType` and the ids an app needs (`actionId`, …). */
  payload?: { runtimeType: string; [field: string]: unknown };
  refs?: string[];
  usage?: unknown;
  cost?: unknown;
}

/** The `host:event` payload that carries a task event. */
export interface AgentTaskEventMessage {
  capability: "lime.agent";
  event: AgentTaskEvent;
}

export interface StartTaskArgs {
  /** Text, or any JSON (sent to the model as its JSON text); at most 256 KiB. */
  input: unknown;
  /** Same key (per app, durable) => same task. 1-200 bytes. */
  idempotencyKey?: string;
  /**
   * A JSON Schema the answer must satisfy, inline or a path in the app's package; or the
   * standard's `outputFormat: {type: "json_schema", schema | schemaRef, maxValidationRetries?}`.
   * `artifactKind` / `materializer` are refused (`APP_E001`, `agent.binding_unsupported`).
   */
  expectedOutput?:
    | { schema: Record<string, unknown> }
    | { schemaRef: string }
    | {
        outputFormat: { type?: "json_schema"; maxValidationRetries?: number } & ({ schema: Record<string, unknown> } | { schemaRef: string });
        artifactKind?: never;
        materializer?: never;
      };
  /** The standard's identity fields: checked against the calling frame (else `APP_E002`,
   * `agent.app_mismatch` / `agent.entry_mismatch`). */
  appId?: string;
  entry?: string;
  entryKey?: string;
  /** 1-128 characters; accepted, not recorded yet. */
  taskKind?: string;
  /** Business context: accepted, not recorded yet. */
  context?: Record<string, unknown>;
  metadata?: Record<string, unknown>;
  businessObjectRef?: string | Record<string, unknown>;
  capabilityHints?: unknown[];
  /**
   * Declared bindings this host cannot honour yet: a non-empty one is refused with `APP_E001`
   * and `agent.binding_unsupported` (the message names the binding); empty binds nothing.
   */
  knowledge?: unknown;
  /** MCP tools (`"<server>/<tool>"`, a `toolRefs[]` key, or `{tool | key}`) the task's model
   * may call: declared and granted, else refused (`tools.not_declared`, `tools.not_granted`). */
  tools?: unknown;
  files?: unknown;
  secrets?: unknown;
  /**
   * The task's token budget per run (input + output over its model calls). The app's budget,
   * which the user sets, still applies: the lower wins. A run over it ends `error_max_budget`;
   * a malformed budget is `APP_E900` (`agent.invalid_budget`).
   */
  budget?: { maxTokens?: number };
  /**
   * Which conversation the task's run continues (standard §8.6; conversation history only,
   * never business state). Default `"new"`: a fresh session. `resume` starts a new task whose
   * run is a turn of an earlier session of this app, named by an earlier `taskId` or by a
   * `businessObjectRef` (1-200 bytes; the first task with a ref creates its session). Modes
   * other than `"new"` must be declared in the app's `agentRuntime.sessionPolicy.modes`
   * (else `APP_E002`, `agent.session_policy_not_declared`); a session whose latest turn has not
   * ended is `APP_E900` (`agent.session_busy`); `continue` and `fork` are refused
   * (`agent.session_policy_unsupported`).
   */
  sessionPolicy?: SessionPolicy;
}

/** `startTask`'s `sessionPolicy`. */
export type SessionPolicy =
  | "new"
  | { mode: "new" }
  | { mode: "resume"; taskId: string; businessObjectRef?: never }
  | { mode: "resume"; businessObjectRef: string; taskId?: never };

/** The modes an app may declare in `agentRuntime.sessionPolicy.modes`. */
export type SessionPolicyMode = "new" | "resume" | "continue" | "fork";

export interface AgentTaskStarted {
  taskId: string;
  traceId: string;
  sessionId: string;
  /** False when `idempotencyKey` named an existing task. */
  created: boolean;
}

export type AgentTaskStatus = "submitting" | "queued" | "running" | "waiting_approval" | "succeeded" | "failed" | "cancelled";

export interface AgentTaskView {
  taskId: string;
  traceId: string;
  sessionId: string;
  idempotencyKey: string | null;
  createdAt: string;
  status: AgentTaskStatus;
  runs: { run: number; turnId: string; status: AgentTaskStatus; errorCode: string | null }[];
  pendingActions: {
    actionId: string;
    toolName: string | null;
    /** The tool call waiting, and its input (the model's arguments). */
    toolCallId?: string | null;
    input?: unknown;
    prompt: string | null;
    actionType: string | null;
  }[];
  result: {
    status: AgentTaskStatus;
    text: string | null;
    structuredOutput: unknown;
    errorCode: string | null;
    errorMessage: string | null;
  } | null;
}

/**
 * What an app may answer a pending action: `reject` only. Approval belongs to the user: AppHost
 * draws its own prompt (the tool and its input, Approve / Reject) above the app's frame, and only
 * that prompt or the host's Tasks page approves, allows for the session or edits the input. An
 * app's `approve` / `answer` / `remember: "session"` is `APP_E002` `agent.approval_requires_user`,
 * any `updatedInput` is `APP_E002` `agent.updated_input_unsupported`; the action stays pending.
 * An app may also cancel the task (`cancel()`).
 */
export type AppDecision = "reject";

/** @deprecated An app gives no options: only the user approves or edits a tool's input. */
export type RespondOptions = Record<string, never>;

/** A task: its ids, its events, and what can be done to it. */
export interface AgentTask extends AgentTaskStarted {
  /**
   * The current run's events, from its `task:queued` (or from the first event received, for a
   * watched task), ending after its `result`. Events already received are replayed.
   */
  events(): AsyncIterableIterator<AgentTaskEvent>;
  [Symbol.asyncIterator](): AsyncIterableIterator<AgentTaskEvent>;
  /** The current run's `result` event. */
  result(): Promise<AgentTaskEvent>;
  cancel(opts?: CallOptions): Promise<AgentTaskView>;
  /** Starts a new run (same input); `events()` and `result()` then follow it. */
  retry(opts?: CallOptions): Promise<AgentTaskView>;
  /** Rejects a pending action ([`AppDecision`]: an app never approves). */
  respond(actionId: string, decision: AppDecision, o?: CallOptions): Promise<void>;
  get(opts?: CallOptions): Promise<AgentTaskView>;
}

export interface LimeAgent {
  /** Starts a task (answers before the model does); its events stream to this frame. */
  startTask(args: StartTaskArgs, opts?: CallOptions): Promise<AgentTask>;
  /** Follows an existing task of this app from `afterSequence` (after a reload). */
  watchTask(taskId: string, afterSequence?: number, opts?: CallOptions): Promise<AgentTask>;
  getTask(taskId: string, opts?: CallOptions): Promise<AgentTaskView>;
  listTasks(q?: { cursor?: string; limit?: number }, opts?: CallOptions): Promise<{ items: AgentTaskView[]; nextCursor: string | null }>;
  getTaskEvents(
    q: { taskId: string; afterSequence?: number; limit?: number },
    opts?: CallOptions,
  ): Promise<{ events: AgentTaskEvent[]; nextAfterSequence: number }>;
}

/** Most events kept per task (the oldest are dropped beyond it; `getTaskEvents` has them all). */
export const MAX_BUFFERED_TASK_EVENTS = 10_000;
/** Most tasks whose events are buffered before anyone asked for them. */
const MAX_UNCLAIMED_TASKS = 64;

interface TaskBuffer {
  events: AgentTaskEvent[];
  last: number;
  wake: Set<() => void>;
}

export interface AgentHub {
  /** Takes a `host:event` payload; returns whether it was a task event. */
  deliver(payload: unknown): boolean;
  clear(): void;
}

function isTaskEvent(p: unknown): p is AgentTaskEventMessage {
  if (typeof p !== "object" || p === null) return false;
  const m = p as { capability?: unknown; event?: { taskId?: unknown; sequence?: unknown } };
  return m.capability === "lime.agent" && typeof m.event?.taskId === "string" && typeof m.event?.sequence === "number";
}

export function buildAgent(invoke: Invoke): { agent: LimeAgent; hub: AgentHub } {
  const buffers = new Map<string, TaskBuffer>();
  const buffer = (id: string): TaskBuffer => {
    let b = buffers.get(id);
    if (!b) {
      if (buffers.size >= MAX_UNCLAIMED_TASKS * 4) {
        const oldest = buffers.keys().next().value;
        if (oldest !== undefined) buffers.delete(oldest);
      }
      b = { events: [], last: 0, wake: new Set() };
      buffers.set(id, b);
    }
    return b;
  };
  const hub: AgentHub = {
    deliver(payload) {
      if (!isTaskEvent(payload)) return false;
      const e = payload.event;
      const b = buffer(e.taskId);
      if (e.sequence <= b.last) return true;
      b.last = e.sequence;
      b.events.push(e);
      if (b.events.length > MAX_BUFFERED_TASK_EVENTS) b.events.splice(0, b.events.length - MAX_BUFFERED_TASK_EVENTS);
      for (const w of [...b.wake]) w();
      return true;
    },
    clear() {
      for (const b of buffers.values()) for (const w of [...b.wake]) w();
      buffers.clear();
    },
  };

  const view = (method: string, taskId: string, o?: CallOptions) => invoke<AgentTaskView>("lime.agent", method, { taskId }, o);

  function task(started: AgentTaskStarted, watched: boolean): AgentTask {
    const b = buffer(started.taskId);
    // Which run `events()` and `result()` follow: the n-th `task:queued` (0 = the first).
    let run = 0;
    let fromFirst = watched;
    const runStart = (): number => {
      if (fromFirst) return 0;
      let seen = -1;
      for (let i = 0; i < b.events.length; i++) {
        if (b.events[i]!.type === "task:queued" && ++seen === run) return i;
      }
      return -1;
    };
    async function* iterate(): AsyncIterableIterator<AgentTaskEvent> {
      let i = -1;
      for (;;) {
        if (i < 0) i = runStart();
        if (i >= 0 && i < b.events.length) {
          const e = b.events[i++]!;
          yield e;
          if (e.type === "result") return;
          continue;
        }
        if (buffers.get(started.taskId) !== b) return;
        await new Promise<void>((resolve) => {
          const w = () => {
            b.wake.delete(w);
            resolve();
          };
          b.wake.add(w);
        });
      }
    }
    const t: AgentTask = {
      ...started,
      events: iterate,
      [Symbol.asyncIterator]: iterate,
      async result() {
        for await (const e of iterate()) if (e.type === "result") return e;
        throw new Error("the task's events stopped before its result");
      },
      cancel: (o) => view("cancelTask", started.taskId, o),
      async retry(o) {
        const v = await view("retryTask", started.taskId, o);
        if (fromFirst) {
          // A watched task: count the runs seen so far, follow the next one.
          fromFirst = false;
          run = b.events.filter((e) => e.type === "task:queued").length;
        } else run += 1;
        return v;
      },
      async respond(actionId, decision, o = {}) {
        await invoke("lime.agent", "respondAction", { taskId: started.taskId, actionId, decision }, o);
      },
      get: (o) => view("getTask", started.taskId, o),
    };
    return t;
  }

  const agent: LimeAgent = {
    async startTask(args, o) {
      const started = await invoke<AgentTaskStarted>("lime.agent", "startTask", args, o);
      return task(started, !started.created);
    },
    async watchTask(taskId, afterSequence = 0, o) {
      await invoke("lime.agent", "watchTask", { taskId, afterSequence }, o);
      const v = await view("getTask", taskId, o);
      return task({ taskId, traceId: v.traceId, sessionId: v.sessionId, created: false }, true);
    },
    getTask: (taskId, o) => view("getTask", taskId, o),
    listTasks: (q = {}, o) => invoke("lime.agent", "listTasks", q, o),
    getTaskEvents: (q, o) => invoke("lime.agent", "getTaskEvents", q, o),
  };
  return { agent, hub };
}
