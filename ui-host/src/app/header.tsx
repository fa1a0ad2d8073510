// The shell's header: the skip link, the brand, the main navigation (with the running tabs'
// count) and the summary line (`#summary`, which the desktop e2e reads).

import type { JSX } from "preact";

import type { Route } from "../router.js";

const NAV: Array<[Route["page"], string]> = [
  ["apps", "Apps"],
  ["browse", "Browse"],
  ["running", "Running"],
  ["grants", "Grants"],
  ["diagnostics", "Diagnostics"],
  ["settings", "Settings"],
  ["model", "Model"],
  ["tasks", "Tasks"],
];

export function ShellHeader(props: { page: Route["page"]; pageTabs: number; summary: string; onPalette?: () => void }): JSX.Element {
  return (
    <>
      <a class="skip-link" href="#content">
        Skip to content
      </a>
      <header class="top">
        <div class="brand">
          <span class="brand-mark" aria-hidden="true">
            A
          </span>
          <h1>AppHost</h1>
        </div>
        <nav class="main-nav" aria-label="AppHost">
          {NAV.map(([page, label]) => (
            <a
              key={page}
              href={`#/${page}`}
              data-testid={`nav-${page}`}
              aria-current={props.page === page || (page === "apps" && props.page === "app") ? "page" : undefined}
            >
              {label}
              {page === "running" && props.pageTabs > 0 && <span class="count"> ({props.pageTabs})</span>}
            </a>
          ))}
        </nav>
        {props.onPalette && (
          <button type="button" class="link-button palette-button" data-testid="open-palette" aria-keyshortcuts="Control+K Meta+K" onClick={props.onPalette}>
            Search <kbd>Ctrl K</kbd>
          </button>
        )}
        <p id="summary" class="summary" aria-live="polite">
          {props.summary}
        </p>
      </header>
    </>
  );
}
