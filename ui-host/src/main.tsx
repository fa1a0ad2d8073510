// Entry point of the host UI (bundled to dist/main.js by build.mjs).

import { render } from "preact";

import { App } from "./app.js";
import { earlyListing, startListing } from "./app/use-apps.js";

const root = document.getElementById("root");
if (root === null) {
  throw new Error("host UI is missing #root");
}
// The first render waits (at most 100 ms) for the app list, so the first frame is the app center
// rather than a loading shell followed by a second render and frame.
// The performance marks are read by the start-up bench's trace (docs/benchmarks.md).
startListing();
await earlyListing(100);
performance.mark("apphost:list-in");
render(<App />, root);
performance.mark("apphost:rendered");
