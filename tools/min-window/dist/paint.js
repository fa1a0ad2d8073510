// Two animation frames after the document is parsed: the first paint happened.
document.addEventListener("DOMContentLoaded", () => {
  requestAnimationFrame(() => requestAnimationFrame(() => {
    window.__TAURI_INTERNALS__.invoke("painted", {});
  }));
});
