// lime.agent in memory (crates/host-core/src/capability/services/agent.rs, runtime-core's
// agent_task/): tasks run by a scripted model (`options.agent`), their lime.agent-task-event.v1
// events, session policies, approvals, cancel and retry. Without a model every start is
// `agent.needs_setup`, as in a host with none configured.
import { ErrorCodes } from "../errors.js";
import type { AgentTaskEvent, AgentTaskEventType, AgentTaskStatus } from "../agent.js";
import type { RuntimeCorrelation } from "../handles.js";
import { bytes, invalid, randomHex, refuse, type MockContext, type Service } from "./common.js";
import { checkStartTask } from "./shapes.js";

interface MockTask {
  taskId: string;
  traceId: string;
  sessionId: string;
  idempotencyKey: string | null;
  createdAt: string;
  input: unknown;
  expectedOutput: unknown;
  seq: number;
  events: AgentTaskEvent[];
  runs: { turnId: string; status: AgentTaskStatus }[];
  status: AgentTaskStatus;
  cancel: boolean;
  pending: { actionId: string; toolName: string | null; resume: (decision: string) => void } | undefined;
  result?: { text: string | null; structuredOutput: unknown } | undefined;
  /** The task runs in a session an earlier task created (`resume`): no `system:init`. */
  joined: boolean;
}

export function createAgent(ctx: MockContext, attach: (files: unknown, input: unknown) => unknown = (_f, input) => input) {
  const { appId, options } = ctx;
  const now = ctx.now;
  const mockTasks = new Map<string, MockTask>();
  const taskKeys = new Map<string, string>();
  const sessionRefs = new Map<string, string>();
  /** Inputs of the runs that succeeded, per session, oldest first. */
  const sessionHistory = new Map<string, unknown[]>();
  const sessionModes = new Set<string>(["new", ...(options.sessionModes ?? [])]);
  const sessionBusy = (sessionId: string) => [...mockTasks.values()].some((t) => t.sessionId === sessionId && !isFinal(t.status));
  /** `startTask`'s sessionPolicy, as the host checks it: `[sessionId, joined, newRef]`. */
  const chooseSession = (p: unknown): [string, boolean, string | undefined] => {
    const fresh = (): [string, boolean, string | undefined] => [`session_${randomHex()}`, false, undefined];
    if (p === undefined || p === null) return fresh();
    const shape = 'args.sessionPolicy must be "new", {mode: "new"} or {mode: "resume", taskId | businessObjectRef}';
    let mode: unknown;
    let o: Record<string, unknown> = {};
    if (typeof p === "string") mode = p;
    else if (typeof p === "object" && !Array.isArray(p)) {
      o = p as Record<string, unknown>;
      mode = o["mode"];
    }
    if (mode !== "new" && mode !== "resume" && mode !== "continue" && mode !== "fork") throw invalid(shape, "agent.invalid_argument");
    if (!sessionModes.has(mode)) {
      throw refuse(ErrorCodes.PERMISSION_DENIED, `sessionPolicy mode "${mode}" is not declared in agentRuntime.sessionPolicy.modes`, "agent.session_policy_not_declared");
    }
    if (Object.keys(o).some((k) => k !== "mode" && k !== "taskId" && k !== "businessObjectRef")) throw invalid("unknown sessionPolicy field", "agent.invalid_argument");
    const id = o["taskId"];
    const ref = o["businessObjectRef"];
    if (mode === "continue" || mode === "fork") {
      throw invalid(`sessionPolicy mode "${mode}" is not supported: start a task with {mode: "resume", taskId}`, "agent.session_policy_unsupported");
    }
    if (mode === "new") {
      if (id !== undefined || ref !== undefined) throw invalid(shape, "agent.invalid_argument");
      return fresh();
    }
    let found: [string, boolean, string | undefined];
    if (typeof id === "string" && ref === undefined) {
      found = [ownTask({ taskId: id }).sessionId, true, undefined];
    } else if (typeof ref === "string" && id === undefined) {
      if (ref.length === 0 || bytes(ref) > 200 || /\p{Cc}/u.test(ref)) {
        throw invalid("businessObjectRef must be 1-200 bytes without control characters", "agent.invalid_argument");
      }
      const s = sessionRefs.get(ref);
      found = s ? [s, true, undefined] : [`session_${randomHex()}`, false, ref];
    } else throw invalid(shape, "agent.invalid_argument");
    if (found[1] && sessionBusy(found[0])) {
      throw invalid("the session's latest turn has not ended: wait for its result or cancel it", "agent.session_busy");
    }
    return found;
  };
  const isFinal = (s: AgentTaskStatus) => s === "succeeded" || s === "failed" || s === "cancelled";
  const ownTask = (a: Record<string, unknown>): MockTask => {
    const t = typeof a["taskId"] === "string" ? mockTasks.get(a["taskId"]) : undefined;
    if (!t) throw refuse(ErrorCodes.NOT_FOUND, "no task with this id in this app", "agent.task_not_found");
    return t;
  };
  const taskView = (t: MockTask) => ({
    taskId: t.taskId,
    traceId: t.traceId,
    sessionId: t.sessionId,
    idempotencyKey: t.idempotencyKey,
    createdAt: t.createdAt,
    status: t.status,
    runs: t.runs.map((r, i) => ({ run: i + 1, turnId: r.turnId, status: r.status, errorCode: null })),
    pendingActions: t.pending ? [{ actionId: t.pending.actionId, toolName: t.pending.toolName, prompt: null, actionType: "tool_confirmation" }] : [],
    result: t.result && isFinal(t.status) ? { status: t.status, text: t.result.text, structuredOutput: t.result.structuredOutput, errorCode: null, errorMessage: null } : null,
  });
  const emit = (t: MockTask, turnId: string, step: { type: AgentTaskEventType; subtype?: string | undefined; payload?: Record<string, unknown> | undefined }) => {
    t.seq += 1;
    const event: AgentTaskEvent = {
      schemaVersion: "lime.agent-task-event.v1",
      eventId: `event_${randomHex()}`,
      sequence: t.seq,
      type: step.type,
      appId,
      taskId: t.taskId,
      traceId: t.traceId,
      sessionId: t.sessionId,
      turnId,
      at: now(),
      payload: { runtimeType: "mock", ...(step.payload ?? {}) },
    };
    if (step.subtype !== undefined) event.subtype = step.subtype;
    t.events.push(event);
    ctx.deliver({ capability: "lime.agent", event });
    return event;
  };
  async function runMockTask(t: MockTask): Promise<void> {
    const run = t.runs.length;
    const turnId = `turn_${randomHex()}`;
    const r = { turnId, status: "queued" as AgentTaskStatus };
    t.runs.push(r);
    t.result = undefined;
    const history = structuredClone(sessionHistory.get(t.sessionId) ?? []);
    const steps = options.agent!.script({ input: structuredClone(t.input), run, taskId: t.taskId, expectedOutput: t.expectedOutput, sessionId: t.sessionId, history });
    const finish = (subtype: string, payload: Record<string, unknown> = {}) => {
      const status: AgentTaskStatus = subtype === "success" ? "succeeded" : subtype === "cancelled" ? "cancelled" : "failed";
      t.status = status;
      r.status = status;
      t.result = { text: typeof payload["text"] === "string" ? payload["text"] : null, structuredOutput: payload["structuredOutput"] ?? null };
      if (status === "succeeded") sessionHistory.set(t.sessionId, [...(sessionHistory.get(t.sessionId) ?? []), structuredClone(t.input)]);
      emit(t, turnId, { type: "result", subtype, payload });
    };
    await Promise.resolve();
    if (run === 0 && !t.joined) emit(t, turnId, { type: "system:init" });
    emit(t, turnId, { type: "task:queued" });
    t.status = "running";
    r.status = "running";
    let text = "";
    for (const step of steps) {
      if (step.delayMs) await new Promise((res) => setTimeout(res, step.delayMs));
      else await Promise.resolve();
      if (t.cancel) return finish("cancelled");
      if (step.type === "result") return finish(step.subtype ?? "success", { text, ...(step.payload ?? {}) });
      if (step.type === "assistant:delta" && typeof step.payload?.["text"] === "string") text += step.payload["text"];
      if (step.type === "approval:requested") {
        const actionId = typeof step.payload?.["actionId"] === "string" ? step.payload["actionId"] : `action_${randomHex()}`;
        const toolName = typeof step.payload?.["toolName"] === "string" ? step.payload["toolName"] : null;
        const decision = await new Promise<string>((resume) => {
          t.pending = { actionId, toolName, resume };
          t.status = "waiting_approval";
          r.status = "waiting_approval";
          emit(t, turnId, { type: "approval:requested", payload: { ...(step.payload ?? {}), actionId } });
          const user = options.agent?.user?.({ taskId: t.taskId, actionId, toolName });
          if (user !== undefined) void Promise.resolve(user).then(resume);
        });
        t.pending = undefined;
        if (t.cancel) return finish("cancelled");
        t.status = "running";
        r.status = "running";
        emit(t, turnId, { type: "task:progress", subtype: "approval_resolved", payload: { actionId, decision } });
        continue;
      }
      emit(t, turnId, step);
    }
    finish("success", { text });
  }

  const service: Service = {
    startTask(a) {
      const expectedOutput = checkStartTask(a, appId, ctx.entryKey, ctx.options.knowledge ?? {});
      if (a["input"] === undefined || a["input"] === null) throw invalid("args.input is required", "agent.invalid_argument");
      const input = attach(a["files"], a["input"]);
      const key = a["idempotencyKey"];
      if (key !== undefined && (typeof key !== "string" || key.length === 0 || bytes(key) > 200)) {
        throw invalid("idempotencyKey must be 1-200 bytes", "agent.invalid_argument");
      }
      const policy = a["sessionPolicy"];
      if (policy !== undefined && policy !== null && typeof policy !== "string" && (typeof policy !== "object" || Array.isArray(policy))) {
        throw invalid("args.sessionPolicy must be a string or an object", "agent.invalid_argument");
      }
      if (!options.agent) throw refuse("APP_E012", "no model is set up", "agent.needs_setup");
      const existing = typeof key === "string" ? taskKeys.get(key) : undefined;
      if (existing) {
        const t = mockTasks.get(existing)!;
        return { taskId: t.taskId, traceId: t.traceId, sessionId: t.sessionId, created: false };
      }
      const [sessionId, joined, newRef] = chooseSession(policy);
      if (newRef !== undefined) sessionRefs.set(newRef, sessionId);
      const t: MockTask = {
        taskId: `task_${randomHex()}`,
        traceId: `trace_${randomHex()}`,
        sessionId,
        joined,
        idempotencyKey: typeof key === "string" ? key : null,
        createdAt: now(),
        input,
        expectedOutput,
        seq: 0,
        events: [],
        runs: [],
        status: "queued",
        cancel: false,
        pending: undefined,
      };
      mockTasks.set(t.taskId, t);
      if (t.idempotencyKey) taskKeys.set(t.idempotencyKey, t.taskId);
      void runMockTask(t);
      return { taskId: t.taskId, traceId: t.traceId, sessionId: t.sessionId, created: true };
    },
    getTask: (a) => taskView(ownTask(a)),
    listTasks: () => ({ items: [...mockTasks.values()].map(taskView), nextCursor: null }),
    cancelTask(a) {
      const t = ownTask(a);
      if (!isFinal(t.status)) {
        t.cancel = true;
        t.pending?.resume("cancel");
      }
      return taskView(t);
    },
    retryTask(a) {
      const t = ownTask(a);
      if (!options.agent) throw refuse("APP_E012", "no model is set up", "agent.needs_setup");
      if (!isFinal(t.status)) throw invalid("the task's latest run has not ended", "agent.task_busy");
      if (sessionBusy(t.sessionId)) throw invalid("another task's turn in this session has not ended", "agent.session_busy");
      t.cancel = false;
      t.status = "queued";
      void runMockTask(t);
      return taskView(t);
    },
    respondAction(a) {
      const t = ownTask(a);
      const decision = a["decision"];
      if (decision !== "approve" && decision !== "reject" && decision !== "answer") {
        throw invalid('args.decision must be "approve", "reject" or "answer"', "agent.invalid_argument");
      }
      if (!t.pending || t.pending.actionId !== a["actionId"]) {
        throw refuse(ErrorCodes.NOT_FOUND, "no pending approval with this id in this task", "agent.action_not_found");
      }
      // Only the user approves (the host's prompt: MockAgent.user); an app may only reject.
      if (decision !== "reject" || a["updatedInput"] != null || a["remember"] === "session") {
        const rewrite = a["updatedInput"] != null;
        throw refuse(ErrorCodes.PERMISSION_DENIED, rewrite ? "an app cannot change the input of a tool that needs the user's approval" : "only the user approves this action, in the prompt AppHost shows", rewrite ? "agent.updated_input_unsupported" : "agent.approval_requires_user");
      }
      t.pending.resume(decision);
      return { responded: true };
    },
    getTaskEvents(a) {
      const t = ownTask(a);
      const after = typeof a["afterSequence"] === "number" ? a["afterSequence"] : 0;
      const limit = typeof a["limit"] === "number" ? Math.min(Math.max(a["limit"], 1), 1000) : 200;
      const events = t.events.filter((e) => e.sequence > after).slice(0, limit);
      return { events, nextAfterSequence: events.length ? events[events.length - 1]!.sequence : after };
    },
    watchTask(a) {
      const t = ownTask(a);
      const after = typeof a["afterSequence"] === "number" ? a["afterSequence"] : 0;
      for (const e of t.events) if (e.sequence > after) queueMicrotask(() => ctx.deliver({ capability: "lime.agent", event: e }));
      return { watching: true, taskId: t.taskId, afterSequence: after };
    },
  };
  const notAnObject = invalid("args must be an object", "agent.invalid_argument");
  /** The host's `runtimeCorrelation` of one of this app's tasks (its latest run); `undefined` for no such task. */
  const correlation = (taskId: string): RuntimeCorrelation | undefined => {
    const t = mockTasks.get(taskId);
    if (!t) return undefined;
    const turnId = t.runs.at(-1)?.turnId ?? null;
    const missing: RuntimeCorrelation["missing"] = turnId ? ["runId"] : ["threadId", "turnId", "runId"];
    return {
      runtimeId: "mock_runtime", sessionId: t.sessionId, threadId: turnId ? `thread_${t.sessionId}` : null, turnId, taskId: t.taskId,
      runId: null, traceId: t.traceId, missing,
    };
  };
  return { service, notAnObject, correlation };
}
