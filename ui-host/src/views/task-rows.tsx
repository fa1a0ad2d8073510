// What the Tasks page's two lists share (tasks.tsx: agent tasks, workflow-runs.tsx: workflow
// runs): the status badge, the selectable row list (`ul.task-list` of `button.task-row`, the DOM
// the tests select), and the list + detail refresh loop (load, `tasks:changed`, a 1 s poll while
// something is live, an action that reloads both).

import type { ComponentChildren, JSX } from "preact";
import { useEffect, useState } from "preact/hooks";

import { onTasksChanged } from "../tasks.js";
import { Empty } from "../ui/components.js";

/** A status as a toned badge (`data-status` = the raw status). */
export function StatusBadge(props: { status: string; tone: string; testid?: string | undefined; children: ComponentChildren }): JSX.Element {
  return (
    <span class={`badge badge--${props.tone}`} data-testid={props.testid} data-status={props.status}>
      {props.children}
    </span>
  );
}

/** `data-*` attributes of one row (`data-testid` included). */
export type RowData = Record<`data-${string}`, string>;

/** A list of selectable rows (stateless: render-tested through its callers). */
export function RowList<T>(props: {
  items: readonly T[];
  /** What an empty list says. */
  empty: ComponentChildren;
  /** The list's accessible name and `data-testid`. */
  label: string;
  testid: string;
  keyOf(item: T): string;
  selected: string | null;
  select(item: T): void;
  rowData(item: T): RowData;
  children(item: T): ComponentChildren;
}): JSX.Element {
  if (props.items.length === 0) return <Empty>{props.empty}</Empty>;
  return (
    <ul class="task-list" aria-label={props.label} data-testid={props.testid}>
      {props.items.map((item) => {
        const key = props.keyOf(item);
        const selected = props.selected === key;
        return (
          <li key={key}>
            <button
              type="button"
              class={`task-row${selected ? " task-row--selected" : ""}`}
              aria-current={selected ? "true" : undefined}
              {...props.rowData(item)}
              onClick={() => props.select(item)}
            >
              {props.children(item)}
            </button>
          </li>
        );
      })}
    </ul>
  );
}

/**
 * The refresh loop of a list with an open item: both loaded on `tasks:changed`, and every second
 * while `live`; `act` runs a user action (busy meanwhile, its error given to `setError`, null on
 * success) and reloads both.
 */
export function useLiveList(
  loadList: () => Promise<void>,
  loadDetail: () => Promise<void>,
  live: boolean,
  setError: (e: unknown) => void,
): { busy: boolean; act(work: () => Promise<unknown>): Promise<void> } {
  const [busy, setBusy] = useState(false);
  useEffect(() => {
    void loadList();
  }, [loadList]);
  useEffect(
    () =>
      onTasksChanged(() => {
        void loadList();
        void loadDetail();
      }),
    [loadList, loadDetail],
  );
  useEffect(() => {
    if (!live) return;
    const timer = setInterval(() => {
      void loadList();
      void loadDetail();
    }, 1000);
    return () => clearInterval(timer);
  }, [live, loadDetail, loadList]);
  const act = async (work: () => Promise<unknown>): Promise<void> => {
    setBusy(true);
    try {
      await work();
      setError(null);
    } catch (e: unknown) {
      setError(e);
    } finally {
      setBusy(false);
      await loadDetail();
      await loadList();
    }
  };
  return { busy, act };
}
