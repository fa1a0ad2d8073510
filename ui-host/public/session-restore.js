// Loaded by the "not signed in" page of `apphost serve` (src/serve/http.rs): a tab of this
// origin that holds the session secret (localStorage, put there by transport.ts from the launch
// answer) but whose cookie is gone or was overwritten by a page on another loopback port asks
// for the cookie again (`POST /session/cookie` with the secret in its header) and reloads. Once
// per 10 s at most, so a browser that refuses cookies does not reload forever.
(async () => {
  let secret = null;
  try {
    secret = localStorage.getItem("apphost.session");
    const last = Number(sessionStorage.getItem("apphost.restored") ?? "0");
    if (Date.now() - last < 10_000) return;
  } catch {
    return;
  }
  if (!secret) return;
  try {
    const answer = await fetch("/session/cookie", {
      method: "POST",
      credentials: "same-origin",
      headers: { "X-AppHost-Session": secret },
    });
    if (answer.ok) {
      sessionStorage.setItem("apphost.restored", String(Date.now()));
      location.reload();
    }
  } catch {
    // The server is gone: the page's message stands.
  }
})();
