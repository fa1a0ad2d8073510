// The host UI's one table and one filter form: the grants, audit and trusted-key tables
// (views/pages.tsx) and an app's permissions (views/app-detail.tsx) are `DataTable`s; the audit
// filter and the install-from-path form are `FilterBar`s of `FilterSelect`/`FilterText` fields.
// Markup only: `table.table` with `th[scope=col]` headers (or `Empty` when there are no rows), and
// `form.list-tools` with inline labelled fields. Cell content is Preact children: text stays text.

import type { ComponentChildren, JSX } from "preact";

import { Badge, Button, Empty } from "./components.js";

export interface Column<T> {
  /** The column's header text. */
  label: string;
  /** The cell of `row` in this column. */
  cell(row: T): ComponentChildren;
  /** The row's header cell (`th scope="row"`) instead of a `td`. */
  rowHeader?: boolean;
}

export interface DataTableProps<T> {
  testid: string;
  columns: ReadonlyArray<Column<T>>;
  rows: readonly T[];
  rowKey(row: T): string | number;
  /** Attributes of the row's `tr` (data-*, in the order given). */
  rowAttrs?(row: T): Record<string, string | number | undefined>;
  /** What is said instead of an empty table. */
  empty: ComponentChildren;
}

export function DataTable<T>(props: DataTableProps<T>): JSX.Element {
  if (props.rows.length === 0) {
    return <Empty>{props.empty}</Empty>;
  }
  return (
    <table class="table" data-testid={props.testid}>
      <thead>
        <tr>
          {props.columns.map((c) => (
            <th key={c.label} scope="col">
              {c.label}
            </th>
          ))}
        </tr>
      </thead>
      <tbody>
        {props.rows.map((row) => (
          <tr key={props.rowKey(row)} {...(props.rowAttrs?.(row) ?? {})}>
            {props.columns.map((c) =>
              c.rowHeader === true ? (
                <th key={c.label} scope="row">
                  {c.cell(row)}
                </th>
              ) : (
                <td key={c.label}>{c.cell(row)}</td>
              ),
            )}
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/** A permission's state in a table cell: "Granted" or "Not granted". */
export function GrantBadge(props: { granted: boolean }): JSX.Element {
  return <Badge text={props.granted ? { label: "Granted", tone: "good", title: "" } : { label: "Not granted", tone: "muted", title: "" }} />;
}

/** The Grant/Revoke button of a permission row; `testid` is the prefix (`<prefix>-grant`, `<prefix>-revoke`). */
export function GrantToggle(props: { granted: boolean; testid: string; label: string; disabled: boolean; onToggle(): void }): JSX.Element {
  const verb = props.granted ? "Revoke" : "Grant";
  return (
    <Button data-testid={`${props.testid}-${props.granted ? "revoke" : "grant"}`} disabled={props.disabled} aria-label={`${verb} ${props.label}`} onClick={props.onToggle}>
      {verb}
    </Button>
  );
}

// ---------------------------------------------------------------------------------------------

/** A filter (or small one-line) form: `onSubmit` runs without the page navigating. */
export function FilterBar(props: { onSubmit(): void; children: ComponentChildren }): JSX.Element {
  return (
    <form
      class="list-tools"
      onSubmit={(e) => {
        e.preventDefault();
        props.onSubmit();
      }}
    >
      {props.children}
    </form>
  );
}

export interface FilterOption {
  value: string;
  label: string;
}

/** A labelled select of a `FilterBar`. */
export function FilterSelect(props: { label: string; value: string; options: readonly FilterOption[]; onChange(value: string): void; testid?: string }): JSX.Element {
  return (
    <label class="field field--inline">
      <span>{props.label}</span>
      <select value={props.value} onChange={(e) => props.onChange(e.currentTarget.value)} data-testid={props.testid}>
        {props.options.map((o) => (
          <option key={o.value} value={o.value}>
            {o.label}
          </option>
        ))}
      </select>
    </label>
  );
}

/** A labelled text field of a `FilterBar`. */
export function FilterText(props: { label: string; value: string; onInput(value: string): void; placeholder?: string; testid?: string }): JSX.Element {
  return (
    <label class="field field--inline">
      <span>{props.label}</span>
      <input value={props.value} placeholder={props.placeholder} onInput={(e) => props.onInput(e.currentTarget.value)} data-testid={props.testid} />
    </label>
  );
}

/** The options of an "every app, or one" select: `""` first (`allLabel`), then each app. */
export function appOptions(apps: readonly string[], allLabel: string): FilterOption[] {
  return [{ value: "", label: allLabel }, ...apps.map((a) => ({ value: a, label: a }))];
}
