// Entry point of the host UI (bundled to dist/main.js by build.mjs).

import { render } from "preact";

import { App } from "./app.js";
import { startListing } from "./app/use-apps.js";

const root = document.getElementById("root");
if (root === null) {
  throw new Error("host UI is missing #root");
}
startListing();
render(<App />, root);
