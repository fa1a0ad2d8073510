// The dev console overlay (dev installs only): the `dev:diagnostic` lines Rust announced for the
// app of the tab shown (an uncaught error, an unhandled rejection, a CSP violation, a refused
// `<form>` or call; `api/dev_console.rs`), newest last. The text comes from the app's frame: it is
// untrusted, rendered as text only (Preact text nodes), and kept bounded per app.

import type { JSX } from "preact";
import { useEffect, useState } from "preact/hooks";

/** One dev console line (the `dev:diagnostic` payload). */
export interface DevLine {
  mountId: string;
  appId: string;
  kind: string;
  text: string;
  source?: string | null;
  line?: number | null;
  column?: number | null;
}

/** Lines kept per app; older ones are dropped. */
export const MAX_DEV_LINES = 100;
/** The window event fired when a line arrives (detail: the app id). */
export const DEV_LINE_EVENT = "apphost:dev-line";

const byApp = new Map<string, DevLine[]>();

const str = (v: unknown): v is string => typeof v === "string";
const num = (v: unknown): number | null => (typeof v === "number" && Number.isFinite(v) ? v : null);

/** The payload as a line, or null when it is not one (the shape is checked, not trusted). */
export function asDevLine(payload: unknown): DevLine | null {
  if (typeof payload !== "object" || payload === null) return null;
  const p = payload as Record<string, unknown>;
  if (!str(p.mountId) || !str(p.appId) || !str(p.kind) || !str(p.text)) return null;
  return {
    mountId: p.mountId,
    appId: p.appId,
    kind: p.kind.slice(0, 32),
    text: p.text.slice(0, 2000),
    source: str(p.source) ? p.source.slice(0, 1000) : null,
    line: num(p.line),
    column: num(p.column),
  };
}

/** `lines` with `line` appended, at most `max` (the oldest dropped). */
export function appendBounded(lines: readonly DevLine[], line: DevLine, max = MAX_DEV_LINES): DevLine[] {
  const next = [...lines, line];
  return next.length > max ? next.slice(next.length - max) : next;
}

/** Where a line happened: `source:line:column`, or "". */
export function devLineWhere(l: DevLine): string {
  if (l.source === null || l.source === undefined || l.source === "") return "";
  let s = l.source;
  if (l.line !== null && l.line !== undefined && l.line > 0) {
    s += `:${l.line}`;
    if (l.column !== null && l.column !== undefined && l.column > 0) s += `:${l.column}`;
  }
  return s;
}

/** Keeps a `dev:diagnostic` payload for its app and tells the overlay. */
export function recordDevDiagnostic(payload: unknown): void {
  const line = asDevLine(payload);
  if (line === null) return;
  byApp.set(line.appId, appendBounded(byApp.get(line.appId) ?? [], line));
  window.dispatchEvent(new CustomEvent(DEV_LINE_EVENT, { detail: line.appId }));
}

/** The overlay on a tab of `appId`; nothing when the app has no lines (a non-dev app never has). */
export function DevConsoleOverlay(props: { appId: string }): JSX.Element | null {
  const [lines, setLines] = useState<DevLine[]>(() => byApp.get(props.appId) ?? []);
  const [open, setOpen] = useState(true);
  useEffect(() => {
    setLines(byApp.get(props.appId) ?? []);
    const onLine = (e: Event): void => {
      if ((e as CustomEvent<string>).detail === props.appId) {
        setLines(byApp.get(props.appId) ?? []);
        setOpen(true);
      }
    };
    window.addEventListener(DEV_LINE_EVENT, onLine);
    return () => window.removeEventListener(DEV_LINE_EVENT, onLine);
  }, [props.appId]);
  if (lines.length === 0) return null;
  const clear = (): void => {
    byApp.delete(props.appId);
    setLines([]);
  };
  return (
    <aside class="dev-console" data-testid="dev-console" data-app-id={props.appId} aria-label="Dev console">
      <div class="dev-console-bar">
        <strong>Dev console</strong> <span class="dev-console-count">{lines.length}</span>
        <button type="button" class="link-button" onClick={() => setOpen(!open)}>
          {open ? "Hide" : "Show"}
        </button>
        <button type="button" class="link-button" onClick={clear}>
          Clear
        </button>
      </div>
      {open && (
        <ol class="dev-console-lines">
          {lines.map((l, i) => (
            <li key={i} class={`dev-console-line dev-console-line--${l.kind}`} data-testid="dev-console-line" data-kind={l.kind}>
              <span class="dev-console-text">{l.text}</span>
              {devLineWhere(l) !== "" && <span class="dev-console-where"> at {devLineWhere(l)}</span>}
            </li>
          ))}
        </ol>
      )}
    </aside>
  );
}
