// Shared components of the host UI. Every string from a package or from Rust reaches the page as
// a text child or an attribute value (Preact escapes both); nothing here sets HTML.

import type { ButtonHTMLAttributes, ComponentChildren, JSX } from "preact";
import { useEffect, useRef } from "preact/hooks";

import { errorHelp, percent, toHostError, type BadgeText } from "../format.js";

export function Badge(props: { text: BadgeText; class?: string; data?: Record<string, string> }): JSX.Element {
  const data: Record<string, string> = {};
  for (const [k, v] of Object.entries(props.data ?? {})) {
    data[`data-${k}`] = v;
  }
  return (
    <span class={`badge ${props.class ?? ""} badge--${props.text.tone}`} title={props.text.title} {...data}>
      {props.text.label}
    </span>
  );
}

type ButtonProps = ButtonHTMLAttributes<HTMLButtonElement> & {
  variant?: "primary" | "danger" | "plain";
  children?: ComponentChildren;
};

export function Button({ variant, class: extra, children, ...rest }: ButtonProps): JSX.Element {
  const cls = `button${variant === undefined || variant === "plain" ? "" : ` button--${variant}`}${
    typeof extra === "string" ? ` ${extra}` : ""
  }`;
  return (
    <button type="button" class={cls} {...rest}>
      {children}
    </button>
  );
}

/** A failure: its code, its message and what to do about it. */
export function ErrorBox(props: { error: unknown; title?: string; testid?: string }): JSX.Element {
  const error = toHostError(props.error);
  return (
    <div class="error-box" role="alert" data-testid={props.testid ?? "error-box"} data-code={error.code}>
      {props.title !== undefined && <p class="error-title">{props.title}</p>}
      <p>
        <code class="error-code">{error.code}</code> <span class="error-message">{error.message}</span>
      </p>
      <p class="error-help">{errorHelp(error.code)}</p>
    </div>
  );
}

export function Loading(props: { label?: string }): JSX.Element {
  return (
    <p class="loading" role="status">
      {props.label ?? "Loading…"}
    </p>
  );
}

export function ProgressBar(props: { done: number; total: number; label: string }): JSX.Element {
  const pct = percent(props.done, props.total);
  return (
    <div class="progress" data-testid="install-progress">
      <label>
        <span>{props.label}</span>
        <progress max={100} value={pct} aria-valuetext={`${pct}%`} />
        <span class="progress-pct">{pct}%</span>
      </label>
    </div>
  );
}

/** A definition list of facts. */
export function Facts(props: { rows: Array<[string, ComponentChildren]> }): JSX.Element {
  return (
    <dl class="facts">
      {props.rows.map(([k, v]) => (
        <div class="fact" key={k}>
          <dt>{k}</dt>
          <dd>{v}</dd>
        </div>
      ))}
    </dl>
  );
}

/** A modal `<dialog>`: focus moves into it, Escape calls `onClose`. */
export function Modal(props: {
  title: string;
  onClose: () => void;
  testid: string;
  id?: string;
  wide?: boolean;
  children: ComponentChildren;
}): JSX.Element {
  const ref = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    const d = ref.current;
    if (d !== null && !d.open && typeof d.showModal === "function") {
      d.showModal();
    }
    return () => {
      if (d !== null && d.open) {
        d.close();
      }
    };
  }, []);
  const titleId = `${props.testid}-title`;
  return (
    <dialog
      ref={ref}
      id={props.id}
      class={`host-dialog${props.wide === true ? " host-dialog--wide" : ""}`}
      aria-labelledby={titleId}
      data-testid={props.testid}
      onCancel={(e) => {
        e.preventDefault();
        props.onClose();
      }}
    >
      <h2 id={titleId}>{props.title}</h2>
      {props.children}
    </dialog>
  );
}

export function Empty(props: { children: ComponentChildren }): JSX.Element {
  return <p class="empty-note">{props.children}</p>;
}
