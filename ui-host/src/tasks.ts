// Task activity (docs/host-api.md, "Agent tasks"): the shapes `list_tasks` / `task_detail`
// answer, and the pure functions the Tasks page and the tab badges use to read them (grouping
// events by run, streamed text, tool calls, artifacts and evidence, approval counts). Unit-tested.

export type TaskStatus =
  | "submitting"
  | "queued"
  | "running"
  | "waiting_approval"
  | "succeeded"
  | "failed"
  | "cancelled";

export interface PendingAction {
  actionId: string;
  toolName: string | null;
  toolCallId?: string | null;
  input: unknown;
  prompt: string | null;
  actionType: string | null;
}

export interface TaskRun {
  run: number;
  turnId: string;
  status: string;
  errorCode: string | null;
}

export interface TaskResult {
  status: string;
  text: string | null;
  structuredOutput: unknown;
  errorCode: string | null;
  errorMessage: string | null;
}

export interface TaskView {
  taskId: string;
  appId: string;
  traceId: string;
  sessionId: string;
  createdAt: string;
  updatedAt?: string;
  status: TaskStatus | string;
  inputPreview?: string;
  input?: string;
  runs: TaskRun[];
  pendingActions: PendingAction[];
  pendingApprovals?: number;
  result: TaskResult | null;
}

/** One `lime.agent-task-event.v1` event. */
export interface TaskEvent {
  sequence: number;
  type: string;
  subtype?: string;
  turnId?: string;
  at: string;
  payload?: Record<string, unknown>;
  refs?: string[];
}

export interface TaskDetail {
  task: TaskView;
  events: TaskEvent[];
  nextAfterSequence: number;
}

/** Most events kept for one open task (older ones are dropped from the view, not from Rust). */
export const MAX_KEPT_EVENTS = 5000;

/** Statuses in which the task still changes on its own (the page polls them as a fallback). */
export function isActive(status: string): boolean {
  return status === "submitting" || status === "queued" || status === "running" || status === "waiting_approval";
}

/** Adds a page of events to those seen (by sequence: no duplicate, in order, bounded). */
export function mergeEvents(seen: readonly TaskEvent[], page: readonly TaskEvent[]): TaskEvent[] {
  const last = seen.length === 0 ? 0 : (seen[seen.length - 1] as TaskEvent).sequence;
  const fresh = page.filter((e) => e.sequence > last).sort((a, b) => a.sequence - b.sequence);
  const all = fresh.length === 0 ? [...seen] : [...seen, ...fresh];
  return all.length > MAX_KEPT_EVENTS ? all.slice(all.length - MAX_KEPT_EVENTS) : all;
}

const str = (v: unknown): string | null => (typeof v === "string" ? v : null);

/** One tool call of a run: its name, arguments and how it ended. */
export interface ToolCall {
  id: string;
  name: string;
  args: string;
  status: "running" | "done" | "failed";
  output: string | null;
}

/** One run (the first, then one per retry): its streamed text, tool calls and result. */
export interface RunActivity {
  turnId: string;
  text: string;
  tools: ToolCall[];
  result: { subtype: string; sequence: number } | null;
}

/**
 * Tool arguments as text. Arguments over 8 KiB arrive as a reference
 * (`{$argsRef, size, preview}`, docs/app-server.md "Large tool arguments"): its preview is shown.
 */
export function argsText(a: unknown): string {
  if (typeof a === "object" && a !== null && typeof (a as Record<string, unknown>)["$argsRef"] === "string") {
    const r = a as Record<string, unknown>;
    const size = typeof r.size === "number" ? ` (${r.size} bytes)` : "";
    return `${str(r.preview) ?? ""}…${size}`;
  }
  return JSON.stringify(a);
}

/** Groups events by run (turn), in order: streamed text, tool calls, the result's subtype. */
export function runActivity(events: readonly TaskEvent[]): RunActivity[] {
  const runs: RunActivity[] = [];
  const byTurn = new Map<string, RunActivity>();
  for (const e of events) {
    const turnId = e.turnId ?? "";
    if (turnId === "") continue;
    let run = byTurn.get(turnId);
    if (run === undefined) {
      run = { turnId, text: "", tools: [], result: null };
      byTurn.set(turnId, run);
      runs.push(run);
    }
    const p = e.payload ?? {};
    if (e.type === "assistant:delta") {
      run.text += str(p.text) ?? str(p.delta) ?? "";
    } else if (e.type === "tool:call") {
      const id = str(p.toolCallId) ?? `tool-${e.sequence}`;
      let call = run.tools.find((t) => t.id === id);
      if (call === undefined) {
        call = { id, name: str(p.toolName) ?? str(p.name) ?? "tool", args: "", status: "running", output: null };
        run.tools.push(call);
      }
      const name = str(p.toolName) ?? str(p.name);
      if (name !== null) call.name = name;
      if (e.subtype === "args") {
        const a = p.arguments ?? p.args ?? p.argumentsDelta;
        call.args = typeof a === "string" ? a : a === undefined ? call.args : argsText(a);
      } else if (e.subtype === "result") {
        call.status = "done";
        call.output = str(p.outputPreview) ?? str(p.output) ?? call.output;
      } else if (e.subtype === "failed") {
        call.status = "failed";
        call.output = str(p.message) ?? str(p.code) ?? call.output;
      }
    } else if (e.type === "result") {
      run.result = { subtype: e.subtype ?? "unknown", sequence: e.sequence };
    }
  }
  return runs;
}

/** An artifact or evidence the task produced. */
export interface TaskRef {
  kind: "artifact" | "evidence";
  id: string;
  refs: string[];
  title: string | null;
  /** An artifact's type (`kind`), which picks its viewer; null when the event has none. */
  type: string | null;
}

/** The artifacts and evidence of the events (`artifact:created`, `evidence:recorded`), once each. */
export function taskRefs(events: readonly TaskEvent[]): TaskRef[] {
  const out: TaskRef[] = [];
  for (const e of events) {
    const kind = e.type === "artifact:created" ? "artifact" : e.type === "evidence:recorded" ? "evidence" : null;
    if (kind === null) continue;
    const p = e.payload ?? {};
    const id = str(kind === "artifact" ? p.artifactId : p.evidenceId) ?? `${kind}-${e.sequence}`;
    if (out.some((r) => r.kind === kind && r.id === id)) continue;
    out.push({ kind, id, refs: e.refs ?? [], title: str(p.title) ?? str(p.name), type: kind === "artifact" ? str(p.kind) ?? str(p.artifactType) : null });
  }
  return out;
}

/** Pending approvals per app (for the running tabs' badges). */
export function approvalsByApp(tasks: readonly TaskView[]): Map<string, number> {
  const out = new Map<string, number>();
  for (const t of tasks) {
    const n = t.pendingApprovals ?? t.pendingActions.length;
    if (n > 0) out.set(t.appId, (out.get(t.appId) ?? 0) + n);
  }
  return out;
}

/** The accessible text of a tab's approval badge. */
export function approvalLabel(n: number): string {
  return n === 1 ? "1 approval waiting" : `${n} approvals waiting`;
}

/** A status as the page says it. */
export function statusText(status: string): string {
  switch (status) {
    case "waiting_approval":
      return "Waiting for approval";
    case "succeeded":
      return "Succeeded";
    case "failed":
      return "Failed";
    case "cancelled":
      return "Cancelled";
    case "running":
      return "Running";
    case "queued":
    case "submitting":
      return "Queued";
    default:
      return status;
  }
}

/** A tool input shown to the user: pretty JSON, bounded. */
export function inputText(input: unknown, max = 4000): string {
  let text: string;
  try {
    let value = input;
    if (typeof input === "string" && /^\s*[{[]/.test(input)) {
      try {
        value = JSON.parse(input);
      } catch {
        // not JSON: shown as it is
      }
    }
    text = typeof value === "string" ? value : JSON.stringify(value, null, 2) ?? "";
  } catch {
    text = String(input);
  }
  return text.length > max ? `${text.slice(0, max)}…` : text;
}

/** Listeners told when a task changed (`tasks:changed` or a task's `outgoing` events). */
const listeners = new Set<() => void>();
export function onTasksChanged(f: () => void): () => void {
  listeners.add(f);
  return () => listeners.delete(f);
}
export function tasksChanged(): void {
  for (const f of [...listeners]) f();
}

/** A timestamp as the list shows it: `2026-11-23 21:59:53` (UTC, as Rust wrote it). */
export function shortTime(iso: string): string {
  const m = /^(\d{4}-\d{2}-\d{2})T(\d{2}:\d{2}:\d{2})/.exec(iso);
  return m === null ? iso : `${m[1]} ${m[2]}`;
}
