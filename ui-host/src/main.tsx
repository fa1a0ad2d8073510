// Entry point of the host UI (bundled to dist/main.js by build.mjs).

import { render } from "preact";

import { App } from "./app.js";

const root = document.getElementById("root");
if (root === null) {
  throw new Error("host UI is missing #root");
}
render(<App />, root);
