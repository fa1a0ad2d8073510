// The AppImage's self-update prompt (ui-host/src/views/update-notice.tsx, docs/shipping.md
// "AppImage self-update"): nothing installs before the user presses the button, and a refusal
// shows its stable code and says the AppImage is unchanged.
import assert from "node:assert/strict";
import { test } from "node:test";

import { h } from "preact";
import { renderToString } from "preact-render-to-string";

import { SelfUpdateNotice, refusalOf } from "../build/test/ui/testing.js";

const notice = { version: "0.2.0", notes: "n", url: "https://apphost.invalid/download" };
const render = (state) =>
  renderToString(h(SelfUpdateNotice, { notice, state, setState: () => undefined, dismiss: h("span", null, "x") }));

test("the offer is a button the user presses, with the version", () => {
  const html = render({ step: "offer" });
  assert.match(html, /data-self-update="offer"/);
  assert.match(html, /AppHost 0\.2\.0 is available/);
  assert.match(html, /<button type="button" class="button button--primary">Install and restart<\/button>/);
  assert.doesNotMatch(html, /does not update itself/);
});

test("installing, installed (restart), refused with its code", () => {
  assert.match(render({ step: "installing" }), /Installing AppHost 0\.2\.0/);
  assert.match(render({ step: "installed" }), /Restart now/);
  const refused = render(refusalOf({ code: "update.wrong_key", message: "signed by another key." }));
  assert.match(refused, /data-code="update\.wrong_key"/);
  assert.match(refused, /refused \(update\.wrong_key\): signed by another key\. This AppImage is unchanged/);
});

test("a refusal without a HostError shape still has a code", () => {
  assert.deepEqual(refusalOf("boom"), { step: "refused", code: "internal", message: "boom" });
  assert.deepEqual(refusalOf(null), { step: "refused", code: "internal", message: "null" });
});
