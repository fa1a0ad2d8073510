// `apphost serve` in Chromium: an installed app opened by its deep link, the bridge handshake and
// a storage round trip on the app's own origin, spoofed messages executing nothing (Rust's
// diagnostics and the audit log), app origins unable to reach the host API, and the server's
// token and Host refusals.
import { expect, test } from "@playwright/test";

import { cli, rawRequest, startServer } from "./lib/server.mjs";

test.describe.configure({ mode: "serial" });

const FRAME = 'iframe[data-app-id="notes"][data-entry-key="notes"]';
let server;
let page;

/** A host API call from the host page (its Origin and session secret), as the UI makes it. */
async function hostApi(command, args = {}) {
  return page.evaluate(
    async ([command, args]) => {
      const r = await fetch(`/api/${command}`, {
        method: "POST",
        credentials: "same-origin",
        headers: {
          "Content-Type": "application/json",
          "X-AppHost-Session": localStorage.getItem("apphost.session"),
        },
        body: JSON.stringify(args),
      });
      return { status: r.status, body: await r.json() };
    },
    [command, args],
  );
}

async function diagnostics() {
  const r = await hostApi("bridge_diagnostics");
  expect(r.status).toBe(200);
  return r.body;
}

function auditCount() {
  return cli(server.data, ["audit", "notes", "--limit", "10000"]).length;
}

test.beforeAll(async ({ browser }) => {
  server = await startServer({ install: ["fixtures/apps/notes"] });
  page = await (await browser.newContext()).newPage();
});

test.afterAll(async () => {
  await page?.context().close();
  if (server) {
    expect(await server.stop()).toBe(0);
  }
});

test("a deep link signs in once and opens the entry; handshake and storage work", async () => {
  await page.goto(server.signIn("/apps/notes/notes"));
  // The token left the address bar (the page took the session secret and removed it); once the
  // entry is open the host page moves itself to "/" (the deep link is consumed).
  expect(new URL(page.url()).search).toBe("");
  await expect.poll(() => new URL(page.url()).pathname).toBe("/");
  const frameElement = page.locator(FRAME);
  await expect(frameElement).toHaveAttribute("sandbox", "allow-scripts allow-same-origin");
  await expect(frameElement).toHaveAttribute("src", new RegExp(`^http://notes\\.localhost:${server.port}/`));
  const frame = page.frameLocator(FRAME);
  await expect(frame.locator("body")).toHaveAttribute("data-status", "ready", { timeout: 20_000 });
  await expect(frame.locator("#snapshot-app")).toHaveText("notes");
  await expect(frame.locator("#snapshot-origin")).toHaveText(`http://notes.localhost:${server.port}`);
  await frame.locator("#note-text").fill("buy oat milk");
  await frame.locator("#note-save").click();
  await expect(frame.locator("#result")).toHaveText("saved buy oat milk");
  await expect(frame.locator("#notes li")).toHaveText(["buy oat milk"]);
  const d = await diagnostics();
  expect(d.executions).toBeGreaterThanOrEqual(3);
  expect(d.mounts).toBe(1);
  // In-page navigation after a deep link stays in this document: the frame is not reloaded.
  await page.evaluate(() => {
    window.__sameDocument = true;
  });
  const mountId = await frameElement.getAttribute("data-mount-id");
  await page.getByRole("link", { name: "Grants" }).click();
  await expect(page).toHaveURL(/\/#\/grants$/);
  await page.getByRole("link", { name: /^Running/ }).click();
  await expect(frameElement).toHaveAttribute("data-mount-id", mountId);
  expect(await page.evaluate(() => window.__sameDocument)).toBe(true);
  await expect(frame.locator("#notes li")).toHaveText(["buy oat milk"]);
});

test("spoofed messages from the frame and the page execute nothing", async () => {
  const before = await diagnostics();
  const auditBefore = auditCount();
  expect(auditBefore, "capability calls are audited").toBeGreaterThan(0);
  const frame = page.frames().find((f) => f.url().startsWith(`http://notes.localhost:${server.port}/`));
  expect(frame).toBeTruthy();
  // From inside the frame: another app's identity.
  const answered = await frame.evaluate(
    () =>
      new Promise((resolve) => {
        let answered = false;
        window.addEventListener("message", (e) => {
          if (e.data && e.data.requestId === "spoof-1") answered = true;
        });
        parent.postMessage(
          {
            protocol: "lime.agentApp.bridge", version: 1, type: "capability:invoke", requestId: "spoof-1",
            appId: "hello-app", entryKey: "notes",
            payload: { capability: "lime.storage", method: "set", args: { key: "stolen", value: 1 } },
          },
          "*",
        );
        setTimeout(() => resolve(answered), 1500);
      }),
  );
  expect(answered).toBe(false);
  // From the host page itself (not the frame's window): the relay refuses it.
  await page.evaluate(() =>
    window.postMessage(
      {
        protocol: "lime.agentApp.bridge", version: 1, type: "capability:invoke", requestId: "spoof-2",
        appId: "notes", entryKey: "notes",
        payload: { capability: "lime.storage", method: "set", args: { key: "stolen", value: 2 } },
      },
      "*",
    ),
  );
  // From a frame the page did not mount (an attacker-made iframe on the host origin).
  await page.evaluate(() => {
    const f = document.createElement("iframe");
    f.srcdoc = `<script>parent.postMessage({protocol:"lime.agentApp.bridge",version:1,type:"capability:invoke",
      requestId:"spoof-3",appId:"notes",entryKey:"notes",payload:{capability:"lime.storage",method:"set",
      args:{key:"stolen",value:3}}},"*")<\/script>`;
    document.body.append(f);
  });
  await expect
    .poll(async () => (await diagnostics()).refusedByReason["bridge.wrong_source"] ?? 0)
    .toBeGreaterThanOrEqual((before.refusedByReason["bridge.wrong_source"] ?? 0) + 1);
  const after = await diagnostics();
  expect(after.refusedByReason["bridge.app_mismatch"] ?? 0).toBe((before.refusedByReason["bridge.app_mismatch"] ?? 0) + 1);
  expect(after.executions).toBe(before.executions);
  expect(auditCount()).toBe(auditBefore);
  const stored = await page.frameLocator(FRAME).locator("#notes li").allTextContents();
  expect(stored).toEqual(["buy oat milk"]);
});

test("an app origin cannot call the host API", async () => {
  const before = await diagnostics();
  const frame = page.frames().find((f) => f.url().startsWith(`http://notes.localhost:${server.port}/`));
  const results = await frame.evaluate(async (hostOrigin) => {
    const attempt = async (url) => {
      try {
        const r = await fetch(url, {
          method: "POST",
          credentials: "include",
          headers: { "Content-Type": "application/json" },
          body: JSON.stringify({ appId: "notes", entryKey: "notes" }),
        });
        return { status: r.status, text: (await r.text()).slice(0, 200) };
      } catch (e) {
        return { error: e.name };
      }
    };
    return {
      own: await attempt("/api/mount_entry"),
      host: await attempt(`${hostOrigin}/api/mount_entry`),
      cookie: document.cookie,
    };
  }, server.origin);
  // Its own origin has no API; the host UI's refuses it (CSP, CORS or the server).
  expect(results.own.status ?? 0).not.toBe(200);
  expect(results.host.status ?? 0).not.toBe(200);
  expect(results.cookie).toBe("");
  // The page itself cannot read its HttpOnly cookie either.
  expect(await page.evaluate(() => document.cookie)).toBe("");
  const after = await diagnostics();
  expect(after.mounts).toBe(before.mounts);
  expect(after.executions).toBe(before.executions);
});

test("the launch token works once; other names for the server are refused", async ({ browser }) => {
  // A second browser with the same (used) link gets nothing.
  const other = await browser.newContext();
  const otherPage = await other.newPage();
  const response = await otherPage.goto(server.signIn("/"));
  expect(response.status()).toBe(401);
  expect(await otherPage.locator("#app-list").count()).toBe(0);
  // ...but a page that says what happened and how to get a fresh link, not raw JSON.
  await expect(otherPage.getByRole("heading", { level: 1 })).toHaveText("This sign-in link was already used");
  await expect(otherPage.locator("body")).toContainText("start it again");
  await other.close();
  // No cookie: no UI, no API.
  expect((await rawRequest(server.port, { headers: { Host: `127.0.0.1:${server.port}` } })).status).toBe(401);
  const api = await rawRequest(server.port, {
    method: "POST",
    path: "/api/list_apps",
    headers: { Host: `127.0.0.1:${server.port}`, Origin: server.origin, "Content-Type": "application/json" },
    body: "{}",
  });
  expect(api.status).toBe(401);
  expect(api.json.code).toBe("api.unauthorized");
  // DNS rebinding: the right socket under another name.
  for (const host of [`evil.example:${server.port}`, `localhost:${server.port}`]) {
    const r = await rawRequest(server.port, { headers: { Host: host } });
    expect(r.status, host).toBe(403);
    expect(r.json.code).toBe("api.forbidden");
  }
});
