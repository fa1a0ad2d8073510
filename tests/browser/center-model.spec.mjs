// The Model page against a local stand-in OpenAI-compatible provider (node http, started here):
// set the model with a write-only key, "Test connection" shows the latency; a wrong URL shows the
// provider's error; axe-core on the page, light and dark.

import { createServer } from "node:http";

import { expect, test } from "@playwright/test";

import { expectAccessible, openHost } from "./lib/center.mjs";
import { startServer } from "./lib/server.mjs";

const KEY = "sk-browser-CANARY-never-shown";

let server;
let provider;
let seenAuth;

function sse() {
  return [
    'data: {"choices":[{"index":0,"delta":{"content":"OK"},"finish_reason":null}]}\n\n',
    'data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\n',
    "data: [DONE]\n\n",
  ].join("");
}

test.beforeEach(async () => {
  seenAuth = [];
  provider = createServer((req, res) => {
    seenAuth.push(req.headers.authorization ?? null);
    req.resume();
    req.on("end", () => {
      if (req.url?.endsWith("/models")) {
        res.writeHead(200, { "content-type": "application/json" });
        res.end('{"data":[{"id":"stand-in-1"}]}');
        return;
      }
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.end(sse());
    });
  });
  await new Promise((resolve) => provider.listen(0, "127.0.0.1", resolve));
  server = await startServer();
});
test.afterEach(async () => {
  await server?.stop();
  await new Promise((resolve) => provider.close(resolve));
});

test("set the model, test the connection, and see a wrong URL's error", async ({ page }) => {
  const base = `http://127.0.0.1:${provider.address().port}/v1`;
  await openHost(page, server, "/");
  await page.goto(`${server.origin}/#/model`);
  await expect(page.getByTestId("model-status")).toHaveText("needs-setup");
  await expect(page.getByTestId("model-test")).toBeDisabled();
  await page.getByTestId("model-base-url").fill(base);
  await page.getByTestId("model-name").fill("stand-in-1");
  await page.getByTestId("model-api-key").fill(KEY);
  await page.getByTestId("model-save").click();
  await expect(page.getByTestId("model-status")).toHaveText("ready");
  await expect(page.getByTestId("model-key-status")).toContainText("set");
  await expect(page.getByTestId("model-api-key")).toHaveValue("");
  await expect(page.locator("body")).not.toContainText(KEY);
  await page.getByTestId("model-test").click();
  await expect(page.getByTestId("model-test-result")).toContainText(/stand-in-1 answered in \d+ ms/);
  expect(seenAuth).toContain(`Bearer ${KEY}`);

  // A wrong URL (nothing listens there): the provider's error, with its code.
  const closed = createServer();
  await new Promise((resolve) => closed.listen(0, "127.0.0.1", resolve));
  const wrong = `http://127.0.0.1:${closed.address().port}/v1`;
  await new Promise((resolve) => closed.close(resolve));
  await page.getByTestId("model-base-url").fill(wrong);
  await page.getByTestId("model-save").click();
  await expect(page.getByTestId("model-base-url")).toHaveValue(wrong);
  await page.getByTestId("model-test").click();
  await expect(page.getByTestId("model-error")).toHaveAttribute("data-code", "provider.unreachable");
  await expect(page.getByTestId("model-test-result")).toHaveCount(0);
});

for (const scheme of ["light", "dark"]) {
  test(`the Model page passes axe (${scheme})`, async ({ page }) => {
    await page.emulateMedia({ colorScheme: scheme });
    await openHost(page, server);
    await page.goto(`${server.origin}/#/model`);
    await expect(page.getByTestId("model-status")).toHaveText("needs-setup");
    await expectAccessible(page, `#/model (${scheme})`);
  });
}
