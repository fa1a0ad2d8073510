// Workflow runs on the Tasks page (`api/workflow.rs`, docs/host-api.md "Workflow runs"): every
// app's runs beside its agent tasks, the open run's step timeline (state, kind, status, timings,
// attempts, errors), the pending review drawn by the host (what is asked, the data shown,
// Approve / Reject / Edit as JSON), a pending user input (a JSON editor, its schema shown), a
// failed step's Retry / Stop, Cancel, the run's result and evidence; and the scheduled starts
// with the slots missed while no host ran. Live through `workflow:changed` (host-events.ts calls
// the tasks listeners), with a 1 s poll while a run in view is running.

import type { JSX } from "preact";
import { useCallback, useEffect, useRef, useState } from "preact/hooks";

import * as api from "../api.js";
import type { PendingView, RunDetail, RunSummary, ScheduleRecord, StepRow } from "../generated/host-api.js";
import { inputText, shortTime } from "../tasks.js";
import { Button, ErrorBox } from "../ui/components.js";
import { RowList, StatusBadge, useLiveList } from "./task-rows.js";

const tone = (s: string): string =>
  s === "succeeded" || s === "approved"
    ? "good"
    : s === "failed" || s === "timed-out" || s === "rejected"
      ? "bad"
      : s === "waiting"
        ? "warn"
        : s === "cancelled"
          ? "muted"
          : "info";

function RunBadge(props: { status: string; testid?: string }): JSX.Element {
  return (
    <StatusBadge status={props.status} tone={tone(props.status)} testid={props.testid}>
      {props.status}
    </StatusBadge>
  );
}

/** Milliseconds between two RFC 3339 times, as text (`""` when unknown). */
export function duration(from: string, to: string | null): string {
  if (to === null) return "";
  const ms = Date.parse(to) - Date.parse(from);
  if (!Number.isFinite(ms) || ms < 0) return "";
  return ms < 1000 ? `${ms} ms` : `${(ms / 1000).toFixed(1)} s`;
}

/** The run list (stateless: render-tested). */
export function RunList(props: { runs: RunSummary[]; selected: string | null; showApp: boolean; select(r: RunSummary): void }): JSX.Element {
  return (
    <RowList
      items={props.runs}
      empty="No workflow run yet. Run a workflow entry from its app's Entries tab."
      label="Workflow runs"
      testid="run-list"
      keyOf={(r) => r.runId}
      selected={props.selected}
      select={props.select}
      rowData={(r) => ({ "data-testid": "run-row", "data-run-id": r.runId, "data-status": r.status })}
    >
      {(r) => (
        <>
          <RunBadge status={r.status} />
          {props.showApp && <span class="task-app">{r.appId}</span>}
          <span class="task-input">{r.workflow}</span>
          {r.waiting === "review" && <span class="badge badge--warn">review</span>}
          {r.waiting === "input" && <span class="badge badge--warn">input</span>}
          <span class="task-time">{r.startedAt === null ? "" : shortTime(r.startedAt)}</span>
        </>
      )}
    </RowList>
  );
}

/** The step timeline (stateless). */
export function Timeline(props: { steps: StepRow[] }): JSX.Element {
  if (props.steps.length === 0) return <p class="empty-note">No step yet.</p>;
  return (
    <ol class="run-timeline" aria-label="Steps" data-testid="run-timeline">
      {props.steps.map((s) => (
        <li key={s.key} data-testid="run-step" data-state={s.state} data-status={s.status}>
          <RunBadge status={s.status} /> <strong>{s.state}</strong> <span class="muted">({s.kind || s.what})</span>
          {s.capability !== null && (
            <code class="task-ref-id">
              {" "}
              {s.capability}.{s.method ?? ""}
            </code>
          )}
          {s.attempt > 1 && <span class="badge badge--warn"> attempt {s.attempt}</span>}
          <span class="task-time">
            {" "}
            {shortTime(s.startedAt)}
            {s.endedAt !== null && ` · ${duration(s.startedAt, s.endedAt)}`}
          </span>
          {s.error !== null && (
            <p class="task-error-text" data-testid="run-step-error">
              {s.error.code}: {s.error.message}
            </p>
          )}
          {s.output !== null && <pre class="task-output">{s.output}</pre>}
        </li>
      ))}
    </ol>
  );
}

/** What a run waits for from the user, drawn by the host (stateless apart from the editor). */
export function PendingPanel(props: {
  pending: PendingView;
  busy: boolean;
  respond(decision: string, data?: unknown): void;
}): JSX.Element {
  const p = props.pending;
  const initial = p.kind === "review" ? inputText(p.show ?? null, 64 * 1024) : "{}";
  const [text, setText] = useState(initial);
  const [editing, setEditing] = useState(p.kind === "input");
  const [problem, setProblem] = useState<string | null>(null);
  useEffect(() => {
    setText(initial);
    setEditing(p.kind === "input");
    setProblem(null);
  }, [p.key]);
  const withData = (decision: string): void => {
    try {
      props.respond(decision, JSON.parse(text) as unknown);
      setProblem(null);
    } catch {
      setProblem("This is not valid JSON.");
    }
  };
  return (
    <div class="task-approval" role="group" aria-label={`Waiting for you: ${p.state}`} data-testid="run-pending" data-kind={p.kind}>
      <p data-testid="run-pending-prompt">
        <strong>{p.state}</strong>: {p.prompt}
      </p>
      {p.kind === "review" && !editing && (
        <pre class="task-input-json" data-testid="run-review-show">
          {p.showTruncated ?? inputText(p.show ?? null, 64 * 1024)}
        </pre>
      )}
      {p.kind === "input" && p.schema !== null && p.schema !== undefined && (
        <details>
          <summary>Expected shape (JSON Schema)</summary>
          <pre class="task-input-json">{inputText(p.schema)}</pre>
        </details>
      )}
      {editing && (
        <label class="field">
          <span>{p.kind === "review" ? "Edited data (JSON)" : "Your answer (JSON)"}</span>
          <textarea rows={8} value={text} onInput={(e) => setText(e.currentTarget.value)} data-testid="run-edit-json" spellcheck={false} />
        </label>
      )}
      {problem !== null && (
        <p class="task-error-text" role="alert">
          {problem}
        </p>
      )}
      {p.kind === "review" && (
        <>
          {editing ? (
            <Button variant="primary" disabled={props.busy} onClick={() => withData("edit")} data-testid="run-approve-edited">
              Approve edited
            </Button>
          ) : (
            <Button variant="primary" disabled={props.busy} onClick={() => props.respond("approve")} data-testid="run-approve">
              Approve
            </Button>
          )}{" "}
          <Button variant="danger" disabled={props.busy} onClick={() => props.respond("reject")} data-testid="run-reject">
            Reject
          </Button>{" "}
          <Button disabled={props.busy} onClick={() => setEditing(!editing)} data-testid="run-edit">
            {editing ? "Stop editing" : "Edit"}
          </Button>
        </>
      )}
      {p.kind === "input" && (
        <Button variant="primary" disabled={props.busy} onClick={() => withData("input")} data-testid="run-submit-input">
          Submit
        </Button>
      )}
      {p.kind === "decision" && (
        <>
          <Button variant="primary" disabled={props.busy} onClick={() => props.respond("retry")} data-testid="run-retry">
            Retry the step
          </Button>{" "}
          <Button variant="danger" disabled={props.busy} onClick={() => props.respond("stop")} data-testid="run-stop">
            Stop the run
          </Button>
        </>
      )}
    </div>
  );
}

function evidenceId(e: unknown): string | null {
  if (typeof e !== "object" || e === null) return null;
  const id = (e as { id?: unknown }).id;
  return typeof id === "string" ? id : null;
}

/** One run (stateless apart from the pending panel's editor). */
export function RunDetailView(props: { detail: RunDetail; busy: boolean; error: unknown; respond(decision: string, data?: unknown): void; cancel(): void }): JSX.Element {
  const d = props.detail;
  const r = d.run;
  const ev = evidenceId(d.evidence);
  return (
    <section class="task-detail" aria-labelledby="run-detail-heading" data-testid="run-detail" data-run-id={r.runId} data-status={r.status}>
      <h3 id="run-detail-heading">
        {r.workflow} of {r.appId} <RunBadge status={r.status} testid="run-status" />
      </h3>
      <details class="task-request">
        <summary>Input</summary>
        <pre class="task-input-json">{d.input}</pre>
      </details>
      {props.error !== null && <ErrorBox error={props.error} testid="run-error" />}
      {d.pending !== null && <PendingPanel pending={d.pending} busy={props.busy} respond={props.respond} />}
      <div class="task-actions">
        <Button disabled={props.busy || r.finished} onClick={props.cancel} data-testid="run-cancel">
          Cancel
        </Button>
        {d.timeline.retries > 0 && <span class="muted"> {d.timeline.retries} retries</span>}
      </div>
      <Timeline steps={d.timeline.steps} />
      {d.result !== null && (
        <details class="task-structured" open>
          <summary>Result</summary>
          <pre class="task-input-json" data-testid="run-result">
            {d.result}
          </pre>
        </details>
      )}
      {d.error !== null && (
        <p class="task-error-text" data-testid="run-failure">
          {d.error.code}: {d.error.message}
        </p>
      )}
      {ev !== null && (
        <p class="task-refs" data-testid="run-evidence" data-evidence-id={ev}>
          Evidence <code class="task-ref-id">{ev}</code> (package provenance and run correlation)
        </p>
      )}
    </section>
  );
}

/** Scheduled starts with their missed slots (stateless). */
export function Schedules(props: { schedules: ScheduleRecord[] }): JSX.Element | null {
  if (props.schedules.length === 0) return null;
  return (
    <ul class="plain" aria-label="Scheduled starts" data-testid="schedules">
      {props.schedules.map((s) => (
        <li key={`${s.app}/${s.entry}`} data-testid="schedule" data-missed={s.missedTotal}>
          <strong>{s.app}</strong> {s.entry}: {s.workflow} every {Math.round(s.everySecs / 60)} min, next {shortTime(s.nextDue)}
          {s.lastMissed !== null && (
            <span class="badge badge--warn" data-testid="schedule-missed">
              {" "}
              {s.lastMissed.missed} missed while AppHost was not running (noticed {shortTime(s.lastMissed.noticedAt)})
            </span>
          )}
        </li>
      ))}
    </ul>
  );
}

/** How many loads of an ended run's detail look for its evidence before the poll stops. */
export const MAX_EVIDENCE_LOOKS = 10;

/** The count of loads of an ended run's detail without its evidence, after one more load `d`
 * (0 while the run is going or once the evidence is there). */
export function evidenceLooks(looks: number, d: RunDetail): number {
  return d.run.finished && d.evidence === null ? looks + 1 : 0;
}

/** The workflow runs section of the Tasks page; with `appId` only that app's runs. */
export function WorkflowRuns(props: { appId?: string | undefined }): JSX.Element {
  const [runs, setRuns] = useState<RunSummary[] | null>(null);
  const [schedules, setSchedules] = useState<ScheduleRecord[]>([]);
  const [listError, setListError] = useState<unknown>(null);
  const [selected, setSelected] = useState<string | null>(null);
  const [detail, setDetail] = useState<RunDetail | null>(null);
  const [error, setError] = useState<unknown>(null);
  const selectedRef = useRef(selected);
  selectedRef.current = selected;

  const loadList = useCallback(async () => {
    try {
      setRuns(await api.workflowRuns(props.appId));
      const all = await api.workflowSchedules();
      setSchedules(props.appId === undefined ? all : all.filter((s) => s.app === props.appId));
      setListError(null);
    } catch (e: unknown) {
      setListError(e);
    }
  }, [props.appId]);

  // The driver records an ended run's evidence just after its end: look again a few times
  // (counted per load: renders are far more frequent and would end the looking too early).
  const evidencePolls = useRef(0);
  const loadDetail = useCallback(async () => {
    const sel = selectedRef.current;
    if (sel === null) return;
    try {
      const d = await api.workflowRun(sel);
      if (selectedRef.current !== sel) return;
      evidencePolls.current = evidenceLooks(evidencePolls.current, d);
      setDetail(d);
    } catch (e: unknown) {
      setError(e);
    }
  }, []);

  useEffect(() => {
    setDetail(null);
    setError(null);
    evidencePolls.current = 0;
    void loadDetail();
  }, [selected, loadDetail]);
  const awaitingEvidence = detail !== null && detail.run.finished && detail.evidence === null && evidencePolls.current < MAX_EVIDENCE_LOOKS;
  const live = (runs ?? []).some((r) => r.status === "running") || awaitingEvidence;
  const { busy, act } = useLiveList(loadList, loadDetail, live, setError);

  return (
    <section class="tasks-section" aria-labelledby="runs-heading" data-testid="workflow-runs">
      <h3 id="runs-heading">Workflow runs</h3>
      {listError !== null && <ErrorBox error={listError} testid="runs-error" />}
      <Schedules schedules={schedules} />
      <div class="tasks-layout">
        {runs === null ? (
          <p class="empty-note">Loading runs…</p>
        ) : (
          <RunList runs={runs} selected={selected} showApp={props.appId === undefined} select={(r) => setSelected(r.runId)} />
        )}
        {selected !== null && detail !== null && (
          <RunDetailView
            detail={detail}
            busy={busy}
            error={error}
            respond={(decision, data) => void act(() => api.workflowRespond(selected, decision, data))}
            cancel={() => void act(() => api.workflowCancel(selected))}
          />
        )}
      </div>
    </section>
  );
}
