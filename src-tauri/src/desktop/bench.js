// Start-up probe (scripts/bench-window.sh), injected only when APPHOST_BENCH_PAINT is set.
// "shell": two animation frames after the host UI first rendered into #root (its script ran;
// the list is still loading). "center": the same after body[data-state] moved off "loading"
// (the app list is on screen). "app": two animation frames after the first message from an app frame (its script
// ran: the bridge handshake). Each is reported once through the `bench_painted` command.
(function () {
  if (window.top !== window) return;
  const sent = new Set();
  const report = (what) => {
    if (sent.has(what)) return;
    sent.add(what);
    requestAnimationFrame(() => requestAnimationFrame(() => {
      window.__TAURI_INTERNALS__.invoke("bench_painted", { what });
    }));
  };
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
