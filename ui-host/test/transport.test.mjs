// Unit tests of the transport choice and the HTTP transport's request/answer mapping, run
// against the built dist/ (npm test -w ui-host).
import assert from "node:assert/strict";
import { test } from "node:test";

import {
  adoptSession,
  launchFromPath,
  makeInvoker,
  SESSION_HEADER,
  SESSION_KEY,
  storedSession,
} from "../dist/transport.js";

function fakeFetch(respond) {
  const calls = [];
  const fetch = async (url, init) => {
    calls.push({ url, init });
    return respond(url, init);
  };
  return { fetch, calls };
}

function json(status, body) {
  return { ok: status >= 200 && status < 300, status, json: async () => body };
}

test("the desktop transport sends every command through host_call", async () => {
  const seen = [];
  const tauri = {
    core: {
      invoke: async (command, args, options) => {
        seen.push({ command, args, options });
        return "ok";
      },
    },
  };
  const inv = makeInvoker({ tauri, fetch: () => assert.fail("no fetch on the desktop") });
  assert.equal(inv.kind, "tauri");
  assert.equal(await inv.invoke("mount_entry", { appId: "a", entryKey: "e" }), "ok");
  assert.equal(await inv.invoke("list_apps"), "ok");
  const bytes = new Uint8Array([80, 75]);
  await inv.upload(bytes);
  assert.deepEqual(seen[0], {
    command: "host_call",
    args: { command: "mount_entry", args: { appId: "a", entryKey: "e" } },
    options: undefined,
  });
  assert.deepEqual(seen[1].args, { command: "list_apps", args: {} });
  assert.equal(seen[2].command, "upload_package");
  assert.equal(seen[2].args, bytes, "the bytes go as a raw body");
});

test("the browser transport posts JSON to /api/<command> on its own origin", async () => {
  const { fetch, calls } = fakeFetch(() => json(200, [{ name: "hello-app" }]));
  const inv = makeInvoker({ fetch });
  assert.equal(inv.kind, "http");
  assert.deepEqual(await inv.invoke("list_apps"), [{ name: "hello-app" }]);
  await inv.invoke("next_events", { after: 3, timeoutMs: 10 });
  assert.equal(calls[0].url, "/api/list_apps");
  assert.equal(calls[0].init.method, "POST");
  assert.equal(calls[0].init.credentials, "same-origin");
  assert.equal(calls[0].init.body, "{}");
  assert.equal(calls[0].init.headers["Content-Type"], "application/json");
  assert.equal(calls[1].init.body, JSON.stringify({ after: 3, timeoutMs: 10 }));
  // A command name cannot leave the /api/ path.
  await inv.invoke("../evil?x=1");
  assert.equal(calls[2].url, "/api/..%2Fevil%3Fx%3D1");
  await inv.upload(new Uint8Array([1]));
  assert.equal(calls[3].url, "/api/upload_package");
  assert.equal(calls[3].init.headers["Content-Type"], "application/zip");
});

test("the browser transport rejects with HostErrors", async () => {
  const error = { code: "mount.unknown_entry", message: "no such entry", details: {} };
  let inv = makeInvoker({ fetch: fakeFetch(() => json(404, error)).fetch });
  await assert.rejects(inv.invoke("mount_entry", {}), (e) => e.code === "mount.unknown_entry");
  inv = makeInvoker({ fetch: fakeFetch(() => json(502, "<html>")).fetch });
  await assert.rejects(inv.invoke("list_apps"), (e) => e.code === "internal" && e.details.status === 502);
  inv = makeInvoker({
    fetch: fakeFetch(() => ({ ok: false, status: 500, json: async () => JSON.parse("<") })).fetch,
  });
  await assert.rejects(inv.invoke("list_apps"), (e) => e.code === "internal");
  inv = makeInvoker({
    fetch: async () => {
      throw new TypeError("Failed to fetch");
    },
  });
  await assert.rejects(inv.invoke("list_apps"), (e) => e.code === "internal" && /reached/.test(e.message));
  inv = makeInvoker({});
  await assert.rejects(inv.invoke("list_apps"), (e) => e.code === "internal");
});

test("a browser-mode path names the entry to open", () => {
  assert.deepEqual(launchFromPath("/apps/hello-app/notes"), { appId: "hello-app", entryKey: "notes" });
  assert.deepEqual(launchFromPath("/apps/a%20b/n/"), { appId: "a b", entryKey: "n" });
  for (const other of ["/", "/apps/hello-app", "/apps//notes", "/apps/a/b/c", "/x/apps/a/b", "/apps/%E0%A4%A/b"]) {
    assert.equal(launchFromPath(other), null, other);
  }
});

function fakePage({ meta = null, href = "http://127.0.0.1:4242/", stored = null } = {}) {
  const page = {
    removed: false,
    urls: [],
    store: new Map(stored === null ? [] : [[SESSION_KEY, stored]]),
    meta: () => (meta === null || page.removed ? null : { content: meta, remove: () => (page.removed = true) }),
    href,
    replaceUrl: (url) => page.urls.push(url),
  };
  page.storage = { getItem: (k) => page.store.get(k) ?? null, setItem: (k, v) => page.store.set(k, v) };
  return page;
}

test("the launch answer's secret is kept once, and the token leaves the address", () => {
  const page = fakePage({ meta: "s3cret", href: "http://127.0.0.1:4242/apps/notes/notes?token=abc#/x" });
  assert.equal(adoptSession(page), "s3cret");
  assert.equal(page.removed, true, "the meta is gone from the document");
  assert.equal(page.store.get(SESSION_KEY), "s3cret");
  assert.deepEqual(page.urls, ["/apps/notes/notes#/x"]);
  // A reload: no meta, no token; the stored secret is what the page holds.
  const reloaded = fakePage({ stored: "s3cret" });
  assert.equal(adoptSession(reloaded), null);
  assert.deepEqual(reloaded.urls, []);
  assert.equal(storedSession(reloaded.storage, null), "s3cret");
  // Storage that refuses: the secret lives in memory.
  const refusing = fakePage({ meta: "m" });
  refusing.storage = {
    getItem: () => {
      throw new Error("denied");
    },
    setItem: () => {
      throw new Error("denied");
    },
  };
  assert.equal(adoptSession(refusing), "m");
  assert.equal(storedSession(refusing.storage, "m"), "m");
  assert.equal(storedSession(undefined, null), null);
});

test("the browser transport sends the session secret in its header, never in the URL or body", async () => {
  const { fetch, calls } = fakeFetch(() => json(200, null));
  let secret = null;
  const inv = makeInvoker({ fetch, session: () => secret });
  await inv.invoke("list_apps");
  assert.equal(calls[0].init.headers[SESSION_HEADER], undefined, "not signed in: no header");
  secret = "abc";
  await inv.invoke("list_apps", { x: 1 });
  await inv.upload(new Uint8Array([1]));
  assert.equal(calls[1].init.headers[SESSION_HEADER], "abc");
  assert.equal(calls[2].init.headers[SESSION_HEADER], "abc");
  assert.ok(!calls[1].url.includes("abc") && !String(calls[1].init.body).includes("abc"));
});
