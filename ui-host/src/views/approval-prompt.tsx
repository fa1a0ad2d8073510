// The host-drawn approval prompt (ARCHITECTURE.md, "Approval belongs to the user"): when a task
// of a running app waits for approval of a risky tool, the host page shows it above that app's
// frame, outside it, with the tool, its input and Approve / Reject. Only this prompt and the
// Tasks page approve (`task_respond`, as the host's user); the app itself may only reject.

import { useCallback, useEffect, useRef, useState } from "preact/hooks";
import type { JSX } from "preact";

import * as api from "../api.js";
import { inputText, onTasksChanged, tasksChanged, type PendingAction, type TaskView } from "../tasks.js";
import { Button, ErrorBox } from "../ui/components.js";

/** One pending approval of one task. */
export interface PromptItem {
  appId: string;
  taskId: string;
  action: PendingAction;
}

/** The pending approvals of `tasks`, oldest task first (one prompt row each). */
export function promptItems(tasks: readonly TaskView[]): PromptItem[] {
  const out: PromptItem[] = [];
  for (const t of [...tasks].sort((a, b) => a.createdAt.localeCompare(b.createdAt))) {
    for (const action of t.pendingActions) out.push({ appId: t.appId, taskId: t.taskId, action });
  }
  return out;
}

/** The prompt (stateless: render-tested). Nothing when no approval waits. */
export function ApprovalPromptView(props: {
  appTitle: string;
  items: readonly PromptItem[];
  busy: boolean;
  error: unknown;
  respond(item: PromptItem, decision: "approve" | "reject"): void;
}): JSX.Element | null {
  if (props.items.length === 0) return null;
  return (
    <section class="approval-prompt" aria-live="polite" aria-label={`${props.appTitle} asks for your approval`} data-testid="approval-prompt">
      {props.error !== null && <ErrorBox error={props.error} testid="approval-prompt-error" />}
      {props.items.map((item) => {
        const a = item.action;
        return (
          <div
            class="approval-prompt-item"
            role="group"
            aria-labelledby={`approval-${a.actionId}`}
            key={`${item.taskId}/${a.actionId}`}
            data-testid="approval-prompt-item"
            data-app-id={item.appId}
            data-task-id={item.taskId}
            data-action-id={a.actionId}
          >
            <p id={`approval-${a.actionId}`}>
              <strong>{props.appTitle}</strong>'s agent wants to run <strong data-testid="approval-prompt-tool">{a.toolName ?? "a tool"}</strong>. Only you can
              allow it: AppHost asks, not the app.
            </p>
            <pre class="task-input-json" data-testid="approval-prompt-input">
              {inputText(a.input)}
            </pre>
            <Button variant="primary" disabled={props.busy} onClick={() => props.respond(item, "approve")} data-testid="approval-prompt-approve">
              Approve
            </Button>{" "}
            <Button variant="danger" disabled={props.busy} onClick={() => props.respond(item, "reject")} data-testid="approval-prompt-reject">
              Reject
            </Button>
          </div>
        );
      })}
    </section>
  );
}

/** The prompt for the running app `appId`: follows its waiting tasks and answers as the user. */
export function ApprovalPrompt(props: { appId: string; appTitle: string }): JSX.Element | null {
  const [items, setItems] = useState<PromptItem[]>([]);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  // One list_tasks at a time; a change while one runs asks for one more, at most every 250 ms
  // (a streaming task announces every batch of deltas).
  const loading = useRef<{ running: boolean; again: boolean }>({ running: false, again: false });
  const appRef = useRef(props.appId);
  appRef.current = props.appId;

  const load = useCallback(async (): Promise<void> => {
    const l = loading.current;
    if (l.running) {
      l.again = true;
      return;
    }
    l.running = true;
    try {
      do {
        l.again = false;
        const app = appRef.current;
        try {
          const tasks = await api.listTasks(app, "waiting_approval");
          if (appRef.current === app) setItems(promptItems(tasks));
        } catch (e: unknown) {
          console.warn("list_tasks failed", e);
        }
        if (l.again) await new Promise((r) => setTimeout(r, 250));
      } while (l.again);
    } finally {
      l.running = false;
    }
  }, []);

  useEffect(() => {
    setItems([]);
    setError(null);
    void load();
    return onTasksChanged(() => void load());
  }, [props.appId, load]);

  const respond = (item: PromptItem, decision: "approve" | "reject"): void => {
    setBusy(true);
    setError(null);
    void (async () => {
      try {
        await api.taskRespond(item.appId, item.taskId, item.action.actionId, decision);
      } catch (e: unknown) {
        setError(e);
      } finally {
        setBusy(false);
        tasksChanged();
      }
    })();
  };

  return <ApprovalPromptView appTitle={props.appTitle} items={items} busy={busy} error={error} respond={respond} />;
}
