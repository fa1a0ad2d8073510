// Browser tests of `apphost serve` with Playwright in Debian's Chromium (never a downloaded
// browser: PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1, executablePath below). Each spec file starts its
// own server on a fresh data dir (lib/server.mjs); APPHOST_BIN names the `apphost` to test.
//
//   APPHOST_BIN=target/debug/apphost npx playwright test -c tests/browser
//
// Two projects: `host` (this folder's specs) and `notes-sample` (the Notes sample app's own spec,
// fixtures/apps/notes/tests/, the worked example of docs/testing-apps.md).
import { defineConfig } from "@playwright/test";

export default defineConfig({
  testMatch: /.*\.spec\.mjs$/,
  projects: [
    { name: "host", testDir: "." },
    { name: "notes-sample", testDir: "../../fixtures/apps/notes/tests" },
  ],
  fullyParallel: false,
  workers: 1,
  retries: 0,
  timeout: 60_000,
  reporter: [["list"]],
  outputDir: "../../test-results/browser",
  use: {
    browserName: "chromium",
    headless: true,
    launchOptions: {
      executablePath: process.env.CHROMIUM_BIN ?? "/usr/bin/chromium",
    },
    trace: "retain-on-failure",
    screenshot: "only-on-failure",
  },
});
