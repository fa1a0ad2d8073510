// Start-up probe (scripts/bench-window.sh), injected only when APPHOST_BENCH_PAINT is set.
// "shell": two animation frames after the host UI first rendered into #root (its script ran;
// the list is still loading). "center": the same after body[data-state] moved off "loading"
// (the app list is on screen). "app": two animation frames after the first message from an app frame (its script
// ran: the bridge handshake). Each is reported once through the `bench_painted` command.
// `APPHOST_BENCH_SNAPSHOT` (a boolean) is defined by bench.rs in front of this script.
(function () {
  if (window.top !== window) return;
  const sent = new Set();
  // The page's own milestones (unix ms), sent with each report: the window prints them under
  // APPHOST_TRACE_START (start_trace.rs) and ignores them otherwise.
  const marks = {};
  const at = (name) => {
    if (!(name in marks)) marks[name] = performance.timeOrigin + performance.now();
  };
  const report = (what) => {
    if (sent.has(what)) return;
    sent.add(what);
    at(what + " seen");
    // The DOM the first frame of the app center paints (APPHOST_BENCH_SNAPSHOT, bench.rs).
    const snapshot = APPHOST_BENCH_SNAPSHOT && what === "center" ? document.documentElement.outerHTML : undefined;
    requestAnimationFrame(() => {
      at(what + " frame 1");
      requestAnimationFrame(() => {
        at(what + " frame 2");
        for (const e of performance.getEntriesByType("resource")) {
          const name = e.name.split("/").pop();
          marks["fetched " + name] = performance.timeOrigin + e.responseEnd;
        }
        for (const e of performance.getEntriesByType("mark")) {
          marks["mark " + e.name] = performance.timeOrigin + e.startTime;
        }
        window.__TAURI_INTERNALS__.invoke("bench_painted", { what, marks, snapshot });
      });
    });
  };
  at("script injected");
  document.addEventListener("DOMContentLoaded", () => at("DOMContentLoaded"));
  window.addEventListener("load", () => at("load"));
  const watchState = () => {
    // "loading" is the static page's own state: the list is on screen once it moves on.
    const check = () => {
      const root = document.getElementById("root");
      if (root && root.childElementCount > 0) report("shell");
      const state = document.body && document.body.dataset.state;
      if (state && state !== "loading") report("center");
    };
    new MutationObserver(check).observe(document.documentElement, { attributes: true, childList: true, subtree: true, attributeFilter: ["data-state"] });
    check();
  };
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", watchState);
  else watchState();
  window.addEventListener("message", (e) => {
    if (e.source && e.source !== window) report("app");
  });
})();
