// Token usage on the Tasks page (issue 19 §2): per task (its runs' model calls, with the budget
// it was started with) and per app (the sum over the tasks listed). The numbers come from the
// host's task views (`usage`, `budget`: RuntimeCore's `model.completed` usage per turn).
import type { JSX } from "preact";

import type { TaskView } from "../tasks.js";

/** A task's `usage` as the host sends it (absent from older hosts). */
export interface TaskUsage {
  inputTokens: number;
  outputTokens: number;
  totalTokens: number;
}

/** Total tokens of one task (0 when the host sent none). */
export function taskTokens(t: TaskView): number {
  const u = (t as TaskView & { usage?: TaskUsage }).usage;
  return u && Number.isFinite(u.totalTokens) ? u.totalTokens : 0;
}

/** The budget a task was started with, if any. */
export function taskBudget(t: TaskView): number | null {
  const b = (t as TaskView & { budget?: { maxTokens?: number | null } }).budget;
  return typeof b?.maxTokens === "number" ? b.maxTokens : null;
}

/** Tokens per app over `tasks`, apps in name order. */
export function usageByApp(tasks: TaskView[]): { appId: string; tokens: number; tasks: number }[] {
  const by = new Map<string, { tokens: number; tasks: number }>();
  for (const t of tasks) {
    const u = by.get(t.appId) ?? { tokens: 0, tasks: 0 };
    u.tokens += taskTokens(t);
    u.tasks += 1;
    by.set(t.appId, u);
  }
  return [...by.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([appId, u]) => ({ appId, ...u }));
}

/** "1,234 tokens" (or "1,234 / 5,000 tokens" with a budget). */
export function tokensText(tokens: number, budget: number | null = null): string {
  const n = (x: number) => x.toLocaleString("en-US");
  return budget === null ? `${n(tokens)} tokens` : `${n(tokens)} / ${n(budget)} tokens`;
}

/** Per-app usage above the task list. */
export function AppUsage(props: { tasks: TaskView[] }): JSX.Element | null {
  const rows = usageByApp(props.tasks);
  if (rows.length === 0) return null;
  return (
    <ul class="task-usage" aria-label="Token usage per app" data-testid="tasks-usage">
      {rows.map((r) => (
        <li key={r.appId} data-testid="tasks-usage-app" data-app-id={r.appId} data-tokens={r.tokens}>
          <span class="task-app">{r.appId}</span> {tokensText(r.tokens)} over {r.tasks} {r.tasks === 1 ? "task" : "tasks"}
        </li>
      ))}
    </ul>
  );
}

/** One task's usage, in its detail. */
export function TaskUsageLine(props: { task: TaskView }): JSX.Element {
  const tokens = taskTokens(props.task);
  const budget = taskBudget(props.task);
  return (
    <p class="task-usage-line" data-testid="task-usage" data-tokens={tokens} data-budget={budget ?? undefined}>
      Usage: {tokensText(tokens, budget)}
    </p>
  );
}
