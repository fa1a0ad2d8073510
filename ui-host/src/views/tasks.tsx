// The Tasks page (`#/tasks`, and the "Tasks" tab of an app's detail page): every app's agent
// tasks with their status, streamed text, tool calls, pending approvals (the tool input shown,
// Approve / Reject), result, artifacts and evidence, Cancel and Retry. Live: `tasks:changed` and
// the frames' task events refresh it (app.tsx calls `tasksChanged`); a 1 s poll while the open
// task is still active is the fallback.

import type { JSX } from "preact";
import { useCallback, useEffect, useRef, useState } from "preact/hooks";

import * as api from "../api.js";
import {
  inputText,
  isActive,
  mergeEvents,
  runActivity,
  shortTime,
  statusText,
  taskRefs,
  type PendingAction,
  type TaskEvent,
  type TaskView,
} from "../tasks.js";
import { Button, ErrorBox } from "../ui/components.js";
import { OpenArtifactButton } from "./open-artifact.js";
import { RowList, StatusBadge, useLiveList } from "./task-rows.js";
import { AppUsage, TaskUsageLine, taskTokens, tokensText } from "./task-usage.js";
import { WorkflowRuns } from "./workflow-runs.js";

const statusTone = (s: string): string =>
  s === "succeeded" ? "good" : s === "failed" ? "bad" : s === "waiting_approval" ? "warn" : s === "cancelled" ? "muted" : "info";

function TaskBadge(props: { status: string; testid?: string }): JSX.Element {
  return (
    <StatusBadge status={props.status} tone={statusTone(props.status)} testid={props.testid}>
      {statusText(props.status)}
    </StatusBadge>
  );
}

/** The list of tasks (stateless: render-tested). */
export function TaskList(props: { tasks: TaskView[]; selected: string | null; showApp: boolean; select(t: TaskView): void }): JSX.Element {
  return (
    <RowList
      items={props.tasks}
      empty="No agent task yet. Apps start tasks with lime.agent."
      label="Agent tasks"
      testid="task-list"
      keyOf={(t) => t.taskId}
      selected={props.selected}
      select={props.select}
      rowData={(t) => ({ "data-testid": "task-row", "data-task-id": t.taskId, "data-app-id": t.appId, "data-status": t.status })}
    >
      {(t) => {
        const pending = t.pendingApprovals ?? t.pendingActions.length;
        return (
          <>
            <TaskBadge status={t.status} />
            {props.showApp && <span class="task-app">{t.appId}</span>}
            <span class="task-input">{t.inputPreview ?? ""}</span>
            {pending > 0 && (
              <span class="badge badge--warn" data-testid="task-row-approvals">
                {pending} to approve
              </span>
            )}
            <span class="task-tokens" data-testid="task-row-usage">{tokensText(taskTokens(t))}</span>
            <span class="task-time">{shortTime(t.updatedAt ?? t.createdAt)}</span>
          </>
        );
      }}
    </RowList>
  );
}

function Approval(props: { action: PendingAction; busy: boolean; respond(decision: "approve" | "reject"): void }): JSX.Element {
  const a = props.action;
  return (
    <div class="task-approval" role="group" aria-label={`Approval: ${a.toolName ?? "tool"}`} data-testid="task-approval" data-action-id={a.actionId}>
      <p>
        <strong>{a.toolName ?? "A tool"}</strong> needs your approval{a.prompt ? `: ${a.prompt}` : "."}
      </p>
      <pre class="task-input-json" data-testid="task-approval-input">
        {inputText(a.input)}
      </pre>
      <Button variant="primary" disabled={props.busy} onClick={() => props.respond("approve")} data-testid="task-approve">
        Approve
      </Button>{" "}
      <Button variant="danger" disabled={props.busy} onClick={() => props.respond("reject")} data-testid="task-reject">
        Reject
      </Button>
    </div>
  );
}

/** One task's activity (stateless: render-tested). */
export function TaskDetailView(props: {
  task: TaskView;
  events: TaskEvent[];
  busy: boolean;
  error: unknown;
  respond(actionId: string, decision: "approve" | "reject"): void;
  cancel(): void;
  retry(): void;
}): JSX.Element {
  const t = props.task;
  const runs = runActivity(props.events);
  const refs = taskRefs(props.events);
  const active = isActive(t.status);
  return (
    <section class="task-detail" aria-labelledby="task-detail-heading" data-testid="task-detail" data-task-id={t.taskId} data-status={t.status}>
      <h3 id="task-detail-heading">
        Task of {t.appId} <TaskBadge status={t.status} testid="task-status" />
      </h3>
      <TaskUsageLine task={t} />
      {t.input !== undefined && (
        <details class="task-request">
          <summary>Request</summary>
          <pre class="task-input-json">{inputText(t.input)}</pre>
        </details>
      )}
      {props.error !== null && <ErrorBox error={props.error} testid="task-error" />}
      {t.pendingActions.map((a) => (
        <Approval key={a.actionId} action={a} busy={props.busy} respond={(d) => props.respond(a.actionId, d)} />
      ))}
      <div class="task-actions">
        <Button disabled={props.busy || !active} onClick={props.cancel} data-testid="task-cancel">
          Cancel
        </Button>{" "}
        <Button disabled={props.busy || active} onClick={props.retry} data-testid="task-retry">
          Retry
        </Button>
      </div>
      {runs.map((r, i) => (
        <article class="task-run" key={r.turnId} data-testid="task-run" aria-label={`Run ${i + 1}`}>
          <h4>Run {i + 1}</h4>
          <p class="task-text" data-testid="task-text" aria-live={i === runs.length - 1 ? "polite" : undefined}>
            {r.text}
          </p>
          {r.tools.length > 0 && (
            <ul class="task-tools" aria-label="Tool calls">
              {r.tools.map((c) => (
                <li key={c.id} data-testid="task-tool" data-status={c.status}>
                  <code>{c.name}</code>{" "}
                  {c.status === "done"
                    ? "done"
                    : c.status === "failed"
                      ? "failed"
                      : t.pendingActions.some((a) => a.toolCallId === c.id)
                        ? "waiting for approval"
                        : "running"}
                  {c.args !== "" && <pre class="task-input-json">{inputText(c.args, 2000)}</pre>}
                  {c.output !== null && <pre class="task-output">{inputText(c.output, 2000)}</pre>}
                </li>
              ))}
            </ul>
          )}
          {r.result !== null && (
            <p data-testid="task-result" data-subtype={r.result.subtype}>
              Result: <strong>{r.result.subtype}</strong>
            </p>
          )}
        </article>
      ))}
      {t.result !== null && t.result.structuredOutput !== null && t.result.structuredOutput !== undefined && (
        <details class="task-structured" open>
          <summary>Structured result</summary>
          <pre class="task-input-json" data-testid="task-structured">{inputText(t.result.structuredOutput)}</pre>
        </details>
      )}
      {t.result?.errorMessage && (
        <p class="task-error-text" data-testid="task-result-error">
          {t.result.errorCode}: {t.result.errorMessage}
        </p>
      )}
      {refs.length > 0 && (
        <ul class="task-refs" aria-label="Artifacts and evidence" data-testid="task-refs">
          {refs.map((r) => (
            <li key={`${r.kind}-${r.id}`} data-testid="task-ref" data-kind={r.kind}>
              {r.kind === "artifact" ? "Artifact" : "Evidence"} {r.title ?? r.id}
              {r.refs.length > 0 && <code class="task-ref-id"> {r.refs.join(" ")}</code>}
              {r.kind === "artifact" && r.type !== null && (
                <OpenArtifactButton ownerAppId={t.appId} artifactId={r.id} artifactType={r.type} />
              )}
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}

/** The Tasks page; with `appId` only that app's tasks (the app detail's Tasks tab). */
export function TasksPage(props: { appId?: string; apps: string[] }): JSX.Element {
  const [filter, setFilter] = useState<string>(props.appId ?? "");
  const [tasks, setTasks] = useState<TaskView[] | null>(null);
  const [listError, setListError] = useState<unknown>(null);
  const [selected, setSelected] = useState<{ appId: string; taskId: string } | null>(null);
  const [task, setTask] = useState<TaskView | null>(null);
  const [events, setEvents] = useState<TaskEvent[]>([]);
  const [error, setError] = useState<unknown>(null);
  const after = useRef(0);
  const selectedRef = useRef(selected);
  selectedRef.current = selected;
  const appFilter = props.appId ?? filter;

  const loadList = useCallback(async () => {
    try {
      setTasks(await api.listTasks(appFilter === "" ? undefined : appFilter));
      setListError(null);
    } catch (e: unknown) {
      setListError(e);
    }
  }, [appFilter]);

  const loadDetail = useCallback(async () => {
    const sel = selectedRef.current;
    if (sel === null) return;
    try {
      const d = await api.taskDetail(sel.appId, sel.taskId, after.current);
      if (selectedRef.current !== sel) return;
      after.current = d.nextAfterSequence;
      setTask(d.task);
      setEvents((seen) => mergeEvents(seen, d.events));
    } catch (e: unknown) {
      setError(e);
    }
  }, []);

  useEffect(() => {
    after.current = 0;
    setEvents([]);
    setTask(null);
    setError(null);
    void loadDetail();
  }, [selected, loadDetail]);
  // Fallback poll while the open task, or one in the list, still changes on its own.
  const live = (task !== null && isActive(task.status)) || (tasks ?? []).some((t) => isActive(t.status));
  const { busy, act } = useLiveList(loadList, loadDetail, live, setError);

  const inApp = props.appId !== undefined;
  return (
    <section class={inApp ? "tasks-section" : "page"} aria-labelledby="tasks-heading" data-testid="tasks-page">
      {inApp ? <h3 id="tasks-heading">Tasks</h3> : <h2 id="tasks-heading">Tasks</h2>}
      {!inApp && (
        <label class="field field--inline">
          <span>App</span>
          <select value={filter} onChange={(e) => setFilter(e.currentTarget.value)} data-testid="tasks-filter">
            <option value="">All apps</option>
            {props.apps.map((a) => (
              <option key={a} value={a}>
                {a}
              </option>
            ))}
          </select>
        </label>
      )}
      {listError !== null && <ErrorBox error={listError} testid="tasks-error" />}
      {tasks !== null && <AppUsage tasks={tasks} />}
      <div class="tasks-layout">
        {tasks === null ? (
          <p class="empty-note">Loading tasks…</p>
        ) : (
          <TaskList tasks={tasks} selected={selected?.taskId ?? null} showApp={!inApp} select={(t) => setSelected({ appId: t.appId, taskId: t.taskId })} />
        )}
        {selected !== null && task !== null && (
          <TaskDetailView
            task={task}
            events={events}
            busy={busy}
            error={error}
            respond={(actionId, decision) => void act(() => api.taskRespond(selected.appId, selected.taskId, actionId, decision))}
            cancel={() => void act(() => api.taskCancel(selected.appId, selected.taskId))}
            retry={() => void act(() => api.taskRetry(selected.appId, selected.taskId))}
          />
        )}
      </div>
      <WorkflowRuns appId={props.appId} />
    </section>
  );
}
