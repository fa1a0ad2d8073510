// AppHost dev console (dev installs only): served by the host from the app's own origin and
// loaded first by every page of a dev install, so it sees what fails even when the app's own
// script never runs. It reports to the host UI (the parent) and does nothing else; the host
// treats what it posts as untrusted text (bounded, rate-limited, shown as text).
(() => {
  "use strict";
  const FORMS = __FORMS__;
  const MAX = 1000;
  const cut = (v) => (typeof v === "string" ? v.slice(0, MAX) : v === undefined || v === null ? "" : String(v).slice(0, MAX));
  const post = (d) => {
    try {
      window.parent.postMessage({ apphostDevConsole: 1, ...d }, "*");
    } catch {
      // a detached frame: nothing to tell
    }
  };
  window.addEventListener(
    "securitypolicyviolation",
    (e) =>
      post({
        kind: "csp",
        message: cut(e.sample),
        directive: cut(e.effectiveDirective || e.violatedDirective),
        blockedUri: cut(e.blockedURI),
        source: cut(e.sourceFile),
        line: e.lineNumber,
        column: e.columnNumber,
      }),
    true,
  );
  // Uncaught errors only: a resource the CSP blocked is already a securitypolicyviolation.
  window.addEventListener("error", (e) => {
    if (e instanceof ErrorEvent) {
      post({ kind: "error", message: cut(e.message), source: cut(e.filename), line: e.lineno, column: e.colno });
    }
  });
  window.addEventListener("unhandledrejection", (e) => {
    const r = e.reason;
    const text = r instanceof Error ? `${r.name}: ${r.message}` : cut(r);
    post({ kind: "rejection", message: cut(text), source: cut(location.href) });
  });
  if (!FORMS) {
    // The sandbox refuses a form submission before any event fires, so the page is checked once.
    const check = () => {
      const n = document.forms.length;
      if (n > 0) {
        post({
          kind: "form",
          message: `${n} <form> element(s) cannot be submitted: the app does not declare ui.frame.forms`,
          source: cut(location.href),
        });
      }
    };
    if (document.readyState === "loading") {
      document.addEventListener("DOMContentLoaded", check, { once: true });
    } else {
      check();
    }
  }
})();
