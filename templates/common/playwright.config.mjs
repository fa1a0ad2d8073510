// Playwright for this app's end-to-end test (tests/*.spec.mjs): the real AppHost (`apphost dev
// app --serve`, or $APPHOST_BIN) in Chromium. Set CHROMIUM_BIN to use an installed Chromium
// (Debian's /usr/bin/chromium is used when present); otherwise `npx playwright install chromium`.
import { existsSync } from "node:fs";

import { defineConfig } from "@playwright/test";

const chromium = process.env.CHROMIUM_BIN ?? (existsSync("/usr/bin/chromium") ? "/usr/bin/chromium" : undefined);

export default defineConfig({
  testDir: "tests",
  testMatch: /.*\.spec\.mjs$/,
  workers: 1,
  timeout: 60_000,
  reporter: [["list"]],
  use: {
    browserName: "chromium",
    headless: true,
    ...(chromium ? { launchOptions: { executablePath: chromium } } : {}),
  },
});
